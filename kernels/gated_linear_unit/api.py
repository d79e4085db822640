"""gated_linear_unit's public function and its implementations table."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Family, Op, register_family
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.gated_linear_unit import base
from pjrtkit.kernels.gated_linear_unit.triton import TritonGatedLinearUnit
from pjrtkit.kernels.gated_linear_unit.xla import XlaGatedLinearUnit

IMPLEMENTATIONS: dict[str, Op] = {
    "xla": XlaGatedLinearUnit(),
    "triton": TritonGatedLinearUnit(),
}


def rule(spec: Spec, device: DeviceInfo, phase: str) -> list[str]:
  """The documented choice for ``implementation=None`` without a tuned result: "xla"; on an
  NVIDIA GPU the forward is "triton" (both products and the activation in one kernel; it
  refuses weights of another dtype than x, which fall back to "xla"), and the gradient "xla"
  (which is also what "triton"'s backward runs).
  """
  del spec
  if device.is_gpu and phase == "fwd":
    return ["triton", "xla"]
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
    ``[..., n]`` in x's dtype.

  Raises:
    TypeError, ValueError: for arguments of the wrong type, dtype or shape (naming the
      parameter).
    UnsupportedImplementationError: when `implementation` cannot serve this call.
  """
  spec, args = base.make_spec(x, weights, activation, precision)
  return FAMILY.call(spec, args, implementation)
