"""The calls dot_product_attention is benchmarked and tested on: the kernel comparison's cases
(A1..., H1...) and their small CPU stand-ins.

Cases are bfloat16 in layout ``[batch, seq, heads, head_dim]`` with query and key/value of the
same length; a grouped-query (GQA) case's key and value have ``kv_heads`` heads (a divisor of the
query's). Held-out cases (H1...) have shapes that no tuned file (``kernels/tuned``) has choices
for: what ``implementation=None`` does on shapes nobody tuned.

``CALL_SPECS`` names every case twice: ``A1`` at its full shape (tags ``primary``, and
``held_out`` for H1...) and ``A1-quick`` at its quick shape (tag ``ci``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.call_specs import CallSpec
from pjrtkit.kernels.core.comparison import FWD, FWD_BWD, Case

OP = "attention"
"""The op's name in case labels and tables."""
SEED = 13
"""The seed of the comparison's inputs."""


@dataclasses.dataclass(frozen=True)
class AttentionCase(Case):
  """An attention case: `Case` plus a causal mask and the key's and value's heads.

  Attributes:
    causal: attention with a causal mask.
    kv_heads: the key's and value's heads (None: the query's, ``shape[2]``).

  Raises:
    ValueError: kv_heads not a divisor of the query's heads.
  """

  causal: bool = False
  kv_heads: int | None = None

  def __post_init__(self) -> None:
    super().__post_init__()
    if self.kv_heads is None:
      return
    if self.kv_heads < 1 or self.shape[2] % self.kv_heads:
      raise ValueError(f"{self.id}: kv_heads={self.kv_heads} does not divide the query's "
                       f"{self.shape[2]} heads")

  @property
  def grouped(self) -> bool:
    """Grouped-query attention: key/value have fewer heads than the query."""
    return self.kv_heads is not None and self.kv_heads != self.shape[2]

  @property
  def kv_shape(self) -> tuple[int, ...]:
    """The key/value shape ``(batch, seq, kv_heads, head_dim)``."""
    b, s, h, d = self.shape
    return (b, s, h if self.kv_heads is None else self.kv_heads, d)

  def details(self) -> tuple[str, str]:
    """``" causal"`` after the phase; GQA's key/value heads after the shape (``" kv8"``)."""
    return " causal" if self.causal else "", f" kv{self.kv_heads}" if self.grouped else ""

  def record(self) -> dict[str, Any]:
    """`Case.record` plus the key/value shape."""
    info = super().record()
    info["kv_shape"] = self.kv_shape
    return info

  def with_shape(self, shape: tuple[int, ...]) -> AttentionCase:
    """The same case at another shape; a GQA case keeps its group size (query heads per
    key/value head), so its kv_heads follow the new query heads.

    Raises:
      ValueError: the new heads are not a multiple of the group size.
    """
    if self.kv_heads is None:
      return dataclasses.replace(self, shape=tuple(shape))
    group = self.shape[2] // self.kv_heads
    if shape[2] % group:
      raise ValueError(f"{self.id}: {shape[2]} heads do not keep groups of {group} query heads")
    return dataclasses.replace(self, shape=tuple(shape), kv_heads=shape[2] // group)


def _case(case_id: str, shape: tuple[int, int, int, int], phase: str, **kwargs: Any
          ) -> AttentionCase:
  return AttentionCase(case_id, OP, shape, phase, **kwargs)


CASES: tuple[AttentionCase, ...] = (
    _case("A1", (1, 16384, 16, 128), FWD),
    _case("A2", (1, 16384, 16, 128), FWD, causal=True),
    _case("A3", (32, 2048, 16, 64), FWD),
    _case("A4", (32, 2048, 16, 64), FWD_BWD),
    _case("A5", (32, 2048, 16, 64), FWD_BWD, causal=True, extra=True),
    _case("A6", (1, 16384, 16, 128), FWD_BWD, extra=True),
    _case("A7", (16, 1024, 32, 128), FWD_BWD, extra=True),
    _case("A8", (4, 4096, 32, 128), FWD_BWD, extra=True, kv_heads=8),
    _case("A9", (1, 16384, 16, 128), FWD_BWD, causal=True, extra=True),
    _case("A10", (4, 4096, 32, 128), FWD_BWD, causal=True, extra=True, kv_heads=8),
    _case("H1", (8, 1536, 24, 64), FWD, extra=True, held_out=True),
    _case("H2", (2, 6144, 16, 128), FWD_BWD, extra=True, held_out=True),
    _case("H3", (2, 3072, 16, 64), FWD_BWD, causal=True, extra=True, kv_heads=4, held_out=True),
    _case("H4", (3, 2560, 12, 128), FWD_BWD, extra=True, held_out=True),
    _case("H5", (4, 5120, 8, 128), FWD, causal=True, extra=True, held_out=True),
)
"""The comparison's attention cases in the order they run: the issue's rows (A1-A4), the extra
rows, the held-out rows (H1..., shapes nobody tuned) last."""

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
}
"""``--quick``: each full shape's small stand-in (same head_dim; a GQA case's kv_heads follow
with its group size kept, `AttentionCase.with_shape`: A8/A10 kv 2, H3 kv 2)."""


def make_inputs(case: AttentionCase, seed: int = SEED) -> list[jax.Array]:
  """The case's arrays on JAX's default device (random normal bfloat16): q of the case's shape,
  k and v of `AttentionCase.kv_shape` (fewer heads for GQA), plus the output cotangent (the
  query's shape) for fwd+bwd."""
  keys = jax.random.split(jax.random.key(seed), 4)
  dtype = jnp.bfloat16
  arrays = [jax.random.normal(keys[0], case.shape, dtype)] + [
      jax.random.normal(k, case.kv_shape, dtype) for k in keys[1:3]]
  if case.phase != FWD:
    arrays.append(jax.random.normal(keys[3], case.shape, dtype))
  return arrays


def _call_spec(case: AttentionCase, name: str, tags: tuple[str, ...]) -> CallSpec:
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    q, k, v = make_inputs(dataclasses.replace(case, phase=FWD), seed)[:3]
    return (q, k, v), {"is_causal": case.causal}
  return CallSpec(name, build, tags, doc=case.label)


CALL_SPECS: tuple[CallSpec, ...] = tuple(
    _call_spec(c, c.id, ("primary", "held_out") if c.held_out else ("primary",))
    for c in CASES) + tuple(
        _call_spec(c.with_shape(QUICK_SHAPES[c.shape]), f"{c.id}-quick", ("ci",))
        for c in CASES)
"""Every case at its full shape (``A1``; ``primary``, ``held_out``) and at its quick shape
(``A1-quick``; ``ci``)."""
