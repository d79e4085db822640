"""The calls gated_linear_unit is tested and benchmarked on
(`pjrtkit.kernels.core.call_specs`): SwiGLU feed-forward layers, bfloat16, fused weights
``[d_model, 2, d_ff]`` unless named otherwise."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit.kernels.core.call_specs import CallSpec


def _build(rows: int, k: int, n: int, fused: bool = True, dtype: str = "bfloat16",
           activation: Any = jax.nn.silu):
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    k1, k2 = jax.random.split(jax.random.key(seed))
    x = jax.random.normal(k1, (rows, k), dtype)
    w = (jax.random.normal(k2, (k, 2, n), jnp.float32) / np.sqrt(k)).astype(dtype)
    weights = w if fused else (w[:, 0], w[:, 1])
    return (x, weights), {"activation": activation}

  return build


CALL_SPECS: tuple[CallSpec, ...] = (
    CallSpec("ci_fused", _build(24, 32, 40, dtype="float32"), ("ci",), "small, fused weights"),
    CallSpec("ci_unfused_gelu", _build(16, 64, 24, fused=False, activation=jax.nn.gelu),
             ("ci",), "small bfloat16, a weight pair, GEGLU"),
    CallSpec("llama3_8b", _build(8192, 4096, 14336), ("primary",),
             "Llama 3 8B feed-forward, 8192 tokens"),
    CallSpec("gemma2_2b", _build(8192, 2304, 9216), ("primary",), "Gemma 2 2B sizes"),
    CallSpec("small_batch", _build(256, 4096, 14336), ("primary",),
             "256 tokens: the weights' bytes dominate"),
    CallSpec("held_out_unfused", _build(6000, 3072, 8192, fused=False), ("held_out",),
             "a weight pair, a row count no tile divides"),
)
"""gated_linear_unit's named calls."""
