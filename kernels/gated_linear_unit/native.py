"""gated_linear_unit "native": both products in one call of ragged_dot's native rows product
(one group of every row, the weights read as ``[k, 2n]``) on pjrtkit's CPU device, the
activation and the product fused by XLA; the gradient's two products are the same kernel's
(dx: the rows product against the weights transposed; the weights' gradient: the groups
product, ``x^T dy``).

Two bfloat16 operands are multiplied on AMX tiles where the CPU has them
(`library.amx_bf16`), which is where this beats XLA:CPU's own GEMM; other dtypes run the
kernel's float32 SIMD GEMM, slower than XLA's dense one (docs/kernels.md), so the rule takes
"native" for bfloat16 with AMX only. Products are summed in float32 and rounded to
``result_type(x, weights)`` as in "xla"; residuals are "xla"'s.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.gated_linear_unit import base
from pjrtkit.kernels.layer_norm.native import DTYPES, native_unsupported_reason
from pjrtkit.kernels.ragged_dot import native as ragged_native


def _weights(fused: Any, gate: Any, up: Any) -> Any:
  """``[1, k, 2n]``: the one group's weight matrix (the pair stacked as the fused layout)."""
  w = jnp.stack([gate, up], axis=1) if fused is None else fused
  k, _, n = w.shape
  return w.reshape(1, k, 2 * n)


def _all_rows(m: int) -> Any:
  return jnp.full((1,), m, jnp.int32)


class NativeGatedLinearUnit(Op[NoConfig]):
  """The products through ragged_dot's native kernels (see the module docstring)."""

  op_name = base.OP_NAME
  implementation = "native"

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    weights = spec.arg("fused") if spec.arg("fused") is not None else spec.arg("w_gate")
    for name, arg in (("x", spec.arg("x")), ("weights", weights)):
      dtype = jnp.dtype(arg.dtype).name
      if dtype not in DTYPES:
        return f"{name} dtype {dtype} is not supported (accepted: {', '.join(DTYPES)})"
    return native_unsupported_reason(device, "float32")

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    x, fused, gate, up = args
    k = x.shape[-1]
    rows = x.reshape(-1, k)
    w = _weights(fused, gate, up)
    dtype = base.product_dtype(x, fused, gate)
    y = ragged_native.rows_product(rows, w, _all_rows(rows.shape[0]), None, False, dtype)
    y = y.reshape(x.shape[:-1] + (2, w.shape[2] // 2))
    return base.combine(y, spec, x.dtype), (x, fused, gate, up, y)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig) -> tuple[Any, ...]:
    x, fused, gate, up, y = residuals
    k, n = x.shape[-1], y.shape[-1]
    dy = base.products_cotangent(y, dout, spec).astype(y.dtype).reshape(-1, 2 * n)
    rows = x.reshape(-1, k)
    w = _weights(fused, gate, up)
    sizes = _all_rows(rows.shape[0])
    # dx = dy @ W^T: the rows product against W [1, k, 2n] read as [groups, cols, depth].
    dx = ragged_native.rows_product(dy, w, sizes, None, True, x.dtype).reshape(x.shape)
    dw = ragged_native.groups_product(rows, dy, sizes, None, 1, w.dtype).reshape(k, 2, n)
    if fused is not None:
      return dx, dw, None, None
    return dx, None, dw[:, 0], dw[:, 1]
