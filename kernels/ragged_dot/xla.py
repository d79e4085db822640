"""ragged_dot "xla": ``jax.lax.ragged_dot_general`` (every mode, every dimension numbers),
summed in float32; the gradient is JAX's transpose of the same product.

``group_offset`` (rhs holding only the groups ``[offset, offset + g_local)`` of `group_sizes`)
is served by giving the rows before and after the local groups a zero matrix: two extra groups.

JAX differentiates only the rows mode; the gradient of the other two is taken from a dense
form: the batch mode is JAX's plain batched ``dot_general`` (as ``jax.lax`` defines that mode,
group sizes do not change its value; forward too), the contracting mode a product with lhs times each group's row mask
(``g`` times the work, as XLA's own expansion).

XLA:CPU expands ``ragged_dot`` into a dense product over every group (``g`` times the work of
the ragged one); "xla_grouped" does not. On a GPU, integer products take that dense form here
too (`masked_rows_product` for the rows mode, `dense_product` for the contracting one), and so
do rows-mode calls without groups on every device: XLA:GPU's ``ragged_dot`` (jax 0.11.2) adds
every group's matrix into each row of an integer product and cannot lower one with no groups.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core import device, functions
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.ragged_dot import base


def local_sizes(group_sizes: jax.Array, group_offset: jax.Array, local: int,
                total_rows: int) -> jax.Array:
  """``[rows before the local groups, the local groups' sizes..., rows after]`` (int32; the
  offset clamped by `base.clamped_offset`, negative sizes as zero, as `schedule` reads them)."""
  gs = jnp.maximum(group_sizes.astype(jnp.int32), 0)
  off = base.clamped_offset(group_offset, gs.shape[0], local)
  before = jnp.sum(jnp.where(jnp.arange(gs.shape[0]) < off, gs, 0))
  mine = jax.lax.dynamic_slice(gs, (off,), (local,))
  after = jnp.maximum(total_rows - before - jnp.sum(mine), 0)
  return jnp.concatenate([before[None], mine, after[None]])


def group_ids(group_sizes: jax.Array, length: int) -> jax.Array:
  """The group of each position along the ragged dimension (``g`` past the last group)."""
  ends = jnp.cumsum(jnp.maximum(group_sizes.astype(jnp.int32), 0))
  return jnp.searchsorted(ends, jnp.arange(length, dtype=jnp.int32), side="right")


def masked_by_group(lhs: jax.Array, group_sizes: jax.Array, g: int, r: int) -> jax.Array:
  """``[g, *lhs.shape]``: lhs once per group, zero outside the group's positions along its
  ragged dimension `r`."""
  ids = group_ids(group_sizes, lhs.shape[r])
  mask = (ids[None, :] == jnp.arange(g, dtype=jnp.int32)[:, None]).astype(lhs.dtype)
  shape = [g] + [1] * lhs.ndim
  shape[1 + r] = lhs.shape[r]
  return lhs[None] * mask.reshape(shape)


def dense_product(lhs: jax.Array, rhs: jax.Array, group_sizes: jax.Array, spec: Spec
                  ) -> jax.Array:
  """The batch and contracting modes as dense products JAX differentiates (see the module
  docstring)."""
  dims = base.dims_of(spec)
  acc = base.accumulator(spec)
  precision = functions.precision_of(spec.param("precision"))
  dn = ((dims.lhs_contract, dims.rhs_contract), (dims.lhs_batch, dims.rhs_batch))
  if dims.mode == base.BATCH:
    return jax.lax.dot_general(lhs, rhs, dn, precision=precision, preferred_element_type=acc)
  masked = masked_by_group(lhs, group_sizes, group_sizes.shape[0], dims.lhs_ragged)
  shifted = ((tuple(d + 1 for d in dims.lhs_contract), dims.rhs_contract),
             (tuple(d + 1 for d in dims.lhs_batch), dims.rhs_batch))
  out = jax.lax.dot_general(masked, rhs, shifted, precision=precision, preferred_element_type=acc)
  return jnp.moveaxis(out, len(dims.lhs_batch), 0)


def product(lhs: jax.Array, rhs: jax.Array, group_sizes: jax.Array,
            group_offset: jax.Array | None, spec: Spec) -> jax.Array:
  """The accumulator-dtype product (before the epilogue)."""
  dn = base.dims_from_text(spec.param("dimension_numbers"))
  dims = base.dims_of(spec)
  acc = base.accumulator(spec)
  precision = functions.precision_of(spec.param("precision"))
  if dims.mode == base.BATCH:
    return dense_product(lhs, rhs, group_sizes, spec)
  if group_offset is not None:
    gd = dims.rhs_group
    zero = jnp.zeros(rhs.shape[:gd] + (1,) + rhs.shape[gd + 1:], rhs.dtype)
    rhs = jnp.concatenate([zero, rhs, zero], axis=gd)
    group_sizes = local_sizes(group_sizes, group_offset, rhs.shape[gd] - 2,
                              lhs.shape[dims.lhs_ragged])
  integer = not (jnp.issubdtype(lhs.dtype, jnp.floating)
                 and jnp.issubdtype(rhs.dtype, jnp.floating)
                 and jnp.issubdtype(acc, jnp.floating))
  on_gpu_wrong = integer and device.current_device().is_gpu
  if dims.mode == base.ROWS and (rhs.shape[dims.rhs_group] == 0 or on_gpu_wrong):
    return masked_rows_product(lhs, rhs, group_sizes, spec)
  if on_gpu_wrong:  # the contracting mode
    return dense_product(lhs, rhs, group_sizes, spec)
  return jax.lax.ragged_dot_general(lhs, rhs, group_sizes.astype(jnp.int32), dn,
                                    precision=precision, preferred_element_type=acc)


def masked_rows_product(lhs: jax.Array, rhs: jax.Array, group_sizes: jax.Array, spec: Spec
                        ) -> jax.Array:
  """The rows mode as a sum over groups of lhs, masked to each group's rows, times the group's
  matrix (``g`` times the work): for calls ``jax.lax.ragged_dot_general`` gets wrong on XLA:GPU
  (integer operands: each row summed over every group's matrix, jax 0.11.2) or cannot lower
  there (no groups)."""
  dims = base.dims_of(spec)
  acc = base.accumulator(spec)
  precision = functions.precision_of(spec.param("precision"))
  masked = masked_by_group(lhs, group_sizes, rhs.shape[dims.rhs_group], dims.lhs_ragged)
  dn = ((tuple(d + 1 for d in dims.lhs_contract), dims.rhs_contract),
        ((0,) + tuple(d + 1 for d in dims.lhs_batch), (dims.rhs_group,) + tuple(dims.rhs_batch)))
  out = jax.lax.dot_general(masked, rhs, dn, precision=precision, preferred_element_type=acc)
  return jnp.sum(out, axis=0, dtype=acc)


class XlaRaggedDot(Op[NoConfig]):
  """The reference implementation; serves every call."""

  op_name = base.OP_NAME
  implementation = "xla"
  portable = True
  symbolic_shapes = True

  def example_args(self, spec: Spec, seed: int = 0) -> tuple[Any, ...]:
    return base.example_args(spec, seed)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    lhs, rhs, group_sizes, group_offset = args
    out, pre = base.finish(spec, product(lhs, rhs, group_sizes, group_offset, spec))
    return out, (lhs, rhs, group_sizes, group_offset, pre)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig) -> tuple[Any, ...]:
    lhs, rhs, group_sizes, group_offset, pre = residuals
    dacc = base.dout_to_acc(spec, pre, dout)
    if base.dims_of(spec).mode == base.ROWS:
      fn = lambda a, b: product(a, b, group_sizes, group_offset, spec)  # noqa: E731
    else:
      fn = lambda a, b: dense_product(a, b, group_sizes, spec)  # noqa: E731
    _, vjp = jax.vjp(fn, lhs, rhs)
    dlhs, drhs = vjp(dacc.astype(base.accumulator(spec)))
    return dlhs, drhs, None, None
