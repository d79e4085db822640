"""layer_norm "native": C++ XLA FFI handlers (``native/layer_norm_*.cc``) on pjrtkit's CPU
device, multithreaded over rows and vectorised over channels; forward and backward, each one pass
over memory (the backward recomputes the row statistics instead of reading them)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm import base
from pjrtkit.kernels.native import library

DTYPES = ("float32", "bfloat16")


def amx_products_pay(dtypes: tuple[Any, ...], work: int, min_work: int) -> bool:
  """Whether a rule should take a "native" op whose products run through ragged_dot's kernels:
  every operand of `dtypes` bfloat16, at least `min_work` multiply-adds (`work`) and AMX tiles
  for them (`library.amx_bf16`, asked last: it claims the tile state for the process)."""
  bf16 = jnp.dtype(jnp.bfloat16)
  return (all(jnp.dtype(d) == bf16 for d in dtypes) and work >= min_work
          and library.amx_bf16())


def native_unsupported_reason(device: DeviceInfo, dtype: str) -> str | None:
  """Why the native kernels cannot run `dtype` on `device` (shared by the native ops)."""
  if not device.is_pjrtkit_cpu:
    return (f"the native kernels run on pjrtkit's CPU device only; this is "
            f"{device.describe()}")
  if dtype not in DTYPES:
    return f"dtype {dtype} is not supported (accepted: {', '.join(DTYPES)})"
  return library.unavailable_reason()


class NativeLayerNorm(Op[NoConfig]):
  """Rows in parallel on the library's own threads; float32 statistics."""

  op_name = base.OP_NAME
  implementation = "native"

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    return native_unsupported_reason(device, spec.arg("x").dtype)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    library.ensure_registered()
    x, scale, offset = args
    rows, restore = base.to_rows(x, spec.param("axis"))
    n, c = rows.shape
    sc = jnp.ones((c,), jnp.float32) if scale is None else scale.astype(jnp.float32)
    of = jnp.zeros((c,), jnp.float32) if offset is None else offset.astype(jnp.float32)
    y, mean, rstd = jax.ffi.ffi_call(
        "pjrtkit_kernels_layer_norm_fwd",
        (jax.ShapeDtypeStruct(rows.shape, rows.dtype), jax.ShapeDtypeStruct((n,), jnp.float32),
         jax.ShapeDtypeStruct((n,), jnp.float32)), vmap_method="sequential")(
             rows, sc, of, epsilon=np.float32(spec.param("epsilon")),
             subtract_mean=np.int64(spec.param("subtract_mean")))
    shape = base.stats_shape(spec)
    return restore(y), (x, scale, offset, mean.reshape(shape), rstd.reshape(shape))

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig) -> tuple[Any, ...]:
    """dx, dscale, doffset from x and dout alone.

    The kernel recomputes each row's mean and rstd from x (as the forward does, bit for bit), so
    the residuals' `mean` and `rstd` are not read: when nothing reads the forward's output (a
    loss that only takes the gradient), XLA drops the forward's call, as it drops the forward of
    "xla". dscale/doffset are computed only when the call has a scale or an offset.
    """
    library.ensure_registered()
    x, scale, _, _, _ = residuals
    axis = spec.param("axis")
    rows, restore = base.to_rows(x, axis)
    drows, _ = base.to_rows(dout.astype(x.dtype), axis)
    c = rows.shape[1]
    sc = jnp.ones((c,), jnp.float32) if scale is None else scale.astype(jnp.float32)
    param_grads = spec.arg("scale") is not None or spec.arg("offset") is not None
    dx, dscale, doffset = jax.ffi.ffi_call(
        "pjrtkit_kernels_layer_norm_bwd",
        (jax.ShapeDtypeStruct(rows.shape, rows.dtype), jax.ShapeDtypeStruct((c,), jnp.float32),
         jax.ShapeDtypeStruct((c,), jnp.float32)),
        input_output_aliases={2: 0}, vmap_method="sequential")(
             rows, sc, drows, epsilon=np.float32(spec.param("epsilon")),
             subtract_mean=np.int64(spec.param("subtract_mean")),
             param_grads=np.int64(param_grads))
    return base.finish_grads(spec, restore(dx), dscale, doffset)
