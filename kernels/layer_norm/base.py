"""layer_norm: the call's checks and Spec, the reference, and the residuals every
implementation shares.

``y = (x - mean) * rsqrt(var + epsilon) * scale + offset`` over `axis`
(``subtract_mean=False``: RMS norm, ``y = x * rsqrt(mean(x**2) + epsilon) * scale + offset``).
Statistics are computed in float32 whatever the input dtype; the output has x's dtype.

Residuals (what every forward returns and every backward takes):
``(x, scale, offset, mean, rstd)`` with `mean` and `rstd` float32 of x's shape without `axis`
(`mean` is zeros for RMS norm).
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.spec import Spec

OP_NAME = "layer_norm"
FLOAT_DTYPES = ("float32", "bfloat16", "float16")
"""Input dtypes every implementation accepts ("xla" also takes float64 with jax_enable_x64)."""


def make_spec(x: Any, scale: Any, offset: Any, axis: int, epsilon: float,
              subtract_mean: bool) -> Spec:
  """Checks a call and returns its Spec.

  Raises:
    TypeError: x, scale or offset is not a floating array.
    ValueError: axis out of range, scale/offset of the wrong shape, epsilon negative.
  """
  for name, a in (("x", x), ("scale", scale), ("offset", offset)):
    if a is None:
      if name == "x":
        raise TypeError("layer_norm: x must be an array, got None")
      continue
    if not hasattr(a, "shape") or not hasattr(a, "dtype"):
      raise TypeError(f"layer_norm: {name} must be an array, got {type(a).__name__}")
    if not jnp.issubdtype(a.dtype, jnp.floating):
      raise TypeError(f"layer_norm: {name} must have a floating dtype (accepted: "
                      f"{', '.join(FLOAT_DTYPES)}, float64), got {jnp.dtype(a.dtype).name}")
  if x.ndim < 1:
    raise ValueError("layer_norm: x must have at least one dimension, got a scalar")
  if not isinstance(axis, int) or not -x.ndim <= axis < x.ndim:
    raise ValueError(f"layer_norm: axis must be an int in [{-x.ndim}, {x.ndim - 1}] for x of "
                     f"shape {tuple(x.shape)}, got {axis!r}")
  axis = axis % x.ndim
  channels = x.shape[axis]
  for name, a in (("scale", scale), ("offset", offset)):
    if a is not None and tuple(a.shape) != (channels,):
      raise ValueError(f"layer_norm: {name} must have shape ({channels},) (x.shape[{axis}]), got "
                       f"{tuple(a.shape)}")
  if not epsilon >= 0:
    raise ValueError(f"layer_norm: epsilon must be >= 0, got {epsilon!r}")
  return Spec.make(OP_NAME, {"x": x, "scale": scale, "offset": offset},
                   {"axis": axis, "epsilon": float(epsilon), "subtract_mean": bool(subtract_mean)})


def reference(x: jax.Array, scale: jax.Array | None, offset: jax.Array | None, *, axis: int = -1,
              epsilon: float = 1e-6, subtract_mean: bool = True) -> jax.Array:
  """The plain-JAX definition (differentiated by JAX in tests)."""
  xf = x.astype(jnp.float32)
  if subtract_mean:
    mean = jnp.mean(xf, axis=axis, keepdims=True)
    xf = xf - mean
  y = xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=axis, keepdims=True) + epsilon)
  shape = [1] * x.ndim
  shape[axis] = x.shape[axis]
  if scale is not None:
    y = y * scale.astype(jnp.float32).reshape(shape)
  if offset is not None:
    y = y + offset.astype(jnp.float32).reshape(shape)
  return y.astype(x.dtype)


def to_rows(x: jax.Array, axis: int) -> tuple[jax.Array, Callable[[jax.Array], jax.Array]]:
  """x as [rows, channels] with `axis` last, and the function that undoes it for outputs (both
  reshapes only when `axis` is already last)."""
  if axis % x.ndim == x.ndim - 1:
    shape = x.shape
    return x.reshape(-1, shape[-1]), lambda y: y.reshape(shape)
  moved = jnp.moveaxis(x, axis, -1)
  rows = moved.reshape(-1, moved.shape[-1])

  def restore(y: jax.Array) -> jax.Array:
    return jnp.moveaxis(y.reshape(moved.shape), -1, axis)

  return rows, restore


def statistics(x: jax.Array, spec: Spec) -> tuple[jax.Array, jax.Array]:
  """The residuals (mean, rstd) as plain JAX reductions over `axis` (zeros for the mean of RMS
  norm), for implementations whose kernels do not write them: XLA fuses them, and drops them
  when no backward reads them."""
  axis, xf = spec.param("axis"), x.astype(jnp.float32)
  if spec.param("subtract_mean"):
    mean = jnp.mean(xf, axis=axis, keepdims=True)
  else:
    mean = jnp.zeros(xf.shape[:axis] + (1,) + xf.shape[axis + 1:], jnp.float32)
  centred = xf - mean
  var = jnp.mean(centred * centred, axis=axis, keepdims=True)
  rstd = jax.lax.rsqrt(var + spec.param("epsilon"))
  return jnp.squeeze(mean, axis), jnp.squeeze(rstd, axis)


def stats_shape(spec: Spec) -> tuple[int, ...]:
  """Shape of `mean` / `rstd`: x's shape without the normalised axis."""
  shape = list(spec.arg("x").shape)
  del shape[spec.param("axis")]
  return tuple(shape)


def finish_grads(spec: Spec, dx: jax.Array, dscale: jax.Array | None,
                 doffset: jax.Array | None) -> tuple[Any, Any, Any]:
  """(dx, dscale, doffset), None for absent scale/offset."""
  return (dx, dscale if spec.arg("scale") is not None else None,
          doffset if spec.arg("offset") is not None else None)
