"""layer_norm "xla": plain JAX (what XLA fuses), forward and backward."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm import base


class XlaLayerNorm(Op[NoConfig]):
  """The reference implementation; serves every call."""

  op_name = base.OP_NAME
  implementation = "xla"
  portable = True
  symbolic_shapes = True

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    x, scale, offset = args
    axis, eps = spec.param("axis"), spec.param("epsilon")
    xf = x.astype(jnp.float32)
    if spec.param("subtract_mean"):
      mean = jnp.mean(xf, axis=axis, keepdims=True)
    else:
      mean = jnp.zeros_like(jnp.sum(xf, axis=axis, keepdims=True))
    centred = xf - mean
    rstd = jax.lax.rsqrt(jnp.mean(centred * centred, axis=axis, keepdims=True) + eps)
    y = centred * rstd
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    if scale is not None:
      y = y * scale.astype(jnp.float32).reshape(shape)
    if offset is not None:
      y = y + offset.astype(jnp.float32).reshape(shape)
    residuals = (x, scale, offset, jnp.squeeze(mean, axis), jnp.squeeze(rstd, axis))
    return y.astype(x.dtype), residuals

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig) -> tuple[Any, ...]:
    x, scale, offset, mean, rstd = residuals
    axis = spec.param("axis")
    n = x.shape[axis]
    shape = [1] * x.ndim
    shape[axis] = n
    mean = jnp.expand_dims(mean, axis)
    rstd = jnp.expand_dims(rstd, axis)
    xhat = (x.astype(jnp.float32) - mean) * rstd
    dy = dout.astype(jnp.float32)
    g = dy * scale.astype(jnp.float32).reshape(shape) if scale is not None else dy
    proj = jnp.sum(g * xhat, axis=axis, keepdims=True) / n
    dx = g - xhat * proj
    if spec.param("subtract_mean"):
      dx = dx - jnp.sum(g, axis=axis, keepdims=True) / n
    dx = dx * rstd
    others = tuple(i for i in range(x.ndim) if i != axis)
    dscale = jnp.sum(dy * xhat, axis=others) if scale is not None else None
    doffset = jnp.sum(dy, axis=others) if offset is not None else None
    return base.finish_grads(spec, dx, dscale, doffset)
