"""The cases of the GPU kernel comparison (issue 13) and their throughput arithmetic.

Attention cases are bfloat16 in layout ``[batch, seq, heads, head_dim]`` with query and key/value
of the same length; a grouped-query (GQA) case's key and value have ``kv_heads`` heads (a divisor
of the query's). Layer norm cases are bfloat16 ``[rows, features]`` with scale and offset.
Held-out cases have shapes that no tuned file (``kernels/tuned``) has choices for: what
``implementation=None`` does on shapes nobody tuned.

Conventions (stated in every table):
  * attention forward FLOPs = 4 * b * h * t * s * d (two matmuls of 2 * t * s * d per query
    head: h counts query heads, GQA included), halved for causal; forward+backward = 3.5 x the
    forward count;
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
    kv_heads: attention only: the key's and value's heads (None: the query's, ``shape[2]``).
    held_out: a shape no tuned file has choices for (never tuned; `tools.kernels_gpu.tune`
      leaves it out).

  Raises:
    ValueError: kv_heads on a layer norm case, or not a divisor of the query's heads.
  """

  id: str
  op: str
  shape: tuple[int, ...]
  phase: str
  causal: bool = False
  extra: bool = False
  kv_heads: int | None = None
  held_out: bool = False

  def __post_init__(self) -> None:
    if self.kv_heads is None:
      return
    if self.op != ATTENTION:
      raise ValueError(f"{self.id}: kv_heads is for attention cases, not {self.op}")
    if self.kv_heads < 1 or self.shape[2] % self.kv_heads:
      raise ValueError(f"{self.id}: kv_heads={self.kv_heads} does not divide the query's "
                       f"{self.shape[2]} heads")

  @property
  def grouped(self) -> bool:
    """Grouped-query attention: key/value have fewer heads than the query."""
    return self.kv_heads is not None and self.kv_heads != self.shape[2]

  @property
  def kv_shape(self) -> tuple[int, ...]:
    """An attention case's key/value shape ``(batch, seq, kv_heads, head_dim)``."""
    b, s, h, d = self.shape
    return (b, s, h if self.kv_heads is None else self.kv_heads, d)

  @property
  def label(self) -> str:
    """``A2 attention fwd causal 1x16384x16x128``; GQA adds the key/value heads:
    ``A8 attention fwd+bwd 4x4096x32x128 kv8``."""
    causal = " causal" if self.causal else ""
    kv = f" kv{self.kv_heads}" if self.grouped else ""
    return f"{self.id} {self.op} {self.phase}{causal} {'x'.join(map(str, self.shape))}{kv}"

  def with_shape(self, shape: tuple[int, ...]) -> "Case":
    """The same case at another shape (the --quick sizes); a GQA case keeps its group size
    (query heads per key/value head), so its kv_heads follow the new query heads.

    Raises:
      ValueError: the new heads are not a multiple of the group size.
    """
    if self.kv_heads is None:
      return dataclasses.replace(self, shape=shape)
    group = self.shape[2] // self.kv_heads
    if shape[2] % group:
      raise ValueError(f"{self.id}: {shape[2]} heads do not keep groups of {group} query heads")
    return dataclasses.replace(self, shape=shape, kv_heads=shape[2] // group)


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
    Case("A7", ATTENTION, (16, 1024, 32, 128), FWD_BWD, extra=True),
    Case("A8", ATTENTION, (4, 4096, 32, 128), FWD_BWD, extra=True, kv_heads=8),
    Case("A9", ATTENTION, (1, 16384, 16, 128), FWD_BWD, causal=True, extra=True),
    Case("A10", ATTENTION, (4, 4096, 32, 128), FWD_BWD, causal=True, extra=True, kv_heads=8),
    Case("H1", ATTENTION, (8, 1536, 24, 64), FWD, extra=True, held_out=True),
    Case("H2", ATTENTION, (2, 6144, 16, 128), FWD_BWD, extra=True, held_out=True),
    Case("H3", ATTENTION, (2, 3072, 16, 64), FWD_BWD, causal=True, extra=True, kv_heads=4,
         held_out=True),
    Case("H4", ATTENTION, (3, 2560, 12, 128), FWD_BWD, extra=True, held_out=True),
    Case("H5", ATTENTION, (4, 5120, 8, 128), FWD, causal=True, extra=True, held_out=True),
)
"""Every case, in the order they run: the issue's rows first, the extra rows last, the held-out
rows (H1..., shapes nobody tuned) at the end."""

QUICK_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {
    (1, 16384, 16, 128): (1, 256, 2, 128),
    (32, 2048, 16, 64): (2, 128, 2, 64),
    (16, 1024, 32, 128): (2, 128, 4, 128),
    (4, 4096, 32, 128): (1, 256, 8, 128),
    (8, 1536, 24, 64): (2, 96, 3, 64),
    (2, 6144, 16, 128): (1, 192, 2, 128),
    (2, 3072, 16, 64): (1, 96, 8, 64),
    (3, 2560, 12, 128): (1, 160, 3, 128),
    (4, 5120, 8, 128): (1, 160, 2, 128),
    (1048576, 64): (2048, 64),
    (8192, 8192): (64, 512),
}
"""--quick: each full shape's small stand-in (same head_dim / features width class; a GQA case's
kv_heads follow with its group size kept, `Case.with_shape`: A8/A10 kv 2, H3 kv 2)."""


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
  """FLOPs counted for an attention case (module docstring convention: query heads, so a GQA
  case counts what the same shape without grouping would)."""
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
    ATTENTION: ("TFLOP/s: forward FLOPs = 4*b*h*t*s*d, h = query heads (GQA too; halved for "
                "causal); fwd+bwd = 3.5x forward"),
    LAYER_NORM: "TB/s: bytes = passes x input bytes; fwd 2 passes (read x, write y), fwd+bwd 5",
}
"""The throughput convention per op, as printed above each table."""
