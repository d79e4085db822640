"""Compile time of a mid-size program: cold, and loaded from JAX's persistent cache."""

from __future__ import annotations

import tempfile
import time
from typing import Any, Callable

import numpy as np

from tools.bench.compute import mlp_train_step_fn
from tools.bench.config import BenchConfig
from tools.bench.records import Measurement

COMPILE_SIZES = (256,) + (256,) * 12 + (10,)
"""A 13-layer MLP training step: a few hundred HLO ops, about a second to compile on XLA:CPU."""


def _lowered(device: Any, scale: float) -> Any:
  """The training step for `scale` (a different `scale` is a different program), lowered."""
  import jax  # pylint: disable=g-import-not-at-top

  params = [(jax.ShapeDtypeStruct((m, n), np.float32), jax.ShapeDtypeStruct((n,), np.float32))
            for m, n in zip(COMPILE_SIZES[:-1], COMPILE_SIZES[1:])]
  x = jax.ShapeDtypeStruct((64, COMPILE_SIZES[0]), np.float32)
  y = jax.ShapeDtypeStruct((64, COMPILE_SIZES[-1]), np.float32)
  sharding = jax.sharding.SingleDeviceSharding(device)
  step = jax.jit(mlp_train_step_fn(scale), in_shardings=sharding, out_shardings=sharding)
  return step.lower(params, x, y)


def _timed(fn: Callable[[], Any]) -> float:
  start = time.perf_counter()
  fn()
  return time.perf_counter() - start


def _median(values: list[float]) -> float:
  return float(np.median(np.asarray(values)))


def compile_times(config: BenchConfig, device: Any) -> list[Measurement]:
  """Cold compiles of fresh programs, then compiles that JAX's persistent cache should serve.

  The cold samples run with the persistent cache off, so they do not pay for writing it. The
  cached samples compile programs written to a fresh cache directory, after
  `jax.clear_caches()` empties the in-memory caches. When no sample is a persistent-cache hit
  the cached measurement is n/a, with the reason.
  """
  import jax  # pylint: disable=g-import-not-at-top
  from jax._src import compilation_cache  # pylint: disable=g-import-not-at-top
  from jax._src import monitoring  # pylint: disable=g-import-not-at-top

  label = f"compile {len(COMPILE_SIZES) - 1}-layer MLP train step"
  cold = [_timed(_lowered(device, 1.0 + i).compile) for i in range(1, config.compile_repeats + 1)]
  results = [Measurement("compile_cold", label + ", cold", "compile", _median(cold))]

  events: list[str] = []

  def listener(event: str, **_: Any) -> None:
    events.append(event)

  monitoring.register_event_listener(listener)
  with tempfile.TemporaryDirectory(prefix="pjrtkit_bench_cache_") as cache_dir:
    jax.config.update("jax_compilation_cache_dir", cache_dir)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    compilation_cache.reset_cache()
    try:
      scales = [100.0 + i for i in range(config.compile_repeats)]
      for scale in scales:
        _lowered(device, scale).compile()  # A miss: compiles and writes the cache.
      cached = []
      hits_before = events.count("/jax/compilation_cache/cache_hits")
      for scale in scales:
        jax.clear_caches()
        lowered = _lowered(device, scale)
        cached.append(_timed(lowered.compile))
      hits = events.count("/jax/compilation_cache/cache_hits") - hits_before
      used = "/jax/compilation_cache/tasks_using_cache" in events
    finally:
      jax.config.update("jax_compilation_cache_dir", None)
      compilation_cache.reset_cache()
      monitoring.unregister_event_listener(listener)
  platform = device.client.platform
  if hits == len(scales):
    results.append(Measurement("compile_cached", label + ", persistent cache", "compile",
                               _median(cached), note=f"{hits} persistent-cache hits"))
  else:
    reason = (f"JAX does not use its persistent cache for platform '{platform}' "
              "(jax._src.compilation_cache.is_cache_used accepts tpu/gpu/cpu/neuron)"
              if not used else f"{hits} of {len(scales)} compiles hit the persistent cache")
    results.append(Measurement("compile_cached", label + ", persistent cache", "compile", None,
                               na_reason=reason))
  return results
