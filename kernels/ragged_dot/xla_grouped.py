"""ragged_dot "xla_grouped": a loop over the work items of `schedule` (one row tile times one
group's matrix each) in plain JAX, so the work is ``m * k * n`` plus at most one tile per group
boundary, where XLA's own ``ragged_dot`` on the CPU computes every group for every row
(``g`` times as much).

Serves the plain layout (lhs ``[m, k]``, rhs ``[g, k, n]`` or ``[g, n, k]``, group_offset
included); the gradient runs the same loop for lhs (against rhs transposed) and accumulates
each item's ``lhs_tile^T @ dout_tile`` into its group's rhs gradient.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.ragged_dot import base, schedule


@dataclasses.dataclass(frozen=True)
class GroupedConfig:
  """Rows per work item."""

  tile_rows: int = 256


def tile_rows(config: GroupedConfig, rows: int) -> int:
  """The config's tile, but no taller than the rows rounded up to 8 (a decode step of a few
  rows would otherwise multiply a whole tile of padding per group)."""
  return max(1, min(config.tile_rows, -(-rows // 8) * 8))


def _pad_rows(x: jax.Array, tile: int) -> jax.Array:
  pad = -x.shape[0] % tile
  return jnp.pad(x, ((0, pad), (0, 0))) if pad else x


def _wide(x: jax.Array) -> jax.Array:
  """16-bit floats as float32 for the item's product (exact: a product of two bfloat16 or
  float16 values is a float32). XLA:CPU as pjrtkit's CPU device ships it cannot compile some
  16-bit dots inside a loop body ("unsupported operand type BF16 in op dot")."""
  return x.astype(jnp.float32) if x.dtype in (jnp.bfloat16, jnp.float16) else x


def _mask(sched: schedule.Schedule, i: jax.Array, tile: int) -> jax.Array:
  rows = sched.tile[i] * tile + jnp.arange(tile, dtype=jnp.int32)
  return (rows >= sched.row_lo[i]) & (rows < sched.row_hi[i])


def rows_product(x: jax.Array, rhs: jax.Array, rhs_contract: int, sched: schedule.Schedule,
                 tile: int, precision: Any, acc: Any) -> jax.Array:
  """``out[r] = x[r] @ rhs[group(r)]`` (contracting rhs dimension `rhs_contract`, 1 or 2) for
  the rows the schedule covers, zero elsewhere; `acc` dtype ``[rows, n]``."""
  rows = x.shape[0]
  xp = _pad_rows(x, tile)
  if rhs_contract == 2:
    rhs = jnp.swapaxes(rhs, 1, 2)  # once here, not per item
  n = rhs.shape[2]
  out = jnp.zeros((xp.shape[0], n), acc)

  def body(i: jax.Array, out: jax.Array) -> jax.Array:
    start = sched.tile[i] * tile
    xt = jax.lax.dynamic_slice_in_dim(xp, start, tile, axis=0)
    w = jax.lax.dynamic_index_in_dim(rhs, sched.group[i], axis=0, keepdims=False)
    y = jax.lax.dot_general(_wide(xt), _wide(w), (((1,), (0,)), ((), ())), precision=precision,
                            preferred_element_type=acc)
    cur = jax.lax.dynamic_slice_in_dim(out, start, tile, axis=0)
    new = jnp.where(_mask(sched, i, tile)[:, None], y, cur)
    return jax.lax.dynamic_update_slice_in_dim(out, new, start, axis=0)

  out = jax.lax.fori_loop(0, sched.count, body, out)
  return out[:rows]


def group_gradient(x: jax.Array, dy: jax.Array, local: int, rhs_contract: int,
                   sched: schedule.Schedule, tile: int, precision: Any) -> jax.Array:
  """``drhs[g] = sum over g's rows of x[r]^T dy[r]`` in float32, laid out like rhs."""
  xp = _pad_rows(x, tile)
  dyp = _pad_rows(dy, tile)
  k, n = x.shape[1], dy.shape[1]
  shape = (local, k, n) if rhs_contract == 1 else (local, n, k)
  grads = jnp.zeros(shape, jnp.float32)

  def body(i: jax.Array, grads: jax.Array) -> jax.Array:
    start = sched.tile[i] * tile
    keep = _mask(sched, i, tile)[:, None]
    xt = _wide(jnp.where(keep, jax.lax.dynamic_slice_in_dim(xp, start, tile, axis=0), 0))
    dt = _wide(jax.lax.dynamic_slice_in_dim(dyp, start, tile, axis=0))
    if rhs_contract == 1:
      part = jax.lax.dot_general(xt, dt, (((0,), (0,)), ((), ())), precision=precision,
                                 preferred_element_type=jnp.float32)
    else:
      part = jax.lax.dot_general(dt, xt, (((0,), (0,)), ((), ())), precision=precision,
                                 preferred_element_type=jnp.float32)
    g = sched.group[i]
    cur = jax.lax.dynamic_index_in_dim(grads, g, axis=0, keepdims=False)
    return jax.lax.dynamic_update_index_in_dim(grads, cur + part, g, axis=0)

  return jax.lax.fori_loop(0, sched.count, body, grads)


class XlaGroupedRaggedDot(Op[GroupedConfig]):
  """Grouped tiles in plain JAX (see the module docstring)."""

  op_name = base.OP_NAME
  implementation = "xla_grouped"
  portable = True
  config_cls = GroupedConfig

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    del device
    reason = base.grouped_unsupported_reason(spec)
    if reason:
      return reason
    if not jnp.issubdtype(jnp.dtype(spec.arg("lhs").dtype), jnp.floating):
      return "integer operands (use 'xla')"
    return None

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[GroupedConfig]:
    return tuple(GroupedConfig(t) for t in (64, 128, 256, 512))

  def example_args(self, spec: Spec, seed: int = 0) -> tuple[Any, ...]:
    return base.example_args(spec, seed)

  def _schedule(self, lhs: jax.Array, rhs: jax.Array, group_sizes: jax.Array,
                group_offset: jax.Array | None, tile: int) -> schedule.Schedule:
    return schedule.make(group_sizes, group_offset, rhs.shape[0], lhs.shape[0], tile)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: GroupedConfig) -> tuple[Any, Any]:
    lhs, rhs, group_sizes, group_offset = args
    tile = tile_rows(config, lhs.shape[0])
    sched = self._schedule(lhs, rhs, group_sizes, group_offset, tile)
    acc = rows_product(lhs, rhs, base.dims_of(spec).rhs_contract[0], sched, tile,
                       functions.precision_of(spec.param("precision")), base.accumulator(spec))
    out, pre = base.finish(spec, acc)
    return out, (lhs, rhs, group_sizes, group_offset, pre)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: GroupedConfig
               ) -> tuple[Any, ...]:
    lhs, rhs, group_sizes, group_offset, pre = residuals
    tile = tile_rows(config, lhs.shape[0])
    sched = self._schedule(lhs, rhs, group_sizes, group_offset, tile)
    contract = base.dims_of(spec).rhs_contract[0]
    precision = functions.precision_of(spec.param("precision"))
    dacc = base.dout_to_acc(spec, pre, dout).astype(jnp.float32)
    dy = dacc.astype(lhs.dtype) if lhs.dtype != jnp.float32 else dacc
    # d lhs = dy @ rhs[g]^T: rhs contracted over its output dimension.
    dlhs = rows_product(dy, rhs, 3 - contract, sched, tile, precision, jnp.float32)
    drhs = group_gradient(lhs, dy, rhs.shape[0], contract, sched, tile, precision)
    return dlhs.astype(lhs.dtype), drhs.astype(rhs.dtype), None, None
