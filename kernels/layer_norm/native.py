"""layer_norm "native": C++ XLA FFI handlers (``native/layer_norm_*.cc``) on pjrtkit's CPU
device, multithreaded over rows and vectorised over channels; forward and backward."""

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
         jax.ShapeDtypeStruct((n,), jnp.float32)))(
             rows, sc, of, epsilon=np.float32(spec.param("epsilon")),
             subtract_mean=np.int64(spec.param("subtract_mean")))
    shape = base.stats_shape(spec)
    return restore(y), (x, scale, offset, mean.reshape(shape), rstd.reshape(shape))

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig) -> tuple[Any, ...]:
    library.ensure_registered()
    x, scale, offset, mean, rstd = residuals
    axis = spec.param("axis")
    rows, restore = base.to_rows(x, axis)
    drows, _ = base.to_rows(dout.astype(x.dtype), axis)
    n, c = rows.shape
    sc = jnp.ones((c,), jnp.float32) if scale is None else scale.astype(jnp.float32)
    dx, dscale, doffset = jax.ffi.ffi_call(
        "pjrtkit_kernels_layer_norm_bwd",
        (jax.ShapeDtypeStruct(rows.shape, rows.dtype), jax.ShapeDtypeStruct((c,), jnp.float32),
         jax.ShapeDtypeStruct((c,), jnp.float32)))(
             rows, sc, mean.reshape(n), rstd.reshape(n), drows,
             subtract_mean=np.int64(spec.param("subtract_mean")))
    return base.finish_grads(spec, restore(dx), dscale, doffset)
