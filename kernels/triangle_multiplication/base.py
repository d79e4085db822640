"""triangle_multiplication: the call's checks and Spec, and the computation built from the
library's own ops.

AlphaFold's triangle multiplicative update (Jumper et al. 2021, supplementary algorithms 11
and 12) on a pair representation ``x [..., n, n, c]``:

1. ``z = layer_norm(x)`` over c (``layernorm_in_scale``/``offset``);
2. ``p = gated_linear_unit(z, (gate_in, projection_in), activation=sigmoid)`` with the
   ``[c, 2, h]`` weights read as ``[c, 2h]``, then ``p`` as ``[..., n, n, 2, h]`` times the mask:
   ``a = p[..., 0, :]``, ``b = p[..., 1, :]``;
3. "outgoing": ``t[i, j] = sum_k a[i, k] * b[j, k]``; "incoming":
   ``t[i, j] = sum_k a[k, j] * b[k, i]`` (per channel of h);
4. ``out = (layer_norm(t) @ projection_out) * sigmoid(z @ gate_out)`` (``[..., n, n, d]``).

Arguments as every implementation takes them: the ten arrays in the public order.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core.spec import Spec

OP_NAME = "triangle_multiplication"
TRIANGLE_TYPES = ("incoming", "outgoing")
ARG_NAMES = ("x", "mask", "projection_in_weights", "gate_in_weights", "projection_out_weights",
             "gate_out_weights", "layernorm_in_scale", "layernorm_in_offset",
             "layernorm_out_scale", "layernorm_out_offset")


def make_spec(args: tuple[Any, ...], triangle_type: str, precision: Any, epsilon: float) -> Spec:
  """Checks a call and returns its Spec.

  Raises:
    TypeError, ValueError: naming the parameter and the accepted values.
  """
  named = dict(zip(ARG_NAMES, args))
  for name, a in named.items():
    if not hasattr(a, "shape") or not hasattr(a, "dtype"):
      raise TypeError(f"triangle_multiplication: {name} must be an array, got "
                      f"{type(a).__name__}")
    if name != "mask" and not jnp.issubdtype(a.dtype, jnp.floating):
      raise TypeError(f"triangle_multiplication: {name} must have a floating dtype, got "
                      f"{jnp.dtype(a.dtype).name}")
  x, mask = named["x"], named["mask"]
  if x.ndim < 3 or x.shape[-2] != x.shape[-3]:
    raise ValueError(f"triangle_multiplication: x must be [..., n, n, c], got {tuple(x.shape)}")
  if not (mask.dtype == jnp.bool_ or jnp.issubdtype(mask.dtype, jnp.floating)):
    raise TypeError(f"triangle_multiplication: mask must be bool or floating, got "
                    f"{jnp.dtype(mask.dtype).name}")
  if tuple(mask.shape) != tuple(x.shape[:-1]):
    raise ValueError(f"triangle_multiplication: mask must have shape {tuple(x.shape[:-1])} "
                     f"(x's without c), got {tuple(mask.shape)}")
  c = x.shape[-1]
  h = named["layernorm_out_scale"].shape[0] if named["layernorm_out_scale"].ndim == 1 else -1
  d = named["projection_out_weights"].shape[-1]
  want = {"projection_in_weights": (c, 2, h), "gate_in_weights": (c, 2, h),
          "projection_out_weights": (h, d), "gate_out_weights": (c, d),
          "layernorm_in_scale": (c,), "layernorm_in_offset": (c,),
          "layernorm_out_scale": (h,), "layernorm_out_offset": (h,)}
  for name, shape in want.items():
    if tuple(named[name].shape) != shape:
      raise ValueError(f"triangle_multiplication: {name} must have shape {shape} (c={c}, "
                       f"h={h}, d={d}), got {tuple(named[name].shape)}")
  if triangle_type not in TRIANGLE_TYPES:
    raise ValueError(f"triangle_multiplication: triangle_type must be one of "
                     f"{list(TRIANGLE_TYPES)}, got {triangle_type!r}")
  if not epsilon >= 0:
    raise ValueError(f"triangle_multiplication: epsilon must be >= 0, got {epsilon!r}")
  return Spec.make(OP_NAME, named, {"triangle_type": triangle_type,
                                    "precision": functions.precision_name(precision),
                                    "epsilon": float(epsilon)})


def compute(args: tuple[Any, ...], spec: Spec, layer_norm: Any, gated_linear_unit: Any) -> Any:
  """The update (see the module docstring) with the given layer norm and gated linear unit
  functions (the library's ops with a fixed implementation, or plain JAX in `reference`)."""
  (x, mask, proj_in, gate_in, proj_out, gate_out, ln_in_scale, ln_in_offset, ln_out_scale,
   ln_out_offset) = args
  precision = functions.precision_of(spec.param("precision"))
  eps = spec.param("epsilon")
  c, h = x.shape[-1], ln_out_scale.shape[0]
  z = layer_norm(x, ln_in_scale, ln_in_offset, eps)
  p = gated_linear_unit(z, (gate_in.reshape(c, 2 * h), proj_in.reshape(c, 2 * h)), precision)
  p = p.reshape(p.shape[:-1] + (2, h)) * mask[..., None, None].astype(p.dtype)
  a, b = p[..., 0, :], p[..., 1, :]
  if spec.param("triangle_type") == "outgoing":
    t = jnp.einsum("...ikc,...jkc->...ijc", a, b, precision=precision)
  else:
    t = jnp.einsum("...kjc,...kic->...ijc", a, b, precision=precision)
  t = layer_norm(t, ln_out_scale, ln_out_offset, eps)
  out = jnp.matmul(t, proj_out, precision=precision)
  gate = jnp.matmul(z, gate_out, precision=precision)
  return out * jax.nn.sigmoid(gate)


def plain_layer_norm(x: jax.Array, scale: jax.Array, offset: jax.Array, eps: float
                      ) -> jax.Array:
  xf = x.astype(jnp.float32)
  mean = jnp.mean(xf, axis=-1, keepdims=True)
  var = jnp.mean(jnp.square(xf - mean), axis=-1, keepdims=True)
  y = (xf - mean) * jax.lax.rsqrt(var + eps) * scale + offset
  return y.astype(x.dtype)


def plain_glu(x: jax.Array, weights: tuple[jax.Array, jax.Array], precision: Any
               ) -> jax.Array:
  gate = jnp.matmul(x, weights[0], precision=precision).astype(jnp.float32)
  up = jnp.matmul(x, weights[1], precision=precision).astype(jnp.float32)
  return (jax.nn.sigmoid(gate) * up).astype(x.dtype)


def reference(*args: Any, triangle_type: str, epsilon: float = 1e-6) -> jax.Array:
  """The plain-JAX definition at the highest precision, differentiated by JAX in tests."""
  spec = make_spec(args, triangle_type, jax.lax.Precision.HIGHEST, epsilon)
  return compute(args, spec, plain_layer_norm, plain_glu)
