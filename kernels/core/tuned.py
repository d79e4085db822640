"""`AutotuningResult`: tuned choices keyed by device kind, op, phase, request and spec.

Used as a context manager, a result overlays the tuned choices the ops consult at trace time
(innermost first, then the results shipped in ``kernels/tuned/<device kind>.json``, then each
op's documented rule). The active stack is part of JAX's jit cache key (``jax.make_user_context``),
so a function jitted outside the context is traced again inside it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterator, Mapping, TextIO

import jax

from pjrtkit.kernels.core.spec import Spec

FORMAT_VERSION = 1
_TUNED_DIR = Path(__file__).resolve().parents[1] / "tuned"
_ACTIVE: list["AutotuningResult"] = []
_CONTEXT = jax.make_user_context(())


@dataclasses.dataclass(frozen=True)
class TunedChoice:
  """The fastest (implementation, config) measured for one phase of one call.

  Attributes:
    op: op family name.
    phase: "fwd" or "bwd".
    requested: the implementation the call asked for ("auto" for None).
    spec: the call.
    implementation: the implementation chosen.
    config: its config as a JSON object (the config dataclass's fields).
    time_ms: its measured time.
    candidates: every (implementation, config, time_ms) measured, fastest first.
  """

  op: str
  phase: str
  requested: str
  spec: Spec
  implementation: str
  config: tuple[tuple[str, Any], ...]
  time_ms: float
  candidates: tuple[tuple[str, tuple[tuple[str, Any], ...], float], ...] = ()

  def key(self) -> tuple[str, str, str, str]:
    """(op, phase, requested, spec key)."""
    return (self.op, self.phase, self.requested, self.spec.key())

  def to_json(self) -> dict[str, Any]:
    """JSON-ready dict."""
    return {"op": self.op, "phase": self.phase, "requested": self.requested,
            "spec": self.spec.to_json(), "implementation": self.implementation,
            "config": dict(self.config), "time_ms": self.time_ms,
            "candidates": [{"implementation": i, "config": dict(c), "time_ms": t}
                           for i, c, t in self.candidates]}

  @classmethod
  def from_json(cls, d: Mapping[str, Any]) -> "TunedChoice":
    """Inverse of `to_json`."""
    return cls(d["op"], d["phase"], d["requested"], Spec.from_json(d["spec"]),
               d["implementation"], tuple(sorted(d["config"].items())), float(d["time_ms"]),
               tuple((c["implementation"], tuple(sorted(c["config"].items())), float(c["time_ms"]))
                     for c in d.get("candidates", ())))


@dataclasses.dataclass(frozen=True)
class AutotuningResult:
  """Autotuned choices for one device kind; a context manager (see the module docstring).

  Attributes:
    device_kind: the device kind the choices were measured on; they apply only there.
    choices: the tuned choices.
  """

  device_kind: str
  choices: tuple[TunedChoice, ...]

  def dumps(self, *, prune_errors: bool = False) -> str:
    """Stable JSON text: keys sorted, choices sorted by (op, phase, requested, spec).

    Args:
      prune_errors: Tokamax's option (drop the candidates that failed); accepted, and the text
        is the same either way: a result here holds only candidates that were measured
        (`autotune` leaves out, and logs, those that fail).
    """
    del prune_errors
    data = {"format": FORMAT_VERSION, "device_kind": self.device_kind,
            "choices": [c.to_json() for c in sorted(self.choices, key=TunedChoice.key)]}
    return json.dumps(data, sort_keys=True, indent=1)

  def dump(self, fp: TextIO, *, prune_errors: bool = False) -> None:
    """Writes `dumps` to the text file `fp` (Tokamax's name; `prune_errors` as in `dumps`)."""
    fp.write(self.dumps(prune_errors=prune_errors))

  @classmethod
  def loads(cls, text: str) -> "AutotuningResult":
    """Reads `dumps` output.

    Raises:
      ValueError: for another format version.
    """
    data = json.loads(text)
    if data.get("format") != FORMAT_VERSION:
      raise ValueError(f"AutotuningResult format {data.get('format')!r} is not "
                       f"{FORMAT_VERSION}")
    return cls(data["device_kind"], tuple(TunedChoice.from_json(c) for c in data["choices"]))

  @classmethod
  def load(cls, fp: TextIO) -> "AutotuningResult":
    """Reads `dump` output from the text file `fp` (Tokamax's name; see `loads`).

    Raises:
      ValueError: for another format version.
    """
    return cls.loads(fp.read())

  @functools.cached_property
  def fingerprint(self) -> str:
    """SHA-256 of `dumps()`: equal results share JAX's caches."""
    return hashlib.sha256(self.dumps().encode()).hexdigest()

  @functools.cached_property
  def _index(self) -> dict[tuple[str, str, str, str], TunedChoice]:
    return {c.key(): c for c in self.choices}

  def lookup(self, device_kind: str, op: str, phase: str, requested: str,
             spec: Spec) -> TunedChoice | None:
    """The choice for this call on `device_kind`, if this result has one."""
    if device_kind != self.device_kind:
      return None
    return self._index.get((op, phase, requested, spec.key()))

  def __enter__(self) -> "AutotuningResult":
    _ACTIVE.append(self)
    context = _CONTEXT(tuple(r.fingerprint for r in _ACTIVE))
    context.__enter__()
    _CONTEXTS.append(context)
    return self

  def __exit__(self, *exc: Any) -> None:
    _CONTEXTS.pop().__exit__(*exc)
    _ACTIVE.pop()


_CONTEXTS: list[Any] = []


def shipped_path(device_kind: str) -> Path:
  """``kernels/tuned/<kind>.json``, runs of characters other than letters, digits, ``_.-`` in
  the kind as one underscore (``NVIDIA H200`` -> ``NVIDIA_H200.json``)."""
  return _TUNED_DIR / (re.sub(r"[^A-Za-z0-9_.-]+", "_", device_kind) + ".json")


@functools.lru_cache(maxsize=None)
def shipped_result(device_kind: str) -> AutotuningResult | None:
  """The tuned results shipped for `device_kind` (`shipped_path`), if any."""
  path = shipped_path(device_kind)
  if not path.exists():
    return None
  return AutotuningResult.loads(path.read_text(encoding="utf-8"))


def lookup(device_kind: str, op: str, phase: str, requested: str,
           spec: Spec) -> TunedChoice | None:
  """The tuned choice for a call: active results innermost first, then the shipped ones."""
  for result in reversed(_ACTIVE):
    found = result.lookup(device_kind, op, phase, requested, spec)
    if found is not None:
      return found
  shipped = shipped_result(device_kind)
  return shipped.lookup(device_kind, op, phase, requested, spec) if shipped else None


def active_results() -> Iterator[AutotuningResult]:
  """The results active now, innermost first."""
  return reversed(list(_ACTIVE))
