"""triangle_multiplication's public function and its implementations table."""

from __future__ import annotations

import math
from typing import Any, Sequence

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Family, Op, register_family
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm.native import DTYPES
from pjrtkit.kernels.triangle_multiplication import base
from pjrtkit.kernels.triangle_multiplication.native import (NativeTriangleMultiplication,
                                                            weights_mismatch)
from pjrtkit.kernels.triangle_multiplication.xla import (ComposedTriangleMultiplication,
                                                         XlaTriangleMultiplication)

IMPLEMENTATIONS: dict[str, Op] = {
    "xla": XlaTriangleMultiplication(),
    "composed": ComposedTriangleMultiplication(),
    "native": NativeTriangleMultiplication(),
}


NATIVE_MIN_WORK = 2**22
"""batch x n^3 x h (the triangle product's multiply-adds) from which the rule takes "native"
on pjrtkit's CPU device: `tools.bench.triangle_native` (docs/kernels.md)."""


def _native_is_faster(spec: Spec) -> bool:
  """x and the four weights of one dtype the kernels take, and enough work
  (`NATIVE_MIN_WORK`): with AMX tiles for bfloat16 or without, and in float32, the kernels'
  products beat XLA:CPU's from there."""
  x = spec.arg("x")
  if jnp.dtype(x.dtype).name not in DTYPES or weights_mismatch(spec):
    return False
  n, h = x.shape[-2], spec.arg("layernorm_out_scale").shape[0]
  return math.prod(x.shape[:-3]) * n ** 3 * h >= NATIVE_MIN_WORK


def rule(spec: Spec, device: DeviceInfo, phase: str) -> list[str]:
  """The documented choice for ``implementation=None``: "composed" (layer norm and gated linear
  unit each chosen by their own rules), then "xla"; on pjrtkit's CPU device "native" ahead of
  them for float32 or bfloat16 x and weights (one dtype) when the call has at least
  `NATIVE_MIN_WORK` multiply-adds in its triangle product."""
  del phase
  plain = ["composed", "xla"]
  if device.is_pjrtkit_cpu and _native_is_faster(spec):
    return ["native"] + plain
  return plain


FAMILY = Family(base.OP_NAME, IMPLEMENTATIONS, rule)
register_family(FAMILY)


def triangle_multiplication(x: Any, mask: Any, projection_in_weights: Any, gate_in_weights: Any,
                            projection_out_weights: Any, gate_out_weights: Any,
                            layernorm_in_scale: Any, layernorm_in_offset: Any,
                            layernorm_out_scale: Any, layernorm_out_offset: Any,
                            triangle_type: str, *, precision: Any = None,
                            epsilon: float = 1e-6,
                            implementation: str | Sequence[str] | None = None) -> jax.Array:
  """AlphaFold's triangle multiplicative update (supplementary algorithms 11 and 12; see
  `base` for the steps).

  Args:
    x: ``[..., n, n, c]`` pair representation (floating).
    mask: ``[..., n, n]`` bool (or floating) pair mask.
    projection_in_weights, gate_in_weights: ``[c, 2, h]``.
    projection_out_weights: ``[h, d]``.
    gate_out_weights: ``[c, d]``.
    layernorm_in_scale, layernorm_in_offset: ``[c]``.
    layernorm_out_scale, layernorm_out_offset: ``[h]``.
    triangle_type: "outgoing" (algorithm 11) or "incoming" (algorithm 12).
    precision: as for ``jax.lax.dot``.
    epsilon: the layer norms' epsilon.
    implementation: "xla", "composed", "native" (pjrtkit's CPU device), a sequence of them
      (the first that serves the call runs), or None.

  Returns:
    ``[..., n, n, d]`` in x's dtype.

  Raises:
    TypeError, ValueError: for arguments of the wrong type, dtype or shape (naming the
      parameter).
  """
  args = (x, mask, projection_in_weights, gate_in_weights, projection_out_weights,
          gate_out_weights, layernorm_in_scale, layernorm_in_offset, layernorm_out_scale,
          layernorm_out_offset)
  spec = base.make_spec(args, triangle_type, precision, epsilon)
  return FAMILY.call(spec, args, implementation)
