"""The calls linear_softmax_cross_entropy_loss is tested and benchmarked on: the kernel
comparison's cases (CE1...) with their small CPU stand-ins, and CPU edge cases.

The last layer of language models, bfloat16: x ``[b, h]``, labels ``[b]`` uniform over the
vocabulary, weights ``[h, v]`` (a case's shape is ``(b, h, v)``), reduction "sum". Arrays come
from ``jax.random``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit.kernels.core.call_specs import CallSpec
from pjrtkit.kernels.core.comparison import FWD, FWD_BWD, Case

OP = "linear_softmax_cross_entropy_loss"
SEED = 13

CASES: tuple[Case, ...] = (
    Case("CE1", OP, (8192, 4096, 32768), FWD_BWD),     # 32K vocabulary
    Case("CE2", OP, (8192, 4096, 128256), FWD_BWD),    # Llama 3 vocabulary
    Case("CE3", OP, (8192, 2304, 256000), FWD_BWD),    # Gemma vocabulary
    Case("CE4", OP, (8192, 4096, 128256), FWD),
    Case("CE5", OP, (3000, 1024, 50257), FWD_BWD, extra=True,
         held_out=True),                                # GPT-2 vocabulary
)
"""The comparison's cross-entropy cases."""

QUICK_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {
    (8192, 4096, 32768): (64, 32, 500),
    (8192, 4096, 128256): (64, 32, 1000),
    (8192, 2304, 256000): (64, 24, 2000),
    (3000, 1024, 50257): (45, 24, 333),
}
"""``--quick``: each full shape's small stand-in."""


def make_inputs(case: Case, seed: int = SEED) -> list[Any]:
  """x, labels and weights (bfloat16, weights scaled by 1/sqrt(h)); plus the (scalar) output
  cotangent for fwd+bwd."""
  b, h, v = case.shape
  keys = jax.random.split(jax.random.key(seed), 3)
  arrays = [jax.random.normal(keys[0], (b, h), jnp.bfloat16),
            jax.random.randint(keys[1], (b,), 0, v, jnp.int32),
            (jax.random.normal(keys[2], (h, v), jnp.float32) / np.sqrt(h)).astype(jnp.bfloat16)]
  if case.phase != FWD:
    arrays.append(jnp.ones((), jnp.float32))
  return arrays


def _from_case(case: Case, name: str, tags: tuple[str, ...], reduction: str = "sum"
               ) -> CallSpec:
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    x, labels, w = make_inputs(dataclasses.replace(case, phase=FWD), seed)[:3]
    return (x, labels, w), {"reduction": reduction}
  return CallSpec(name, build, tags, doc=case.label)


CALL_SPECS: tuple[CallSpec, ...] = tuple(
    _from_case(c, c.id, ("primary", "held_out") if c.held_out else ("primary",))
    for c in CASES) + tuple(
        _from_case(c.with_shape(QUICK_SHAPES[c.shape]), f"{c.id}-quick", ("ci",))
        for c in CASES) + (
    _from_case(Case("mean", OP, (45, 24, 333), FWD), "mean_f32", ("ci",), "mean"),
    _from_case(Case("none", OP, (64, 32, 1000), FWD), "per_row", ("ci",), "none"),
)
"""Every case at its full and quick shapes, and the other two reductions."""
