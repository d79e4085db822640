"""triangle_multiplication "xla" and "composed": `base.compute` with the library's layer_norm
and gated_linear_unit ops, as "xla" ("xla") or chosen per device (``implementation=None``:
"composed", so the CPU device's native layer norm or the GPU's Triton one runs inside). The
gradient is JAX's, through those ops' own gradients."""

from __future__ import annotations

from typing import Any

import jax

from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.gated_linear_unit.api import gated_linear_unit
from pjrtkit.kernels.layer_norm.api import layer_norm
from pjrtkit.kernels.triangle_multiplication import base


class XlaTriangleMultiplication(Op[NoConfig]):
  """The update from the library's sub-ops with `sub_implementation` ("xla": every piece in
  plain XLA; None: each sub-op chosen per device)."""

  op_name = base.OP_NAME
  implementation = "xla"
  portable = True
  symbolic_shapes = True
  sub_implementation: str | None = "xla"

  def example_args(self, spec: Spec, seed: int = 0) -> tuple[Any, ...]:
    args = list(spec.example_args(seed))
    mask = spec.arg("mask")
    if mask.dtype != "bool":
      args[1] = (args[1] > 0).astype(mask.dtype)
    return tuple(args)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    impl = self.sub_implementation

    def norm(x: Any, scale: Any, offset: Any, eps: float) -> Any:
      return layer_norm(x, scale, offset, epsilon=eps, implementation=impl)

    def glu(x: Any, weights: Any, precision: Any) -> Any:
      return gated_linear_unit(x, weights, activation=jax.nn.sigmoid, precision=precision,
                               implementation=impl)

    return base.compute(args, spec, norm, glu), args


class ComposedTriangleMultiplication(XlaTriangleMultiplication):
  """Each sub-op chosen per device and shape (its own ``implementation=None``)."""

  implementation = "composed"
  portable = True
  symbolic_shapes = False
  sub_implementation = None


