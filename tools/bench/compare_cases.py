"""The cases of the GPU kernel comparison (issue 13) and their throughput arithmetic.

Attention cases are bfloat16 in layout ``[batch, seq, heads, head_dim]`` with query and key/value
of the same length; layer norm cases are bfloat16 ``[rows, features]`` with scale and offset.

Conventions (stated in every table):
  * attention forward FLOPs = 4 * b * h * t * s * d (two matmuls of 2 * t * s * d per head),
    halved for causal; forward+backward = 3.5 x the forward count;
  * layer norm bytes = passes x the input's bytes: forward 2 passes (read x, write y),
    forward+backward 5 passes.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

FWD = "fwd"
FWD_BWD = "fwd+bwd"
ATTENTION = "attention"
LAYER_NORM = "layer_norm"
BWD_FLOP_FACTOR = 3.5
"""forward+backward FLOPs / forward FLOPs."""
LAYER_NORM_PASSES = {FWD: 2, FWD_BWD: 5}
"""Passes over the input's bytes counted per phase."""
DTYPE = "bfloat16"
DTYPE_BYTES = 2


@dataclasses.dataclass(frozen=True)
class Case:
  """One row group of the comparison.

  Attributes:
    id: short name (``A1``, ``L3``).
    op: ``attention`` or ``layer_norm``.
    shape: ``(batch, seq, heads, head_dim)`` or ``(rows, features)``.
    phase: ``fwd`` or ``fwd+bwd``.
    causal: attention with a causal mask.
    extra: an extra row, run after the others (``--cases`` names it or the default list has it).
  """

  id: str
  op: str
  shape: tuple[int, ...]
  phase: str
  causal: bool = False
  extra: bool = False

  @property
  def label(self) -> str:
    """``A2 attention fwd causal 1x16384x16x128``."""
    causal = " causal" if self.causal else ""
    return f"{self.id} {self.op} {self.phase}{causal} {'x'.join(map(str, self.shape))}"

  def with_shape(self, shape: tuple[int, ...]) -> "Case":
    """The same case at another shape (the --quick sizes)."""
    return dataclasses.replace(self, shape=shape)


CASES: tuple[Case, ...] = (
    Case("A1", ATTENTION, (1, 16384, 16, 128), FWD),
    Case("A2", ATTENTION, (1, 16384, 16, 128), FWD, causal=True),
    Case("A3", ATTENTION, (32, 2048, 16, 64), FWD),
    Case("A4", ATTENTION, (32, 2048, 16, 64), FWD_BWD),
    Case("L1", LAYER_NORM, (1048576, 64), FWD),
    Case("L2", LAYER_NORM, (8192, 8192), FWD),
    Case("L3", LAYER_NORM, (1048576, 64), FWD_BWD),
    Case("L4", LAYER_NORM, (8192, 8192), FWD_BWD),
    Case("A5", ATTENTION, (32, 2048, 16, 64), FWD_BWD, causal=True, extra=True),
    Case("A6", ATTENTION, (1, 16384, 16, 128), FWD_BWD, extra=True),
)
"""Every case, in the order they run: the issue's rows first, the extra rows last."""

QUICK_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {
    (1, 16384, 16, 128): (1, 256, 2, 128),
    (32, 2048, 16, 64): (2, 128, 2, 64),
    (1048576, 64): (2048, 64),
    (8192, 8192): (64, 512),
}
"""--quick: each full shape's small stand-in (same head_dim / features width class)."""


def select(ids: Sequence[str] | None = None, quick: bool = False) -> list[Case]:
  """The cases named by `ids` (all when None or empty), at the quick shapes when `quick`.

  Raises:
    ValueError: for an unknown id, naming the known ones.
  """
  by_id = {c.id: c for c in CASES}
  wanted = [i.strip().upper() for i in ids or () if i.strip()]
  unknown = [i for i in wanted if i not in by_id]
  if unknown:
    raise ValueError(f"unknown case(s) {unknown}; known: {', '.join(by_id)}")
  chosen = [c for c in CASES if not wanted or c.id in wanted]
  return [c.with_shape(QUICK_SHAPES[c.shape]) if quick else c for c in chosen]


def attention_flops(case: Case) -> float:
  """FLOPs counted for an attention case (module docstring convention)."""
  b, t, h, d = case.shape
  s = t
  flops = 4.0 * b * h * t * s * d
  if case.causal:
    flops /= 2
  if case.phase == FWD_BWD:
    flops *= BWD_FLOP_FACTOR
  return flops


def layer_norm_bytes(case: Case) -> int:
  """Bytes counted for a layer norm case: passes x the input's bytes."""
  return LAYER_NORM_PASSES[case.phase] * math.prod(case.shape) * DTYPE_BYTES


def throughput(case: Case, ms: float) -> float:
  """TFLOP/s (attention) or TB/s (layer norm) of one run of `case` taking `ms` milliseconds."""
  amount = attention_flops(case) if case.op == ATTENTION else layer_norm_bytes(case)
  return amount / (ms * 1e-3) / 1e12


def throughput_unit(op: str) -> str:
  """``TFLOP/s`` or ``TB/s``."""
  return "TFLOP/s" if op == ATTENTION else "TB/s"


CONVENTION = {
    ATTENTION: "TFLOP/s: forward FLOPs = 4*b*h*t*s*d (halved for causal); fwd+bwd = 3.5x forward",
    LAYER_NORM: "TB/s: bytes = passes x input bytes; fwd 2 passes (read x, write y), fwd+bwd 5",
}
"""The throughput convention per op, as printed above each table."""
