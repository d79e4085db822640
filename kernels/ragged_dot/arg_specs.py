"""The calls ragged_dot is tested and benchmarked on (`pjrtkit.kernels.core.call_specs`).

Mixture-of-experts shapes, bfloat16: lhs ``[tokens x top_k, d_model]``, rhs
``[experts, d_model, d_ff]`` (up/gate projection) or ``[experts, d_ff, d_model]`` (down).
Arrays come from ``jax.random`` (so ``jax.eval_shape`` of a call allocates nothing). Group
sizes are drawn per row with skewed probabilities, some experts given none, as a router
that has not balanced its load (`skewed_sizes`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit.kernels.core.call_specs import CallSpec
from pjrtkit.kernels.ragged_dot.base import GroupSizes, generate_group_sizes


def skewed_sizes(m: int, groups: int, empty_every: int = 0, seed: int = 0) -> tuple[int, ...]:
  """Sizes summing to `m`: probabilities falling as ``1 / (i + 1) ** 0.8`` over a random order
  of the groups, zero for every `empty_every`-th group (none when 0)."""
  rng = np.random.default_rng(seed)
  p = 1.0 / (np.arange(groups) + 1.0) ** 0.8
  p = p[rng.permutation(groups)]
  if empty_every:
    p[::empty_every] = 0.0
  return generate_group_sizes(m=m, num_groups=groups, p=list(p / p.sum()), seed=seed)


def _build(m: int, k: int, n: int, sizes: tuple[int, ...], dtype: str = "bfloat16"):
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    k1, k2 = jax.random.split(jax.random.key(seed))
    lhs = jax.random.normal(k1, (m, k), dtype)
    rhs = (jax.random.normal(k2, (len(sizes), k, n), jnp.float32) / np.sqrt(k)).astype(dtype)
    group_sizes = GroupSizes(jnp.asarray(sizes, jnp.int32), sizes)
    return (lhs, rhs, group_sizes), {}

  return build


def _spec(name: str, m: int, k: int, n: int, sizes: tuple[int, ...], tags: tuple[str, ...],
          doc: str, dtype: str = "bfloat16") -> CallSpec:
  return CallSpec(name, _build(m, k, n, sizes, dtype), tags, doc)


CALL_SPECS: tuple[CallSpec, ...] = (
    _spec("ci_uneven", 96, 32, 48, (0, 40, 7, 0, 49), ("ci",),
          "small: empty leading and inner groups, a group spanning tiles", "float32"),
    _spec("ci_bf16", 64, 64, 32, skewed_sizes(60, 8, 4), ("ci",),
          "small bfloat16, rows past the last group"),
    _spec("compute_bound", 4096, 4096, 4096, (4096,) + (0,) * 7, ("primary",),
          "every row in the first of 8 groups (Tokamax's compute-bound case)"),
    _spec("memory_bound", 8, 4096, 4096, (1,) * 8, ("primary",),
          "one row per group: the weights' bytes dominate (decode)"),
    _spec("mixtral_8x7b_up", 8192, 4096, 14336, skewed_sizes(8192, 8), ("primary",),
          "Mixtral 8x7B up projection, 8 experts, uneven"),
    _spec("mixtral_8x7b_down", 8192, 14336, 4096, skewed_sizes(8192, 8, seed=1), ("primary",),
          "Mixtral 8x7B down projection"),
    _spec("deepseek_64e", 16384, 2048, 1408, skewed_sizes(16384, 64, 16), ("primary",),
          "64 fine-grained experts (DeepSeek-V2-Lite sizes), 4 of them empty"),
    _spec("qwen3_128e", 32768, 2048, 768, skewed_sizes(32768, 128, 32), ("primary",),
          "128 experts (Qwen3-30B-A3B sizes), 4 of them empty"),
    _spec("held_out_48e", 12000, 1536, 1024, skewed_sizes(12000, 48, 12, seed=2),
          ("held_out",), "48 experts, a row count no tile divides"),
)
"""ragged_dot's named calls."""


def flops(m: int, k: int, n: int) -> int:
  """Multiply-adds x 2 of the rows that belong to a group (rows past the groups excluded)."""
  return 2 * m * k * n
