"""The cases of the GPU kernel comparison, found in the op folders, and their throughput.

The harness holds no op of its own: every op folder with a ``benchmark.py``
(``pjrtkit.kernels.<op>.benchmark``) declares ``BENCHMARK``, a
`pjrtkit.kernels.core.comparison.OpBenchmark` with the op's cases (from its ``arg_specs.py``),
contenders and throughput arithmetic; `op_benchmarks` finds them by scanning the package's
folders, so a new op takes part by adding its ``benchmark.py``. Case ids are unique over every op.

Order: each op's first rows (the issue's: A1-A4, L1-L4), then the extra rows, the held-out rows
(H1..., shapes nobody tuned) last; ops in folder-name order within each part.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
from typing import Sequence

from pjrtkit import kernels as pk
from pjrtkit.kernels.core import comparison
from pjrtkit.kernels.core.comparison import FWD, FWD_BWD, Case, OpBenchmark

__all__ = ["FWD", "FWD_BWD", "Case", "OpBenchmark", "benchmark_of", "cases", "convention",
           "op_benchmarks", "select", "throughput", "throughput_unit"]

BENCHMARK_MODULE = "benchmark"
"""The module of an op folder that declares ``BENCHMARK``."""


@functools.cache
def op_benchmarks() -> tuple[OpBenchmark, ...]:
  """Every op folder's ``BENCHMARK``, in folder-name order.

  Raises:
    TypeError: a ``benchmark.py`` without an `OpBenchmark` named ``BENCHMARK``.
    ValueError: two ops of one name, or a case id used twice.
  """
  found: list[OpBenchmark] = []
  for info in sorted(pkgutil.iter_modules(pk.__path__), key=lambda m: m.name):
    name = f"{pk.__name__}.{info.name}.{BENCHMARK_MODULE}"
    if not info.ispkg or importlib.util.find_spec(name) is None:
      continue
    bench = getattr(importlib.import_module(name), "BENCHMARK", None)
    if not isinstance(bench, comparison.OpBenchmark):
      raise TypeError(f"{name}: BENCHMARK must be an OpBenchmark, got {type(bench).__name__}")
    found.append(bench)
  names = [b.name for b in found]
  twice = sorted({n for n in names if names.count(n) > 1})
  ids = [c.id for b in found for c in b.cases]
  used = sorted({i for i in ids if ids.count(i) > 1})
  if twice or used:
    raise ValueError(f"kernel comparison: ops named twice {twice}, case ids used twice {used}")
  return tuple(found)


def benchmark_of(op: str) -> OpBenchmark:
  """The `OpBenchmark` named `op`.

  Raises:
    KeyError: naming the known ops.
  """
  for bench in op_benchmarks():
    if bench.name == op:
      return bench
  raise KeyError(f"no op benchmark {op!r}; known: {[b.name for b in op_benchmarks()]}")


def cases() -> tuple[Case, ...]:
  """Every case, in the order they run (module docstring)."""
  every = [c for b in op_benchmarks() for c in b.cases]
  return tuple(sorted(every, key=lambda c: (c.extra, c.held_out)))


def select(ids: Sequence[str] | None = None, quick: bool = False) -> list[Case]:
  """The cases named by `ids` (all when None or empty), at the quick shapes when `quick`.

  Raises:
    ValueError: for an unknown id, naming the known ones.
  """
  every = cases()
  by_id = {c.id: c for c in every}
  wanted = [i.strip().upper() for i in ids or () if i.strip()]
  unknown = [i for i in wanted if i not in by_id]
  if unknown:
    raise ValueError(f"unknown case(s) {unknown}; known: {', '.join(by_id)}")
  chosen = [c for c in every if not wanted or c.id in wanted]
  return [benchmark_of(c.op).quick(c) if quick else c for c in chosen]


def throughput(case: Case, ms: float) -> float:
  """The throughput (`throughput_unit`) of one run of `case` taking `ms` milliseconds."""
  return benchmark_of(case.op).throughput(case, ms)


def throughput_unit(op: str) -> str:
  """``TFLOP/s``, ``TB/s``, ...: the unit of `op`'s throughput."""
  return benchmark_of(op).unit


def convention(op: str) -> str:
  """How `op`'s throughput is counted, as printed above each table."""
  return benchmark_of(op).convention
