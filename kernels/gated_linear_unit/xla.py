"""gated_linear_unit "xla": the two products as one einsum, the activation and product fused
by XLA; the gradient written out (two einsums for the weights and the input)."""

from __future__ import annotations

from typing import Any

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.gated_linear_unit import base


class XlaGatedLinearUnit(Op[NoConfig]):
  """The reference implementation; serves every call."""

  op_name = base.OP_NAME
  implementation = "xla"
  portable = True
  symbolic_shapes = True

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    x, fused, gate, up = args
    y = base.products(x, fused, gate, up, functions.precision_of(spec.param("precision")))
    return base.combine(y, spec, x.dtype), (x, fused, gate, up, y)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig) -> tuple[Any, ...]:
    x, fused, gate, up, y = residuals
    precision = functions.precision_of(spec.param("precision"))
    dy = base.products_cotangent(y, dout, spec).astype(y.dtype)
    dx = base.input_grad(dy, fused, gate, up, precision)
    dfused, dgate, dup = base.weight_grads(x, dy, fused, precision)
    return dx, dfused, dgate, dup
