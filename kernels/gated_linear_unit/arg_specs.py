"""The calls gated_linear_unit is tested and benchmarked on: the kernel comparison's cases
(GL1...) with their small CPU stand-ins, and CPU edge cases.

SwiGLU feed-forward layers, bfloat16: x ``[rows, k]``, fused weights ``[k, 2, n]`` (a case's
shape is ``(rows, k, n)``), ``activation=jax.nn.silu``. Arrays come from ``jax.random``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit.kernels.core.call_specs import CallSpec
from pjrtkit.kernels.core.comparison import FWD, FWD_BWD, Case

OP = "gated_linear_unit"
SEED = 13

CASES: tuple[Case, ...] = (
    Case("GL1", OP, (8192, 4096, 14336), FWD),     # Llama 3 8B feed-forward, 8192 tokens
    Case("GL2", OP, (8192, 2304, 9216), FWD),      # Gemma 2 2B
    Case("GL3", OP, (256, 4096, 14336), FWD),      # 256 tokens: the weights' bytes dominate
    Case("GL4", OP, (8192, 4096, 14336), FWD_BWD),
    Case("GL5", OP, (6000, 3072, 8192), FWD_BWD, extra=True, held_out=True),
)
"""The comparison's gated linear unit cases."""

QUICK_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {
    (8192, 4096, 14336): (128, 64, 96),
    (8192, 2304, 9216): (128, 48, 80),
    (256, 4096, 14336): (16, 64, 96),
    (6000, 3072, 8192): (100, 48, 64),
}
"""``--quick``: each full shape's small stand-in."""


def make_inputs(case: Case, seed: int = SEED) -> list[Any]:
  """x and fused weights (bfloat16, weights scaled by 1/sqrt(k)); plus the output cotangent for
  fwd+bwd."""
  rows, k, n = case.shape
  keys = jax.random.split(jax.random.key(seed), 3)
  arrays = [jax.random.normal(keys[0], (rows, k), jnp.bfloat16),
            (jax.random.normal(keys[1], (k, 2, n), jnp.float32) / np.sqrt(k)).astype(jnp.bfloat16)]
  if case.phase != FWD:
    arrays.append(jax.random.normal(keys[2], (rows, n), jnp.bfloat16))
  return arrays


def random_operands(x_shape: tuple[int, ...], n: int, fused: bool, dtype: Any, seed: int = 0
                    ) -> tuple[jax.Array, Any, jax.Array]:
  """``(x, weights, dout)`` for the kernels' tests: normal x ``x_shape`` and output cotangent,
  weights scaled by 1/sqrt(k), fused ``[k, 2, n]`` or the pair ``(w_gate, w_up)``."""
  k = x_shape[-1]
  k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
  x = jax.random.normal(k1, x_shape, jnp.float32).astype(dtype)
  w = (jax.random.normal(k2, (k, 2, n), jnp.float32) / k ** 0.5).astype(dtype)
  weights = w if fused else (w[:, 0], w[:, 1])
  dout = jax.random.normal(k3, tuple(x_shape[:-1]) + (n,), jnp.float32).astype(dtype)
  return x, weights, dout


def _from_case(case: Case, name: str, tags: tuple[str, ...]) -> CallSpec:
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    x, w = make_inputs(dataclasses.replace(case, phase=FWD), seed)[:2]
    return (x, w), {"activation": jax.nn.silu}
  return CallSpec(name, build, tags, doc=case.label)


def _unfused_gelu(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
  k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
  x = jax.random.normal(k1, (16, 64), jnp.bfloat16)
  weights = tuple((0.2 * jax.random.normal(k, (64, 24), jnp.float32)).astype(jnp.bfloat16)
                  for k in (k2, k3))
  return (x, weights), {"activation": jax.nn.gelu}


CALL_SPECS: tuple[CallSpec, ...] = tuple(
    _from_case(c, c.id, ("primary", "held_out") if c.held_out else ("primary",))
    for c in CASES) + tuple(
        _from_case(c.with_shape(QUICK_SHAPES[c.shape]), f"{c.id}-quick", ("ci",))
        for c in CASES) + (
    CallSpec("unfused_gelu", _unfused_gelu, ("ci",), "a (w_gate, w_up) pair, GEGLU"),
)
"""Every case at its full and quick shapes, and a weight pair with GEGLU."""
