"""Timing helpers: run a callable repeatedly and keep the median of the samples."""

from __future__ import annotations

import gc
import statistics
import time
from typing import Any, Callable, Optional


def median_seconds(run: Callable[..., Any],
                   *,
                   repeats: int,
                   warmup: int = 1,
                   inner: int = 1,
                   setup: Optional[Callable[[], Any]] = None,
                   teardown: Optional[Callable[[Any], None]] = None) -> float:
  """Median wall time of one call of `run`, in seconds.

  Each sample times `inner` back-to-back calls and divides by `inner` (for sub-microsecond
  work). With `setup`, every sample first calls `setup()` untimed and passes its result to
  `run`; `teardown(result)` runs untimed after the sample. The garbage collector is paused
  while a sample runs so that a collection does not land inside one.

  Args:
    run: the work to time.
    repeats: number of timed samples (>= 1).
    warmup: untimed calls before the first sample.
    inner: calls per sample.
    setup: optional untimed producer of `run`'s argument.
    teardown: optional untimed consumer of `setup`'s result.

  Returns:
    The median over `repeats` samples of (sample time / inner).
  """
  if repeats < 1 or inner < 1:
    raise ValueError(f"repeats ({repeats}) and inner ({inner}) must be >= 1")

  def one_sample() -> float:
    arg = setup() if setup is not None else None
    args = (arg,) if setup is not None else ()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
      start = time.perf_counter()
      for _ in range(inner):
        run(*args)
      elapsed = time.perf_counter() - start
    finally:
      if gc_was_enabled:
        gc.enable()
    if teardown is not None:
      teardown(arg)
    return elapsed / inner

  for _ in range(warmup):
    one_sample()
  return statistics.median(one_sample() for _ in range(repeats))


def median_of_calls(run: Callable[[Any], Any], items: list[Any]) -> float:
  """Median wall time of `run(item)` over `items` (one timed call each, garbage collector
  paused), in seconds: for work that needs a fresh input per call, made beforehand."""
  if not items:
    raise ValueError("median_of_calls needs at least one item")
  gc_was_enabled = gc.isenabled()
  gc.disable()
  times = []
  try:
    for item in items:
      start = time.perf_counter()
      run(item)
      times.append(time.perf_counter() - start)
  finally:
    if gc_was_enabled:
      gc.enable()
  return statistics.median(times)
