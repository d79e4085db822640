"""ragged_dot "triton": a grouped matmul as Pallas ``pallas_call`` kernels lowered through Triton.

Serves ragged_dot's plain layout (lhs ``[m, k]``, rhs ``[g, k, n]`` or ``[g, n, k]``,
`group_offset` included) for bfloat16, float16 and float32 operands of one dtype. It is the GPU
counterpart of "xla_grouped": the work list is `schedule.make`'s, computed by XLA before the
kernel, one (group, row tile) item per entry.

* Forward (`rows_product`): a 1-D grid of ``items x column tiles`` programs, visited in bands
  of `group_m` items (`triton_matmul.band_order`). A program multiplies its item's
  ``block_m``-row tile of lhs by its group's matrix over one ``block_n``-column tile, looping
  over k in ``block_k`` steps with a float32 accumulator, and stores the rows of the item's
  group (``[row_lo, row_hi)``) only, so a tile shared by several groups is written by several
  programs, each its own rows. Rows no group covers hold the epilogue of a zero product (zero
  without an epilogue) without a memset: the first and the last real item also write their
  tile's rows before and after the covered range, and the padding items (index >= count; there
  are always at least as many as untouched row tiles) each write one untouched tile.
* Epilogue: the call's `activation` and `fuse_gateup_activation` are applied in the kernel on
  the float32 product where they lower in Triton (`triton_matmul.FUSABLE_ACTIVATIONS`; gate-up
  "silu" and "gelu_tanh": the program then holds two accumulators, the gate columns ``j`` and the
  up columns ``j + n/2``, and its pipeline two rhs tiles a step, so its stages are cut to what
  fits `triton_matmul.SMEM_BUDGET`). A differentiated call (`forward`) also needs the float32 product as
  the residual ``pre``: the same kernel stores it beside the output; `forward_output` stores the
  output alone. For the exact "gelu" gate (``erfc`` has no Triton lowering) and custom
  activations the kernel writes the float32 product and `base.finish` applies the epilogue (an
  XLA fusion).
* Backward: d lhs is the forward kernel again, on the float32 output cotangent (cast to lhs's
  dtype) against rhs contracted over its output dimension (the kernel reads rhs in either
  layout); d rhs is a second kernel over ``groups x k tiles x n tiles`` programs, each looping
  over its group's rows ``[start, end)`` in ``block_m`` steps and writing its tile once
  (deterministic: no atomics; an empty group's tiles are written as zeros).

On the CPU the kernels run under ``pallas_interpret()`` only (Pallas's HLO interpreter).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core import triton_matmul as tm
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.ragged_dot import base, schedule

_GATEUP_IN_KERNEL = {"silu": jax.nn.silu, "gelu_tanh": functools.partial(jax.nn.gelu,
                                                                          approximate=True)}
"""`fuse_gateup_activation` names the kernel applies itself ("gelu" is the exact one: erfc)."""


@dataclasses.dataclass(frozen=True)
class TritonRaggedDotConfig(tm.MatmulConfig):
  """The kernels' tiles and launch (`triton_matmul.MatmulConfig`).

  Forward and d lhs: output tiles of `block_m` rows (the schedule's row tile) by `block_n`
  columns, `block_k` steps over the contracted dimension. d rhs: tiles of `block_k` x `block_n`
  of each group's ``[k, n]`` matrix (``[n, k]`` laid out as rhs), `block_m`-row steps over the
  group's rows. Blocks larger than a dimension are shrunk to it (at least 16).
  """


def _default(m: int, groups: int) -> TritonRaggedDotConfig:
  """The untuned config: 128x128 tiles, k steps of 64, 8 warps, 4 stages (a Hopper bf16 matmul
  tile: a 64 KiB float32 accumulator per program, 128 KiB of shared memory in flight); where
  groups average fewer than 64 rows (decode-sized MoE batches) 64-row tiles with 4 warps, which
  halves the rows computed and thrown away at group edges. Not measured on a GPU yet."""
  if m < 64 * max(groups, 1):
    return TritonRaggedDotConfig(64, 128, 64, 4, 4)
  return TritonRaggedDotConfig()


@dataclasses.dataclass(frozen=True)
class _Rows:
  """The static geometry of one launch of the rows kernel.

  Attributes:
    m: rows of x and of the output.
    k: the contracted size.
    n: the output's columns.
    contract: rhs's contracted dimension: 1 (rhs ``[g, k, w]``) or 2 (rhs ``[g, w, k]``).
    w: rhs's output dimension (n, or 2n when `halves`).
    halves: two accumulators per program: columns ``j`` and ``j + n`` of rhs (gate and up).
    items: the schedule's length (`schedule.max_items`).
  """

  m: int
  k: int
  n: int
  contract: int
  w: int
  halves: bool
  items: int
  block_m: int
  block_n: int
  block_k: int
  group_m: int

  @property
  def row_tiles(self) -> int:
    return pl.cdiv(self.m, self.block_m)

  @property
  def col_tiles(self) -> int:
    return pl.cdiv(self.n, self.block_n)


def _rows_kernel(group_ref, tile_ref, lo_ref, hi_ref, count_ref, x_ref, w_ref, o_ref,
                 pre_ref=None, *, geo: _Rows, precision: Any,
                 epilogue: Callable[..., Any]) -> None:
  """One (item, column tile) of ``out[r] = epilogue(x[r] @ w[group(r)])``, and of the float32
  product(s) ``pre`` where asked (see the module docstring)."""
  bm, bn, bk = geo.block_m, geo.block_n, geo.block_k
  item, col_tile = tm.band_order(pl.program_id(0), geo.items, geo.col_tiles, geo.group_m)
  count = count_ref[0]
  cols = tm.span(col_tile * bn, bn, 1)  # [1, bn] output columns
  col_ok = tm.below(cols, geo.n, bn)

  @pl.when(item < count)
  def _work():
    group, tile = group_ref[item], tile_ref[item]
    lo, hi = lo_ref[item], hi_ref[item]
    rows = tm.span(tile * bm, bm, 0)  # [bm, 1]
    row_ok = tm.below(rows, geo.m, bm)
    w_cols = tm.span(col_tile * bn, bn, 0)  # [bn, 1]: output columns as rows of [g * w, k]
    w_col_ok = tm.below(w_cols, geo.n, bn)

    def body(step, accs):
      k_row = tm.span(step * bk, bk, 1)  # [1, bk]
      k_row_ok = tm.below(k_row, geo.k, bk)
      a = tm.load(x_ref, rows, k_row, tm.both(row_ok, k_row_ok))
      out = []
      for half, acc in enumerate(accs):
        shift = half * geo.n
        if geo.contract == 1:  # w as [g * k, w]: a [bk, bn] tile.
          k_col = tm.span(step * bk, bk, 0)
          b = tm.load(w_ref, group * geo.k + k_col, cols + shift,
                      tm.both(tm.below(k_col, geo.k, bk), col_ok))
          out.append(acc + tm.dot(a, b, precision))
        else:  # w as [g * w, k]: a [bn, bk] tile, contracted over its columns.
          b = tm.load(w_ref, group * geo.w + shift + w_cols, k_row, tm.both(w_col_ok, k_row_ok))
          out.append(acc + tm.dot(a, b, precision, (1, 1)))
      return tuple(out)

    zero = jnp.zeros((bm, bn), jnp.float32)
    accs = lax.fori_loop(0, pl.cdiv(geo.k, bk), body, (zero, zero) if geo.halves else (zero,))
    inside = (rows >= lo) & (rows < hi)
    # The first and the last item also zero the rows of their tile outside every group.
    edge = ((item == 0) & (rows < lo)) | ((item == count - 1) & (rows >= hi))
    mask = tm.both(tm.both(inside | edge, row_ok), col_ok)
    # Rows outside the group get the epilogue of a zero product, as "xla" gives them.
    accs = tuple(jnp.where(inside, acc, 0.0) for acc in accs)
    tm.store(o_ref, rows, cols, epilogue(*accs).astype(o_ref.dtype), mask)
    if pre_ref is not None:
      for half, acc in enumerate(accs):
        tm.store(pre_ref, rows, cols + half * geo.n, acc, mask)

  @pl.when(item >= count)
  def _zero_untouched_tile():
    # Untouched row tiles are those before the first item's tile and after the last one's (all
    # of them without items); the spare-th of them, if any.
    tile = schedule.untouched_tile(item - count, count, tile_ref[0],
                                   tile_ref[jnp.maximum(count - 1, 0)], geo.row_tiles)
    rows = tm.span(tile * bm, bm, 0)
    mask = tm.both(rows < geo.m, col_ok)
    zeros = (jnp.zeros((bm, bn), jnp.float32),) * (2 if geo.halves else 1)
    tm.store(o_ref, rows, cols, epilogue(*zeros).astype(o_ref.dtype), mask)
    if pre_ref is not None:
      for half in range(2 if geo.halves else 1):
        tm.store(pre_ref, rows, cols + half * geo.n, jnp.zeros((bm, bn), jnp.float32), mask)


def rows_product(x: jax.Array, rhs: jax.Array, contract: int, sched: schedule.Schedule,
                 config: tm.MatmulConfig, out_dtype: Any, precision: Any,
                 epilogue: Callable[..., Any] | None = None, halves: bool = False,
                 with_pre: bool = False) -> Any:
  """``out[r] = epilogue(x[r] @ rhs[group(r)])`` for the rows `sched` covers, ``epilogue(0)``
  elsewhere, ``[m, n]`` of `out_dtype` (n: rhs's output dimension, halved with `halves`); with `with_pre`,
  ``(out, pre)`` with pre the float32 product ``[m, w]`` (zero outside the groups too).

  Args:
    x: ``[m, k]``.
    rhs: ``[g, k, w]`` (`contract` 1) or ``[g, w, k]`` (`contract` 2), x's dtype.
    sched: `schedule.make` with ``tile == config.block_m``.
    config: the launch (blocks already fitted to the shapes).
    epilogue: float32 accumulator(s) -> float32 tile (None: the product itself).
    halves: gate-up: the epilogue takes the products of rhs's columns ``j`` and ``j + w/2``.
  """
  m, k = x.shape
  w = rhs.shape[3 - contract]
  n = w // 2 if halves else w
  geo = _Rows(m=m, k=k, n=n, contract=contract, w=w, halves=halves,
              items=int(sched.group.shape[0]), block_m=config.block_m,
              block_n=config.block_n, block_k=config.block_k, group_m=config.group_m)
  if epilogue is None:
    epilogue = lambda acc: acc  # noqa: E731
  kernel = functools.partial(_rows_kernel, geo=geo, precision=precision, epilogue=epilogue)
  flat = rhs.reshape(rhs.shape[0] * rhs.shape[1], rhs.shape[2])
  out_shape = jax.ShapeDtypeStruct((m, n), out_dtype)
  if with_pre:
    out_shape = [out_shape, jax.ShapeDtypeStruct((m, w), jnp.float32)]
  result = pl.pallas_call(
      kernel, grid=(geo.items * geo.col_tiles,), out_shape=out_shape,
      name="pjrtkit_ragged_dot_rows" + ("_pre" if with_pre else ""), **tm.call_params(config),
  )(sched.group, sched.tile, sched.row_lo, sched.row_hi, sched.count.reshape(1), x, flat)
  return tuple(result) if with_pre else result


def _group_kernel(start_ref, end_ref, a_ref, b_ref, o_ref, *, p: int, q: int, block_m: int,
                  block_p: int, block_q: int, precision: Any) -> None:
  """One (group, p tile, q tile) of ``out[group] = a[rows]^T @ b[rows]`` over the group's rows
  ``[start, end)``."""
  p_tiles, q_tiles = pl.cdiv(p, block_p), pl.cdiv(q, block_q)
  pid = pl.program_id(0)
  group = pid // (p_tiles * q_tiles)
  p_tile = pid // q_tiles % p_tiles
  q_tile = pid % q_tiles
  start, end = start_ref[group], end_ref[group]
  p_cols = tm.span(p_tile * block_p, block_p, 1)
  q_cols = tm.span(q_tile * block_q, block_q, 1)
  p_ok, q_ok = tm.below(p_cols, p, block_p), tm.below(q_cols, q, block_q)

  def body(step, acc):
    rows = tm.span(start + step * block_m, block_m, 0)
    row_ok = rows < end
    a = tm.load(a_ref, rows, p_cols, tm.both(row_ok, p_ok))
    b = tm.load(b_ref, rows, q_cols, tm.both(row_ok, q_ok))
    return acc + tm.dot(a, b, precision, (0, 0))

  steps = (end - start + block_m - 1) // block_m
  acc = lax.fori_loop(0, steps, body, jnp.zeros((block_p, block_q), jnp.float32))
  p_rows = tm.span(p_tile * block_p, block_p, 0)
  tm.store(o_ref, group * p + p_rows, q_cols, acc.astype(o_ref.dtype),
           tm.both(tm.below(p_rows, p, block_p), q_ok))


def group_gradient(a: jax.Array, b: jax.Array, starts: jax.Array, ends: jax.Array,
                   config: tm.MatmulConfig, out_dtype: Any, precision: Any) -> jax.Array:
  """``out[g] = a[s_g:e_g]^T @ b[s_g:e_g]`` (``[g, p, q]`` of `out_dtype`) for a ``[m, p]``
  and b ``[m, q]``, the groups' rows given by `starts` and `ends` (``[g]`` int32), each tile
  written once. `config`'s block_m is the row step; block_k tiles p and block_n tiles q; its
  stages are cut to what fits `triton_matmul.SMEM_BUDGET`."""
  m, p = a.shape
  q = b.shape[1]
  groups = starts.shape[0]
  block_m = tm.block_for(m, config.block_m)
  block_p, block_q = tm.block_for(p, config.block_k), tm.block_for(q, config.block_n)
  kernel = functools.partial(_group_kernel, p=p, q=q, block_m=block_m, block_p=block_p,
                             block_q=block_q, precision=precision)
  # Its pipeline holds [block_m, block_p] and [block_m, block_q] tiles: as many stages as fit.
  per_stage = block_m * (block_p + block_q) * jnp.dtype(a.dtype).itemsize
  config = dataclasses.replace(config, num_stages=tm.stages_within(config.num_stages,
                                                                    per_stage))
  out = pl.pallas_call(
      kernel, grid=(groups * pl.cdiv(p, block_p) * pl.cdiv(q, block_q),),
      out_shape=jax.ShapeDtypeStruct((groups * p, q), out_dtype),
      name="pjrtkit_ragged_dot_group_grad", **tm.call_params(config),
  )(starts, ends, a, b)
  return out.reshape(groups, p, q)


def _plan(spec: Spec) -> tuple[Callable[..., Any] | None, bool, bool]:
  """``(epilogue, halves, in_kernel)`` of a forward: what the kernel applies to its float32
  product(s), whether it holds gate and up accumulators, and whether that is the whole
  epilogue (else the kernel writes the float32 product and `base.finish` runs after it)."""
  act_name, fuse = spec.param("activation"), spec.param("fuse_gateup_activation")
  if fuse is None and act_name is None:
    return None, False, True
  if not tm.fusable(act_name):
    return None, False, False
  act = tm.activation_of(act_name)
  if fuse is None:
    return act, False, True
  if fuse not in _GATEUP_IN_KERNEL:
    return None, False, False
  gate_act = _GATEUP_IN_KERNEL[fuse]

  def gateup(gate: Any, up: Any) -> Any:
    y = gate_act(gate) * up
    return act(y) if act is not None else y

  return gateup, True, True


class TritonRaggedDot(Op[TritonRaggedDotConfig]):
  """Grouped matmul as Pallas Triton kernels (see the module docstring)."""

  op_name = base.OP_NAME
  implementation = "triton"
  config_cls = TritonRaggedDotConfig

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = pallas_lib.gpu_unsupported_reason(device, "Triton", (8, 0))
    if reason:
      return reason
    reason = base.grouped_unsupported_reason(spec)
    if reason:
      return reason
    lhs, rhs = spec.arg("lhs").dtype, spec.arg("rhs").dtype
    for name, dtype in (("lhs", lhs), ("rhs", rhs)):
      if dtype not in tm.FLOAT_DTYPES:
        return (f"{name} dtype {dtype} is not supported ({', '.join(tm.FLOAT_DTYPES)}; use "
                f"'xla' for integer operands)")
    if lhs != rhs:
      return f"lhs ({lhs}) and rhs ({rhs}) must share a dtype (use 'xla_grouped' or 'xla')"
    if not jnp.issubdtype(jnp.dtype(spec.param("out_dtype")), jnp.floating):
      return f"an integer result ({spec.param('out_dtype')}) from floating operands"
    return tm.precision_reason(spec.param("precision"))

  def default_config(self, spec: Spec) -> TritonRaggedDotConfig:
    """`_default` fitted to the shapes, within `triton_matmul.SMEM_BUDGET` (float32 operands:
    k steps of 32)."""
    m, n, k = self._sizes(spec)
    config = tm.fit(_default(m, spec.arg("rhs").shape[0]), m, n, k)
    return tm.within_smem(config, self._itemsize(spec), 1, tm.SMEM_BUDGET)

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[TritonRaggedDotConfig]:
    m, n, k = self._sizes(spec)
    c = TritonRaggedDotConfig
    candidates = [c(128, 128, 64, 8, 4), c(128, 128, 64, 8, 3), c(128, 256, 64, 8, 3),
                  c(128, 128, 32, 4, 4), c(128, 64, 64, 4, 4), c(64, 128, 64, 4, 4),
                  c(64, 64, 64, 4, 3), c(64, 256, 64, 8, 3), c(32, 128, 64, 4, 4),
                  c(16, 128, 128, 4, 4), c(128, 128, 64, 8, 4, group_m=1),
                  c(256, 128, 64, 8, 3)]
    return tuple(dict.fromkeys(
        tm.within_smem(tm.fit(cfg, m, n, k), self._itemsize(spec), 1,
                       pallas_lib.HOPPER_SMEM_LIMIT) for cfg in candidates))

  def example_args(self, spec: Spec, seed: int = 0) -> tuple[Any, ...]:
    return base.example_args(spec, seed)

  @staticmethod
  def _itemsize(spec: Spec) -> int:
    return jnp.dtype(spec.arg("lhs").dtype).itemsize

  @staticmethod
  def _sizes(spec: Spec) -> tuple[int, int, int]:
    """``(m, n, k)``: rows, rhs's output dimension, the contracted dimension."""
    m, k = spec.arg("lhs").shape
    contract = base.dims_of(spec).rhs_contract[0]
    return m, spec.arg("rhs").shape[3 - contract], k

  def _product(self, args: tuple[Any, ...], spec: Spec, config: TritonRaggedDotConfig,
               differentiated: bool) -> tuple[jax.Array, jax.Array | None]:
    """``(out, pre)`` as `base.finish` returns them."""
    lhs, rhs, group_sizes, group_offset = args
    m, n, k = self._sizes(spec)
    contract = base.dims_of(spec).rhs_contract[0]
    out_dtype = jnp.dtype(spec.param("out_dtype"))
    if m == 0 or n == 0 or k == 0 or rhs.shape[0] == 0:
      return base.finish(spec, jnp.zeros((m, n), jnp.float32))
    epilogue, halves, in_kernel = _plan(spec)
    config = tm.fit(config, m, n // 2 if halves else n, k)
    if halves:  # Two rhs tiles per k step: as many stages as fit.
      per_stage = (config.block_m + 2 * config.block_n) * config.block_k * self._itemsize(spec)
      config = dataclasses.replace(config, num_stages=tm.stages_within(config.num_stages,
                                                                        per_stage))
    sched = schedule.make(group_sizes, group_offset, rhs.shape[0], m, config.block_m)
    precision = functions.precision_of(spec.param("precision"))
    if in_kernel:
      # A differentiated call with an epilogue also needs the float32 product (`pre`).
      with_pre = differentiated and epilogue is not None
      result = rows_product(lhs, rhs, contract, sched, config, out_dtype, precision, epilogue,
                            halves, with_pre)
      return result if with_pre else (result, None)
    return base.finish(spec, rows_product(lhs, rhs, contract, sched, config, jnp.float32,
                                          precision))

  def forward(self, args: tuple[Any, ...], spec: Spec, config: TritonRaggedDotConfig
              ) -> tuple[Any, Any]:
    out, pre = self._product(args, spec, config, differentiated=True)
    lhs, rhs, group_sizes, group_offset = args
    return out, (lhs, rhs, group_sizes, group_offset, pre)

  def forward_output(self, args: tuple[Any, ...], spec: Spec, config: TritonRaggedDotConfig
                     ) -> Any:
    return self._product(args, spec, config, differentiated=False)[0]

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: TritonRaggedDotConfig
               ) -> tuple[Any, ...]:
    lhs, rhs, group_sizes, group_offset, pre = residuals
    m, n, k = self._sizes(spec)
    local = rhs.shape[0]
    if m == 0 or n == 0 or k == 0 or local == 0:
      return jnp.zeros(lhs.shape, lhs.dtype), jnp.zeros(rhs.shape, rhs.dtype), None, None
    contract = base.dims_of(spec).rhs_contract[0]
    precision = functions.precision_of(spec.param("precision"))
    dy = base.dout_to_acc(spec, pre, dout).astype(lhs.dtype)
    # d lhs = dy @ rhs[g]^T: the rows kernel, rhs contracted over its output dimension.
    rows_config = tm.fit(config, m, k, n)
    sched = schedule.make(group_sizes, group_offset, local, m, rows_config.block_m)
    dlhs = rows_product(dy, rhs, 3 - contract, sched, rows_config, lhs.dtype, precision)
    starts, ends = schedule.local_bounds(group_sizes, group_offset, local, m)
    if contract == 1:  # rhs [g, k, n]: lhs^T @ dy per group.
      drhs = group_gradient(lhs, dy, starts, ends, config, rhs.dtype, precision)
    else:  # rhs [g, n, k]: dy^T @ lhs per group, tiled n by block_k and k by block_n.
      drhs = group_gradient(dy, lhs, starts, ends, config, rhs.dtype, precision)
    return dlhs, drhs, None, None
