"""pk.benchmarking's "cupti" method: what it asks of jaxlib's Mosaic GPU extension and of CUPTI
(with stand-ins, on any device), and on an NVIDIA GPU after JAX's profiler ran in the same
process (where jaxlib 0.11.2's extension aborted the process before CUPTI's dropped-record
count was read first)."""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from typing import Any, Callable

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels import benchmarking  # noqa: E402
from pjrtkit.kernels.core import jax_private  # noqa: E402


class _FakeCupti:
  """The CUPTI library's dropped-record count: returns `counts` in turn, logs each read."""

  def __init__(self, counts: list[int], log: list[str]) -> None:
    self.counts, self.log = counts, log

  def cuptiActivityGetNumDroppedRecords(self, context, stream, count):  # noqa: N802
    assert context is None and stream == 0
    count._obj.value = self.counts.pop(0)  # pylint: disable=protected-access
    self.log.append("dropped")
    return 0


class _FakeExtension:
  """jaxlib's Mosaic GPU extension: two kernels of 1 and 2 ms per iteration."""

  def __init__(self, log: list[str]) -> None:
    self.log = log

  def _cupti_init(self) -> None:
    self.log.append("init")

  def _cupti_get_timings(self, finalize: bool) -> list[tuple[str, float]]:
    self.log.append(f"timings finalize={finalize}")
    return [("k1", 1.0), ("k2", 2.0 + self.log.count("call") / 10)] * self.log.count("call")


def _fakes(monkeypatch, counts: list[int] | None) -> tuple[list[str], Callable[[], Any]]:
  log: list[str] = []
  monkeypatch.setattr(jax_private, "cupti_extension", lambda: _FakeExtension(log))
  libs = [] if counts is None else [_FakeCupti(counts, log)]
  monkeypatch.setattr(benchmarking, "_loaded_cuptis", lambda: libs)

  def fn():
    log.append("call")
    return jnp.zeros(())

  return log, fn


def test_stale_dropped_records_are_read_before_timing(monkeypatch):
  log, fn = _fakes(monkeypatch, [1, 0])  # One left behind (JAX's profiler), none while timing.
  times = benchmarking._cupti_times_ms(fn, 3)  # pylint: disable=protected-access
  assert log == ["dropped", "init", "call", "call", "call", "dropped", "timings finalize=True"]
  assert times == [pytest.approx(3.3)] * 3


def test_records_dropped_while_timing_are_an_error_after_cupti_is_released(monkeypatch):
  log, fn = _fakes(monkeypatch, [0, 4])
  with pytest.raises(RuntimeError, match="CUPTI dropped 4 activity records while timing 2 "
                                         "iterations: the kernel times are incomplete"):
    benchmarking._cupti_times_ms(fn, 2)  # pylint: disable=protected-access
  assert log[-2:] == ["dropped", "timings finalize=True"]  # Unsubscribed all the same.


def test_without_a_loaded_cupti_the_extension_alone_times(monkeypatch):
  log, fn = _fakes(monkeypatch, None)
  times = benchmarking._cupti_times_ms(fn, 1)  # pylint: disable=protected-access
  assert times == [pytest.approx(3.1)]
  assert log == ["init", "call", "timings finalize=True"]


def test_kernel_records_keep_each_iterations_kernels_in_launch_order(monkeypatch):
  log, fn = _fakes(monkeypatch, [0, 0])
  records = benchmarking._cupti_kernel_records(fn, 2)  # pylint: disable=protected-access
  assert records == [[("k1", 1.0), ("k2", pytest.approx(2.2))]] * 2


class _FakeCompiled:
  """A compiled function for `BenchmarkRunner`: logs each call as the fake extension counts."""

  def __init__(self, log: list[str]) -> None:
    self.log = log

  def __call__(self, *args: Any) -> Any:
    self.log.append("call")
    return jnp.zeros(())


def _breakdown_runner(monkeypatch, timings: list[tuple[str, float]]
                      ) -> tuple[list[str], benchmarking.BenchmarkRunner]:
  """A runner on a stand-in GPU whose CUPTI extension reports `timings` for the timed calls."""
  log, _ = _fakes(monkeypatch, [0, 0])
  monkeypatch.setattr(benchmarking.device_lib, "current_device",
                      lambda: type("Gpu", (), {"is_gpu": True})())

  class _Fixed(_FakeExtension):
    def _cupti_get_timings(self, finalize: bool) -> list[tuple[str, float]]:
      self.log.append(f"timings finalize={finalize}")
      return timings

  monkeypatch.setattr(jax_private, "cupti_extension", lambda: _Fixed(log))
  return log, benchmarking.BenchmarkRunner(_FakeCompiled(log), 0.0, 0.0)


def test_kernel_breakdown_gives_each_kernels_median(monkeypatch):
  # Three timed calls (the warm-up is not recorded): k2 takes 5, 1 and 3 ms.
  log, run = _breakdown_runner(monkeypatch, [("k1", 1.0), ("k2", 5.0), ("k1", 2.0),
                                             ("k2", 1.0), ("k1", 4.0), ("k2", 3.0)])
  assert run.kernel_breakdown([], iterations=3) == [("k1", 2.0), ("k2", 3.0)]
  # One warm-up call before CUPTI is subscribed, then three timed calls.
  assert log == ["call", "dropped", "init", "call", "call", "call", "dropped",
                 "timings finalize=True"]


def test_kernel_breakdown_refuses_calls_that_launch_different_kernels(monkeypatch):
  _, run = _breakdown_runner(monkeypatch, [("k1", 1.0), ("k2", 2.0), ("k1", 1.0), ("k3", 2.0)])
  with pytest.raises(RuntimeError, match="the calls launched different kernels"):
    run.kernel_breakdown([], iterations=2)


def test_kernel_breakdown_needs_a_gpu_and_positive_iterations():
  run = benchmarking.BenchmarkRunner(lambda: jnp.zeros(()), 0.0, 0.0)
  with pytest.raises(ValueError, match="iterations must be >= 1, got 0"):
    run.kernel_breakdown([], iterations=0)
  if not benchmarking.device_lib.current_device().is_gpu:
    with pytest.raises(ValueError, match="kernel_breakdown needs an NVIDIA GPU"):
      run.kernel_breakdown([], iterations=1)


def test_loaded_cuptis_reads_the_process_maps(tmp_path):
  maps = tmp_path / "maps"
  maps.write_text(
      "7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f02-7f03 r-xp 00000000 08:01 2 /nonexistent/nvidia/cu13/lib/libcupti.so.13\n"
      "\n"
      "7f04-7f05 rw-p 00000000 00:00 0\n")
  # Named but not loadable (no such file): none, as with no CUPTI or no maps file at all.
  assert benchmarking._loaded_cuptis(str(maps)) == []  # pylint: disable=protected-access
  missing = str(tmp_path / "none")
  assert benchmarking._loaded_cuptis(missing) == []  # pylint: disable=protected-access


def test_dropped_records_sum_over_libraries_and_skip_unreadable_counts():
  log: list[str] = []

  class _Failing(_FakeCupti):
    def cuptiActivityGetNumDroppedRecords(self, context, stream, count):  # noqa: N802
      count._obj.value = 7  # pylint: disable=protected-access
      return 1  # CUPTI_ERROR_INVALID_PARAMETER: the count is not used.

  libs = [_FakeCupti([2], log), _Failing([], log), _FakeCupti([3], log)]
  assert benchmarking._take_dropped_records(libs) == 5  # pylint: disable=protected-access
  assert benchmarking._take_dropped_records([]) == 0  # pylint: disable=protected-access


def test_cupti_after_jax_profiler_on_gpu():
  """A JAX profiler trace, then CUPTI timing, twice, in one process (jaxlib 0.11.2 aborted the
  process here: 'Mosaic GPU profiler error: activity records were dropped')."""
  testing.skip_unless_gpu()
  x = jnp.arange(1 << 20, dtype=jnp.float32)
  f_std, args = pk.benchmarking.standardize_function(lambda a: a * 2 + 1, x)
  run = pk.benchmarking.compile_benchmark(f_std, args)
  assert benchmarking._loaded_cuptis()  # pylint: disable=protected-access
  for _ in range(2):
    with tempfile.TemporaryDirectory() as trace_dir:
      jax.profiler.start_trace(trace_dir)
      jax.block_until_ready(run.compiled(*args))
      jax.profiler.stop_trace()
    bench = run(args, method="cupti", iterations=3)
    assert bench.method == "cupti" and len(bench.evaluation_times_ms) == 3
    assert all(0 < t < 10 for t in bench.evaluation_times_ms), bench.evaluation_times_ms


# --- method=None's fallback, the profiler's refusals, Tokamax's names ---------------------------

def _jaxlib_cpu():
  """JAX's own cpu backend as the default device (the tests' default is pjrtkit's)."""
  return jax.default_device(jax.devices("cpu")[0])


def _scaled_runner() -> tuple[benchmarking.BenchmarkRunner, list[Any]]:
  f_std, args = pk.benchmarking.standardize_function(lambda x: x * 2.0 + 1.0, jnp.ones((8, 16)))
  return pk.benchmarking.compile_benchmark(f_std, args), args


def test_none_falls_back_to_wallclock_when_the_trace_has_no_device_events(monkeypatch):
  traces: list[str | None] = []

  def no_events(fn, event_filter_regex=None):
    traces.append(event_filter_regex)
    jax.block_until_ready(fn())
    return None

  monkeypatch.setattr(benchmarking, "_profiler_time_ms", no_events)
  with _jaxlib_cpu():
    assert benchmarking.default_method() == "profiler"
    run, args = _scaled_runner()
    bench = run(args, iterations=3)
    assert bench.method == "wallclock" and len(bench.evaluation_times_ms) == 3
    assert bench.metadata == {
        "requested_method": None, "method": "wallclock",
        "fallback": "profiler: the trace has no device events for this program"}
    assert traces == [None]
    run(args, iterations=2)  # The runner remembers: no second trace.
    assert traces == [None]
    with pytest.raises(ValueError) as refused:
      run(args, method="profiler")
  assert str(refused.value) == (
      "method='profiler': JAX's profiler trace has no device events on platform 'cpu', device "
      "kind 'cpu': XLA:CPU records execution-thread events only for programs it runs on its "
      "thread pool, not for small ones run on the calling thread; use method='wallclock' "
      "(method=None falls back to it)")
  assert traces == [None, None]


def test_none_keeps_the_profiler_where_the_trace_has_device_events(monkeypatch):
  monkeypatch.setattr(benchmarking, "_profiler_time_ms", lambda fn, regex=None: 0.25)
  with _jaxlib_cpu():
    run, args = _scaled_runner()
    bench = run(args, iterations=2)
    assert (bench.method, bench.evaluation_times_ms) == ("profiler", (0.25, 0.25))
    assert bench.metadata == {"requested_method": None, "method": "profiler"}
    # Tokamax's names for the profiler.
    for name in ("xprof", "hermetic_xprof"):
      bench = run(args, method=name, iterations=1)
      assert bench.method == "profiler" and bench.evaluation_times_ms == (0.25,)
      assert bench.metadata == {"requested_method": name, "method": "profiler"}


def test_pjrtkit_cpu_device_takes_wallclock_and_refuses_the_profiler_by_name():
  if benchmarking.device_lib.current_device().is_pjrtkit_cpu:
    assert benchmarking.default_method() == "wallclock"
    run, args = _scaled_runner()
    with pytest.raises(ValueError, match="pjrtkit's CPU device runs XLA:CPU inside the plugin"):
      run(args, method="profiler", iterations=1)
  info = pk.DeviceInfo(platform="pjrtkit", kind="pjrtkit_cpu", compute_capability=None)
  assert benchmarking._no_device_events(info, None) == (  # pylint: disable=protected-access
      "method='profiler': JAX's profiler trace has no device events on platform 'pjrtkit', "
      "device kind 'pjrtkit_cpu': pjrtkit's CPU device runs XLA:CPU inside the plugin, which "
      "records none; use method='wallclock' (what method=None takes there)")
  gpu = pk.DeviceInfo(platform="cuda", kind="NVIDIA H200", compute_capability=(9, 0))
  assert benchmarking._no_device_events(gpu, "fusion") == (  # pylint: disable=protected-access
      "method='profiler': JAX's profiler trace has no device events matching "
      "event_filter_regex='fusion' on platform 'cuda', device kind 'NVIDIA H200': use "
      "method='cupti' or 'wallclock' (method=None takes 'cupti' where jaxlib has its CUPTI "
      "extension, else falls back to 'wallclock')")


def test_unknown_method_and_iterations_are_refused_before_running():
  run, args = _scaled_runner()
  with pytest.raises(ValueError) as refused:
    run(args, method="stopwatch")
  assert str(refused.value) == ("unknown method 'stopwatch'; accepted: None, wallclock, "
                                "profiler, cupti, xprof, hermetic_xprof")
  with pytest.raises(ValueError, match="iterations must be >= 1, got 0"):
    run(args, iterations=0)


def test_benchmark_data_has_tokamax_names():
  run, args = _scaled_runner()
  bench = run(args, method="wallclock", iterations=2)
  assert bench.lower_time_ms == bench.lowering_time_ms > 0
  assert bench.metadata == {"requested_method": "wallclock", "method": "wallclock"}
  d = bench.asdict()
  assert sorted(d) == ["compile_time_ms", "evaluation_times_ms", "lower_time_ms",
                       "lowering_time_ms", "median_evaluation_time_ms", "metadata", "method",
                       "peak_memory_mb"]
  assert d["median_evaluation_time_ms"] == bench.median_evaluation_time_ms
  assert hash(bench) == hash(dataclasses.replace(bench, metadata={"other": 1}))


def test_cupti_sums_only_the_kernels_the_filter_matches(monkeypatch):
  _, fn = _fakes(monkeypatch, [0, 0])
  times = benchmarking._cupti_times_ms(fn, 3, "2$")  # pylint: disable=protected-access
  assert times == [pytest.approx(2.3)] * 3  # k2 alone; k1 (1 ms) left out.


def test_top_level_names_are_tokamaxs():
  assert pk.benchmark is benchmarking.benchmark
  assert pk.standardize_function is benchmarking.standardize_function
  assert pk.BenchmarkData is benchmarking.BenchmarkData
  assert {"benchmark", "standardize_function", "BenchmarkData"} <= set(pk.__all__)


def test_benchmark_calls_f_with_one_argument_as_tokamax():
  x = jnp.arange(4.0)
  seen = []

  def f(arg):
    seen.append(arg.shape)
    return arg * 3.0

  bench = pk.benchmark(f, x, method="wallclock")
  assert bench.method == "wallclock" and len(bench.evaluation_times_ms) == 5  # Tokamax's 5.
  assert seen == [(4,)]  # Traced once, with x whole (not unpacked into its elements).
  f_std, arrays = pk.standardize_function(lambda a, b: a * b, x, kwargs={"b": x})
  bench = pk.benchmark(f_std, arrays, iterations=2, method="wallclock")
  assert len(bench.evaluation_times_ms) == 2


# --- standardize_function's modes ---------------------------------------------------------------

def _scale(x, scale):
  return x * scale


def test_standardize_forward_modes_take_both_call_forms():
  x, scale = jnp.array([1.0, 2.0, 3.0]), jnp.array(2.0)
  for mode in ("forward", "forward_res"):
    f_std, arrays = pk.standardize_function(_scale, x, kwargs={"scale": scale}, mode=mode)
    assert [a.tolist() for a in arrays] == [[1.0, 2.0, 3.0], 2.0]
    assert f_std(*arrays).tolist() == [2.0, 4.0, 6.0]         # pjrtkit's form
    assert f_std(arrays).tolist() == [2.0, 4.0, 6.0]          # Tokamax's form
    assert jax.jit(f_std)(tuple(arrays)).tolist() == [2.0, 4.0, 6.0]


def test_standardize_forward_and_vjp_returns_the_output_and_its_gradient():
  x, scale = jnp.array([1.0, 2.0, 3.0]), jnp.array(2.0)
  f_std, arrays = pk.standardize_function(_scale, x, scale, mode="forward_and_vjp")
  out, (grads,) = jax.jit(f_std)(arrays)
  # The output is its own cotangent: d/dx = out * scale, d/dscale = sum(out * x).
  assert out.tolist() == [2.0, 4.0, 6.0]
  assert [g.tolist() for g in grads] == [[4.0, 8.0, 12.0], 28.0]


def test_standardize_vjp_takes_the_outputs_cotangents():
  x, scale = jnp.array([1.0, 2.0, 3.0]), jnp.array(2.0)
  f_std, cotangents = pk.standardize_function(_scale, x, scale, mode="vjp")
  assert [c.tolist() for c in cotangents] == [[2.0, 4.0, 6.0]]  # The forward's output.
  (grads,) = f_std(jnp.array([1.0, 0.0, -1.0]))
  assert [g.tolist() for g in grads] == [[2.0, 0.0, -2.0], -2.0]
  (grads,) = f_std(cotangents)
  assert [g.tolist() for g in grads] == [[4.0, 8.0, 12.0], 28.0]


def test_standardize_seed_and_refusals():
  struct = jax.ShapeDtypeStruct((2, 3), jnp.float32)
  _, arrays = pk.standardize_function(lambda a: a, struct, seed=None)
  assert arrays == [struct]
  _, arrays = pk.standardize_function(lambda a: a, struct, seed=1)
  assert arrays[0].shape == (2, 3) and arrays[0].dtype == jnp.float32
  _, again = pk.standardize_function(lambda a: a, struct, seed=1)
  assert (arrays[0] == again[0]).all()
  with pytest.raises(ValueError) as refused:
    pk.standardize_function(lambda a: a, struct, mode="backward")
  assert str(refused.value) == ("unknown mode 'backward'; accepted: forward, forward_res, vjp, "
                                "forward_and_vjp")
  with pytest.raises(ValueError, match="mode='vjp' runs the forward here and needs data"):
    pk.standardize_function(lambda a: a, struct, mode="vjp", seed=None)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
