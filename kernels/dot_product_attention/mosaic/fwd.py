"""dot_product_attention "mosaic" forward: a warp-specialised Mosaic GPU kernel (Hopper, sm_90+).

Each program (CTA) works through tiles (pair of query blocks, batch, head), in the order
`_tile_index` deals them out (causal tiles, of unequal lengths, by length). With ``programs`` at
the SM count the kernel is persistent: one CTA per SM, the producer loading the next tile's
keys/values while the compute warpgroups finish the current tile, and each compute warpgroup's
next query block loaded (into the other of two slots) while it works on the current one. With
``programs`` equal to the tile count it is one tile per CTA. Each CTA runs three warpgroups:

* warpgroups 0 and 1 compute, each on its own `block_q` query rows (so a CTA covers
  ``2 * block_q`` rows and reads each key/value tile once for both);
* warpgroup 2 only moves data: it keeps `stages` key/value tiles in flight with TMA, refilling a
  slot as soon as both compute warpgroups have released it (``*_free`` barriers, two arrivals);
  with a causal mask one warp of it does so, refilling a slot's keys as soon as they are free
  (`_load_warp`).

Each compute step is ``S = Q K^T`` (wgmma from shared memory), the online softmax in registers
(base-2 exponentials with the softmax scale folded into ``log2(e)``), then ``O += P V`` with `P`
taken straight from registers as wgmma's left operand. The two compute warpgroups take turns
issuing their products through two hardware named barriers (``bar.arrive`` / ``bar.sync``), so
one warpgroup's softmax runs while the other's matrix multiplies occupy the tensor cores (the
"ping-pong" schedule of FlashAttention-3); a warpgroup waits for its next keys while its
``O += P V`` runs. On the H200 (bf16, CUPTI) the scale in exp2's FMA and the early key wait
took 1x16384x16x128 from 645 to 693 TFLOP/s; the named barriers
(in place of a two-arrival mbarrier rendezvous, which polls) took 32x2048x16x64 from 476 to 514
TFLOP/s, 1x16384x16x128 from 682 to 691 and its causal form from 667 to 674, outputs bitwise
equal (``docs/results/kernels/mosaic_fwd_variants_h200.txt``).
Keys are read straight from the ``[B, S, K, D]`` arrays (strided 2-D TMA tiles), so nothing is
transposed in memory. Causal programs stop at the diagonal and mask only the steps that cross it.

With ``split_tail`` (persistent, no causal mask) the tiles left after the full rounds are split
by key steps over all programs, each program running an equal share as one or two partial pieces
whose outputs and log-sum-exps `mosaic_work.merge_tail` combines after the kernel; the pieces run
in a loop of their own after the full rounds (`_run_items`), so the full rounds keep the unsplit
kernel's static code (on the H200, one process: 1x16384x16x128 690.6 -> 697.9
TFLOP/s against the split in one loop, 32x2048x16x64 518.5 unsplit -> 529.5, where the split in
one loop ran 461.7; `mosaic.split_forward_tail` decides when).

Sequences are padded to the blocks (padded keys masked). The log-sum-exp (natural log) is saved
for the backward kernels in ``attention.py``. Compiled only: Pallas's Mosaic GPU interpreter (JAX
0.11.2, 0.12) cannot lower this kernel's wgmma pipeline effects, so under `pallas_interpret`
``attention.py`` runs its single-warpgroup forward instead.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
import jax.experimental.pallas.mosaic_gpu as plgpu

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.dot_product_attention.mosaic import work as mosaic_work
from pjrtkit.kernels.dot_product_attention.base import PaddedShape

_LOG2E = math.log2(math.e)
_COMPUTE_WGS = 2
_WG_THREADS = 128
_SCHEDULE_BARRIER = pallas_lib.FIRST_FREE_NAMED_BARRIER  # and the next id: one per compute WG


@dataclasses.dataclass(frozen=True)
class FwdGeometry(PaddedShape):
  """Static shape of one forward call (everything the kernel body needs besides the refs)."""

  block_q: int
  block_kv: int
  stages: int
  scale: float
  causal: bool
  programs: int
  with_lse: bool = True
  """Whether the kernel writes the log-sum-exp (natural log) the backward reads; False for
  calls that are not differentiated (`forward` then returns None for it)."""
  split_tail: bool = False
  """Persistent without a causal mask: whether the tiles left over after the full rounds (the
  last, partial round) are split by key steps over all programs (see `_item`), their partial
  results merged after the kernel, rather than each run whole by one program while the rest of
  the GPU idles."""
  listed: bool = False
  """Causal and persistent: whether each program runs the tiles `mosaic_work.tile_list` gives it
  (read from a table in shared memory), in the one-tile-per-CTA order (each (batch, head)'s
  tiles together, longest first), rather than the length-sorted deal of `_tile_index` (which
  runs every head's tiles at once)."""

  def __post_init__(self) -> None:
    if not 1 <= self.programs <= self.tiles:
      raise ValueError(f"programs must be in [1, {self.tiles}] (the tile count), got "
                       f"{self.programs}")
    if self.split_tail and (self.causal or self.tail_tiles == 0):
      raise ValueError("split_tail needs a persistent launch without a causal mask whose tiles "
                       f"do not divide evenly over the programs; got causal={self.causal}, "
                       f"{self.tiles} tiles on {self.programs} programs")
    if self.listed and (not self.causal or self.programs >= self.tiles or self.split_tail):
      raise ValueError("listed needs a persistent launch with a causal mask (programs below the "
                       f"{self.tiles} tiles, no split_tail); got causal={self.causal}, "
                       f"programs={self.programs}, split_tail={self.split_tail}")
    if self.split_tail and self.programs * self.tail_tiles * self.kv_steps >= 2 ** 31:
      # `tail_range` multiplies int32 program ids by the tail's step count in the kernel.
      raise ValueError("split_tail needs programs x tail tiles x key steps below 2^31, got "
                       f"{self.programs} x {self.tail_tiles} x {self.kv_steps}")
    if self.split_tail and self.kv_len_padded - self.kv_len >= self.block_kv:
      # A piece of padded keys alone would have no row maximum (its lse NaN).
      raise ValueError("split_tail needs every key step to hold a key: kv_len_padded - kv_len "
                       f"must be below block_kv ({self.block_kv}), got {self.kv_len_padded} - "
                       f"{self.kv_len}")

  @property
  def snake(self) -> bool:
    """Whether tiles go to programs in the causal persistent order (see `_tile_index`)."""
    return self.causal and self.programs < self.tiles and not self.listed

  @property
  def q_pairs(self) -> int:
    return self.q_len_padded // (_COMPUTE_WGS * self.block_q)

  @property
  def kv_steps(self) -> int:
    return self.kv_len_padded // self.block_kv

  @property
  def tiles(self) -> int:
    return self.q_pairs * self.batch * self.heads

  @property
  def full_rounds(self) -> int:
    """Rounds in which every program runs a whole tile."""
    return self.tiles // self.programs

  @property
  def tail_tiles(self) -> int:
    """Tiles left after the full rounds (the last round's, which leaves programs idle)."""
    return self.tiles % self.programs

  def tail_range(self, pid: Any) -> tuple[Any, Any]:
    """With `split_tail`, program `pid`'s share [start, end) of the tail's key steps, counted
    over the tail tiles one after another (shares differ by at most one step)."""
    steps = self.tail_tiles * self.kv_steps
    if isinstance(pid, int):
      return pid * steps // self.programs, (pid + 1) * steps // self.programs
    return lax.div(pid * steps, self.programs), lax.div((pid + 1) * steps, self.programs)

def _row(value: float, n: int) -> Any:
  return plgpu.layout_cast(jnp.full((n,), value, jnp.float32), plgpu.Layout.WGMMA.reduce(1))


def _tile_index(g: FwdGeometry, pid: Any, i: Any, listed: Any = None) -> Any:
  """The tile that program `pid` runs `i`-th. Without a causal mask (all tiles equally long)
  program `pid` runs tiles pid, pid + programs, ... Causal and persistent (`g.snake`), tiles are
  numbered longest first (see `_tile`) and dealt out in rounds of `programs`, every other round
  in reverse program order, so each program's total key steps come out about equal (on 132
  programs the longest runs 1.0023x the mean at 1x16384x16x128 and 1.0009x at 32x2048x16;
  dealing them pid, pid + programs, ... gives 1.57x and 1.21x). With `g.listed`, entry 1 + i of
  `listed`, the program's row of `mosaic_work.tile_list` (in shared memory in the kernel)."""
  if g.listed:
    return listed[1 + i]
  return mosaic_work.dealt_item(pid, i, g.programs, g.snake)


def _item(g: FwdGeometry, pid: Any, i: Any, listed: Any = None) -> tuple[Any, Any, Any, Any]:
  """(tile, first key step, end key step or None for all of the tile's, whether partial) of
  program `pid`'s `i`-th work item. Without `split_tail` items are whole tiles
  (`_tile_index`). With it, program `pid` runs tiles pid, pid + programs, ... for the full
  rounds, then its share of the tail's key steps (`FwdGeometry.tail_range`) as one or two
  partial items: the end of one tail tile and the start of the next."""
  if not g.split_tail:
    return _tile_index(g, pid, i, listed), 0, None, False
  in_tail = i >= g.full_rounds
  tile, k0, k1 = _tail_item(g, pid, i)
  return (jnp.where(in_tail, tile, pid + i * g.programs), jnp.where(in_tail, k0, 0),
          jnp.where(in_tail, k1, g.kv_steps), in_tail)


def _tail_item(g: FwdGeometry, pid: Any, i: Any) -> tuple[Any, Any, Any]:
  """(tile, first key step, end key step) of program `pid`'s `i`-th work item, one of its tail
  pieces (`i` >= `full_rounds`; `split_tail`)."""
  start, end = g.tail_range(pid)
  first = lax.div(start, g.kv_steps)
  piece = i - g.full_rounds
  k1 = jnp.where(piece == 0, jnp.minimum(end - first * g.kv_steps, g.kv_steps),
                 end - (first + 1) * g.kv_steps)
  return (g.full_rounds * g.programs + first + piece,
          jnp.where(piece == 0, start - first * g.kv_steps, 0), k1)


def _local_tiles(g: FwdGeometry, pid: Any, listed: Any = None) -> Any:
  """How many work items (`_item`) program `pid` runs (at least one: programs <= tiles)."""
  if g.listed:
    return listed[0]
  if g.split_tail:
    start, end = g.tail_range(pid)
    first = lax.div(start, g.kv_steps)
    pieces = jnp.where(start == end, 0,
                       jnp.where(end > (first + 1) * g.kv_steps, 2, 1))
    return g.full_rounds + pieces
  return mosaic_work.dealt_count(pid, g.tiles, g.programs, g.snake)


def _tile(g: FwdGeometry, tile: Any) -> tuple[Any, Any, Any, Any, Any]:
  """(query-pair index, batch, head, key/value head, key steps of the pair) of `tile`.

  Without a causal mask, pairs of one (batch, head) are neighbouring tiles, so CTAs working at
  the same time share that head's keys and values in L2. Causal with one tile per program,
  each head's pairs run last row first: the longest tiles start first and the shortest fill the
  end of the launch, where SMs would otherwise wait on a long tile started late. Causal and
  persistent, all (batch, head)s' last pairs come first, then the pairs before them, and so on:
  `_tile_index` deals them out by length, and CTAs at work at the same time hold neighbouring
  pairs of every head, which read the same keys and values."""
  if g.snake:
    bh = g.batch * g.heads
    pair = g.q_pairs - 1 - lax.div(tile, bh)
    b = lax.rem(lax.rem(tile, bh), g.batch)
    h = lax.div(lax.rem(tile, bh), g.batch)
  else:
    pair = lax.rem(tile, g.q_pairs)
    if g.causal:
      pair = g.q_pairs - 1 - pair
    b = lax.rem(lax.div(tile, g.q_pairs), g.batch)
    h = lax.div(tile, g.q_pairs * g.batch)
  return (pair, b, h, lax.div(h, g.heads // g.kv_heads),
          _steps_for(g, (pair + 1) * _COMPUTE_WGS * g.block_q))


def _steps_for(g: FwdGeometry, row_end: Any) -> Any:
  """How many key steps rows below `row_end` need (all of them unless causal)."""
  if not g.causal:
    return g.kv_steps
  return jnp.minimum(lax.div(row_end + g.block_kv - 1, g.block_kv), g.kv_steps)


def _kernel(*refs: Any, g: FwdGeometry):
  inputs = 3 + g.listed
  outputs = 1 + g.with_lse + 2 * g.split_tail
  q_g, k_g, v_g = refs[:3]
  outs = list(refs[inputs:inputs + outputs])
  o_g = outs.pop(0)
  lse_g = outs.pop(0) if g.with_lse else None
  # With split_tail: each program's (up to two) partial results, rows of both warpgroups.
  part_o_g, part_lse_g = outs if g.split_tail else (None, None)
  scratch = list(refs[inputs + outputs:])
  q_s, k_s, v_s, lse_s, q_bar, k_bar, v_bar, k_free, v_free = scratch[:9]
  pid = lax.axis_index(pallas_lib.MOSAIC_GRID_AXIS)
  wg = lax.axis_index("wg")
  listed = None
  if g.listed:
    # This program's row of the tile list, copied once by the producer; every warpgroup waits.
    listed, list_bar = scratch[9:]

    @pl.when(wg == _COMPUTE_WGS)
    def _copy_list():
      plgpu.copy_gmem_to_smem(refs[3].at[pid], listed, list_bar.at[0])

    plgpu.barrier_wait(list_bar.at[0])
  local_tiles = _local_tiles(g, pid, listed)

  # The ping-pong: one hardware named barrier per compute warpgroup, completed by its own sync
  # and the other's arrive (2 x 128 threads). A warpgroup passes the turn right after issuing its
  # products and takes it back (waits for the other to have issued) before the next ones.
  def pass_turn() -> None:
    pallas_lib.named_barrier("arrive", _SCHEDULE_BARRIER + 1 - wg, 2 * _WG_THREADS)

  def take_turn() -> None:
    pallas_lib.named_barrier("sync", _SCHEDULE_BARRIER + wg, 2 * _WG_THREADS)

  @pl.when(wg < _COMPUTE_WGS)
  def _compute():
    plgpu.set_max_registers(232, action="increase")  # 2 x 128 x 232 + 128 x 40 <= 64 Ki registers
    c = g.scale * _LOG2E
    shape = (g.block_q, g.block_kv)

    def first_row(pair: Any) -> Any:
      return (pair * _COMPUTE_WGS + wg) * g.block_q

    def load_q(i: Any, qslot: Any) -> None:
      pair, b, h, _, _ = _tile(g, _item(g, pid, i, listed)[0])
      plgpu.copy_gmem_to_smem(q_g.at[b, pl.ds(first_row(pair), g.block_q), h],
                              q_s.at[wg, qslot], q_bar.at[wg * 2 + qslot])

    load_q(0, 0)

    def tile_body(i: Any, base: Any, tail: bool) -> Any:
      # `base`: key/value steps of this CTA's earlier items (the producer's running count).
      # `tail`: item `i` is a tail piece (`_tail_item`), else a whole tile (`_tile_index`).
      if tail:
        tile, k0, k1 = _tail_item(g, pid, i)
      else:
        tile, k0, k1 = _tile_index(g, pid, i, listed), 0, None
      pair, b, h, _, pair_steps = _tile(g, tile)
      qslot = lax.rem(i, 2)
      row0 = first_row(pair)
      steps = _steps_for(g, row0 + g.block_q)
      if k1 is not None:  # split_tail (no causal mask): this item's key steps [k0, k1)
        steps = pair_steps = k1
      # Key step kv_step uses slot (off + kv_step) % stages.
      off = base if k1 is None else base - k0
      q_tile = q_s.at[wg, qslot]
      plgpu.barrier_wait(q_bar.at[wg * 2 + qslot])
      # The other slot's last use (the previous tile's output) was read out by its TMA store.
      pl.when(i + 1 < local_tiles)(lambda: load_q(i + 1, 1 - qslot))

      def step(kv_step: Any, carry: Any, masked: bool) -> Any:
        acc, m, l = carry
        slot = lax.rem(off + kv_step, g.stages)
        # This step's keys were awaited before the loop or during the previous step's O += P V.

        def qk(acc_ref: Any) -> Any:
          plgpu.wgmma(acc_ref, q_tile, k_s.at[slot].transpose((1, 0)))
          pass_turn()
          return acc_ref[...]

        s = pl.run_scoped(qk, plgpu.ACC(shape, jnp.float32))
        plgpu.barrier_arrive(k_free.at[slot])
        if masked:
          cols = kv_step * g.block_kv + plgpu.broadcasted_iota(jnp.int32, shape, 1,
                                                               layout=plgpu.Layout.WGMMA)
          keep = cols < g.kv_len
          if g.causal:
            keep = keep & (cols <= row0 + plgpu.broadcasted_iota(jnp.int32, shape, 0,
                                                                 layout=plgpu.Layout.WGMMA))
          s = jnp.where(keep, s, -jnp.inf)
        # The scale is applied to the row maxima and inside exp2's argument (s * c - m: one FMA
        # per score) rather than to the scores first (A1 on the H200: 645 -> 688 TFLOP/s).
        m_new = jnp.maximum(m, s.max(axis=1) * c)
        alpha = jnp.exp2(m - m_new)
        p = jnp.exp2(s * c - lax.broadcast_in_dim(m_new, shape, [0]))
        l = l * alpha + p.sum(axis=1)
        acc = acc * lax.broadcast_in_dim(alpha, acc.shape, [0])
        p16 = p.astype(q_s.dtype)
        acc, l, m_new, p16 = lax.optimization_barrier((acc, l, m_new, p16))
        plgpu.barrier_wait(v_bar.at[slot])
        take_turn()

        def pv(acc_ref: Any) -> None:
          plgpu.wgmma(acc_ref, p16, v_s.at[slot])

          # The next step's keys are awaited while this product runs.
          @pl.when(kv_step + 1 < steps)
          def _():
            plgpu.barrier_wait(k_bar.at[lax.rem(off + kv_step + 1, g.stages)])

        acc = pl.run_state(pv)(plgpu.ACC.init(acc))
        plgpu.barrier_arrive(v_free.at[slot])
        return acc, m_new, l

      carry = (plgpu.layout_cast(jnp.zeros((g.block_q, g.head_dim), jnp.float32),
                                 plgpu.Layout.WGMMA),
               _row(-jnp.inf, g.block_q), _row(0.0, g.block_q))
      # Warpgroup 1 starts once warpgroup 0 issued its first product.
      pl.when(wg == 1)(take_turn)
      plgpu.barrier_wait(k_bar.at[lax.rem(base, g.stages)])
      # Steps whose keys all lie below this block's first row and inside kv_len need no mask.
      clean = g.kv_len // g.block_kv
      if g.causal:
        clean = jnp.minimum(lax.div(row0, g.block_kv), clean)
      start = 0
      if k1 is not None:
        start, clean = k0, jnp.clip(clean, k0, k1)
      carry = lax.fori_loop(start, clean, lambda j, c_: step(j, c_, False), carry)
      carry = lax.fori_loop(clean, steps, lambda j, c_: step(j, c_, True), carry)

      def drain(kv_step: Any, _: Any) -> None:
        # The other warpgroup may need more steps (causal): release the slots this one skips
        # and keep taking turns with it. Their loads are awaited too, so that this warpgroup
        # waits once for each completion of every barrier and its next tile's waits line up.
        slot = lax.rem(off + kv_step, g.stages)
        plgpu.barrier_wait(k_bar.at[slot])
        plgpu.barrier_wait(v_bar.at[slot])
        plgpu.barrier_arrive(k_free.at[slot])
        plgpu.barrier_arrive(v_free.at[slot])
        pass_turn()
        take_turn()

      lax.fori_loop(steps, pair_steps, drain, None)
      # Warpgroup 1's last take_turn waits for this (per tile warpgroup 0 passes the turn, and
      # warpgroup 1 takes it, pair_steps + 1 times). Before another tile warpgroup 0 syncs there
      # rather than arrives: otherwise its next tile's first pass_turn could reach warpgroup 1's
      # barrier before warpgroup 1's last sync, and the barrier would complete on warpgroup 0's
      # arrivals alone. The arrive-only version hung on the H200 at 32x2048x16x64 (persistent,
      # about 62 tiles per CTA, 8 key steps per tile); this version ran there.
      more = i + 1 < local_tiles
      pl.when((wg == 0) & more)(
          lambda: pallas_lib.named_barrier("sync", _SCHEDULE_BARRIER + 1, 2 * _WG_THREADS))
      pl.when((wg == 0) & jnp.logical_not(more))(pass_turn)
      acc, m, l = carry
      out = acc * lax.broadcast_in_dim(1.0 / l, acc.shape, [0])

      def store_whole() -> None:
        o_rows = o_g.at[b, pl.ds(row0, g.block_q), h]
        q_tile[...] = out.astype(q_s.dtype)
        if g.with_lse:
          lse_s.at[wg][...] = (m + jnp.log2(l)) / _LOG2E
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(q_tile, o_rows)
        if g.with_lse:
          plgpu.copy_smem_to_gmem(lse_s.at[wg], lse_g.at[b, h, pl.ds(row0, g.block_q)])
        # Before this slot and lse_s are written again, the stores must have read them.
        plgpu.wait_smem_to_gmem(0, wait_read_only=True)

      def store_partial() -> None:
        # The normalized partial output as two bfloat16 halves (hi + lo: about 16 significant
        # bits) through this warpgroup's Q slot, and its base-2 log-sum-exp; `merge_tail`
        # weighs the pieces of a tile by their log-sum-exps.
        piece = i - g.full_rounds
        rows = pl.ds(wg * g.block_q, g.block_q)
        hi = out.astype(q_s.dtype)
        q_tile[...] = hi
        lse_s.at[wg][...] = m + jnp.log2(l)
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(q_tile, part_o_g.at[pid, piece, 0, rows])
        plgpu.copy_smem_to_gmem(lse_s.at[wg], part_lse_g.at[pid, piece, rows])
        plgpu.wait_smem_to_gmem(0, wait_read_only=True)
        q_tile[...] = (out - hi.astype(jnp.float32)).astype(q_s.dtype)
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(q_tile, part_o_g.at[pid, piece, 1, rows])
        plgpu.wait_smem_to_gmem(0, wait_read_only=True)

      if tail:
        store_partial()
      else:
        store_whole()
      return base + (pair_steps if k1 is None else k1 - k0)

    _run_items(g, local_tiles, tile_body)
    plgpu.wait_smem_to_gmem(0)

  @pl.when(wg == _COMPUTE_WGS)
  def _memory():
    plgpu.set_max_registers(40, action="decrease")

    def issue(tile: Any, k0: Any, k1: Any, base: Any) -> Any:
      # The loads of one item (key steps [k0, k1) of `tile`, all of them for k1 None).
      _, b, _, kvh, pair_steps = _tile(g, tile)
      off = base if k1 is None else base - k0

      def load(kv_step: Any, _: Any) -> None:
        n = off + kv_step
        slot = lax.rem(n, g.stages)
        rows = pl.ds(kv_step * g.block_kv, g.block_kv)

        def copy(src: Any, dst: Any, bar: Any) -> None:
          plgpu.copy_gmem_to_smem(src.at[b, rows, kvh], dst.at[slot], bar.at[slot])

        def wait_free(*free: Any) -> None:
          # Refill a slot only once both compute warpgroups released its previous tile.
          @pl.when(n >= g.stages)
          def _():
            for barrier in free:
              plgpu.barrier_wait(barrier.at[slot])

        if _load_warp(g):
          # The keys go out as soon as both warpgroups are done with the slot's keys (after
          # their S products), not after their O += P V too.
          wait_free(k_free)
          copy(k_g, k_s, k_bar)
          wait_free(v_free)
          copy(v_g, v_s, v_bar)
        else:
          wait_free(k_free, v_free)
          copy(k_g, k_s, k_bar)
          copy(v_g, v_s, v_bar)

      if k1 is None:
        lax.fori_loop(0, pair_steps, load, None)
        return base + pair_steps
      lax.fori_loop(k0, k1, load, None)
      return base + k1 - k0

    def tile_body(i: Any, base: Any, tail: bool) -> Any:
      if tail:
        return issue(*_tail_item(g, pid, i), base)
      return issue(_tile_index(g, pid, i, listed), 0, None, base)

    def loads() -> None:
      _run_items(g, local_tiles, tile_body)

    if g.listed and _load_warp(g):
      # Warp code cannot load scalars from shared memory: the warpgroup reads each tile from
      # the list, then one warp issues its loads.
      def listed_item(i: Any, base: Any) -> Any:
        tile = _tile_index(g, pid, i, listed)

        @plgpu.warp_map
        def _per_warp(warp: Any) -> None:
          @pl.when(warp == 0)
          def _():
            issue(tile, 0, None, base)

        return base + _tile(g, tile)[4]

      lax.fori_loop(0, local_tiles, listed_item, 0)
    elif _load_warp(g):

      @plgpu.warp_map
      def _per_warp(warp: Any) -> None:
        pl.when(warp == 0)(loads)  # warps 1-3 leave at once: no polling, fewer warps to issue
    else:
      loads()


def _run_items(g: FwdGeometry, items: Any, body: Any) -> None:
  """Runs ``body(i, base, tail)`` over a program's `items` work items, `base` threaded through:
  whole tiles with static key bounds, then (with `split_tail`) the tail pieces in a loop of
  their own, so that the full rounds run the unsplit kernel's code."""
  if not g.split_tail:
    lax.fori_loop(0, items, lambda i, base: body(i, base, False), 0)
    return
  base = lax.fori_loop(0, g.full_rounds, lambda i, base: body(i, base, False), 0)
  lax.fori_loop(g.full_rounds, items, lambda i, base: body(i, base, True), base)


def _load_warp(g: FwdGeometry) -> bool:
  """Whether one warp of the producer warpgroup issues the loads, each slot's keys refilled once
  its keys are free (causal calls), rather than the whole warpgroup refilling keys and values
  once both are free (without a causal mask). On the H200 (bitwise-equal
  outputs, `docs/results/kernels/mosaic_fwd_variants_h200.txt`) the one-warp producer took the
  causal 1x16384x16x128 forward from 670.4 to 675.7 TFLOP/s and 32x2048x16x64 (persistent) from
  377.5 to 386.8, and was slower without a causal mask: 1x16384x16x128 680.6 -> 677.7 (and
  689-690 -> 678-679 with either half of the change alone)."""
  return g.causal


def forward(q: Any, k: Any, v: Any, g: FwdGeometry) -> tuple[Any, Any]:
  """``(out [B, Tp, H, D], lse [B, H, Tp] or None)`` for inputs already padded to the geometry
  (lse None unless `g.with_lse`)."""
  dtype = q.dtype
  scratch = [
      pallas_lib.wgmma_smem((_COMPUTE_WGS, 2, g.block_q, g.head_dim), dtype),
      pallas_lib.wgmma_smem((g.stages, g.block_kv, g.head_dim), dtype),
      pallas_lib.wgmma_smem((g.stages, g.block_kv, g.head_dim), dtype),
      plgpu.SMEM((_COMPUTE_WGS, g.block_q), jnp.float32),
      plgpu.Barrier(num_barriers=2 * _COMPUTE_WGS),
      plgpu.Barrier(num_barriers=g.stages),
      plgpu.Barrier(num_barriers=g.stages),
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS, num_barriers=g.stages),
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS, num_barriers=g.stages),
  ]
  inputs = [q, k, v]
  if g.listed:
    table = mosaic_work.tile_list(g)
    if table.shape[1] > mosaic_work.LISTED_MAX_WIDTH:
      raise ValueError(f"listed: a program's row of the tile list holds {table.shape[1]} int32s, "
                       f"more than the {mosaic_work.LISTED_MAX_WIDTH} one TMA copy moves; use "
                       "fewer tiles per program or listed=False")
    inputs.append(jnp.asarray(table))
    scratch += [plgpu.SMEM((table.shape[1],), jnp.int32), plgpu.Barrier(num_barriers=1)]
  out_type = [jax.ShapeDtypeStruct((g.batch, g.q_len_padded, g.heads, g.head_dim), dtype)]
  if g.with_lse:
    out_type.append(jax.ShapeDtypeStruct((g.batch, g.heads, g.q_len_padded), jnp.float32))
  rows = _COMPUTE_WGS * g.block_q
  if g.split_tail:
    out_type += [jax.ShapeDtypeStruct((g.programs, 2, 2, rows, g.head_dim), dtype),
                 jax.ShapeDtypeStruct((g.programs, 2, rows), jnp.float32)]
  outs = plgpu.kernel(
      lambda *refs: _kernel(*refs, g=g), out_type=out_type, scratch_types=scratch,
      grid=(g.programs,), grid_names=(pallas_lib.MOSAIC_GRID_AXIS,),
      num_threads=_COMPUTE_WGS + 1, thread_name="wg",
      compiler_params=plgpu.CompilerParams(approx_math=True),
      kernel_name="pjrtkit_attention_fwd_mosaic")(*inputs)
  out, lse = outs[0], (outs[1] if g.with_lse else None)
  if g.split_tail:
    out, lse = mosaic_work.merge_tail(g, out, lse, outs[-2], outs[-1])
  return out, lse

