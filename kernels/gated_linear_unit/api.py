"""gated_linear_unit's public function and its implementations table."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import jax

from pjrtkit.kernels.core import empty
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Family, Op, register_family
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.gated_linear_unit import base
from pjrtkit.kernels.gated_linear_unit.mosaic import MosaicGatedLinearUnit
from pjrtkit.kernels.gated_linear_unit.native import NativeGatedLinearUnit
from pjrtkit.kernels.gated_linear_unit.triton import TritonGatedLinearUnit
from pjrtkit.kernels.gated_linear_unit.xla import XlaGatedLinearUnit
from pjrtkit.kernels.layer_norm.native import amx_products_pay

IMPLEMENTATIONS: dict[str, Op] = {
    "xla": XlaGatedLinearUnit(),
    "triton": TritonGatedLinearUnit(),
    "mosaic": MosaicGatedLinearUnit(),
    "native": NativeGatedLinearUnit(),
}


_NATIVE_MIN_WORK = 2**29
"""rows x k x n from which the rule takes "native" on pjrtkit's CPU device (bfloat16 with AMX):
below it packing the weights and starting threads outweigh what the tiles save (measured,
`tools.bench.glu_native`, forward / with the gradient: 256 x 1024 x 1024 at 1.33x / 0.92x
"xla"'s time, 512 x 1024 x 1024 at 0.71x / 0.74x, 256 x 4096 x 4096 at 1.04x / 0.56x)."""


def _native_is_faster(spec: Spec) -> bool:
  """bfloat16 x and weights, AMX tiles for them, and enough work (`_NATIVE_MIN_WORK`)."""
  x = spec.arg("x")
  w = spec.arg("fused") if spec.arg("fused") is not None else spec.arg("w_gate")
  return amx_products_pay((x.dtype, w.dtype), math.prod(x.shape[:-1]) * w.shape[0] * w.shape[-1],
                          _NATIVE_MIN_WORK)


def rule(spec: Spec, device: DeviceInfo, phase: str) -> list[str]:
  """The documented choice for ``implementation=None`` without a tuned result: "xla" (on an
  NVIDIA GPU too: one cuBLAS product of x and the weights read as ``[k, 2n]``, the activation
  fused by XLA, was faster than the "triton" kernel's forward at every shape of the H200
  comparison, GL1-GL3: 2.47 against 2.93 ms at 8192x4096x14336); on pjrtkit's CPU device
  "native" for bfloat16 x and weights when the CPU multiplies them on AMX tiles and the call has
  at least `_NATIVE_MIN_WORK` rows x k x n (without AMX XLA:CPU's own GEMM is the faster).
  """
  del phase
  if device.is_pjrtkit_cpu and _native_is_faster(spec):
    return ["native", "xla"]
  return ["xla"]


FAMILY = Family(base.OP_NAME, IMPLEMENTATIONS, rule)
register_family(FAMILY)


def gated_linear_unit(x: Any, weights: Any, *,
                      activation: Callable[[jax.Array], jax.Array] | None = None,
                      precision: Any = None,
                      implementation: str | Sequence[str] | None = None) -> jax.Array:
  """Gated linear unit: ``activation(x @ w_gate) * (x @ w_up)``
  (https://arxiv.org/abs/1612.08083): SwiGLU with ``activation=jax.nn.silu``, GEGLU with
  ``jax.nn.gelu``, ReGLU with ``jax.nn.relu``, GLU with ``jax.nn.sigmoid``.

  Args:
    x: ``[..., k]`` floating input.
    weights: fused ``[k, 2, n]`` (gate ``[:, 0]``, up ``[:, 1]``) or a pair
      ``(w_gate, w_up)`` of ``[k, n]``.
    activation: applied to the gate in float32 (None: none).
    precision: as for ``jax.lax.dot``.
    implementation: an implementation name, a sequence of them (the first that serves the call
      runs), or None to choose per device and call.

  Returns:
    ``[..., n]`` in x's dtype. A call with a zero-size dimension (no rows, ``k == 0`` or
    ``n == 0``) runs no implementation (`pjrtkit.kernels.core.empty`): with ``k == 0`` both
    products are empty sums, so every element is ``activation(0) * 0`` (as in Tokamax), and
    every gradient is zero.

  Raises:
    TypeError, ValueError: for arguments of the wrong type, dtype or shape (naming the
      parameter).
    UnsupportedImplementationError: when `implementation` cannot serve this call.
  """
  spec, args = base.make_spec(x, weights, activation, precision)
  if base.is_empty(spec):
    return empty.answer(FAMILY, implementation, lambda: base.empty_result(spec))
  return FAMILY.call(spec, args, implementation)
