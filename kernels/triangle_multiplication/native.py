"""triangle_multiplication "native": every product of the update in ragged_dot's native C++
kernels on pjrtkit's CPU device, with the pair's hidden channels laid out first so that no
product needs a transpose.

XLA:CPU runs the triangle product itself (``n^3 h`` multiply-adds, a batched matmul whose batch
is the channel, the last axis) at a few tens of GFLOP/s; here each channel's ``n x n`` product
is one group of ragged_dot's kernels (AMX tiles for bfloat16 where the CPU has them):

1. ``z = layer_norm(x)`` (the library's layer norm, channels last);
2. the four input projections at once, channels first: ``p [4h, P] = W^T z^T`` (the rows
   product against ``z [1, P, c]`` read transposed; P = batch x n x n pairs), gated and
   masked in float32 and rounded to x's dtype: ``a, b [h, B, n, n]``;
3. per channel and batch element (one group of n rows each), "outgoing" ``t = a b^T`` (the
   rows product, b read transposed) and "incoming" ``t = b^T a`` (the groups product);
4. the output layer norm over the leading channel axis in float32, rounded to x's dtype;
5. ``out [P, d] = t^T W_out`` (the groups product: channels last again) times
   ``sigmoid(z W_gate)`` (the rows product).

Each product is a `jax.custom_vjp` whose gradient is two more products of the same kernels;
the rest is differentiated by JAX. Products are summed in float32 whatever `precision` says.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm.api import layer_norm
from pjrtkit.kernels.layer_norm.native import DTYPES, native_unsupported_reason
from pjrtkit.kernels.ragged_dot.native import groups_product, rows_product
from pjrtkit.kernels.triangle_multiplication import base
from pjrtkit.kernels.triangle_multiplication.xla import XlaTriangleMultiplication


def _groups(count: int, rows: int) -> jax.Array:
  return jnp.full((count,), rows, jnp.int32)


# The three matrix products, summed in float32 and rounded to the operands' dtype (as XLA's dots
# of two bfloat16 operands); each one's gradient is two of the others.
@jax.custom_vjp
def nn(a: jax.Array, b: jax.Array) -> jax.Array:
  """``a [m, k] @ b [k, n]``."""
  return rows_product(a, b[None], _groups(1, a.shape[0]), None, False, a.dtype)


@jax.custom_vjp
def nt(a: jax.Array, b: jax.Array) -> jax.Array:
  """``a [m, k] @ b[n, k]^T``."""
  return rows_product(a, b[None], _groups(1, a.shape[0]), None, True, a.dtype)


@jax.custom_vjp
def tn(a: jax.Array, b: jax.Array) -> jax.Array:
  """``a[k, m]^T @ b [k, n]``."""
  return groups_product(a, b, _groups(1, a.shape[0]), None, 1, a.dtype)[0]


def _nn_bwd(res: tuple[jax.Array, jax.Array], dy: jax.Array) -> tuple[jax.Array, jax.Array]:
  """y = a b: da = dy b^T, db = a^T dy."""
  a, b = res
  dy = dy.astype(a.dtype)
  return nt(dy, b).astype(a.dtype), tn(a, dy).astype(b.dtype)


def _nt_bwd(res: tuple[jax.Array, jax.Array], dy: jax.Array) -> tuple[jax.Array, jax.Array]:
  """y = a b^T: da = dy b, db = dy^T a."""
  a, b = res
  dy = dy.astype(a.dtype)
  return nn(dy, b).astype(a.dtype), tn(dy, a).astype(b.dtype)


def _tn_bwd(res: tuple[jax.Array, jax.Array], dy: jax.Array) -> tuple[jax.Array, jax.Array]:
  """y = a^T b: da = b dy^T, db = a dy."""
  a, b = res
  dy = dy.astype(a.dtype)
  return nt(b, dy).astype(a.dtype), nn(a, dy).astype(b.dtype)


nn.defvjp(lambda a, b: (nn(a, b), (a, b)), _nn_bwd)
nt.defvjp(lambda a, b: (nt(a, b), (a, b)), _nt_bwd)
tn.defvjp(lambda a, b: (tn(a, b), (a, b)), _tn_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def triangle(a: jax.Array, b: jax.Array, outgoing: bool) -> jax.Array:
  """Per group g (a channel of a batch element): "outgoing" ``t[g] = a[g] @ b[g]^T``,
  "incoming" ``t[g] = b[g]^T @ a[g]``; a, b ``[G, n, n]``, t in their dtype."""
  g, n, _ = a.shape
  if outgoing:
    t = rows_product(a.reshape(g * n, n), b, _groups(g, n), None, True, a.dtype)
    return t.reshape(g, n, n)
  return groups_product(b.reshape(g * n, n), a.reshape(g * n, n), _groups(g, n), None, g,
                        a.dtype)


def _triangle_fwd(a: jax.Array, b: jax.Array, outgoing: bool) -> tuple[jax.Array, Any]:
  return triangle(a, b, outgoing), (a, b)


def _triangle_bwd(outgoing: bool, residuals: Any, dt: jax.Array) -> tuple[jax.Array, ...]:
  a, b = residuals
  g, n, _ = a.shape
  sizes = _groups(g, n)
  dt = dt.astype(a.dtype)
  rows = lambda y: y.reshape(g * n, n)  # noqa: E731
  if outgoing:  # t = a b^T: da = dt b, db = dt^T a
    da = rows_product(rows(dt), b, sizes, None, False, a.dtype).reshape(g, n, n)
    db = groups_product(rows(dt), rows(a), sizes, None, g, b.dtype)
  else:  # t = b^T a: da = b dt, db = a dt^T
    da = rows_product(rows(b), dt, sizes, None, False, a.dtype).reshape(g, n, n)
    db = rows_product(rows(a), dt, sizes, None, True, b.dtype).reshape(g, n, n)
  return da, db


triangle.defvjp(_triangle_fwd, _triangle_bwd)


def compute(args: tuple[Any, ...], spec: Spec) -> jax.Array:
  """The update with channels first between the projections (see the module docstring)."""
  (x, mask, proj_in, gate_in, proj_out, gate_out, ln_in_scale, ln_in_offset, ln_out_scale,
   ln_out_offset) = args
  eps = spec.param("epsilon")
  *batch, n, _, c = x.shape
  h, d = proj_out.shape
  groups = h * math.prod(batch)
  z = layer_norm(x, ln_in_scale, ln_in_offset, epsilon=eps).reshape(-1, c)      # [P, c]
  w = jnp.concatenate([gate_in.reshape(c, 2 * h), proj_in.reshape(c, 2 * h)], axis=1)
  p = nt(w.T.astype(z.dtype), z).astype(jnp.float32)                            # [4h, P]
  p = jax.nn.sigmoid(p[:2 * h]) * p[2 * h:] * mask.reshape(1, -1).astype(jnp.float32)
  p = p.astype(x.dtype).reshape(2, groups, n, n)
  t = triangle(p[0], p[1], spec.param("triangle_type") == "outgoing")
  t = t.reshape(h, -1).astype(jnp.float32)
  mean = jnp.mean(t, axis=0)
  centred = t - mean
  var = jnp.mean(jnp.square(centred), axis=0)
  t = (centred * jax.lax.rsqrt(var + eps) * ln_out_scale.astype(jnp.float32)[:, None]
       + ln_out_offset.astype(jnp.float32)[:, None]).astype(x.dtype)            # [h, P]
  out = tn(t, proj_out).astype(jnp.float32)                                     # [P, d]
  gate = nn(z, gate_out).astype(jnp.float32)
  return (out * jax.nn.sigmoid(gate)).astype(x.dtype).reshape(*batch, n, n, d)


WEIGHTS = ("projection_in_weights", "gate_in_weights", "projection_out_weights",
           "gate_out_weights")


def weights_mismatch(spec: Spec) -> str | None:
  """Which of the four weights does not have x's dtype (the products take one dtype), or None."""
  dtype = jnp.dtype(spec.arg("x").dtype)
  for name in WEIGHTS:
    if jnp.dtype(spec.arg(name).dtype) != dtype:
      return f"{name} ({jnp.dtype(spec.arg(name).dtype).name}) must have x's dtype ({dtype.name})"
  return None


class NativeTriangleMultiplication(Op[NoConfig]):
  """The products in ragged_dot's C++ kernels, channels first (see the module docstring); the
  gradient is JAX's through the products' own."""

  op_name = base.OP_NAME
  implementation = "native"

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = native_unsupported_reason(device, "float32")  # the device and the library
    if reason:
      return reason
    dtype = jnp.dtype(spec.arg("x").dtype).name
    if dtype not in DTYPES:
      return f"x dtype {dtype} is not supported (accepted: {', '.join(DTYPES)})"
    return weights_mismatch(spec)

  def example_args(self, spec: Spec, seed: int = 0) -> tuple[Any, ...]:
    return XlaTriangleMultiplication().example_args(spec, seed)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    return compute(args, spec), args
