"""ragged_dot "mosaic": the grouped product as one persistent Pallas Mosaic GPU kernel (Hopper,
sm_90: TMA and wgmma), for ragged_dot's plain layout without an epilogue.

The work list is `schedule.make`'s with 128-row tiles, computed by XLA before the kernel: one
(group, row tile) item per entry, keeping the rows ``[row_lo, row_hi)`` of its group. The kernel
(`rows_forward`) runs one program per SM, each walking (item, column tile) pairs in bands of
`band` items (``plgpu.planar_snake``), so that programs running at the same time share a group's
weight columns and an item's rows in L2. A pair is ``128`` rows (64 per compute warpgroup) by
`block_n` columns; a third warpgroup copies the item's rows of lhs and its group's ``block_k x
block_n`` tile of rhs (``block_n x block_k`` for rhs ``[g, n, k]``, read transposed by wgmma) for
each `block_k` step into shared memory by TMA, `stages` steps in flight
(``plgpu.emit_pipeline_warp_specialized``).

Each compute warpgroup zeroes its accumulator's rows outside the item's group, writes it in the
output dtype to shared memory and stores the rows the item owns (`owned_rows`) by TMA: a tile
two groups share is written by two programs, each its own rows. TMA boxes are static, so a run of
``r`` rows is stored as the binary digits of ``r`` (a 32-row box, then an 8-row one, ...; at most
7 stores per 128 columns, one for a run of 64). Rows no group covers get zeros without a memset: the first item
also owns its tile's rows before its group, the last item the rows after it, and each padding
item (index >= count; at least as many as the tiles no item touches) zeroes one untouched tile.

Serves bfloat16/float16 lhs and rhs of one dtype, rhs ``[g, k, n]`` or ``[g, n, k]``, k and n
multiples of 64, no activation or gate-up fusion, a floating result, a precision that leaves
16-bit products summed in float32. The gradient: d lhs is the same kernel (the output's
cotangent, in lhs's dtype, against rhs contracted over its output dimension), d rhs "triton"'s
per-group kernel (the residuals hold no float32 product: there is no epilogue). Compiled only: Pallas's Mosaic GPU interpreter
cannot run the warp-specialised pipeline, so CPU tests check the kernel's lowering for CUDA and
the row ownership on integers (``mosaic_test.py``); the H200 runs check its values.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
import jax.experimental.pallas.mosaic_gpu as plgpu

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.ragged_dot import base, schedule
from pjrtkit.kernels.ragged_dot.triton import TritonRaggedDot, group_gradient

DTYPES = ("bfloat16", "float16")
"""lhs and rhs dtypes the kernel takes (wgmma's 16-bit operands)."""
OUT_DTYPES = ("bfloat16", "float16", "float32")
"""Result dtypes it writes (rows of at least 128 bytes in shared memory, as TMA stores from any
row need)."""

WG_ROWS = 64
"""Rows per compute warpgroup (one wgmma M of 64)."""
_COMPUTE_WGS = 2
TILE_M = _COMPUTE_WGS * WG_ROWS
"""The schedule's row tile: rows of one (item, column tile) pair."""
_MEMORY_REGISTERS = 40
_SMEM_RESERVE = 1024
"""Shared memory kept free for the pipeline's barriers."""
_STORE_COLS = 128
"""Columns of the output tile per shared-memory chunk (a 64 x 256 store from registers does not
lower: JAX 0.12's layout inference finds no layout for it)."""
_STORE_BOXES = tuple(WG_ROWS >> i for i in range(WG_ROWS.bit_length()))
"""Row counts of the TMA stores a warpgroup's run of rows is cut into (64, 32, ..., 1)."""


@dataclasses.dataclass(frozen=True)
class MosaicRaggedDotConfig:
  """The kernel's tiling: `block_n` output columns per pair, `block_k` columns of lhs per
  pipeline step, `stages` steps in flight (fewer where they do not fit in shared memory), `band`
  items per band of the pair order. Rows are fixed: 128 per pair (`TILE_M`).

  The default, 128 x 128 pairs with k steps of 64 and 4 stages (32 KiB of operands per step, 32
  KiB of bfloat16 output tiles), is the untuned choice; `default_config` takes 256 columns
  where n allows.
  """

  block_n: int = 128
  block_k: int = 64
  stages: int = 4
  band: int = 8

  def __post_init__(self) -> None:
    if self.block_n not in (64, 128, 256):
      raise ValueError(f"MosaicRaggedDotConfig: block_n must be 64, 128 or 256, got "
                       f"{self.block_n}")
    if self.block_k not in (64, 128):
      raise ValueError(f"MosaicRaggedDotConfig: block_k must be 64 or 128, got {self.block_k}")
    if self.stages < 1 or self.band < 1:
      raise ValueError(f"MosaicRaggedDotConfig: stages and band must be >= 1, got "
                       f"{self.stages} and {self.band}")


@dataclasses.dataclass(frozen=True)
class Geometry:
  """The static shape of one launch."""

  m: int  # rows of lhs (padded to TILE_M when fewer)
  k: int
  n: int
  contract: int  # rhs's contracted dimension: 1 ([g, k, n]) or 2 ([g, n, k])
  items: int  # the schedule's length (`schedule.max_items`)
  config: MosaicRaggedDotConfig
  stages: int  # config.stages fitted to shared memory
  programs: int

  @property
  def row_tiles(self) -> int:
    return -(-self.m // TILE_M)

  @property
  def col_tiles(self) -> int:
    return self.n // self.config.block_n


def stage_bytes(config: MosaicRaggedDotConfig, itemsize: int) -> int:
  """Shared memory of one pipeline step: the rows of lhs and the tile of rhs."""
  return (TILE_M + config.block_n) * config.block_k * itemsize


def epilogue_bytes(config: MosaicRaggedDotConfig, out_itemsize: int) -> int:
  """Shared memory of the output tiles (one per compute warpgroup)."""
  return TILE_M * config.block_n * out_itemsize


def fitted_stages(config: MosaicRaggedDotConfig, itemsize: int, out_itemsize: int) -> int:
  """`config.stages`, fewer where they do not fit in a Hopper block's shared memory (at least
  one)."""
  free = pallas_lib.HOPPER_SMEM_LIMIT - _SMEM_RESERVE - epilogue_bytes(config, out_itemsize)
  return max(1, min(config.stages, free // stage_bytes(config, itemsize)))


def geometry(m: int, k: int, n: int, contract: int, groups: int, config: MosaicRaggedDotConfig,
             itemsize: int, out_itemsize: int, sms: int) -> Geometry:
  """The launch for lhs ``[m, k]`` and `groups` local groups of rhs with `n` output columns.

  Raises:
    ValueError: k or n not a positive multiple of the config's block, naming both.
  """
  if k <= 0 or k % config.block_k:
    raise ValueError(f"ragged_dot mosaic: k ({k}) must be a positive multiple of block_k "
                     f"({config.block_k})")
  if n <= 0 or n % config.block_n:
    raise ValueError(f"ragged_dot mosaic: n ({n}) must be a positive multiple of block_n "
                     f"({config.block_n})")
  # A last tile past the rows is read as zeros and stored clipped by TMA; only fewer rows than
  # one tile (whose static box would not fit the array) are padded.
  rows = max(m, TILE_M)
  items = schedule.max_items(rows, groups, TILE_M)
  pairs = items * (n // config.block_n)
  return Geometry(m=rows, k=k, n=n, contract=contract, items=items, config=config,
                  stages=fitted_stages(config, itemsize, out_itemsize),
                  programs=max(1, min(sms, pairs)))


def owned_rows(item: Any, count: Any, row_lo: Any, row_hi: Any, tile: Any,
               part: Any) -> tuple[Any, Any]:
  """``(first, size)``: the rows, counted from the start of warpgroup `part`'s 64 rows of row
  tile `tile`, that real item `item` writes: its group's rows ``[row_lo, row_hi)`` within the
  tile, extended to the tile's start for the first item and to its end for the last (rows no
  group covers). Works on Python ints and on traced int32 scalars alike."""
  start = tile * TILE_M
  keep_lo = jnp.where(item == 0, start, jnp.maximum(row_lo, start))
  keep_hi = jnp.where(item == count - 1, start + TILE_M, jnp.minimum(row_hi, start + TILE_M))
  base_row = start + part * WG_ROWS
  first = jnp.clip(keep_lo - base_row, 0, WG_ROWS)
  last = jnp.clip(keep_hi - base_row, 0, WG_ROWS)
  return first, jnp.maximum(last - first, 0)


def store_boxes(first: Any, size: Any) -> list[tuple[int, Any, Any]]:
  """``[(box, offset, taken), ...]``: the TMA stores of a run of `size` rows from row `first`,
  one per binary digit of `size` (`_STORE_BOXES`): a box of ``box`` rows at ``offset``, stored
  where ``taken`` (``size & box``) is not zero."""
  boxes = []
  offset = first
  for box in _STORE_BOXES:
    taken = size & box
    boxes.append((box, offset, taken))
    offset = offset + taken
  return boxes


def _smem_transforms() -> tuple[Any, ...]:
  return (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))


def _kernel(group_g: Any, tile_g: Any, lo_g: Any, hi_g: Any, count_g: Any, x_g: Any, w_g: Any,
            out_g: Any, out_s: Any, *, g: Geometry) -> None:
  """The persistent program (see the module docstring)."""
  cfg = g.config
  bn, bk = cfg.block_n, cfg.block_k
  transforms = _smem_transforms()
  w_block = (bk, bn) if g.contract == 1 else (bn, bk)

  def pipeline(body: Any, context: Any) -> Any:
    specs = [plgpu.BlockSpec((TILE_M, bk), lambda kk: (0, kk), transforms=transforms,
                             memory_space=plgpu.SMEM),
             plgpu.BlockSpec(w_block, (lambda kk: (kk, 0)) if g.contract == 1
                             else (lambda kk: (0, kk)), transforms=transforms,
                             memory_space=plgpu.SMEM)]
    return plgpu.emit_pipeline_warp_specialized(
        body, grid=(g.k // bk,), memory_registers=_MEMORY_REGISTERS, in_specs=specs,
        wg_axis="wg", num_compute_wgs=_COMPUTE_WGS, max_concurrent_steps=g.stages,
        compute_context=context)

  unused = lambda *_, **__: None  # noqa: E731  (allocations do not depend on the functions)
  w_example = w_g.at[0]

  @functools.partial(pl.run_scoped,
                     allocations=pipeline(unused, unused).get_allocations(x_g, w_example),
                     collective_axes="wg")
  def _scope(allocations: Any) -> None:
    wg = lax.axis_index("wg")
    count = count_g[0]

    def store(value: Any, tile: Any, ni: Any, rows: tuple[Any, Any] | None) -> None:
      """This warpgroup's `rows` (``(first, size)``; None: all 64) of `value` (64 x block_n) to
      the output's row tile `tile`, column tile `ni`, through shared memory in chunks of
      `_STORE_COLS` columns."""
      plgpu.wait_smem_to_gmem(0, wait_read_only=True)  # the last stores read out_s
      value = value.astype(out_s.dtype)
      chunk = min(bn, _STORE_COLS)
      for c in range(bn // chunk):
        out_s[wg, c] = value[:, c * chunk:(c + 1) * chunk]
      plgpu.commit_smem()
      row0 = tile * TILE_M + wg * WG_ROWS

      def copy(offset: Any, box: int) -> None:
        for c in range(bn // chunk):
          plgpu.copy_smem_to_gmem(out_s.at[wg, c, pl.ds(offset, box)],
                                  out_g.at[pl.ds(row0 + offset, box),
                                           pl.ds(ni * bn + c * chunk, chunk)])

      if rows is None:
        copy(0, WG_ROWS)
        return
      for box, offset, taken in store_boxes(*rows):
        pl.when(taken != 0)(functools.partial(copy, offset, box))

    @plgpu.nd_loop((g.items * g.col_tiles,), collective_axes=pallas_lib.MOSAIC_GRID_AXIS)
    def _pair(info: Any) -> None:
      (index,) = info.index
      item, ni = plgpu.planar_snake(index, (g.items, g.col_tiles), 0, cfg.band)

      @pl.when(item < count)
      def _real() -> None:
        group, tile = group_g[item], tile_g[item]
        lo, hi = lo_g[item], hi_g[item]

        def step(_: Any, x_s: Any, w_s: Any, acc: Any) -> Any:
          rhs = w_s if g.contract == 1 else w_s.transpose((1, 0))
          plgpu.wgmma(acc, x_s.at[pl.ds(wg * WG_ROWS, WG_ROWS)], rhs)
          plgpu.wgmma_wait(0)
          return acc

        def context(run: Any) -> None:
          @functools.partial(pl.run_scoped, acc=plgpu.ACC((WG_ROWS, bn), jnp.float32))
          def _accumulate(acc: Any) -> None:
            run(acc)
            row = (tile * TILE_M + wg * WG_ROWS
                   + plgpu.broadcasted_iota(jnp.int32, (WG_ROWS, bn), 0,
                                            layout=plgpu.Layout.WGMMA))
            # Rows of other groups were multiplied by this group's matrix: zero them (only the
            # first and last items store such rows, as zeros).
            value = jnp.where((row >= lo) & (row < hi), acc[...], 0.0)
            store(value, tile, ni, owned_rows(item, count, lo, hi, tile, wg))

        cols = pl.ds(ni * bn, bn)
        w = w_g.at[group, :, cols] if g.contract == 1 else w_g.at[group, cols, :]
        pipeline(step, context)(x_g.at[pl.ds(tile * TILE_M, TILE_M), :], w,
                                allocations=allocations)

      @pl.when((item >= count) & (wg < _COMPUTE_WGS))
      def _padding() -> None:
        tile = schedule.untouched_tile(item - count, count, tile_g[0],
                                       tile_g[jnp.maximum(count - 1, 0)], g.row_tiles)

        @pl.when(tile < g.row_tiles)
        def _():
          zeros = plgpu.layout_cast(jnp.zeros((WG_ROWS, bn), jnp.float32),
                                    plgpu.Layout.WGMMA)
          store(zeros, tile, ni, None)

  plgpu.wait_smem_to_gmem(0, wait_read_only=True)


def rows_forward(x: jax.Array, rhs: jax.Array, contract: int, group_sizes: jax.Array,
                 group_offset: jax.Array | None, config: MosaicRaggedDotConfig,
                 out_dtype: Any) -> jax.Array:
  """``out[r] = x[r] @ rhs[group(r)]`` ``[m, n]`` of `out_dtype`, zero in rows no local group
  covers: x ``[m, k]``, rhs ``[g, k, n]`` (`contract` 1) or ``[g, n, k]`` (`contract` 2) of x's
  dtype."""
  m, k = x.shape
  n = rhs.shape[3 - contract]
  out_dtype = jnp.dtype(out_dtype)
  g = geometry(m, k, n, contract, rhs.shape[0], config, x.dtype.itemsize, out_dtype.itemsize,
               pallas_lib.gpu_sm_count())
  sched = schedule.make(group_sizes, group_offset, rhs.shape[0], g.m, TILE_M)
  xp = pallas_lib.pad_axis(x, 0, g.m)
  chunk = min(config.block_n, _STORE_COLS)
  out_s = plgpu.SMEM((_COMPUTE_WGS, config.block_n // chunk, WG_ROWS, chunk), out_dtype)
  out = plgpu.kernel(
      functools.partial(_kernel, g=g),
      out_type=jax.ShapeDtypeStruct((g.m, n), out_dtype), scratch_types=[out_s],
      grid=(g.programs,), grid_names=(pallas_lib.MOSAIC_GRID_AXIS,),
      num_threads=_COMPUTE_WGS + 1, thread_name="wg",
      kernel_name="pjrtkit_ragged_dot_fwd_mosaic")(
          sched.group, sched.tile, sched.row_lo, sched.row_hi, sched.count.reshape(1), xp, rhs)
  return out[:m] if g.m != m else out


class MosaicRaggedDot(Op[MosaicRaggedDotConfig]):
  """The Hopper grouped-product kernel for the forward and d lhs; "triton"'s kernel for d
  rhs."""

  op_name = base.OP_NAME
  implementation = "mosaic"
  config_cls = MosaicRaggedDotConfig
  # Not taken by implementation=None (nor autotuned for it) until an H200 run has checked its
  # values and measured it: a call must name it.
  automatic = False

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = pallas_lib.compiled_wgmma_reason(device, "ragged_dot")
    if reason:
      return reason
    reason = base.grouped_unsupported_reason(spec)
    if reason:
      return reason
    lhs = jnp.dtype(spec.arg("lhs").dtype).name
    rhs = jnp.dtype(spec.arg("rhs").dtype).name
    if lhs not in DTYPES:
      return f"lhs dtype {lhs} is not supported ({', '.join(DTYPES)})"
    if rhs != lhs:
      return f"rhs ({rhs}) of another dtype than lhs ({lhs}) (use 'xla_grouped' or 'xla')"
    out = jnp.dtype(spec.param("out_dtype")).name
    if out not in OUT_DTYPES:
      return (f"preferred_element_type {out} is not written by the kernel (accepted: "
              f"{', '.join(OUT_DTYPES)})")
    if spec.param("activation") is not None or spec.param("fuse_gateup_activation") is not None:
      return ("activation and fuse_gateup_activation are not applied in the Mosaic kernel "
              "(accepted: None for both; 'triton' fuses them)")
    reason = pallas_lib.wgmma_precision_reason(spec.param("precision"), lhs)
    if reason:
      return reason
    _, n, k = self._sizes(spec)
    if n % 64 or k % 64:
      return f"n ({n}) and k ({k}) must be multiples of 64"
    return None

  @staticmethod
  def _sizes(spec: Spec) -> tuple[int, int, int]:
    """``(m, n, k)``: rows, rhs's output dimension, the contracted dimension."""
    m, k = spec.arg("lhs").shape
    contract = base.dims_of(spec).rhs_contract[0]
    return m, spec.arg("rhs").shape[3 - contract], k

  def default_config(self, spec: Spec) -> MosaicRaggedDotConfig:
    """256-column pairs where n is a multiple of 256 (3 stages fit), else 128, else 64."""
    _, n, _ = self._sizes(spec)
    block_n = next(b for b in (256, 128, 64) if n % b == 0)
    return MosaicRaggedDotConfig(block_n=block_n)

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[MosaicRaggedDotConfig]:
    _, n, k = self._sizes(spec)
    c = MosaicRaggedDotConfig
    candidates = [c(128, 64, 4, 8), c(256, 64, 4, 8), c(128, 64, 6, 8), c(128, 128, 3, 8),
                  c(64, 64, 6, 8), c(128, 64, 4, 1), c(128, 64, 4, 16), c(256, 64, 4, 16)]
    return tuple(cfg for cfg in candidates if n % cfg.block_n == 0 and k % cfg.block_k == 0)

  def example_args(self, spec: Spec, seed: int = 0) -> tuple[Any, ...]:
    return base.example_args(spec, seed)

  def forward_output(self, args: tuple[Any, ...], spec: Spec, config: MosaicRaggedDotConfig
                     ) -> Any:
    lhs, rhs, group_sizes, group_offset = args
    contract = base.dims_of(spec).rhs_contract[0]
    return rows_forward(lhs, rhs, contract, group_sizes, group_offset, config,
                        spec.param("out_dtype"))

  def forward(self, args: tuple[Any, ...], spec: Spec, config: MosaicRaggedDotConfig
              ) -> tuple[Any, Any]:
    """The kernel's output and the residuals `backward` reads (those of "triton"; no float32
    product: the call has no epilogue)."""
    lhs, rhs, group_sizes, group_offset = args
    return self.forward_output(args, spec, config), (lhs, rhs, group_sizes, group_offset, None)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: MosaicRaggedDotConfig
               ) -> tuple[Any, ...]:
    """d lhs by the kernel (the output's cotangent against rhs contracted over its output
    dimension, the same rows and groups); d rhs by "triton"'s per-group kernel at its default
    config."""
    lhs, rhs, group_sizes, group_offset, _ = residuals
    m, n, k = self._sizes(spec)
    contract = base.dims_of(spec).rhs_contract[0]
    dy = base.dout_to_acc(spec, None, dout).astype(lhs.dtype)
    dlhs = rows_forward(dy, rhs, 3 - contract, group_sizes, group_offset,
                        self._dlhs_config(config, k, n), lhs.dtype)
    triton = TritonRaggedDot()
    starts, ends = schedule.local_bounds(group_sizes, group_offset, rhs.shape[0], m)
    precision = functions.precision_of(spec.param("precision"))
    a, b = (lhs, dy) if contract == 1 else (dy, lhs)
    drhs = group_gradient(a, b, starts, ends, triton.default_config(spec), rhs.dtype, precision)
    return dlhs, drhs, None, None

  @staticmethod
  def _dlhs_config(config: MosaicRaggedDotConfig, k: int, n: int) -> MosaicRaggedDotConfig:
    """`config` refitted to d lhs's product: k output columns, n contracted (the forward's n
    and k are what `config` fits)."""
    block_n = next(b for b in (config.block_n, 256, 128, 64) if k % b == 0)
    block_k = config.block_k if n % config.block_k == 0 else 64
    return dataclasses.replace(config, block_n=block_n, block_k=block_k)
