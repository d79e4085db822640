"""The calls linear_softmax_cross_entropy_loss is tested and benchmarked on
(`pjrtkit.kernels.core.call_specs`): the last layer of language models, bfloat16, uniform
labels; "sum" unless named otherwise."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit.kernels.core.call_specs import CallSpec


def _build(b: int, h: int, v: int, reduction: str = "sum", dtype: str = "bfloat16"):
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
    x = jax.random.normal(k1, (b, h), dtype)
    w = (jax.random.normal(k2, (h, v), jnp.float32) / np.sqrt(h)).astype(dtype)
    labels = jax.random.randint(k3, (b,), 0, v, jnp.int32)
    return (x, labels, w), {"reduction": reduction}

  return build


CALL_SPECS: tuple[CallSpec, ...] = (
    CallSpec("ci_mean", _build(45, 24, 333, "mean", "float32"), ("ci",),
             "small, no dimension a multiple of a block"),
    CallSpec("ci_none", _build(64, 32, 1000, "none"), ("ci",), "small bfloat16, per-row losses"),
    CallSpec("vocab_32k", _build(8192, 4096, 32768), ("primary",), "32K vocabulary"),
    CallSpec("llama3_128k", _build(8192, 4096, 128256), ("primary",),
             "Llama 3 vocabulary (128256), 8192 tokens"),
    CallSpec("gemma_256k", _build(8192, 2304, 256000), ("primary",),
             "Gemma vocabulary (256000)"),
    CallSpec("held_out_50k", _build(3000, 1024, 50257, "mean"), ("held_out",),
             "GPT-2 vocabulary, mean"),
)
"""linear_softmax_cross_entropy_loss's named calls."""
