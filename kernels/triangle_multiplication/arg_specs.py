"""The calls triangle_multiplication is tested and benchmarked on: the kernel comparison's cases
(TM1...) with their small CPU stand-ins.

AlphaFold pair stacks, bfloat16: x ``[n, n, c]``, a 90 % mask, weights scaled by
1/sqrt(fan-in), layer norm scales near 1; a case's shape is ``(n, c, h, d)``. Arrays come from
``jax.random``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.call_specs import CallSpec
from pjrtkit.kernels.core.comparison import FWD, FWD_BWD, Case

OP = "triangle_multiplication"
SEED = 13


@dataclasses.dataclass(frozen=True)
class TriangleCase(Case):
  """A triangle_multiplication case: shape ``(n, c, h, d)`` and the triangle type."""

  triangle_type: str = "outgoing"

  def details(self) -> tuple[str, str]:
    return f" {self.triangle_type}", ""


CASES: tuple[Case, ...] = (
    TriangleCase("TM1", OP, (256, 128, 128, 128), FWD),                          # AF2 crop 256
    TriangleCase("TM2", OP, (384, 128, 128, 128), FWD_BWD, triangle_type="incoming"),
    TriangleCase("TM3", OP, (300, 64, 64, 64), FWD_BWD, extra=True, held_out=True),
)
"""The comparison's triangle multiplication cases."""

QUICK_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {
    (256, 128, 128, 128): (12, 16, 8, 8),
    (384, 128, 128, 128): (10, 16, 8, 12),
    (300, 64, 64, 64): (9, 8, 8, 8),
}
"""``--quick``: each full shape's small stand-in."""


def make_inputs(case: Case, seed: int = SEED) -> list[Any]:
  """The ten arrays in the public order; plus the output cotangent for fwd+bwd."""
  n, c, h, d = case.shape
  keys = iter(jax.random.split(jax.random.key(seed), 12))

  def a(*shape: int, scale: float = 1.0, shift: float = 0.0) -> Any:
    return (shift + jax.random.normal(next(keys), shape, jnp.float32) * scale).astype(
        jnp.bfloat16)

  arrays = [a(n, n, c), jax.random.uniform(next(keys), (n, n)) < 0.9,
            a(c, 2, h, scale=c ** -0.5), a(c, 2, h, scale=c ** -0.5), a(h, d, scale=h ** -0.5),
            a(c, d, scale=c ** -0.5), a(c, scale=0.1, shift=1.0), a(c, scale=0.1),
            a(h, scale=0.1, shift=1.0), a(h, scale=0.1)]
  if case.phase != FWD:
    arrays.append(a(n, n, d))
  return arrays


def _from_case(case: Case, name: str, tags: tuple[str, ...]) -> CallSpec:
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args = make_inputs(dataclasses.replace(case, phase=FWD), seed)
    return tuple(args), {"triangle_type": case.triangle_type}
  return CallSpec(name, build, tags, doc=case.label)


CALL_SPECS: tuple[CallSpec, ...] = tuple(
    _from_case(c, c.id, ("primary", "held_out") if c.held_out else ("primary",))
    for c in CASES) + tuple(
        _from_case(c.with_shape(QUICK_SHAPES[c.shape]), f"{c.id}-quick", ("ci",))
        for c in CASES)
"""Every case at its full and quick shapes."""
