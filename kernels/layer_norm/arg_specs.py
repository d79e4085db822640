"""The calls layer_norm is benchmarked and tested on: the kernel comparison's cases (L1...) and
their small CPU stand-ins.

Cases are bfloat16 ``[rows, features]`` with a scale and an offset of ``[features]``, epsilon
`EPSILON`. ``CALL_SPECS`` names every case twice: ``L1`` at its full shape (tag ``primary``) and
``L1-quick`` at its quick shape (tag ``ci``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.call_specs import CallSpec
from pjrtkit.kernels.core.comparison import FWD, FWD_BWD, Case

OP = "layer_norm"
"""The op's name in case labels and tables."""
SEED = 13
"""The seed of the comparison's inputs."""
EPSILON = 1e-6
"""The epsilon every call passes."""

CASES: tuple[Case, ...] = (
    Case("L1", OP, (1048576, 64), FWD),
    Case("L2", OP, (8192, 8192), FWD),
    Case("L3", OP, (1048576, 64), FWD_BWD),
    Case("L4", OP, (8192, 8192), FWD_BWD),
)
"""The comparison's layer norm cases, in the order they run."""

QUICK_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {
    (1048576, 64): (2048, 64),
    (8192, 8192): (64, 512),
}
"""``--quick``: each full shape's small stand-in (the same features width class)."""


def make_inputs(case: Case, seed: int = SEED) -> list[jax.Array]:
  """The case's arrays on JAX's default device: x (random normal bfloat16), scale near 1 and
  offset near 0 (bfloat16 ``[features]``), plus the output cotangent (x's shape) for fwd+bwd."""
  keys = jax.random.split(jax.random.key(seed), 4)
  dtype = jnp.bfloat16
  features = case.shape[-1]
  arrays = [jax.random.normal(keys[0], case.shape, dtype),
            (1.0 + 0.1 * jax.random.normal(keys[1], (features,), jnp.float32)).astype(dtype),
            (0.1 * jax.random.normal(keys[2], (features,), jnp.float32)).astype(dtype)]
  if case.phase != FWD:
    arrays.append(jax.random.normal(keys[3], case.shape, dtype))
  return arrays


def _call_spec(case: Case, name: str, tags: tuple[str, ...]) -> CallSpec:
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    x, scale, offset = make_inputs(dataclasses.replace(case, phase=FWD), seed)[:3]
    return (x, scale, offset), {"epsilon": EPSILON}
  return CallSpec(name, build, tags, doc=case.label)


CALL_SPECS: tuple[CallSpec, ...] = tuple(
    _call_spec(c, c.id, ("primary",)) for c in CASES) + tuple(
        _call_spec(c.with_shape(QUICK_SHAPES[c.shape]), f"{c.id}-quick", ("ci",)) for c in CASES)
"""Every case at its full shape (``L1``; ``primary``) and at its quick shape (``L1-quick``;
``ci``)."""
