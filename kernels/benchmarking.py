"""Benchmarking kernels and functions, named as in Tokamax.

    f_std, args = pk.benchmarking.standardize_function(f, kwargs={"x": x, "scale": scale})
    run = pk.benchmarking.compile_benchmark(f_std, args)
    bench = run(args)                      # BenchmarkData; run(args, method=..., iterations=N)
    bench = pk.benchmark(f_std, args)      # Tokamax's one call: f_std(args), 5 iterations

Methods: "wallclock" (host time of each blocking call, Python dispatch included); "profiler"
(JAX's profiler trace: per iteration, the span of the events the device records: GPU kernels
on ``/device:GPU`` planes, XLA:CPU's execution threads on jaxlib's ``cpu`` backend; Tokamax's
"xprof" and "hermetic_xprof" are taken as it); "cupti" (NVIDIA GPUs: CUPTI kernel timings
through jaxlib's Mosaic GPU extension). ``method=None`` takes "cupti" on NVIDIA GPUs with the
extension and "wallclock" on pjrtkit's CPU device (XLA:CPU inside the plugin records no trace
events; a call's dispatch there costs about 5 us, small against the kernels measured); elsewhere
it takes "profiler" where the program's trace has device events, else "wallclock" (XLA:CPU runs
small programs, e.g. an 8x16 layer norm, without execution-thread events): `BenchmarkData.method`
records the method used, `BenchmarkData.metadata` the fallback. "cupti" also works after JAX's
profiler ran in the process (see `_cupti_times_ms`).
"""

from __future__ import annotations

import ctypes
import dataclasses
import glob
import os
import re
import statistics
import tempfile
import time
from typing import Any, Callable, Mapping, Sequence

import jax

from pjrtkit.kernels.core import device as device_lib
from pjrtkit.kernels.core.standardize import MODES, standardize_function

METHODS = ("wallclock", "profiler", "cupti")
"""pjrtkit's method names."""
METHOD_ALIASES = {"xprof": "profiler", "hermetic_xprof": "profiler"}
"""Tokamax's method names that name one of `METHODS` here (both read JAX's profiler trace)."""

__all__ = ["BenchmarkData", "BenchmarkRunner", "METHODS", "METHOD_ALIASES", "MODES", "benchmark",
           "compile_benchmark", "default_method", "standardize_function"]


@dataclasses.dataclass(frozen=True)
class BenchmarkData:
  """Time and memory of one benchmarked function.

  Attributes:
    lowering_time_ms: time to trace and lower the function (Tokamax's name: `lower_time_ms`).
    compile_time_ms: time to compile it.
    evaluation_times_ms: one time per iteration, in milliseconds.
    peak_memory_mb: the compiled program's temporaries + arguments + outputs (XLA's memory
      analysis), None where the backend does not report it.
    method: the measuring method used (after any fallback of ``method=None``).
    metadata: how it was measured (Tokamax's field): ``requested_method`` (what the call asked
      for: None or a name as given), ``method`` (as above), ``fallback`` (only where
      ``method=None`` left "profiler" for "wallclock": why), ``event_filter_regex`` (only where
      one was given). Not part of the hash.
  """

  lowering_time_ms: float
  compile_time_ms: float
  evaluation_times_ms: tuple[float, ...]
  peak_memory_mb: float | None
  method: str
  metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict, hash=False)

  @property
  def lower_time_ms(self) -> float:
    """`lowering_time_ms` under Tokamax's name."""
    return self.lowering_time_ms

  @property
  def median_evaluation_time_ms(self) -> float:
    """Median of `evaluation_times_ms`."""
    return float(statistics.median(self.evaluation_times_ms))

  def asdict(self) -> dict[str, Any]:
    """The fields, Tokamax's `lower_time_ms` and `median_evaluation_time_ms`, as a dict."""
    out = dataclasses.asdict(self)
    out["metadata"] = dict(self.metadata)
    out["lower_time_ms"] = self.lower_time_ms
    out["median_evaluation_time_ms"] = self.median_evaluation_time_ms
    return out


def _device_event_spans(xspace_path: str, event_filter_regex: str | None = None
                        ) -> list[tuple[int, int]]:
  """(start_ns, end_ns) of device events in a trace: GPU planes, XLA:CPU execution threads;
  with `event_filter_regex`, only events whose name it matches (``re.search``)."""
  from jax.profiler import ProfileData  # pylint: disable=g-import-not-at-top
  data = ProfileData.from_file(xspace_path)
  wanted = re.compile(event_filter_regex) if event_filter_regex is not None else None
  spans = []
  for plane in data.planes:
    gpu = plane.name.startswith("/device:GPU")
    for line in plane.lines:
      if not (gpu or line.name.startswith("tf_XLAExecute")):
        continue
      for ev in line.events:
        if ev.name.startswith("ThreadpoolListener") or ev.name.startswith("end: ") or \
            ev.name.startswith("ThunkExecutor::Execute"):
          continue
        if wanted is not None and not wanted.search(ev.name):
          continue
        spans.append((ev.start_ns, ev.start_ns + ev.duration_ns))
  return spans


def _profiler_time_ms(fn: Callable[[], Any], event_filter_regex: str | None = None
                      ) -> float | None:
  """One call's device span from JAX's profiler trace (the events `event_filter_regex` matches,
  all without one); None when the trace has no such device events."""
  with tempfile.TemporaryDirectory(prefix="pk_bench_") as tmp:
    jax.profiler.start_trace(tmp)
    try:
      jax.block_until_ready(fn())
    finally:
      jax.profiler.stop_trace()
    files = glob.glob(f"{tmp}/**/*.xplane.pb", recursive=True)
    spans = _device_event_spans(files[0], event_filter_regex) if files else []
  if not spans:
    return None
  return (max(e for _, e in spans) - min(s for s, _ in spans)) / 1e6


def _no_device_events(info: device_lib.DeviceInfo, event_filter_regex: str | None) -> str:
  """Why a profiler trace on `info` had no device events, and what to use instead."""
  what = "no device events"
  if event_filter_regex is not None:
    what += f" matching event_filter_regex={event_filter_regex!r}"
  if info.is_pjrtkit_cpu:
    why = ("pjrtkit's CPU device runs XLA:CPU inside the plugin, which records none; use "
           "method='wallclock' (what method=None takes there)")
  elif info.is_gpu:
    why = ("use method='cupti' or 'wallclock' (method=None takes 'cupti' where jaxlib has its "
           "CUPTI extension, else falls back to 'wallclock')")
  else:
    why = ("XLA:CPU records execution-thread events only for programs it runs on its thread "
           "pool, not for small ones run on the calling thread; use method='wallclock' "
           "(method=None falls back to it)")
  return f"method='profiler': JAX's profiler trace has {what} on {info.describe()}: {why}"


def _wallclock_times_ms(fn: Callable[[], Any], iterations: int) -> list[float]:
  """Host time of `iterations` blocking calls, one by one."""
  times = []
  for _ in range(iterations):
    start = time.perf_counter()
    jax.block_until_ready(fn())
    times.append((time.perf_counter() - start) * 1e3)
  return times


def _profiler_times_ms(fn: Callable[[], Any], iterations: int,
                       event_filter_regex: str | None) -> list[float] | None:
  """`_profiler_time_ms` of `iterations` calls; None as soon as one trace has no device events."""
  times = []
  for _ in range(iterations):
    t = _profiler_time_ms(fn, event_filter_regex)
    if t is None:
      return None
    times.append(t)
  return times


def _loaded_cuptis(maps: str = "/proc/self/maps") -> list[Any]:
  """The CUPTI libraries this process has loaded (jaxlib's CUDA plugin loads one; another
  framework may load its own), as ctypes handles; empty where none is or the maps are unreadable.
  """
  try:
    with open(maps, encoding="utf-8", errors="replace") as f:
      paths = sorted({parts[-1] for parts in (line.split() for line in f)
                      if len(parts) >= 6 and os.path.basename(parts[-1]).startswith("libcupti.so")})
  except OSError:
    return []
  libs = []
  for path in paths:
    try:
      lib = ctypes.CDLL(path)
      read = lib.cuptiActivityGetNumDroppedRecords
    except (OSError, AttributeError):
      continue
    read.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_size_t)]
    read.restype = ctypes.c_int
    libs.append(lib)
  return libs


def _take_dropped_records(libs: Sequence[Any]) -> int:
  """CUPTI's count of activity records dropped since it was last read, summed over `libs` (reading
  it resets it; CUPTI's global activity buffers count under no context and stream 0); a library
  whose count cannot be read adds 0."""
  total = 0
  for lib in libs:
    count = ctypes.c_size_t(0)
    if lib.cuptiActivityGetNumDroppedRecords(None, 0, ctypes.byref(count)) == 0:
      total += int(count.value)
  return total


def _cupti_kernel_records(fn: Callable[[], Any], iterations: int
                          ) -> list[list[tuple[str, float]]]:
  """Per iteration, the (kernel name, milliseconds) CUPTI recorded (jaxlib's Mosaic GPU
  extension), in launch order.

  The extension aborts the process when CUPTI reports dropped records as it reads them (a C++
  exception inside a CUPTI callback). JAX's profiler leaves one such record behind in every
  trace (H200, jaxlib 0.11.2), so the count is read, which resets it, before timing; records
  dropped while the calls run are read the same way before the extension flushes, and raised
  here as an error instead. Records dropped during the extension's own flush, or counted in a
  buffer it completes while the calls run, still reach its check (none seen on the H200: its
  buffers are 10 MiB).

  Raises:
    RuntimeError: records were dropped, or the kernels do not divide into `iterations` calls.
  """
  from pjrtkit.kernels.core import jax_private  # pylint: disable=g-import-not-at-top
  ext = jax_private.cupti_extension()
  libs = _loaded_cuptis()
  _take_dropped_records(libs)  # Earlier ones (JAX's profiler) are not this measurement's.
  ext._cupti_init()  # pylint: disable=protected-access
  dropped = 0
  try:
    outs = [fn() for _ in range(iterations)]
    jax.block_until_ready(outs)
  finally:
    dropped = _take_dropped_records(libs)
    timings = ext._cupti_get_timings(True)  # pylint: disable=protected-access
  if dropped:
    raise RuntimeError(f"CUPTI dropped {dropped} activity records while timing {iterations} "
                       "iterations: the kernel times are incomplete; use fewer iterations")
  if not timings or len(timings) % iterations:
    raise RuntimeError(f"CUPTI reported {len(timings or [])} kernels for {iterations} iterations")
  per = len(timings) // iterations
  return [[(str(n), float(t)) for n, t in timings[i * per:(i + 1) * per]]
          for i in range(iterations)]


def _cupti_times_ms(fn: Callable[[], Any], iterations: int,
                    event_filter_regex: str | None = None) -> list[float]:
  """Per-iteration sums of CUPTI kernel times (`_cupti_kernel_records`); with
  `event_filter_regex`, of the kernels whose name it matches (``re.search``)."""
  wanted = re.compile(event_filter_regex) if event_filter_regex is not None else None
  return [sum(t for name, t in rec if wanted is None or wanted.search(name))
          for rec in _cupti_kernel_records(fn, iterations)]


def default_method() -> str:
  """The method ``method=None`` takes first on the current device: "cupti" on NVIDIA GPUs with
  jaxlib's CUPTI extension, "wallclock" on pjrtkit's CPU device, else "profiler", which falls
  back to "wallclock" for a program whose trace has no device events (see the module
  docstring)."""
  info = device_lib.current_device()
  if info.is_gpu:
    from pjrtkit.kernels.core import jax_private  # pylint: disable=g-import-not-at-top
    if jax_private.cupti_extension() is not None:
      return "cupti"
    return "profiler"
  if info.is_pjrtkit_cpu:
    return "wallclock"
  return "profiler"


def _method_name(method: str | None) -> str | None:
  """`method` as one of `METHODS` (Tokamax's names through `METHOD_ALIASES`), None for None.

  Raises:
    ValueError: for any other name.
  """
  if method is None:
    return None
  name = METHOD_ALIASES.get(method, method)
  if name not in METHODS:
    raise ValueError(f"unknown method {method!r}; accepted: None, "
                     f"{', '.join(METHODS + tuple(METHOD_ALIASES))}")
  return name


class BenchmarkRunner:
  """A compiled function and how to time it; call it as ``run(args, method=None, iterations=10)``."""

  def __init__(self, compiled: Any, lowering_ms: float, compile_ms: float) -> None:
    self.compiled = compiled
    self.lowering_time_ms = lowering_ms
    self.compile_time_ms = compile_ms
    # The `event_filter_regex` values whose profiler trace had no device events: method=None
    # takes "wallclock" for them at once.
    self._traceless: set[str | None] = set()

  def _peak_memory_mb(self) -> float | None:
    try:
      m = self.compiled.memory_analysis()
    except Exception:  # pylint: disable=broad-except
      return None
    if m is None:
      return None
    total = (m.temp_size_in_bytes + m.argument_size_in_bytes + m.output_size_in_bytes -
             m.alias_size_in_bytes)
    return total / 2**20

  def __call__(self, args: Sequence[Any], method: str | None = None, iterations: int = 10,
               event_filter_regex: str | None = None) -> BenchmarkData:
    """Times `iterations` calls (after one warm-up call) with `method`.

    Args:
      args: the compiled function's arguments (it is called as ``compiled(*args)``).
      method: "wallclock", "profiler" (or Tokamax's "xprof", "hermetic_xprof"), "cupti", or
        None (see the module docstring: "profiler" falls back to "wallclock" only here).
      iterations: timed calls.
      event_filter_regex: "profiler" times the span of the device events whose name it
        matches (``re.search``), "cupti" sums the kernels it matches; "wallclock" times the
        whole call and ignores it (as Tokamax's).

    Raises:
      ValueError: unknown method, `iterations` < 1, or a device-time method the current device
        cannot provide (an explicit "profiler" whose trace has no device events included).
      re.error: a malformed `event_filter_regex` (before anything runs).
    """
    if iterations < 1:
      raise ValueError(f"iterations must be >= 1, got {iterations}")
    requested = _method_name(method)
    chosen = requested or default_method()
    if event_filter_regex is not None:
      re.compile(event_filter_regex)  # A malformed one fails before anything runs.
    fn = lambda: self.compiled(*args)  # noqa: E731
    jax.block_until_ready(fn())
    metadata: dict[str, Any] = {"requested_method": method}
    if event_filter_regex is not None:
      metadata["event_filter_regex"] = event_filter_regex
    times: list[float] | None = None
    if chosen == "profiler":
      if requested is None and event_filter_regex in self._traceless:
        times = None
      else:
        times = _profiler_times_ms(fn, iterations, event_filter_regex)
      if times is None:
        reason = _no_device_events(device_lib.current_device(), event_filter_regex)
        if requested is not None:
          raise ValueError(reason)
        self._traceless.add(event_filter_regex)
        chosen = "wallclock"
        metadata["fallback"] = "profiler: the trace has no device events for this program"
    if chosen == "wallclock":
      times = _wallclock_times_ms(fn, iterations)
    elif chosen == "cupti":
      if not device_lib.current_device().is_gpu:
        raise ValueError("method='cupti' needs an NVIDIA GPU; this device is "
                         f"{device_lib.current_device().describe()}")
      times = _cupti_times_ms(fn, iterations, event_filter_regex)
    metadata["method"] = chosen
    return BenchmarkData(self.lowering_time_ms, self.compile_time_ms, tuple(times or ()),
                         self._peak_memory_mb(), chosen, metadata)

  def kernel_breakdown(self, args: Sequence[Any], iterations: int = 10
                       ) -> list[tuple[str, float]]:
    """The kernels one call launches, in launch order, each with its median CUPTI time (ms) over
    `iterations` calls (after one warm-up call): where a function's device time goes (NVIDIA
    GPUs only). Their sum is close to, not exactly, ``run(args, method="cupti")``'s median.

    Raises:
      ValueError: `iterations` < 1, or the device is not an NVIDIA GPU.
      RuntimeError: CUPTI dropped records or recorded no kernel, or the calls launched different
        kernels.
    """
    if iterations < 1:
      raise ValueError(f"iterations must be >= 1, got {iterations}")
    if not device_lib.current_device().is_gpu:
      raise ValueError("kernel_breakdown needs an NVIDIA GPU (CUPTI); this device is "
                       f"{device_lib.current_device().describe()}")
    fn = lambda: self.compiled(*args)  # noqa: E731
    jax.block_until_ready(fn())
    records = _cupti_kernel_records(fn, iterations)
    names = [n for n, _ in records[0]]
    if any([n for n, _ in rec] != names for rec in records):
      raise RuntimeError("the calls launched different kernels; no per-kernel medians")
    return [(name, float(statistics.median(rec[i][1] for rec in records)))
            for i, name in enumerate(names)]


def compile_benchmark(f_std: Callable[..., Any], args: Sequence[Any]) -> BenchmarkRunner:
  """Lowers and compiles ``jax.jit(f_std)`` for `args`, timing both; returns the runner."""
  jitted = f_std if hasattr(f_std, "lower") else jax.jit(f_std)
  start = time.perf_counter()
  lowered = jitted.lower(*args)
  lowering_ms = (time.perf_counter() - start) * 1e3
  start = time.perf_counter()
  compiled = lowered.compile()
  compile_ms = (time.perf_counter() - start) * 1e3
  return BenchmarkRunner(compiled, lowering_ms, compile_ms)


def benchmark(f: Callable[..., Any], x: Any, *, iterations: int = 5, method: str | None = None,
              event_filter_regex: str | None = None) -> BenchmarkData:
  """Tokamax's one-call benchmark: compiles ``f(x)`` (one argument, as Tokamax calls it; a
  function from `standardize_function` takes its arrays this way too) and times `iterations`
  calls.

  Args:
    f: a function of one argument.
    x: its argument (any pytree of arrays).
    iterations: timed calls (after one warm-up call).
    method: as `BenchmarkRunner.__call__` takes it.
    event_filter_regex: as `BenchmarkRunner.__call__` takes it.

  Returns:
    The `BenchmarkData`.

  Raises:
    ValueError: as `BenchmarkRunner.__call__` raises it.
  """
  return compile_benchmark(f, (x,))((x,), method=method, iterations=iterations,
                                    event_filter_regex=event_filter_regex)
