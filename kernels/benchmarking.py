"""Benchmarking kernels and functions, named as in Tokamax.

    f_std, args = pk.benchmarking.standardize_function(f, kwargs={"x": x, "scale": scale})
    run = pk.benchmarking.compile_benchmark(f_std, args)
    bench = run(args)                      # BenchmarkData; run(args, method=..., iterations=N)

Methods: "wallclock" (host time of each blocking call, Python dispatch included); "profiler"
(JAX's profiler trace: per iteration, the span of the events the device records: GPU kernels
on ``/device:GPU`` planes, XLA:CPU's execution threads on jaxlib's ``cpu`` backend); "cupti"
(NVIDIA GPUs: CUPTI kernel timings through jaxlib's Mosaic GPU extension). ``method=None``
takes "cupti" on NVIDIA GPUs, else "profiler" where the trace has device events, else
"wallclock" (pjrtkit's CPU device: XLA:CPU inside the plugin records no trace events; a call's
dispatch there costs about 5 us, small against the kernels measured). "cupti" also works after
JAX's profiler ran in the process (see `_cupti_times_ms`).
"""

from __future__ import annotations

import ctypes
import dataclasses
import glob
import os
import statistics
import tempfile
import time
from typing import Any, Callable, Sequence

import jax
import numpy as np

from pjrtkit.kernels.core import device as device_lib

METHODS = ("wallclock", "profiler", "cupti")


@dataclasses.dataclass(frozen=True)
class BenchmarkData:
  """Attributes:
    lowering_time_ms: time to trace and lower the function.
    compile_time_ms: time to compile it.
    evaluation_times_ms: one time per iteration, in milliseconds.
    peak_memory_mb: the compiled program's temporaries + arguments + outputs (XLA's memory
      analysis), None where the backend does not report it.
    method: the measuring method used.
  """

  lowering_time_ms: float
  compile_time_ms: float
  evaluation_times_ms: tuple[float, ...]
  peak_memory_mb: float | None
  method: str

  @property
  def median_evaluation_time_ms(self) -> float:
    """Median of `evaluation_times_ms`."""
    return float(statistics.median(self.evaluation_times_ms))


def _is_array(x: Any) -> bool:
  return isinstance(x, (jax.Array, np.ndarray, jax.ShapeDtypeStruct))


def standardize_function(f: Callable[..., Any], *args: Any, kwargs: dict[str, Any] | None = None,
                         seed: int = 0) -> tuple[Callable[..., Any], list[Any]]:
  """Turns ``f(*args, **kwargs)`` into ``f_std(*arrays)`` and its array arguments.

  Array leaves (``jax.Array``, numpy arrays, ``jax.ShapeDtypeStruct`` replaced by random normal
  data) become positional arguments; every other leaf is fixed.

  Returns:
    (f_std, arrays).
  """
  leaves, tree = jax.tree.flatten((args, kwargs or {}))
  positions = [i for i, x in enumerate(leaves) if _is_array(x)]
  rng = np.random.default_rng(seed)
  arrays = []
  for i in positions:
    x = leaves[i]
    if isinstance(x, jax.ShapeDtypeStruct):
      x = jax.numpy.asarray(rng.standard_normal(x.shape), x.dtype)
    arrays.append(x)

  def f_std(*arrs: Any) -> Any:
    full = list(leaves)
    for i, a in zip(positions, arrs):
      full[i] = a
    a, kw = jax.tree.unflatten(tree, full)
    return f(*a, **kw)

  return f_std, arrays


def _device_event_spans(xspace_path: str) -> list[tuple[int, int]]:
  """(start_ns, end_ns) of device events in a trace: GPU planes, XLA:CPU execution threads."""
  from jax.profiler import ProfileData  # pylint: disable=g-import-not-at-top
  data = ProfileData.from_file(xspace_path)
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
        spans.append((ev.start_ns, ev.start_ns + ev.duration_ns))
  return spans


def _profiler_time_ms(fn: Callable[[], Any]) -> float | None:
  """One call's device span from JAX's profiler trace; None when the trace has no device events."""
  with tempfile.TemporaryDirectory(prefix="pk_bench_") as tmp:
    jax.profiler.start_trace(tmp)
    try:
      jax.block_until_ready(fn())
    finally:
      jax.profiler.stop_trace()
    files = glob.glob(f"{tmp}/**/*.xplane.pb", recursive=True)
    spans = _device_event_spans(files[0]) if files else []
  if not spans:
    return None
  return (max(e for _, e in spans) - min(s for s, _ in spans)) / 1e6


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


def _cupti_times_ms(fn: Callable[[], Any], iterations: int) -> list[float]:
  """Per-iteration sums of CUPTI kernel times (`_cupti_kernel_records`)."""
  return [sum(t for _, t in rec) for rec in _cupti_kernel_records(fn, iterations)]


def default_method() -> str:
  """The method ``method=None`` uses on the current device (see the module docstring)."""
  info = device_lib.current_device()
  if info.is_gpu:
    from pjrtkit.kernels.core import jax_private  # pylint: disable=g-import-not-at-top
    if jax_private.cupti_extension() is not None:
      return "cupti"
    return "profiler"
  if info.is_pjrtkit_cpu:
    return "wallclock"
  return "profiler"


class BenchmarkRunner:
  """A compiled function and how to time it; call it as ``run(args, method=None, iterations=10)``."""

  def __init__(self, compiled: Any, lowering_ms: float, compile_ms: float) -> None:
    self.compiled = compiled
    self.lowering_time_ms = lowering_ms
    self.compile_time_ms = compile_ms

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

  def __call__(self, args: Sequence[Any], method: str | None = None,
               iterations: int = 10) -> BenchmarkData:
    """Times `iterations` calls (after one warm-up call) with `method`.

    Raises:
      ValueError: unknown method, or a device-time method the current device cannot provide.
    """
    if iterations < 1:
      raise ValueError(f"iterations must be >= 1, got {iterations}")
    chosen = method or default_method()
    if chosen not in METHODS:
      raise ValueError(f"unknown method {method!r}; accepted: None, {', '.join(METHODS)}")
    fn = lambda: self.compiled(*args)  # noqa: E731
    jax.block_until_ready(fn())
    if chosen == "wallclock":
      times = []
      for _ in range(iterations):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append((time.perf_counter() - start) * 1e3)
    elif chosen == "profiler":
      times = []
      for _ in range(iterations):
        t = _profiler_time_ms(fn)
        if t is None:
          info = device_lib.current_device()
          raise ValueError(
              f"method='profiler': JAX's profiler trace has no device events on "
              f"{info.describe()} (pjrtkit's CPU device runs XLA:CPU inside the plugin, which "
              f"records none); use method='wallclock' or None")
        times.append(t)
    else:
      if not device_lib.current_device().is_gpu:
        raise ValueError("method='cupti' needs an NVIDIA GPU; this device is "
                         f"{device_lib.current_device().describe()}")
      times = _cupti_times_ms(fn, iterations)
    return BenchmarkData(self.lowering_time_ms, self.compile_time_ms, tuple(times),
                         self._peak_memory_mb(), chosen)

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
