"""Markers that make every kernel call findable in a lowered program.

Each kernel call runs its forward and its backward inside ``jax.named_scope`` of a marker
``pjrtkit_kernel.<phase>.<implementation requested>.<base32 of the Spec's JSON>``. Named scopes
become the names of the StableHLO operations' locations (and HLO ``op_name`` metadata), so
`find_calls` recovers every call, with its shapes, dtypes and parameters, from
``jax.jit(f).lower(...)`` without running the user's Python again.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from typing import Iterable

from pjrtkit.kernels.core.spec import Spec

PREFIX = "pjrtkit_kernel"
AUTO = "auto"
"""The requested implementation recorded for ``implementation=None``."""
_PATTERN = re.compile(PREFIX + r"\.(fwd|bwd)\.([a-z0-9_]+)\.([A-Z2-7]+)")


@dataclasses.dataclass(frozen=True)
class KernelCall:
  """One kernel call found in a program: which phase, what was requested, the spec."""

  phase: str
  requested: str
  spec: Spec


def marker(phase: str, requested: str | None, spec: Spec) -> str:
  """The named-scope text of one call's `phase` ('fwd' or 'bwd')."""
  payload = base64.b32encode(spec.key().encode()).decode().rstrip("=")
  return f"{PREFIX}.{phase}.{requested or AUTO}.{payload}"


def _decode(payload: str) -> Spec:
  padded = payload + "=" * (-len(payload) % 8)
  return Spec.from_json(json.loads(base64.b32decode(padded)))


def find_calls(program_text: str) -> tuple[KernelCall, ...]:
  """Every distinct kernel call marked in `program_text` (StableHLO or HLO text with locations),
  in order of first appearance."""
  seen: dict[tuple[str, str, str], KernelCall] = {}
  for phase, requested, payload in _PATTERN.findall(program_text):
    key = (phase, requested, payload)
    if key not in seen:
      seen[key] = KernelCall(phase, requested, _decode(payload))
  return tuple(seen.values())


def unique_specs(calls: Iterable[KernelCall]) -> list[tuple[str, str, Spec]]:
  """(phase, requested, spec) of `calls` without repeats."""
  out: list[tuple[str, str, Spec]] = []
  for c in calls:
    item = (c.phase, c.requested, c.spec)
    if item not in out:
      out.append(item)
  return out
