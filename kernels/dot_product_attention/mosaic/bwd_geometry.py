"""The fused Mosaic attention backward's geometry (``mosaic_bwd``): the static shape of one call,
the choice of it per shape (`choose`), and which work item each program runs (`program_coords`,
`first_step`). Pure Python and JAX index arithmetic: nothing here needs a GPU."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax.numpy as jnp
from jax import lax

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.dot_product_attention.mosaic import work as mosaic_work
from pjrtkit.kernels.dot_product_attention.base import PaddedShape

LOG2E = math.log2(math.e)
"""``log2(e)``: without `BwdGeometry.biased_accumulators` the backward takes the log-sum-exp in
base 2, ``lse * LOG2E`` (`mosaic_bwd.lse_input`)."""
COMPUTE_WGS = 2
"""Compute warpgroups per program (a third only moves data)."""
BLOCK_QS = (64, 128)
"""Query rows per step the kernel takes (`BwdGeometry.block_q`)."""
BLOCK_KV = COMPUTE_WGS * 64
"""Keys per program: 64 per compute warpgroup."""
LONGEST_FIRST_MAX_WAVES = 8
"""Causal launches of at most this many programs per SM start their longest programs first
(`BwdGeometry.longest_first`). On the H200 (bf16, backward kernel, CUPTI medians, one process):
2x3072x16x64 with 4 key/value heads (192 programs, 1.5 per SM) 0.424 -> 0.382 ms; 4x4096x32x128
with 8 (1024, 7.8 per SM) 3.53 -> 3.25 ms; 1x16384x16x128 (2048, 15.5 per SM) 5.31 -> 5.26 ms
(noise); 32x2048x16x64 (8192, 62 per SM) 1.84 -> 2.46 ms, where 132 programs running together
read 132 heads' queries and lose L2."""


@dataclasses.dataclass(frozen=True)
class BwdGeometry(PaddedShape):
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
  more spills, and each item's key/value load waits on the last item's stores.
  `lag_dq` (2 dS^T slots, one program per item): each step's dQ product runs one step late, at
  the end of the next step (the last one's after the loop), and compute warpgroup 1 starts its
  first step once warpgroup 0's first scores are in; with no step waiting for the other
  warpgroup's dS^T of the same step, the two stay about half a step apart, one's exponentials
  and elementwise work running beside the other's products (`choose` takes it at head_dim 128).
  On the H200 (bf16, backward kernel + dQ cast, CUPTI medians, one process,
  `tools/kernels_gpu/bwd_variant_bench.py`, `docs/results/kernels/mosaic_bwd_variants_h200.txt`)
  4x4096x32x128 with 8 key/value heads went from 5.33 to 5.10 ms, its causal form from 2.94 to
  2.87, 16x1024x32x128 from 1.535 to 1.509; once `loop_descriptors` removed the spills it had
  caused, also 1x16384x16x128 10.48 -> 9.75 ms, 2x6144x16x128 2.74 -> 2.60, 3x2560x12x128 0.616
  -> 0.579. At head_dim 64 (one warpgroup's dQ product per step) 32x2048x16x64 went from 3.02 to
  3.15 ms with it.
  `loop_descriptors`: each step reads a zero from shared memory and offsets the key and value
  tiles it multiplies by it (and the keys it masks), so the compiler builds their wgmma
  descriptors inside the step loop rather than hoisting them out of it, where the 64-bit
  descriptors of every 16-column slice of both tiles would be held in registers across the loop
  (`choose` takes it at head_dim 128). With it ptxas 13.0 spills nothing at head_dim 128 where it
  spilled 60-216 bytes (2x6144x16x128, 3x2560x12x128, 16x1024x32x128, 4x4096x32x128 with 8
  key/value heads and its causal form; 1x16384x16x128 causal with the lag and biased
  accumulators 160); on the H200 (bf16, backward kernel + dQ cast, CUPTI, one process)
  16x1024x32x128 went from 1.468 to 1.400 ms, 4x4096x32x128 kv8 from 5.166 to 4.867, its causal
  form from 2.977 to 2.845, and 1x16384x16x128 causal (with the lag and biased accumulators) from
  4.87 to 4.79. At head_dim 64 it spilled more with it (32x2048x16x64 causal 52 -> 80 bytes).
  `biased_accumulators`: the S^T and dP^T products accumulate onto ``-lse / scale`` and
  ``-delta`` (the kernel is given ``lse / scale``, `mosaic_bwd.lse_input`) instead of zero, so
  P^T is ``exp2(acc c)`` and dS^T ``P^T acc scale``: the two subtractions of a broadcast row per
  element move from the elementwise work between the products into the tensor cores'
  accumulate (`choose` takes it at head_dim 128). On
  the H200 (as above, with the lag) 4x4096x32x128 causal with 8 key/value heads went from 2.89 to
  2.78 ms; 16x1024x32x128, 4x4096x32x128 kv8, 2x6144x16x128 and 3x2560x12x128 moved by 0.4 % or
  less; 1x16384x16x128 went from 9.75 to 9.94 ms (1.9 %; the rounds overlap: 552.8-571.9 and
  551.2-564.2 TFLOP/s) and, without `loop_descriptors`, its causal form from 4.77 to 4.87; at
  head_dim 64 32x2048x16x64 went from 3.03 to 3.18 ms with it.
  `fixed_point_dq`: dQ is summed in int32 fixed point instead of float32, so the sum is the same
  in any order of the reduce-adds (integer addition is associative) and the gradient bitwise
  the same from run to run: each step's dQ tile is multiplied by a per-query-row power of two
  (`fixed_point.row_factors`, loaded with the step's dO into a ring of `factor_slots` rows)
  and rounded to int32 before its TMA reduce-add; `fixed_point.decode` divides the sum back.
  Opt-in (`choose` takes it when asked): it has not yet run on an H200."""

  scale: float
  causal: bool
  stages: int = 2
  block_q: int = 64
  ds_slots: int = 2
  longest_first: bool = False
  persistent_programs: int = 0
  lag_dq: bool = False
  loop_descriptors: bool = False
  biased_accumulators: bool = False
  fixed_point_dq: bool = False

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
    if self.lag_dq and (self.ds_slots != 2 or self.persistent_programs):
      raise ValueError(f"lag_dq needs ds_slots 2 and persistent_programs 0, got "
                       f"{self.ds_slots} and {self.persistent_programs}")
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
    return self.group * (self.q_steps - first_step(self, j))

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
             + COMPUTE_WGS * self.dq_tile[0] * self.dq_tile[1] * 4  # dQ staging, 32-bit
             + (self.factor_slots * self.block_q * 4 if self.fixed_point_dq else 0))
    return tiles + 4096

  @property
  def factor_slots(self) -> int:
    """Rows of dQ factors in flight with `fixed_point_dq`: a step's row is read by its dQ
    product, at the latest at the end of the next step (`lag_dq`), and the producer loads step
    t's row once both compute warpgroups released step ``t - stages``'s queries, so after step
    ``t - stages - 1`` ended: ``stages + 2`` rows never overwrite one still to be read."""
    return self.stages + 2

  @property
  def paired_loads(self) -> bool:
    """Whether a query step's four loads complete two barriers instead of four: Q and its
    log-sum-exp ``q_bar`` (two arrivals), dO and delta ``do_bar``; a compute warpgroup waits for
    the first pair before issuing S^T's product and for the second before dP^T's. Taken with
    `lag_dq`. On the H200 (bf16, backward kernel + dQ cast, CUPTI medians, one process,
    `tools/kernels_gpu/bwd_variant_bench.py`) 16x1024x32x128 went from 1.508 to 1.465 ms and from
    1.514 to 1.469 in two runs; 4x4096x32x128 with 8 key/value heads and its causal form moved
    within their spread (causal: 2.970 -> 2.948 and 2.896 -> 2.960). Without the lag it was
    slower, 3x2560x12x128 0.624 -> 0.645 ms."""
    return self.lag_dq

  @property
  def compute_registers(self) -> int:
    """Registers per thread each compute warpgroup takes with ``setmaxnreg`` (the producer keeps
    `producer_registers`; ``setmaxnreg`` only moves registers within the launch's 384 threads x
    168, so 2 x 128 x compute + 128 x producer <= 64512): 240 for causal calls at head_dim 128 of
    one query head per key/value head, else 232. On the H200 (bf16, backward kernel + dQ cast,
    CUPTI medians, one process) 1x16384x16x128 causal went from 5.10-5.20 to 4.82-4.88 ms in
    three runs (ptxas spill stores 164 -> 124 bytes); at the other head_dim-128 shapes measured
    240 moved within their spread (4x4096x32x128 with 8 key/value heads, 1x16384x16x128) or was
    slower (2x6144x16x128 2.76 -> 2.90 ms). Those runs predate `loop_descriptors`, the lag and
    `biased_accumulators` at that shape, with which its kernel spills nothing; 232 has not been
    measured there since."""
    return 240 if self.causal and self.group == 1 and self.head_dim == 128 else 232

  @property
  def producer_registers(self) -> int:
    """Registers per thread the producer warpgroup keeps (`compute_registers`)."""
    return 24 if self.compute_registers > 232 else 40

  @property
  def auto_barriers(self) -> bool:
    """Whether Pallas adds its warpgroup barriers around this kernel's shared-memory stores and
    before its TMA loads (``CompilerParams.unsafe_no_auto_barriers`` off). The kernel is safe
    without them: apart from the `loop_descriptors` zero (every compute thread stores the same 0
    there before reading it), no thread both reads and writes a shared region (dS^T, dQ, and at
    the end dK and dV in the key/value tiles, are written by threads and read by wgmma or TMA;
    Q, dO, lse and delta are written by TMA and read by threads and wgmma); the dS^T slot is
    reused only after its ``ds_free`` barrier, the dQ staging tile only after ``wait_smem_to_gmem`` (which
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
           block_qs: tuple[int, ...] = (64,), sms: int | None = None,
           fixed_point_dq: bool = False) -> BwdGeometry | None:
  """The first geometry that fits in shared memory: `block_qs` in order, then two dS^T tiles
  before one, then the most query steps in flight up to `max_stages` (at least 2); causal
  launches of at most `LONGEST_FIRST_MAX_WAVES` programs per SM take `longest_first` (`sms`: the
  SM count; when None, the default device's where it is a GPU, else `pallas.DEFAULT_SMS`, so a
  program exported for CUDA from a CPU host orders its programs as on an H200);
  at head_dim 128 (a multiple of 128: dQ split by columns) `loop_descriptors`,
  `biased_accumulators` and, with two dS^T slots, `lag_dq`; `fixed_point_dq` as asked (its
  factor rows counted in the shared memory). None if none fits."""
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
                        ds_slots=ds_slots, fixed_point_dq=fixed_point_dq)
        if g.fits(itemsize):
          return dataclasses.replace(
              g, longest_first=causal and g.programs <= LONGEST_FIRST_MAX_WAVES * sms,
              lag_dq=ds_slots == 2 and g.dq_columns_split,
              loop_descriptors=g.dq_columns_split,
              biased_accumulators=g.dq_columns_split)
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


def first_step(g: BwdGeometry, j: Any) -> Any:
  """The first query step that sees key block `j` (causal: the block's first key's row)."""
  if not g.causal:
    return 0
  return jnp.minimum(j * (BLOCK_KV // g.block_q), g.q_steps)
