"""The calls ragged_dot is tested and benchmarked on: the kernel comparison's cases (RD1...) with
their small CPU stand-ins, and CPU edge cases.

Mixture-of-experts shapes, bfloat16: lhs ``[tokens x top_k, d_model]``, rhs
``[experts, d_model, d_ff]`` (up projection) or ``[experts, d_ff, d_model]`` (down); a case's
shape is ``(experts, m, k, n)``. Group sizes follow the case's `distribution`: "skewed" (rows drawn
with probabilities falling as ``1 / (i + 1) ** 0.8`` over a random order of the experts, every
`empty_every`-th expert given none: a router that has not balanced its load), "first" (every row
in the first group) or "ones" (one row per group). Arrays come from ``jax.random`` (so
``jax.eval_shape`` of a call allocates nothing).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit.kernels.core.call_specs import CallSpec
from pjrtkit.kernels.core.comparison import FWD, FWD_BWD, Case
from pjrtkit.kernels.ragged_dot.base import GroupSizes, generate_group_sizes

OP = "ragged_dot"
SEED = 13
DISTRIBUTIONS = ("skewed", "first", "ones")


@dataclasses.dataclass(frozen=True)
class RaggedCase(Case):
  """A ragged_dot case: shape ``(experts, m, k, n)`` and how rows fall into groups.

  Raises:
    ValueError: an unknown distribution, or "ones" with m != experts.
  """

  distribution: str = "skewed"
  empty_every: int = 0

  def __post_init__(self) -> None:
    super().__post_init__()
    if self.distribution not in DISTRIBUTIONS:
      raise ValueError(f"{self.id}: distribution must be one of {DISTRIBUTIONS}")
    if self.distribution == "ones" and self.shape[0] != self.shape[1]:
      raise ValueError(f"{self.id}: 'ones' needs m == experts")

  @property
  def sizes(self) -> tuple[int, ...]:
    """The group sizes (sum m)."""
    g, m = self.shape[0], self.shape[1]
    if self.distribution == "first":
      return (m,) + (0,) * (g - 1)
    if self.distribution == "ones":
      return (1,) * g
    return skewed_sizes(m, g, self.empty_every)

  def details(self) -> tuple[str, str]:
    empty = sum(1 for s in self.sizes if s == 0)
    return "", f" {self.distribution}" + (f" {empty} empty" if empty else "")

  def record(self) -> dict[str, Any]:
    info = super().record()
    info["group_sizes"] = list(self.sizes)
    return info


def skewed_sizes(m: int, groups: int, empty_every: int = 0, seed: int = 0) -> tuple[int, ...]:
  """Sizes summing to `m` drawn with skewed probabilities (module docstring)."""
  rng = np.random.default_rng(seed)
  p = 1.0 / (np.arange(groups) + 1.0) ** 0.8
  p = p[rng.permutation(groups)]
  if empty_every:
    p[::empty_every] = 0.0
  return generate_group_sizes(m=m, num_groups=groups, p=list(p / p.sum()), seed=seed)


CASES: tuple[Case, ...] = (
    RaggedCase("RD1", OP, (8, 8192, 4096, 14336), FWD),          # Mixtral 8x7B up projection
    RaggedCase("RD2", OP, (8, 8192, 14336, 4096), FWD),          # Mixtral 8x7B down projection
    RaggedCase("RD3", OP, (64, 16384, 2048, 1408), FWD, empty_every=16),   # 64 experts
    RaggedCase("RD4", OP, (128, 32768, 2048, 768), FWD, empty_every=32),   # 128 experts
    RaggedCase("RD5", OP, (8, 8192, 4096, 14336), FWD_BWD),
    RaggedCase("RD6", OP, (64, 16384, 2048, 1408), FWD_BWD, empty_every=16),
    RaggedCase("RD7", OP, (8, 4096, 4096, 4096), FWD, distribution="first", extra=True),
    RaggedCase("RD8", OP, (8, 8, 4096, 4096), FWD, distribution="ones", extra=True),
    RaggedCase("RD9", OP, (48, 12000, 1536, 1024), FWD_BWD, empty_every=12, extra=True,
               held_out=True),
)
"""The comparison's ragged_dot cases."""

QUICK_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {
    (8, 8192, 4096, 14336): (8, 256, 64, 96),
    (8, 8192, 14336, 4096): (8, 256, 96, 64),
    (64, 16384, 2048, 1408): (16, 300, 64, 48),
    (128, 32768, 2048, 768): (32, 500, 32, 48),
    (8, 4096, 4096, 4096): (8, 128, 64, 64),
    (8, 8, 4096, 4096): (8, 8, 64, 64),
    (48, 12000, 1536, 1024): (12, 250, 48, 32),
}
"""``--quick``: each full shape's small stand-in."""


def make_inputs(case: Case, seed: int = SEED) -> list[Any]:
  """lhs, rhs (bfloat16, rhs scaled by 1/sqrt(k)) and the group sizes; plus the output
  cotangent for fwd+bwd."""
  g, m, k, n = case.shape
  keys = jax.random.split(jax.random.key(seed), 3)
  arrays = [jax.random.normal(keys[0], (m, k), jnp.bfloat16),
            (jax.random.normal(keys[1], (g, k, n), jnp.float32) / np.sqrt(k)).astype(jnp.bfloat16),
            jnp.asarray(case.sizes, jnp.int32)]
  if case.phase != FWD:
    arrays.append(jax.random.normal(keys[2], (m, n), jnp.bfloat16))
  return arrays


def _from_case(case: Case, name: str, tags: tuple[str, ...]) -> CallSpec:
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    lhs, rhs, sizes = make_inputs(dataclasses.replace(case, phase=FWD), seed)[:3]
    return (lhs, rhs, GroupSizes(sizes, case.sizes)), {}
  return CallSpec(name, build, tags, doc=case.label)


def _edge(m: int, k: int, n: int, sizes: tuple[int, ...], dtype: str) -> Any:
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    k1, k2 = jax.random.split(jax.random.key(seed))
    return (jax.random.normal(k1, (m, k), dtype),
            (0.5 * jax.random.normal(k2, (len(sizes), k, n), jnp.float32)).astype(dtype),
            jnp.asarray(sizes, jnp.int32)), {}
  return build


CALL_SPECS: tuple[CallSpec, ...] = tuple(
    _from_case(c, c.id, ("primary", "held_out") if c.held_out else ("primary",))
    for c in CASES) + tuple(
        _from_case(c.with_shape(QUICK_SHAPES[c.shape]), f"{c.id}-quick", ("ci",))
        for c in CASES) + (
    CallSpec("uneven_f32", _edge(96, 32, 48, (0, 40, 7, 0, 49), "float32"), ("ci",),
             "empty leading and inner groups, a group spanning tiles"),
    CallSpec("past_the_sum", _edge(64, 64, 32, (5, 0, 30, 3), "bfloat16"), ("ci",),
             "26 rows past the last group (zeros)"),
)
"""Every case at its full shape (``RD1``; ``primary``) and quick shape (``RD1-quick``; ``ci``),
and two CPU edge cases."""
