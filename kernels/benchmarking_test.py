"""pk.benchmarking's "cupti" method: what it asks of jaxlib's Mosaic GPU extension and of CUPTI
(with stand-ins, on any device), and on an NVIDIA GPU after JAX's profiler ran in the same
process (where jaxlib 0.11.2's extension aborted the process before CUPTI's dropped-record
count was read first)."""

from __future__ import annotations

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


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
