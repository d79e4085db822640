"""dot_product_attention "mosaic" backward: one warp-specialised Mosaic GPU kernel (Hopper, sm_90+).

One program (CTA) per work item, a (key block of ``2 * 64`` keys, batch, key/value head), or with
`BwdGeometry.persistent_programs` that many programs, each looping over items. It keeps the
item's keys and values in shared memory and walks every query block (`block_q` rows: 64, or 128 for causal calls)
of every query head of its group,
so dK and dV are summed over the group in registers and written once, in the input dtype. Three
warpgroups:

* warpgroups 0 and 1 compute, each on its own 64 keys;
* warpgroup 2 only moves data: it loads the key/value block, then keeps `stages` query steps
  (Q, dO, the log-sum-exp and delta = rowsum(dO * O)) in flight with TMA, refilling a slot once
  both compute warpgroups released it.

Per query step each compute warpgroup does, with its keys K_w, V_w (64 x D):

  S^T  = K_w Q^T           (wgmma, both operands in shared memory)
  P^T  = exp2(S^T c - lse)  (registers; c = scale * log2(e), lse saved in base 2)
  dP^T = V_w dO^T
  dS^T = P^T (dP^T - delta) * scale
  dV  += P^T dO             (P^T straight from registers as wgmma's left operand)
  dK  += dS^T Q             (dS^T from registers)

and, while dV's product runs, writes dS^T into its half of a shared ``[128 keys, block_q
queries]`` tile, then issues dK's. The dQ product of
the step, ``dQ_step = dS K`` over all 128 keys (the tile read transposed), is done by one
warpgroup, alternating by step, which adds it to a float32 dQ in global memory with a TMA
reduce-add (``copy_smem_to_gmem(reduction_op="add")``). That dQ starts as zeros: it is passed in
as a mutable array reference (`jax.new_ref`), which the kernel updates in place. Five matrix
products per step instead of the seven of a split dQ / dK-dV pair of kernels, and nothing is
transposed or padded in memory beyond the blocks: Q, dO, dQ, dK and dV are read and written in
JAX's ``[B, T, H, D]`` layout as strided 2-D TMA tiles.

Causal programs start at the first query block that reaches their keys and mask only the steps
that cross the diagonal (two of 64 rows, or one of 128); keys past the true length are masked only when the length is not
a multiple of 128. Compiled only: Pallas's Mosaic GPU interpreter cannot lower warp-specialised
wgmma kernels, so under `pallas_interpret` ``mosaic.py`` runs its two single-warpgroup backward
kernels instead (the same arithmetic).
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
from pjrtkit.kernels.dot_product_attention import mosaic_work

LOG2E = math.log2(math.e)
"""The backward takes the log-sum-exp in base 2: ``lse * LOG2E``."""
_COMPUTE_WGS = 2
BLOCK_QS = (64, 128)
"""Query rows per step the kernel takes (`BwdGeometry.block_q`)."""
BLOCK_KV = _COMPUTE_WGS * 64
"""Keys per program: 64 per compute warpgroup."""
LONGEST_FIRST_MAX_WAVES = 8
"""Causal launches of at most this many programs per SM start their longest programs first
(`BwdGeometry.longest_first`). On the H200 (bf16, backward kernel, CUPTI medians, one process):
2x3072x16x64 with 4 key/value heads (192 programs, 1.5 per SM) 0.424 -> 0.382 ms; 4x4096x32x128
with 8 (1024, 7.8 per SM) 3.53 -> 3.25 ms; 1x16384x16x128 (2048, 15.5 per SM) 5.31 -> 5.26 ms
(noise); 32x2048x16x64 (8192, 62 per SM) 1.84 -> 2.46 ms, where 132 programs running together
read 132 heads' queries and lose L2."""


@dataclasses.dataclass(frozen=True)
class BwdGeometry:
  """Static shape of one backward call (everything the kernel body needs besides the refs).

  `q_len_padded` is a multiple of `block_q`, `kv_len_padded` of `BLOCK_KV`. `stages`: query
  steps in flight; `ds_slots`: shared dS^T tiles (2: a warpgroup writes the next step's while the
  dQ product reads this one's; 1 saves the shared memory of one). `longest_first` (causal):
  programs start in the order of their work, every head's first key block (which meets every
  query step) before any second one, so the shortest programs end the launch; without it the key
  blocks of one head are neighbours and share its queries in L2 (`choose` says when).
  `persistent_programs` (0: one program per work item): that many programs (at most the work
  items), each running items pid, pid + persistent_programs, ... (causal: in the longest-first
  order, every other round reversed, `mosaic_work.dealt_item`); a program's producer loads the
  next item's first query steps while the compute warpgroups store the last item's dK and dV,
  then its keys and values once they are stored. Opt-in: `choose` never sets it. On the H200
  (bf16, CUPTI, one process, `tools/kernels_gpu/bwd_variant_bench.py`) 132 programs were 1-19 %
  slower than one program per item at every measured shape (1x16384x16x128 10.62 -> 11.25 ms,
  16x1024x32x128 1.58 -> 1.64 ms, 4x4096x32x128 causal with 8 key/value heads 3.06 -> 3.47 ms):
  more spills, and each item's key/value load waits on the last item's stores."""

  batch: int
  heads: int
  kv_heads: int
  q_len_padded: int
  kv_len: int
  kv_len_padded: int
  head_dim: int
  scale: float
  causal: bool
  stages: int = 2
  block_q: int = 64
  ds_slots: int = 2
  longest_first: bool = False
  persistent_programs: int = 0

  def __post_init__(self) -> None:
    if self.kv_heads < 1 or self.heads % self.kv_heads:
      raise ValueError(f"heads ({self.heads}) must be a multiple of kv_heads ({self.kv_heads})")
    if self.block_q not in BLOCK_QS:
      raise ValueError(f"block_q must be one of {BLOCK_QS}, got {self.block_q}")
    if self.q_len_padded % self.block_q or self.kv_len_padded % BLOCK_KV:
      raise ValueError(f"padded lengths must be multiples of {self.block_q} (queries) and "
                       f"{BLOCK_KV} (keys), got {self.q_len_padded} and {self.kv_len_padded}")
    if self.stages < 2:
      raise ValueError(f"stages must be at least 2, got {self.stages}")
    if self.ds_slots not in (1, 2):
      raise ValueError(f"ds_slots must be 1 or 2, got {self.ds_slots}")
    if not 0 <= self.persistent_programs <= self.programs:
      raise ValueError(f"persistent_programs must be in [0, {self.programs}] (the work items), "
                       f"got {self.persistent_programs}")
    if self.persistent_programs and self.causal and not self.longest_first:
      raise ValueError("a persistent causal backward deals its items longest first: "
                       "persistent_programs needs longest_first with causal")

  @property
  def group(self) -> int:
    """Query heads per key/value head (each program walks all of them)."""
    return self.heads // self.kv_heads

  @property
  def q_steps(self) -> int:
    """Query blocks of `block_q` rows."""
    return self.q_len_padded // self.block_q

  @property
  def kv_blocks(self) -> int:
    """Key blocks of `BLOCK_KV` keys."""
    return self.kv_len_padded // BLOCK_KV

  @property
  def programs(self) -> int:
    """Work items: one per (key block, batch, key/value head)."""
    return self.kv_blocks * self.batch * self.kv_heads

  @property
  def launched(self) -> int:
    """Programs launched: `persistent_programs`, else one per work item."""
    return self.persistent_programs or self.programs

  def items_of(self, pid: Any) -> Any:
    """How many work items program `pid` runs (`item`)."""
    if not self.persistent_programs:
      return 1
    return mosaic_work.dealt_count(pid, self.programs, self.persistent_programs, self.causal)

  def item(self, pid: Any, i: Any) -> Any:
    """The work item (a `program_coords` index) program `pid` runs `i`-th."""
    if not self.persistent_programs:
      return pid
    return mosaic_work.dealt_item(pid, i, self.persistent_programs, self.causal)

  def item_steps(self, j: Any) -> Any:
    """Query steps of a work item of key block `j` (over its group's query heads)."""
    return self.group * (self.q_steps - _first_step(self, j))

  @property
  def flat_steps(self) -> bool:
    """Whether a program walks its group's query heads and their query steps as one loop
    (step t: head ``t // q_steps``, query block ``t % q_steps``) rather than a loop of heads
    around a loop of steps: non-causal calls of more than one query head per key/value head.
    On the H200 (bf16, CUPTI, one process) 4x4096x32x128 with 8 key/value heads went from 5.64
    to 5.27 ms, 108 bytes of ptxas spill stores instead of 140. Causal calls do not take this
    loop: in it each step would choose its masked or unmasked body at run time, and
    4x4096x32x128 causal with 8 went from 3.15 to 3.27 ms that way (`phased_steps` walks grouped
    causal calls flat without a run-time choice)."""
    return self.group > 1 and not self.causal

  @property
  def phased_steps(self) -> bool:
    """Whether a causal program walks its group's heads in two flat loops of `flat_head_step`
    order, all heads' masked diagonal steps first and then all their unmasked ones, rather than
    a loop of heads around each head's two loops: causal calls of more than one query head per
    key/value head whose keys need no length mask. Neither loop chooses its body at run time.
    On the H200 (bf16, CUPTI, one process) 4x4096x32x128 causal with 8 key/value heads went from
    3.06 to 2.92 ms and 2x3072x16x64 causal with 4 from 0.303 to 0.285 ms (ptxas spill stores 248
    to 212 and 312 to 184 bytes)."""
    return self.group > 1 and self.causal and not self.mask_kv_len

  @property
  def dq_columns_split(self) -> bool:
    """Whether both compute warpgroups share each step's dQ product, each on half of the head
    dimension (head_dim a multiple of 128: a half is whole 64-column tiles of the swizzled key
    tile), rather than one warpgroup doing all of it, alternating by step."""
    return self.head_dim % 128 == 0

  @property
  def dq_tile(self) -> tuple[int, int]:
    """The dQ tile one warpgroup computes and adds per step."""
    return (self.block_q, self.head_dim // 2 if self.dq_columns_split else self.head_dim)

  @property
  def mask_kv_len(self) -> bool:
    """Whether keys past the true length exist (and so every step masks them)."""
    return self.kv_len != self.kv_len_padded

  def smem_bytes(self, itemsize: int) -> int:
    """Shared memory of the tiles, plus 4 KiB for barriers and alignment."""
    d = self.head_dim
    tiles = (2 * BLOCK_KV * d * itemsize                      # keys, values
             + 2 * self.stages * self.block_q * d * itemsize  # Q, dO
             + 2 * self.stages * self.block_q * 4             # lse, delta
             + self.ds_slots * BLOCK_KV * self.block_q * itemsize  # dS^T
             + _COMPUTE_WGS * self.dq_tile[0] * self.dq_tile[1] * 4)  # dQ staging, float32
    return tiles + 4096

  @property
  def auto_barriers(self) -> bool:
    """Whether Pallas adds its warpgroup barriers around this kernel's shared-memory stores and
    before its TMA loads (``CompilerParams.unsafe_no_auto_barriers`` off). The kernel is safe
    without them: no thread both reads and writes a shared region (dS^T, dQ, and at the end dK
    and dV in the key/value tiles, are written by threads and read by wgmma or TMA; Q, dO, lse
    and delta are written by TMA and read by threads and wgmma); the dS^T slot is reused only
    after its ``ds_free`` barrier, the dQ staging tile only after ``wait_smem_to_gmem`` (which
    ends in a warpgroup barrier), the key/value tiles only after the ``done`` barrier (and, in a
    persistent launch, loaded again by TMA only after ``kv_free``, which both compute warpgroups
    reach once their dK and dV stores read the tiles), a query slot only after every thread
    arrived at ``q_free``; ``commit_smem`` fences and syncs the
    warpgroup before each product or store reads what it wrote; the producer warpgroup's
    barriers only synchronised it with itself. On the H200 (bf16, kernel + dQ cast, CUPTI)
    dropping them took 32x2048x16x64 from 3.23 to 3.11 ms and its causal form from 1.90 to
    1.85 ms; at head_dim 128 they stay: without them 4x4096x32x128 causal with 8 key/value
    heads went from 3.06 to 3.14 ms, and 1x16384x16x128 moved within its run-to-run spread
    (10.15 to 9.95 ms)."""
    return self.head_dim > 64

  def fits(self, itemsize: int) -> bool:
    """Whether `smem_bytes` fits a Hopper block."""
    return self.smem_bytes(itemsize) <= pallas_lib.HOPPER_SMEM_LIMIT


def choose(*, batch: int, q_len: int, heads: int, kv_heads: int, kv_len: int, head_dim: int,
           scale: float, causal: bool, itemsize: int, max_stages: int,
           block_qs: tuple[int, ...] = (64,), sms: int | None = None) -> BwdGeometry | None:
  """The first geometry that fits in shared memory: `block_qs` in order, then two dS^T tiles
  before one, then the most query steps in flight up to `max_stages` (at least 2); causal
  launches of at most `LONGEST_FIRST_MAX_WAVES` programs per SM take `longest_first` (`sms`: the
  SM count; when None, the default device's where it is a GPU, else `pallas.DEFAULT_SMS`, so a
  program exported for CUDA from a CPU host orders its programs as on an H200). None if none
  fits."""
  if sms is None:
    sms = pallas_lib.gpu_sm_count()
  if sms < 1:
    raise ValueError(f"sms must be at least 1, got {sms}")
  for block_q in block_qs:
    for ds_slots in (2, 1):
      for stages in range(max(2, max_stages), 1, -1):
        g = BwdGeometry(batch=batch, heads=heads, kv_heads=kv_heads,
                        q_len_padded=pallas_lib.round_up(q_len, block_q), kv_len=kv_len,
                        kv_len_padded=pallas_lib.round_up(kv_len, BLOCK_KV), head_dim=head_dim,
                        scale=scale, causal=causal, stages=stages, block_q=block_q,
                        ds_slots=ds_slots)
        if g.fits(itemsize):
          return dataclasses.replace(
              g, longest_first=causal and g.programs <= LONGEST_FIRST_MAX_WAVES * sms)
  return None


def program_coords(g: BwdGeometry, pid: Any) -> tuple[Any, Any, Any]:
  """(key block, batch, key/value head) of program `pid`: the key blocks of one (batch, head) are
  neighbours, so programs running together share that head's queries in L2 (`longest_first`
  and causal: key block slowest, so every head's longest program starts first)."""
  if g.longest_first and g.causal:
    heads = g.batch * g.kv_heads
    rest = lax.rem(pid, heads)
    return lax.div(pid, heads), lax.rem(rest, g.batch), lax.div(rest, g.batch)
  return (lax.rem(pid, g.kv_blocks), lax.rem(lax.div(pid, g.kv_blocks), g.batch),
          lax.div(pid, g.kv_blocks * g.batch))


def _first_step(g: BwdGeometry, j: Any) -> Any:
  """The first query step that sees key block `j` (causal: the block's first key's row)."""
  if not g.causal:
    return 0
  return jnp.minimum(j * (BLOCK_KV // g.block_q), g.q_steps)


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


def _kernel(q_g, k_g, v_g, do_g, lse_g, delta_g, dq_g, dk_g, dv_g, k_s, v_s, q_s, do_s, lse_s,
            delta_s, dst_s, dq_s, kv_bar, q_bar, do_bar, lse_bar, delta_bar, q_free, ds_ready,
            ds_free, done, kv_free, *, g: BwdGeometry):
  pid = lax.axis_index(pallas_lib.MOSAIC_GRID_AXIS)
  wg = lax.axis_index("wg")
  items = g.items_of(pid)

  def coords(i: Any) -> tuple[Any, Any, Any, Any]:
    """(key block, batch, key/value head, first query step) of this program's `i`-th item."""
    j, b, kvh = program_coords(g, g.item(pid, i))
    return j, b, kvh, _first_step(g, j)

  @pl.when(wg < _COMPUTE_WGS)
  def _compute():
    plgpu.set_max_registers(232, action="increase")  # 2 x 128 x 232 + 128 x 40 <= 64 Ki registers
    c = g.scale * LOG2E
    d = g.head_dim
    shape = (64, g.block_q)  # (this warpgroup's keys, queries)
    my_keys = pl.ds(wg * 64, 64)
    k_w, v_w = k_s.at[my_keys], v_s.at[my_keys]

    def mm(a: Any, b_: Any, out_shape: tuple[int, int]) -> Any:
      def body(acc_ref: Any) -> Any:
        plgpu.wgmma(acc_ref, a, b_)
        return acc_ref[...]

      return pl.run_scoped(body, plgpu.ACC(out_shape, jnp.float32))

    def accumulate(acc: Any, a: Any, b_: Any) -> Any:
      def body(acc_ref: Any) -> None:
        plgpu.wgmma(acc_ref, a, b_)

      return pl.run_state(body)(plgpu.ACC.init(acc))

    def step(b: Any, h: Any, key0: Any, n: Any, it: Any, dk: Any, dv: Any, masked: bool
             ) -> tuple[Any, Any]:
      slot = lax.rem(it, g.stages)
      dslot = lax.rem(it, 2)  # the dS^T barriers of this step
      ds_tile = dst_s.at[lax.rem(it, g.ds_slots)]
      q_t, do_t = q_s.at[slot], do_s.at[slot]
      for bar in (q_bar, do_bar, lse_bar, delta_bar):
        plgpu.barrier_wait(bar.at[slot])

      def scores(st_ref: Any, dpt_ref: Any) -> tuple[Any, Any]:
        plgpu.wgmma(st_ref, k_w, q_t.transpose((1, 0)))
        plgpu.wgmma(dpt_ref, v_w, do_t.transpose((1, 0)))
        # P^T is computed while dP^T is still in the tensor cores.
        st = plgpu.wgmma_accumulator_load(st_ref, wait_n=1)
        lse = plgpu.load(lse_s.at[slot], layout=plgpu.Layout.WGMMA.reduce(0))
        pt = jnp.exp2(st * c - lax.broadcast_in_dim(lse, shape, [1]))
        if masked:
          key = key0 + plgpu.broadcasted_iota(jnp.int32, shape, 0, layout=plgpu.Layout.WGMMA)
          keep = key < g.kv_len
          if g.causal:
            query = n * g.block_q + plgpu.broadcasted_iota(jnp.int32, shape, 1,
                                                         layout=plgpu.Layout.WGMMA)
            keep = keep & (query >= key)
          pt = jnp.where(keep, pt, 0.0)
        return pt, plgpu.wgmma_accumulator_load(dpt_ref, wait_n=0)

      pt, dpt = pl.run_scoped(scores, plgpu.ACC(shape, jnp.float32),
                              plgpu.ACC(shape, jnp.float32))
      delta = plgpu.load(delta_s.at[slot], layout=plgpu.Layout.WGMMA.reduce(0))
      dst = pt * (dpt - lax.broadcast_in_dim(delta, shape, [1])) * g.scale
      pt16, ds16 = pt.astype(q_s.dtype), dst.astype(q_s.dtype)

      # dV's product is issued first and runs while dS^T goes into this warpgroup's half of
      # the shared tile (once the dQ product that last read that tile released it), so the dQ
      # product can start while dK and dV accumulate. On the H200 (bf16, CUPTI, one process)
      # issuing dV before the store rather than after took 1x16384x16x128 from 10.62 to
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

      def dq_product(cols: Any, dq_g_cols: Any) -> None:
        plgpu.barrier_wait(ds_ready.at[dslot])
        dq = mm(ds_tile.transpose((1, 0)), cols, g.dq_tile)
        plgpu.barrier_arrive(ds_free.at[dslot])
        # This warpgroup's previous dQ store must have read its staging tile.
        plgpu.wait_smem_to_gmem(0, wait_read_only=True)
        dq_s.at[wg][...] = dq
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(dq_s.at[wg], dq_g_cols, reduction_op="add")

      rows = pl.ds(n * g.block_q, g.block_q)
      if g.dq_columns_split:
        half = pl.ds(wg * (d // 2), d // 2)
        dq_product(k_s.at[:, half], dq_g.at[b, rows, h, half])
      else:
        pl.when(dslot == wg)(lambda: dq_product(k_s, dq_g.at[b, rows, h]))
      return dk, dv

    def work(i: Any, it: Any) -> Any:
      j, b, kvh, first = coords(i)
      key0 = j * BLOCK_KV + wg * 64
      plgpu.barrier_wait(kv_bar.at[0])
      plgpu.barrier_wait(kv_bar.at[1])

      def one_step(h: Any, n: Any, masked: bool, carry: Any) -> Any:
        dk, dv, it = carry
        dk, dv = step(b, h, key0, n, it, dk, dv, masked)
        return dk, dv, it + 1

      zero = plgpu.layout_cast(jnp.zeros((64, d), jnp.float32), plgpu.Layout.WGMMA)
      dk, dv, it = walk_steps(g, kvh, first, one_step, (zero, zero, it))
      # The other warpgroup's last dQ product may still read every key: meet before the key and
      # value tiles are overwritten with this warpgroup's dK and dV.
      plgpu.barrier_arrive(done)
      plgpu.barrier_wait(done)
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
    plgpu.set_max_registers(40, action="decrease")

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
        plgpu.copy_gmem_to_smem(lse_g.at[b, h, rows], lse_s.at[slot], lse_bar.at[slot])
        plgpu.copy_gmem_to_smem(do_g.at[b, rows, h], do_s.at[slot], do_bar.at[slot])
        plgpu.copy_gmem_to_smem(delta_g.at[b, h, rows], delta_s.at[slot], delta_bar.at[slot])
        if g.persistent_programs:
          pl.when((i > 0) & (it + 1 - start == kv_after))(load_kv)
        return it + 1

      return walk_steps(g, kvh, first, load, it, split_masked=False)

    _each_item(g, items, work)


def backward(q: Any, k: Any, v: Any, do: Any, lse2: Any, delta: Any, g: BwdGeometry
             ) -> tuple[Any, Any, Any]:
  """``(dq [B, Tp, H, D] float32, dk, dv [B, Sp, K, D] in the input dtype)`` for inputs already
  padded to the geometry: q, do ``[B, Tp, H, D]``, k, v ``[B, Sp, K, D]``, `lse2` the forward's
  log-sum-exp in base 2 (``lse * log2(e)``) and `delta` = rowsum(dO * O), both ``[B, H, Tp]``
  float32 (zero in padded rows)."""
  dtype = q.dtype
  d = g.head_dim
  f32 = jnp.float32
  scratch = [
      pallas_lib.wgmma_smem((BLOCK_KV, d), dtype),                          # k_s
      pallas_lib.wgmma_smem((BLOCK_KV, d), dtype),                          # v_s
      pallas_lib.wgmma_smem((g.stages, g.block_q, d), dtype),               # q_s
      pallas_lib.wgmma_smem((g.stages, g.block_q, d), dtype),               # do_s
      plgpu.SMEM((g.stages, g.block_q), f32),                # lse_s
      plgpu.SMEM((g.stages, g.block_q), f32),                # delta_s
      pallas_lib.wgmma_smem((g.ds_slots, BLOCK_KV, g.block_q), dtype),      # dst_s
      plgpu.SMEM((_COMPUTE_WGS, *g.dq_tile), f32),           # dq_s
      plgpu.Barrier(num_barriers=2),                         # kv_bar
      plgpu.Barrier(num_barriers=g.stages),                  # q_bar
      plgpu.Barrier(num_barriers=g.stages),                  # do_bar
      plgpu.Barrier(num_barriers=g.stages),                  # lse_bar
      plgpu.Barrier(num_barriers=g.stages),                  # delta_bar
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS, num_barriers=g.stages),  # q_free
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS, num_barriers=2),         # ds_ready
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS if g.dq_columns_split else 1,
                    num_barriers=2),                                    # ds_free
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS),                         # done
      plgpu.Barrier(num_arrivals=_COMPUTE_WGS),                         # kv_free
  ]
  kv_type = jax.ShapeDtypeStruct((g.batch, g.kv_len_padded, g.kv_heads, d), dtype)
  dq_ref = jax.new_ref(jnp.zeros((g.batch, g.q_len_padded, g.heads, d), f32))
  dk, dv = plgpu.kernel(
      lambda *refs: _kernel(*refs, g=g), out_type=[kv_type, kv_type], scratch_types=scratch,
      grid=(g.launched,), grid_names=(pallas_lib.MOSAIC_GRID_AXIS,),
      num_threads=_COMPUTE_WGS + 1, thread_name="wg",
      compiler_params=plgpu.CompilerParams(approx_math=True,
                                           unsafe_no_auto_barriers=not g.auto_barriers),
      kernel_name="pjrtkit_attention_bwd_mosaic")(q, k, v, do, lse2, delta, dq_ref)
  return jax.freeze(dq_ref), dk, dv
