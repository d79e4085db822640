"""What the jit report knows about each jitted function: plain frozen records, JSON-ready."""

from __future__ import annotations

import dataclasses
import statistics
from typing import Any


@dataclasses.dataclass(frozen=True)
class CompileEvent:
  """One executable built for a jitted function.

  Attributes:
    call: the 1-based call of the function that built it.
    reasons: why it was (re)built (see ``_jit_explain``: "first call", "shape", ...).
    detail: what changed, e.g. ``x: f32[3] -> f32[4]`` or ``n: 2 -> 3``.
    trace_s: seconds JAX spent tracing the function for it.
    lower_s: seconds lowering to StableHLO.
    backend_s: seconds in the backend compile (or in loading from the persistent cache).
    persistent_cache_hit: whether the executable came from the persistent cache.
    explanation: JAX's own message for the tracing cache miss ("" when it did not retrace).
  """

  call: int
  reasons: tuple[str, ...]
  detail: str
  trace_s: float
  lower_s: float
  backend_s: float
  persistent_cache_hit: bool
  explanation: str = ""

  @property
  def total_s(self) -> float:
    """Tracing + lowering + backend compile."""
    return self.trace_s + self.lower_s + self.backend_s


@dataclasses.dataclass(frozen=True)
class FunctionReport:
  """Everything recorded for one ``jax.jit`` object.

  Attributes:
    name: the function's name.
    location: ``file:line`` where it is defined ("" when unknown).
    calls: calls made from outside any trace.
    compiles: the executables built, in order.
    execute_s: per call, seconds from the call to its outputs being ready, less the tracing,
      lowering and compiling that JAX reported during the call.
  """

  name: str
  location: str
  calls: int
  compiles: tuple[CompileEvent, ...]
  execute_s: tuple[float, ...]

  @property
  def in_memory_hits(self) -> int:
    """Calls that built no executable (served by JAX's in-memory caches)."""
    return self.calls - len({c.call for c in self.compiles})

  @property
  def persistent_cache_hits(self) -> int:
    """Executables loaded from the persistent compilation cache."""
    return sum(c.persistent_cache_hit for c in self.compiles)

  @property
  def compile_s(self) -> float:
    """Total tracing + lowering + backend compile seconds."""
    return sum(c.total_s for c in self.compiles)

  @property
  def mean_execute_s(self) -> float | None:
    """Mean execution seconds per call (None without calls)."""
    return statistics.fmean(self.execute_s) if self.execute_s else None

  def to_json(self) -> dict[str, Any]:
    """A JSON-serialisable dict (the report's ``--json`` format)."""
    return {
        "name": self.name, "location": self.location, "calls": self.calls,
        "compilations": len(self.compiles), "in_memory_hits": self.in_memory_hits,
        "persistent_cache_hits": self.persistent_cache_hits,
        "compile_s": self.compile_s, "mean_execute_s": self.mean_execute_s,
        "compiles": [dict(dataclasses.asdict(c), reasons=list(c.reasons)) for c in self.compiles],
    }


@dataclasses.dataclass(frozen=True)
class Report:
  """The whole run.

  Attributes:
    script: the script that ran.
    platform: JAX's default backend during the run.
    jax_version: ``jax.__version__``.
    functions: one entry per jitted function that was called, in order of first call.
    other_compiles: executables built outside the reported functions (eager operations,
      ``pmap``, AOT ``.lower().compile()``, ...).
    other_persistent_cache_hits: how many of those came from the persistent cache.
  """

  script: str
  platform: str
  jax_version: str
  functions: tuple[FunctionReport, ...]
  other_compiles: int
  other_persistent_cache_hits: int

  def to_json(self) -> dict[str, Any]:
    """A JSON-serialisable dict."""
    return {"script": self.script, "platform": self.platform, "jax_version": self.jax_version,
            "functions": [f.to_json() for f in self.functions],
            "other_compiles": self.other_compiles,
            "other_persistent_cache_hits": self.other_persistent_cache_hits}
