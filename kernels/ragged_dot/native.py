"""ragged_dot "native": C++ XLA FFI handlers (``native/ragged_dot_*.cc``) on pjrtkit's CPU
device: a blocked SIMD grouped GEMM (operands packed as float32 panels, bfloat16 widened while
packing; a register-tiled micro-kernel; work items of (group, row or column tiles) on the
library's own threads).

Serves the plain layout (lhs ``[m, k]``, rhs ``[g, k, n]`` or ``[g, n, k]``), float32 and
bfloat16 operands (either, each), group_offset. Two handlers: the rows product
(``out[r] = x[r] @ W[group(r)]``; the forward, and dlhs with rhs transposed) and the groups
product (``out[g] = x[rows of g]^T @ y[rows of g]``; drhs, zero for an empty group). Rows no
local group covers are zero. Products are summed in float32; the result is written as float32 or
bfloat16 directly when that is the output dtype and there is no epilogue (activation, gate-up
fusion), else as float32 and finished by `base.finish`. The gradient's two products are separate
calls, so XLA drops drhs when only lhs's gradient is read. Under ``jax.vmap`` each handler runs
once per batch element (``vmap_method="sequential"``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm.native import DTYPES, native_unsupported_reason
from pjrtkit.kernels.native import library
from pjrtkit.kernels.ragged_dot import base

_DIRECT = (jnp.dtype(jnp.float32), jnp.dtype(jnp.bfloat16))
"""Result dtypes the kernels write themselves."""


def _offset(group_offset: jax.Array | None) -> jax.Array:
  if group_offset is None:
    return jnp.zeros((1,), jnp.int32)
  return group_offset.astype(jnp.int32)


def rows_product(x: jax.Array, w: jax.Array, group_sizes: jax.Array,
                 group_offset: jax.Array | None, w_transposed: bool, dtype: Any) -> jax.Array:
  """``out[r] = x[r] @ W_g`` for the rows r of local group g (zero elsewhere): `w` is
  ``[g, depth, cols]``, or ``[g, cols, depth]`` when `w_transposed`; `dtype` float32 or
  bfloat16."""
  library.ensure_registered()
  cols = w.shape[1] if w_transposed else w.shape[2]
  return jax.ffi.ffi_call(
      "pjrtkit_kernels_ragged_dot_rows", jax.ShapeDtypeStruct((x.shape[0], cols), dtype),
      vmap_method="sequential")(
          x, w, group_sizes.astype(jnp.int32), _offset(group_offset),
          w_transposed=np.int64(w_transposed))


def groups_product(x: jax.Array, y: jax.Array, group_sizes: jax.Array,
                   group_offset: jax.Array | None, groups: int, dtype: Any) -> jax.Array:
  """``out[g] = x[rows of g]^T @ y[rows of g]`` (``[groups, x_cols, y_cols]``, zero for a
  group without rows); `dtype` float32 or bfloat16."""
  library.ensure_registered()
  return jax.ffi.ffi_call(
      "pjrtkit_kernels_ragged_dot_groups",
      jax.ShapeDtypeStruct((groups, x.shape[1], y.shape[1]), dtype),
      vmap_method="sequential")(
          x, y, group_sizes.astype(jnp.int32), _offset(group_offset))


def _has_epilogue(spec: Spec) -> bool:
  return (spec.function("activation") is not None
          or spec.param("fuse_gateup_activation") is not None)


class NativeRaggedDot(Op[NoConfig]):
  """The grouped GEMM in C++ (see the module docstring)."""

  op_name = base.OP_NAME
  implementation = "native"

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = base.grouped_unsupported_reason(spec)
    if reason:
      return reason
    for name in ("lhs", "rhs"):
      dtype = jnp.dtype(spec.arg(name).dtype).name
      if dtype not in DTYPES:
        return f"{name} dtype {dtype} is not supported (accepted: {', '.join(DTYPES)})"
    out = jnp.dtype(spec.param("out_dtype"))
    if not jnp.issubdtype(out, jnp.floating):
      return (f"preferred_element_type {out.name} is not supported (accepted: floating "
              f"dtypes)")
    return native_unsupported_reason(device, jnp.dtype(spec.arg("lhs").dtype).name)

  def example_args(self, spec: Spec, seed: int = 0) -> tuple[Any, ...]:
    return base.example_args(spec, seed)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    lhs, rhs, group_sizes, group_offset = args
    out_dtype = jnp.dtype(spec.param("out_dtype"))
    direct = out_dtype in _DIRECT and not _has_epilogue(spec)
    transposed = base.dims_of(spec).rhs_contract[0] == 2
    acc = rows_product(lhs, rhs, group_sizes, group_offset, transposed,
                       out_dtype if direct else jnp.float32)
    out, pre = base.finish(spec, acc)
    return out, (lhs, rhs, group_sizes, group_offset, pre)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig
               ) -> tuple[Any, ...]:
    """dlhs = dy @ rhs[g]^T per group's rows (a rows product against rhs transposed) and
    drhs[g] = lhs[rows of g]^T dy[rows of g] (laid out like rhs), both from the product's
    cotangent dy (the output's cotangent as it is when there is no epilogue)."""
    lhs, rhs, group_sizes, group_offset, pre = residuals
    if pre is None and jnp.dtype(dout.dtype) in _DIRECT:
      dy = dout
    else:
      dy = base.dout_to_acc(spec, pre, dout).astype(jnp.float32)
    contract = base.dims_of(spec).rhs_contract[0]
    dlhs = rows_product(dy, rhs, group_sizes, group_offset, contract == 1, lhs.dtype)
    if contract == 1:
      drhs = groups_product(lhs, dy, group_sizes, group_offset, rhs.shape[0], rhs.dtype)
    else:
      drhs = groups_product(dy, lhs, group_sizes, group_offset, rhs.shape[0], rhs.dtype)
    return dlhs, drhs, None, None
