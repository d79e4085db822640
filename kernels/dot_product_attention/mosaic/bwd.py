"""dot_product_attention "mosaic" backward: one warp-specialised Mosaic GPU kernel (sm_90+).

One program (CTA) per work item, a (key block of ``2 * 64`` keys, batch, key/value head), or with
`BwdGeometry.persistent_programs` that many programs, each looping over items. It keeps the
item's keys and values in shared memory and walks every query block (`block_q` rows: 64, or 128
for causal calls) of every query head of its group, so dK and dV are summed over the group in
registers and written once, in the input dtype. Three warpgroups:

* warpgroups 0 and 1 compute, each on its own 64 keys;
* warpgroup 2 only moves data: it loads the key/value block, then keeps `stages` query steps
  (Q, dO, the log-sum-exp and delta = rowsum(dO * O)) in flight with TMA, refilling a slot once
  both compute warpgroups released it (with `BwdGeometry.paired_loads`, Q and the log-sum-exp
  complete one barrier, dO and delta another).

Per query step each compute warpgroup does, with its keys K_w, V_w (64 x D):

  S^T  = K_w Q^T           (wgmma, both operands in shared memory)
  P^T  = exp2(S^T c - lse2) (registers; c = scale * log2(e), lse2 = lse * log2(e))
  dP^T = V_w dO^T
  dS^T = P^T (dP^T - delta) * scale
  dV  += P^T dO             (P^T straight from registers as wgmma's left operand)
  dK  += dS^T Q             (dS^T from registers)

and, while dV's product runs, writes dS^T into its half of a shared ``[128 keys, block_q
queries]`` tile, then issues dK's. The dQ product of the step, ``dQ_step = dS K`` over all 128
keys (the tile read transposed), is done by one warpgroup, alternating by step, or at head_dim
128 by both, each on half of the columns, and added to a float32 dQ (int32 fixed point with
`BwdGeometry.fixed_point_dq`, `fixed_point`) in global memory with a TMA
reduce-add (``copy_smem_to_gmem(reduction_op="add")``). With `BwdGeometry.lag_dq` it runs one
step late, at the end of the next step, and warpgroup 1 starts half a step after warpgroup 0.
That dQ starts as zeros: it is passed in as a mutable array reference (`jax.new_ref`), which the
kernel updates in place. With `BwdGeometry.loop_descriptors` each step offsets the key and value
tiles by a zero it reads from shared memory, so their wgmma descriptors are made in the loop
instead of being hoisted out of it into registers (where at head_dim 128 they made ptxas spill).
With `BwdGeometry.biased_accumulators` the S^T and dP^T accumulators start at ``-lse / scale``
(= ``-lse2 / c``) and ``-delta`` instead of zero, so the products subtract them:
``P^T = exp2(acc c)``, ``dS^T = P^T acc scale``.
Five matrix products per step instead of the seven of a split dQ / dK-dV pair of kernels, and nothing is transposed or padded in memory beyond the blocks: Q, dO,
dQ, dK and dV are read and written in JAX's ``[B, T, H, D]`` layout as strided 2-D TMA tiles.

Causal programs start at the first query block that reaches their keys and mask only the steps
that cross the diagonal (two of 64 rows, or one of 128); keys past the true length are masked
only when the length is not a multiple of 128. Compiled only: Pallas's Mosaic GPU interpreter
cannot lower warp-specialised wgmma kernels, so under `pallas_interpret` ``attention.py`` runs its
two single-warpgroup backward kernels instead (the same arithmetic).
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
import jax.experimental.pallas.mosaic_gpu as plgpu

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.dot_product_attention.mosaic import fixed_point
# The geometry (re-exported: `mosaic_bwd.BwdGeometry`, `mosaic_bwd.choose` etc.).
from pjrtkit.kernels.dot_product_attention.mosaic.bwd_geometry import (  # noqa: F401
    BLOCK_KV, BLOCK_QS, COMPUTE_WGS as _COMPUTE_WGS, LOG2E,
    LONGEST_FIRST_MAX_WAVES, BwdGeometry, choose, first_step, program_coords)


def flat_head_step(g: BwdGeometry, kvh: Any, t: Any, lo: Any = None,
                   span: Any = None) -> tuple[Any, Any]:
  """(query head, query block) of step `t` of one loop over key/value head `kvh`'s query heads
  x `span` query blocks from `lo` (default: all `q_steps` from 0), heads slowest: the nested
  loops' order (`BwdGeometry.flat_steps`, `BwdGeometry.phased_steps`)."""
  span = g.q_steps if span is None else span
  h = kvh * g.group + lax.div(t, span)
  n = lax.rem(t, span)
  return h, n if lo is None else lo + n


def walk_steps(g: BwdGeometry, kvh: Any, first: Any, body: Any, carry: Any,
               split_masked: bool = True) -> Any:
  """``carry = body(h, n, masked, carry)`` over a work item's query steps (query head `h`,
  query block `n`) in the one order the producer and the compute warpgroups share, each
  head's blocks from `first`: heads slowest (`BwdGeometry.flat_steps`: heads x blocks as one
  loop), except with `BwdGeometry.phased_steps`, which walks every head's masked diagonal
  blocks as one loop (heads slowest), then every head's unmasked blocks as another. `masked`
  (a Python bool) says whether the step masks keys past the length or across the causal
  diagonal; with `split_masked` off (the producer, which does not mask) `masked` is None and a
  nested causal head's blocks run as one loop."""

  def heads_by_blocks(lo: Any, span: Any, masked: bool | None, carry: Any) -> Any:
    def step(t: Any, carry: Any) -> Any:
      h, n = flat_head_step(g, kvh, t, lo, span)
      return body(h, n, masked, carry)

    return lax.fori_loop(0, g.group * (g.q_steps if span is None else span), step, carry)

  def flag(masked: bool) -> bool | None:
    return masked if split_masked else None

  if g.flat_steps:
    return heads_by_blocks(None, None, flag(g.mask_kv_len), carry)
  if g.phased_steps:
    diagonal_end = jnp.minimum(first + BLOCK_KV // g.block_q, g.q_steps)
    carry = heads_by_blocks(first, diagonal_end - first, flag(True), carry)
    return heads_by_blocks(diagonal_end, g.q_steps - diagonal_end, flag(False), carry)

  def head(hh: Any, carry: Any) -> Any:
    h = kvh * g.group + hh

    def run(lo: Any, hi: Any, carry: Any, masked: bool | None) -> Any:
      return lax.fori_loop(lo, hi, lambda n, carry: body(h, n, masked, carry), carry)

    if not split_masked:
      return run(first, g.q_steps, carry, None)
    if g.mask_kv_len:
      return run(first, g.q_steps, carry, True)
    if g.causal:
      diagonal_end = jnp.minimum(first + BLOCK_KV // g.block_q, g.q_steps)
      carry = run(first, diagonal_end, carry, True)
      return run(diagonal_end, g.q_steps, carry, False)
    return run(first, g.q_steps, carry, False)

  return lax.fori_loop(0, g.group, head, carry)


def _each_item(g: BwdGeometry, items: Any, work: Any) -> None:
  """``work(i, it)`` for this program's items, `it` counting query steps over all of them (one
  item, unrolled, without `persistent_programs`)."""
  if g.persistent_programs:
    lax.fori_loop(0, items, work, 0)
  else:
    work(0, 0)


def _all_refs(refs: Sequence[Any], g: BwdGeometry) -> list[Any]:
  """The launch's refs in `_kernel`'s order, None for those `g` leaves out: the dQ factors' rows
  `dqf_g` (an input after delta) and their ring `dqf_s` (the last scratch) with
  `BwdGeometry.fixed_point_dq`, `zero_s` (scratch before it) with `loop_descriptors`."""
  refs = list(refs)
  inputs, rest = refs[:6], refs[6:]
  dqf_g = rest.pop(0) if g.fixed_point_dq else None
  dqf_s = rest.pop() if g.fixed_point_dq else None
  zero_s = rest.pop() if g.loop_descriptors else None
  return inputs + [dqf_g] + rest + [zero_s, dqf_s]


def _kernel(q_g, k_g, v_g, do_g, lse_g, delta_g, dqf_g, dq_g, dk_g, dv_g, k_s, v_s, q_s, do_s,
            lse_s, delta_s, dst_s, dq_s, kv_bar, q_bar, do_bar, lse_bar, delta_bar, q_free,
            ds_ready, ds_free, done, kv_free, stagger, zero_s, dqf_s, g: BwdGeometry):
  # zero_s: with `BwdGeometry.loop_descriptors`, one int32 of shared memory holding 0; dqf_g,
  # dqf_s: with `BwdGeometry.fixed_point_dq`, the dQ factors' rows and their ring (`_all_refs`).
  fixed = g.fixed_point_dq
  pid = lax.axis_index(pallas_lib.MOSAIC_GRID_AXIS)
  wg = lax.axis_index("wg")
  items = g.items_of(pid)

  def coords(i: Any) -> tuple[Any, Any, Any, Any]:
    """(key block, batch, key/value head, first query step) of this program's `i`-th item."""
    j, b, kvh = program_coords(g, g.item(pid, i))
    return j, b, kvh, first_step(g, j)

  @pl.when(wg < _COMPUTE_WGS)
  def _compute():
    plgpu.set_max_registers(g.compute_registers, action="increase")
    if g.loop_descriptors:
      zero_s[0] = jnp.int32(0)  # each thread reads back its own store
    c = g.scale * LOG2E
    d = g.head_dim
    shape = (64, g.block_q)  # (this warpgroup's keys, queries)
    my_keys = pl.ds(wg * 64, 64)

    def in_loop(start: Any, multiple: int) -> Any:
      """`start` plus 0 read from shared memory (`BwdGeometry.loop_descriptors`), so what
      depends on it is made where it is used rather than hoisted out of the step loop."""
      return pl.multiple_of(start + zero_s[0], multiple)

    def my_tiles() -> tuple[Any, Any]:
      """This warpgroup's 64 keys and values in shared memory."""
      keys = pl.ds(in_loop(wg * 64, 64), 64) if g.loop_descriptors else my_keys
      return k_s.at[keys], v_s.at[keys]

    def mm(a: Any, b_: Any, out_shape: tuple[int, int]) -> Any:
      def body(acc_ref: Any) -> Any:
        plgpu.wgmma(acc_ref, a, b_)
        return acc_ref[...]

      return pl.run_scoped(body, plgpu.ACC(out_shape, jnp.float32))

    def accumulate(acc: Any, a: Any, b_: Any) -> Any:
      def body(acc_ref: Any) -> None:
        plgpu.wgmma(acc_ref, a, b_)

      return pl.run_state(body)(plgpu.ACC.init(acc))

    def step(b: Any, h: Any, key0: Any, n: Any, it: Any, dk: Any, dv: Any, masked: bool,
             prev: Sequence[Any]) -> tuple[Any, Any]:
      slot = lax.rem(it, g.stages)
      dslot = lax.rem(it, 2)  # the dS^T barriers of this step
      ds_tile = dst_s.at[lax.rem(it, g.ds_slots)]
      k_w, v_w = my_tiles()
      q_t, do_t = q_s.at[slot], do_s.at[slot]
      if not g.paired_loads:
        for bar in (q_bar, do_bar, lse_bar, delta_bar):
          plgpu.barrier_wait(bar.at[slot])

      def by_query(ref: Any) -> Any:
        """A per-query row of shared memory (`lse_s`, `delta_s`), as this warpgroup's tile."""
        row = plgpu.load(ref.at[slot], layout=plgpu.Layout.WGMMA.reduce(0))
        return lax.broadcast_in_dim(row, shape, [1])

      def scores(st_ref: Any, dpt_ref: Any) -> tuple[Any, Any]:
        if g.paired_loads:
          plgpu.barrier_wait(q_bar.at[slot])  # Q and the log-sum-exp
        if g.biased_accumulators:  # S^T - lse / scale: lse_s holds lse / scale
          st_ref[...] = -by_query(lse_s)
        plgpu.wgmma(st_ref, k_w, q_t.transpose((1, 0)))
        if g.paired_loads:
          plgpu.barrier_wait(do_bar.at[slot])  # dO and delta
        if g.biased_accumulators:  # dP^T - delta
          dpt_ref[...] = -by_query(delta_s)
        plgpu.wgmma(dpt_ref, v_w, do_t.transpose((1, 0)))
        # P^T is computed while dP^T is still in the tensor cores.
        st = plgpu.wgmma_accumulator_load(st_ref, wait_n=1)
        if g.biased_accumulators:
          pt = jnp.exp2(st * c)
        else:
          pt = jnp.exp2(st * c - by_query(lse_s))
        if masked:
          first_key = in_loop(key0, 64) if g.loop_descriptors else key0
          key = first_key + plgpu.broadcasted_iota(jnp.int32, shape, 0,
                                                   layout=plgpu.Layout.WGMMA)
          keep = key < g.kv_len
          if g.causal:
            query = n * g.block_q + plgpu.broadcasted_iota(jnp.int32, shape, 1,
                                                         layout=plgpu.Layout.WGMMA)
            keep = keep & (query >= key)
          pt = jnp.where(keep, pt, 0.0)
        return pt, plgpu.wgmma_accumulator_load(dpt_ref, wait_n=0)

      pt, dpt = pl.run_scoped(scores, plgpu.ACC(shape, jnp.float32),
                              plgpu.ACC(shape, jnp.float32))
      if g.lag_dq:  # warpgroup 1 starts once warpgroup 0's first scores are in
        pl.when((wg == 0) & (it == 0))(lambda: plgpu.barrier_arrive(stagger))
      if g.biased_accumulators:
        dst = pt * dpt * g.scale
      else:
        dst = pt * (dpt - by_query(delta_s)) * g.scale
      pt16, ds16 = pt.astype(q_s.dtype), dst.astype(q_s.dtype)

      # dV's product is issued first and runs while dS^T goes into this warpgroup's half of
      # the shared tile (once the dQ product that last read that tile released it), so the dQ
      # product that reads it can start while dK and dV accumulate. On the H200 (bf16, CUPTI,
      # one process) issuing dV before the store rather than after took 1x16384x16x128 from 10.62 to
      # 10.06 ms, its causal form from 5.33 to 4.99 ms, 16x1024x32x128 from 1.58 to 1.54 ms and
      # 2x3072x16x64 with 4 key/value heads (causal) from 0.327 to 0.305 ms.
      def grads(refs: tuple[Any, Any]) -> None:
        dv_ref, dk_ref = refs
        plgpu.wgmma(dv_ref, pt16, do_t)

        @pl.when(it >= g.ds_slots)
        def _():
          plgpu.barrier_wait(ds_free.at[lax.rem(it - g.ds_slots, 2)])

        ds_tile.at[my_keys][...] = ds16
        plgpu.commit_smem()
        plgpu.barrier_arrive(ds_ready.at[dslot])
        plgpu.wgmma(dk_ref, ds16, q_t)

      dv, dk = pl.run_state(grads)((plgpu.ACC.init(dv), plgpu.ACC.init(dk)))
      # Both products that read this step's Q and dO were waited for: release the slot.
      plgpu.barrier_arrive(q_free.at[slot])

      if g.lag_dq:
        dq_of_step(b, it - 1, *prev, it > 0)
      else:
        dq_of_step(b, it, h, n, None)
      return dk, dv

    def dq_of_step(b: Any, s: Any, h: Any, n: Any, when: Any) -> None:
      """The dQ product of step `s` (query head `h`, block `n`), where `when` (None: always)
      holds: ``dQ_s = dS_s K`` over all 128 keys, the shared dS^T tile read transposed, added to
      dQ in global memory."""
      # Lagged, s is -1 at the first step: the slot indices are then -1, unused (`when` is false).
      dslot = lax.rem(s, 2)
      ds_tile = dst_s.at[lax.rem(s, g.ds_slots)]

      def dq_product(cols: Any, dq_g_cols: Any) -> None:
        plgpu.barrier_wait(ds_ready.at[dslot])
        dq = mm(ds_tile.transpose((1, 0)), cols, g.dq_tile)
        plgpu.barrier_arrive(ds_free.at[dslot])
        if fixed:  # scaled per query row by a power of two, rounded (`fixed_point.encode`)
          row = plgpu.load(dqf_s.at[lax.rem(s, g.factor_slots)],
                           layout=plgpu.Layout.WGMMA.reduce(1))
          dq = lax.round(dq * lax.broadcast_in_dim(row, g.dq_tile, [0]),
                         lax.RoundingMethod.TO_NEAREST_EVEN).astype(jnp.int32)
        # This warpgroup's previous dQ store must have read its staging tile.
        plgpu.wait_smem_to_gmem(0, wait_read_only=True)
        dq_s.at[wg][...] = dq
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(dq_s.at[wg], dq_g_cols, reduction_op="add")

      rows = pl.ds(n * g.block_q, g.block_q)

      def run() -> None:
        if g.dq_columns_split:
          half = pl.ds(wg * (d // 2), d // 2)
          keys = k_s.at[pl.ds(in_loop(0, BLOCK_KV), BLOCK_KV)] if g.loop_descriptors else k_s
          dq_product(keys.at[:, half], dq_g.at[b, rows, h, half])
        else:
          dq_product(k_s, dq_g.at[b, rows, h])

      if not g.dq_columns_split:  # one warpgroup's product, alternating by step
        when = dslot == wg if when is None else when & (dslot == wg)
      if when is None:
        run()
      else:
        pl.when(when)(run)

    def work(i: Any, it: Any) -> Any:
      j, b, kvh, first = coords(i)
      key0 = j * BLOCK_KV + wg * 64
      plgpu.barrier_wait(kv_bar.at[0])
      plgpu.barrier_wait(kv_bar.at[1])

      def one_step(h: Any, n: Any, masked: bool, carry: Any) -> Any:
        dk, dv, it, *prev = carry
        dk, dv = step(b, h, key0, n, it, dk, dv, masked, prev)
        return (dk, dv, it + 1) + ((h, n) if g.lag_dq else ())

      zero = plgpu.layout_cast(jnp.zeros((64, d), jnp.float32), plgpu.Layout.WGMMA)
      if not g.lag_dq:
        dk, dv, it = walk_steps(g, kvh, first, one_step, (zero, zero, it))
      else:
        pl.when(wg == 1)(lambda: plgpu.barrier_wait(stagger))
        unset = jnp.int32(0)  # the previous step's head and block, before the first step
        dk, dv, end, h, n = walk_steps(g, kvh, first, one_step, (zero, zero, it, unset, unset))
        dq_of_step(b, end - 1, h, n, end > it)  # the last step's, if any
        # An item with no query steps: warpgroup 1 still waits for its start.
        pl.when((wg == 0) & (end == it))(lambda: plgpu.barrier_arrive(stagger))
        it = end
      # The other warpgroup's last dQ product may still read every key: meet before the key and
      # value tiles are overwritten with this warpgroup's dK and dV.
      plgpu.barrier_arrive(done)
      plgpu.barrier_wait(done)
      k_w, v_w = my_tiles()
      k_w[...] = dk.astype(k_s.dtype)
      v_w[...] = dv.astype(v_s.dtype)
      plgpu.commit_smem()
      rows = pl.ds(key0, 64)
      plgpu.copy_smem_to_gmem(k_w, dk_g.at[b, rows, kvh])
      plgpu.copy_smem_to_gmem(v_w, dv_g.at[b, rows, kvh])
      if g.persistent_programs:
        # The tiles are free for the next item's keys and values once both stores read them.
        plgpu.wait_smem_to_gmem(0, wait_read_only=True)
        plgpu.barrier_arrive(kv_free)
      return it

    _each_item(g, items, work)
    plgpu.wait_smem_to_gmem(0)

  @pl.when(wg == _COMPUTE_WGS)
  def _memory():
    plgpu.set_max_registers(g.producer_registers, action="decrease")

    def work(i: Any, it: Any) -> Any:
      j, b, kvh, first = coords(i)
      keys = pl.ds(j * BLOCK_KV, BLOCK_KV)

      def load_kv() -> None:
        if g.persistent_programs:
          @pl.when(i > 0)
          def _():
            plgpu.barrier_wait(kv_free)  # the last item's dK and dV stores read the tiles
        plgpu.copy_gmem_to_smem(k_g.at[b, keys, kvh], k_s, kv_bar.at[0])
        plgpu.copy_gmem_to_smem(v_g.at[b, keys, kvh], v_s, kv_bar.at[1])

      # The first item's keys and values go first; a later item's once its first query steps
      # (`kv_after`, as many as fit in flight) are loading, or at once if it has none.
      if g.persistent_programs:
        kv_after = jnp.minimum(g.stages, g.item_steps(j))
        pl.when((i == 0) | (kv_after == 0))(load_kv)
      else:
        load_kv()
      start = it

      def load(h: Any, n: Any, masked: None, it: Any) -> Any:
        del masked  # the producer loads the same tiles for every step
        slot = lax.rem(it, g.stages)

        @pl.when(it >= g.stages)
        def _():
          plgpu.barrier_wait(q_free.at[slot])

        rows = pl.ds(n * g.block_q, g.block_q)
        plgpu.copy_gmem_to_smem(q_g.at[b, rows, h], q_s.at[slot], q_bar.at[slot])
        plgpu.copy_gmem_to_smem(lse_g.at[b, h, rows], lse_s.at[slot],
                                (q_bar if g.paired_loads else lse_bar).at[slot])
        plgpu.copy_gmem_to_smem(do_g.at[b, rows, h], do_s.at[slot], do_bar.at[slot])
        plgpu.copy_gmem_to_smem(delta_g.at[b, h, rows], delta_s.at[slot],
                                (do_bar if g.paired_loads else delta_bar).at[slot])
        if fixed:  # completes with dO, read after it (`BwdGeometry.factor_slots`)
          plgpu.copy_gmem_to_smem(dqf_g.at[b, h, rows], dqf_s.at[lax.rem(it, g.factor_slots)],
                                  do_bar.at[slot])
        if g.persistent_programs:
          pl.when((i > 0) & (it + 1 - start == kv_after))(load_kv)
        return it + 1

      return walk_steps(g, kvh, first, load, it, split_masked=False)

    _each_item(g, items, work)


def lse_input(lse: Any, g: BwdGeometry) -> Any:
  """What `backward` takes for the forward's (natural) log-sum-exp `lse`: with
  `BwdGeometry.biased_accumulators` ``lse / scale`` (S^T's accumulator starts at its negation,
  and ``exp2((S^T - lse / scale) c) = exp(S^T scale - lse)``, ``c = scale * log2(e)``), else
  ``lse * log2(e)``, subtracted from ``S^T c`` in base 2."""
  return lse * (1 / g.scale) if g.biased_accumulators else lse * LOG2E


def backward(q: Any, k: Any, v: Any, do: Any, lse_in: Any, delta: Any, g: BwdGeometry
             ) -> tuple[Any, Any, Any]:
  """``(dq [B, Tp, H, D] float32, dk, dv [B, Sp, K, D] in the input dtype)`` for inputs already
  padded to the geometry: q, do ``[B, Tp, H, D]``, k, v ``[B, Sp, K, D]``, `lse_in` the
  forward's log-sum-exp as `lse_input` gives it and `delta` = rowsum(dO * O), both ``[B, H,
  Tp]`` float32 (zero in padded rows). With `BwdGeometry.fixed_point_dq` the kernel sums dQ in
  int32, each row scaled by `fixed_point.row_factors`, and `fixed_point.decode` gives it back
  (NaN in rows whose bound, log-sum-exp or delta is not finite)."""
  dtype = q.dtype
  d = g.head_dim
  f32 = jnp.float32
  acc = jnp.int32 if g.fixed_point_dq else f32  # dQ's sum in global memory
  pairs = 2 if g.paired_loads else 1  # the loads that complete q_bar
  do_loads = pairs + (1 if g.fixed_point_dq else 0)  # and do_bar (the dQ factors' row)
  scratch = [
      pallas_lib.wgmma_smem((BLOCK_KV, d), dtype),                          # k_s
      pallas_lib.wgmma_smem((BLOCK_KV, d), dtype),                          # v_s
      pallas_lib.wgmma_smem((g.stages, g.block_q, d), dtype),               # q_s
      pallas_lib.wgmma_smem((g.stages, g.block_q, d), dtype),               # do_s
      plgpu.SMEM((g.stages, g.block_q), f32),                # lse_s
      plgpu.SMEM((g.stages, g.block_q), f32),                # delta_s
      pallas_lib.wgmma_smem((g.ds_slots, BLOCK_KV, g.block_q), dtype),      # dst_s
      plgpu.SMEM((_COMPUTE_WGS, *g.dq_tile), acc),           # dq_s
      plgpu.Barrier(num_barriers=2),                         # kv_bar
      plgpu.Barrier(num_arrivals=pairs, num_barriers=g.stages),  # q_bar
      plgpu.Barrier(num_arrivals=do_loads, num_barriers=g.stages),  # do_bar
      plgpu.Barrier(num_barriers=g.stages),                  # lse_bar (unused with paired loads)
      plgpu.Barrier(num_barriers=g.stages),                  # delta_bar (unused with paired loads)
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS, num_barriers=g.stages),  # q_free
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS, num_barriers=2),         # ds_ready
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS if g.dq_columns_split else 1,
                    num_barriers=2),                                    # ds_free
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS),                         # done
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS),                         # kv_free
      plgpu.Barrier(),                                                  # stagger
  ]
  if g.loop_descriptors:
    scratch.append(plgpu.SMEM((1,), jnp.int32))                         # zero_s
  if g.fixed_point_dq:
    scratch.append(plgpu.SMEM((g.factor_slots, g.block_q), f32))         # dqf_s
  kv_type = jax.ShapeDtypeStruct((g.batch, g.kv_len_padded, g.kv_heads, d), dtype)
  dq_ref = jax.new_ref(jnp.zeros((g.batch, g.q_len_padded, g.heads, d), acc))
  factors, finite = (fixed_point.row_factors(k, v, do, lse_in, delta, g.scale)
                     if g.fixed_point_dq else (None, None))
  dk, dv = plgpu.kernel(
      lambda *refs: _kernel(*_all_refs(refs, g), g=g), out_type=[kv_type, kv_type],
      scratch_types=scratch,
      grid=(g.launched,), grid_names=(pallas_lib.MOSAIC_GRID_AXIS,),
      num_threads=_COMPUTE_WGS + 1, thread_name="wg",
      compiler_params=plgpu.CompilerParams(approx_math=True,
                                           unsafe_no_auto_barriers=not g.auto_barriers),
      kernel_name="pjrtkit_attention_bwd_mosaic")(
          q, k, v, do, lse_in, delta, *([factors] if g.fixed_point_dq else []), dq_ref)
  dq = jax.freeze(dq_ref)
  if g.fixed_point_dq:
    dq = fixed_point.decode(dq, factors, finite)
  return dq, dk, dv
