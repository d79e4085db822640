"""The calls triangle_multiplication is tested and benchmarked on
(`pjrtkit.kernels.core.call_specs`): AlphaFold pair stacks (c = h = d = 128 unless named
otherwise), bfloat16."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.call_specs import CallSpec


def _build(n: int, c: int = 128, h: int = 128, d: int = 128, triangle_type: str = "outgoing",
           dtype: str = "bfloat16"):
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    keys = iter(jax.random.split(jax.random.key(seed), 11))

    def a(*shape: int, scale: float = 1.0) -> Any:
      return (jax.random.normal(next(keys), shape, jnp.float32) * scale).astype(dtype)

    args = (a(n, n, c), jax.random.uniform(next(keys), (n, n)) < 0.9, a(c, 2, h, scale=c ** -0.5),
            a(c, 2, h, scale=c ** -0.5), a(h, d, scale=h ** -0.5), a(c, d, scale=c ** -0.5),
            1 + a(c, scale=0.1), a(c, scale=0.1), 1 + a(h, scale=0.1), a(h, scale=0.1))
    return args, {"triangle_type": triangle_type}

  return build


CALL_SPECS: tuple[CallSpec, ...] = (
    CallSpec("ci_outgoing", _build(10, 16, 8, 12, dtype="float32"), ("ci",), "small, outgoing"),
    CallSpec("ci_incoming", _build(12, 16, 8, 8, "incoming"), ("ci",), "small bfloat16, incoming"),
    CallSpec("af2_256_outgoing", _build(256), ("primary",), "AlphaFold 2 crop of 256, outgoing"),
    CallSpec("af2_384_incoming", _build(384, triangle_type="incoming"), ("primary",),
             "AlphaFold 2 crop of 384, incoming"),
    CallSpec("held_out_300", _build(300, 64, 64, 64), ("held_out",),
             "n = 300, 64 channels"),
)
"""triangle_multiplication's named calls."""
