"""gated_linear_unit: the call's checks and Spec, the reference, and the residuals every
implementation shares.

``out = activation(x @ w_gate) * (x @ w_up)`` with the activation and the product in float32
(at least) and the result in x's dtype; the products are rounded to ``result_type(x, weights)``
first (what ``jnp.matmul`` returns, as in Tokamax). Weights are fused ``[k, 2, n]`` (``w[:, 0]`` the gate,
``w[:, 1]`` the up projection) or a pair ``(w_gate, w_up)`` of ``[k, n]``.

Arguments as every implementation takes them: ``(x, fused, w_gate, w_up)`` with either `fused`
or the pair None.

A call with a zero-size dimension never reaches an implementation (`is_empty`, `empty_result`).

Residuals: ``(x, fused, w_gate, w_up, y)`` where `y` is ``[..., 2, n]`` in `product_dtype`, the
two products before the activation (what Tokamax keeps too).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core import device, empty, functions
from pjrtkit.kernels.core.spec import Spec

OP_NAME = "gated_linear_unit"


def _array(name: str, a: Any) -> None:
  if not hasattr(a, "shape") or not hasattr(a, "dtype"):
    raise TypeError(f"gated_linear_unit: {name} must be an array, got {type(a).__name__}")
  if not jnp.issubdtype(a.dtype, jnp.floating):
    raise TypeError(f"gated_linear_unit: {name} must have a floating dtype, got "
                    f"{jnp.dtype(a.dtype).name}")


def split_weights(weights: Any) -> tuple[Any, Any, Any]:
  """``(fused, w_gate, w_up)`` from the `weights` argument.

  Raises:
    TypeError, ValueError: weights neither a ``[k, 2, n]`` array nor a pair of ``[k, n]``.
  """
  if isinstance(weights, (tuple, list)):
    if len(weights) != 2:
      raise ValueError(f"gated_linear_unit: weights as a sequence must be (w_gate, w_up), got "
                       f"{len(weights)} arrays")
    gate, up = weights
    _array("weights[0] (w_gate)", gate)
    _array("weights[1] (w_up)", up)
    if gate.ndim != 2 or tuple(gate.shape) != tuple(up.shape):
      raise ValueError(f"gated_linear_unit: w_gate and w_up must both be [k, n], got "
                       f"{tuple(gate.shape)} and {tuple(up.shape)}")
    if gate.dtype != up.dtype:
      raise TypeError(f"gated_linear_unit: w_gate and w_up must share a dtype, got "
                      f"{jnp.dtype(gate.dtype).name} and {jnp.dtype(up.dtype).name}")
    return None, gate, up
  _array("weights", weights)
  if weights.ndim != 3 or weights.shape[1] != 2:
    raise ValueError(f"gated_linear_unit: fused weights must be [k, 2, n], got "
                     f"{tuple(weights.shape)}")
  return weights, None, None


def make_spec(x: Any, weights: Any, activation: Any, precision: Any) -> tuple[Spec, tuple]:
  """Checks a call; returns its Spec and the implementations' arguments."""
  _array("x", x)
  if x.ndim < 1:
    raise ValueError("gated_linear_unit: x must have at least one dimension, got a scalar")
  fused, gate, up = split_weights(weights)
  k = (fused if fused is not None else gate).shape[0]
  if x.shape[-1] != k:
    raise ValueError(f"gated_linear_unit: x's last dimension ({x.shape[-1]}) must equal the "
                     f"weights' first ({k})")
  params = {"activation": functions.name_of(activation),
            "precision": functions.precision_name(precision)}
  spec = Spec.make(OP_NAME, {"x": x, "fused": fused, "w_gate": gate, "w_up": up}, params,
                   {"activation": activation} if activation is not None else None)
  return spec, (x, fused, gate, up)


def sizes(spec: Spec) -> tuple[int, int, int]:
  """``(m, n, k)`` of a call: rows of x, the output's columns, the contracted dimension."""
  x = spec.arg("x").shape
  n = (spec.arg("fused") if spec.arg("fused") is not None else spec.arg("w_gate")).shape[-1]
  return math.prod(x[:-1]), n, x[-1]


def is_empty(spec: Spec) -> bool:
  """Whether the call has a zero-size dimension (rows, k or n): its result is `empty_result`."""
  w = spec.arg("fused") if spec.arg("fused") is not None else spec.arg("w_gate")
  return empty.any_zero(tuple(spec.arg("x").shape) + tuple(w.shape))


def empty_result(spec: Spec) -> jax.Array:
  """The output of a call with a zero-size dimension, from shapes alone: both products are
  empty sums (zeros), so each element is ``activation(0) * 0`` (an empty array when there are no
  rows or ``n == 0``)."""
  x, fused, gate = spec.arg("x"), spec.arg("fused"), spec.arg("w_gate")
  n = (fused if fused is not None else gate).shape[-1]
  y = jnp.zeros(tuple(x.shape[:-1]) + (2, n), product_dtype(x, fused, gate))
  return combine(y, spec, jnp.dtype(x.dtype))


def compute_dtype(x_dtype: Any) -> Any:
  """The dtype of the activation and the product: float32 or wider."""
  return jnp.promote_types(x_dtype, jnp.float32)


def product_dtype(x: Any, fused: Any, gate: Any) -> Any:
  """The products' dtype: ``result_type`` of x and the weights."""
  return jnp.result_type(x.dtype, (fused if fused is not None else gate).dtype)


def _fused(fused: Any, gate: Any, up: Any) -> jax.Array:
  return jnp.stack([gate, up], axis=1) if fused is None else fused


def _matmul(a: jax.Array, b: jax.Array, contract: tuple[int, int], precision: Any,
            dtype: Any) -> jax.Array:
  """A 2-D product summed in float32 (every product here is one: the XLA:CPU of jaxlib cannot
  run some bfloat16 dots with a float32 result that contract two dimensions), returned in
  `dtype`. On a GPU the product is asked for in `dtype` itself, which saves writing and reading
  back a float32 array; only the forward's products do so (their contraction, over k, is short
  next to their output, where XLA:GPU's split-K GEMMs, which would add partial sums in `dtype`,
  are unlikely); the gradients' products, contracting over every row, ask for float32 by
  default (`input_grad` and `weight_grads` take another `dtype`)."""
  out = dtype if device.current_device().is_gpu else jnp.float32
  y = jax.lax.dot_general(a, b, (((contract[0],), (contract[1],)), ((), ())),
                          precision=precision, preferred_element_type=out)
  return y.astype(dtype)


def products(x: jax.Array, fused: Any, gate: Any, up: Any, precision: Any) -> jax.Array:
  """``[..., 2, n]``: x times the gate and the up weights, in `product_dtype` (float32 sums)."""
  w = _fused(fused, gate, up)
  k, _, n = w.shape
  y = _matmul(x.reshape(-1, k), w.reshape(k, 2 * n), (1, 0), precision,
              product_dtype(x, fused, gate))
  return y.reshape(x.shape[:-1] + (2, n))


def combine(y: jax.Array, spec: Spec, out_dtype: Any) -> jax.Array:
  """``activation(gate) * up`` from the products `y` ``[..., 2, n]``."""
  dtype = compute_dtype(y.dtype)
  gate, up = y[..., 0, :].astype(dtype), y[..., 1, :].astype(dtype)
  act = spec.function("activation")
  if act is not None:
    gate = act(gate)
  return (gate * up).astype(out_dtype)


def products_cotangent(y: jax.Array, dout: jax.Array, spec: Spec) -> jax.Array:
  """The cotangent of `y` (``[..., 2, n]``, float32) from the output's."""
  dtype = compute_dtype(y.dtype)
  gate, up = y[..., 0, :].astype(dtype), y[..., 1, :].astype(dtype)
  act = spec.function("activation")
  d = dout.astype(dtype)
  if act is None:
    return jnp.stack([d * up, d * gate], axis=-2)
  a, vjp = jax.vjp(act, gate)
  (dgate,) = vjp(d * up)
  return jnp.stack([dgate, d * a], axis=-2)


def weight_grads(x: jax.Array, dy: jax.Array, fused: Any, precision: Any,
                 dtype: Any = jnp.float32) -> tuple[Any, Any, Any]:
  """``(dfused, dgate, dup)`` (the pair's or the fused one's None) from x and dy
  ``[..., 2, n]``, in `dtype`."""
  k, n = x.shape[-1], dy.shape[-1]
  dw = _matmul(x.reshape(-1, k), dy.reshape(-1, 2 * n), (0, 0), precision,
               dtype).reshape(k, 2, n)
  if fused is not None:
    return dw, None, None
  return None, dw[:, 0], dw[:, 1]


def input_grad(dy: jax.Array, fused: Any, gate: Any, up: Any, precision: Any,
               dtype: Any = jnp.float32) -> jax.Array:
  """dx (in `dtype`) from dy ``[..., 2, n]``."""
  w = _fused(fused, gate, up)
  k, _, n = w.shape
  dx = _matmul(dy.reshape(-1, 2 * n), w.reshape(k, 2 * n), (1, 1), precision, dtype)
  return dx.reshape(dy.shape[:-2] + (k,))


def reference(x: jax.Array, weights: Any, activation: Any = None) -> jax.Array:
  """The plain-JAX definition, highest precision, differentiated by JAX in tests."""
  fused, gate, up = split_weights(weights)
  if fused is not None:
    gate, up = fused[:, 0], fused[:, 1]
  hi = jax.lax.Precision.HIGHEST
  dtype = compute_dtype(x.dtype)
  rounded = jnp.result_type(x.dtype, gate.dtype)
  g = jnp.matmul(x, gate, precision=hi, preferred_element_type=jnp.float32).astype(rounded)
  u = jnp.matmul(x, up, precision=hi, preferred_element_type=jnp.float32).astype(rounded)
  g, u = g.astype(dtype), u.astype(dtype)
  if activation is not None:
    g = activation(g)
  return (g * u).astype(x.dtype)
