"""The compiled "mosaic" attention backward (`mosaic_bwd`), checked without a GPU: its geometry
(shared memory, blocks, stages, the longest-first and persistent launches and their deal of the
work items) and lowering for CUDA (``jax.export(..., platforms=["cuda"])`` runs Pallas's Mosaic GPU
lowering on the CPU; not barrier ordering or phase errors, which only show when they run). Its
numerics are checked on the H200 (tools/kernels_gpu: dot_product_attention_test's GPU tests).
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit.kernels.core import pallas as pallas_lib  # noqa: E402
from pjrtkit.kernels.dot_product_attention import base  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import bwd as mosaic_bwd  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import work as mosaic_work  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import MosaicAttention  # noqa: E402


def _choose(b, t, h, d, s, k, causal, max_stages=4, block_qs=(64,)):
  return mosaic_bwd.choose(batch=b, q_len=t, heads=h, kv_heads=k, kv_len=s, head_dim=d,
                           scale=1 / math.sqrt(d), causal=causal, itemsize=2,
                           max_stages=max_stages, block_qs=block_qs)


def _assert_backward_lowers_for_cuda(g):
  """`mosaic_bwd.backward` at geometry `g` lowers for CUDA (bfloat16 inputs padded to it), with
  dQ in float32 and dK, dV in the input dtype."""
  b, h, k, d, tp, sp = g.batch, g.heads, g.kv_heads, g.head_dim, g.q_len_padded, g.kv_len_padded
  bf16, f32 = jnp.bfloat16, jnp.float32
  q, kv = jax.ShapeDtypeStruct((b, tp, h, d), bf16), jax.ShapeDtypeStruct((b, sp, k, d), bf16)
  rows = jax.ShapeDtypeStruct((b, h, tp), f32)
  exported = jax.export.export(jax.jit(lambda *a: mosaic_bwd.backward(*a, g)),
                               platforms=["cuda"])(q, kv, kv, q, rows, rows)
  assert [(a.shape, a.dtype) for a in exported.out_avals] == [
      ((b, tp, h, d), f32), ((b, sp, k, d), bf16), ((b, sp, k, d), bf16)]
  return exported.mlir_module()


def test_backward_geometry_fits_hopper_shared_memory():
  spec = base.make_spec(*[jax.ShapeDtypeStruct((32, 2048, 16, 64), jnp.bfloat16)] * 3, None,
                        None, False, None)
  max_stages = MosaicAttention().phase_config(spec, "bwd").stages
  g = _choose(32, 2048, 16, 64, 2048, 16, False, max_stages=max_stages)
  assert (g.block_q, g.stages, g.ds_slots, g.dq_columns_split) == (64, 4, 2, False)
  assert (g.q_steps, g.kv_blocks, g.programs, g.group) == (32, 16, 8192, 1)
  # Keys, values 2 x 16 KiB; Q, dO 4 stages x 2 x 8 KiB; lse, delta 2 KiB; dS^T 2 x 16 KiB;
  # dQ staging 2 x 16 KiB; 4 KiB of barriers and alignment.
  assert g.smem_bytes(2) == 32768 + 65536 + 2048 + 32768 + 32768 + 4096
  # Nsight Compute on the H200 (docs/results/kernels/ncu_h200_fused_bwd_summary.txt): this kernel
  # took 166,104 bytes of dynamic shared memory, and A6's below 198,792: the estimate covers both
  # with under 4 KiB to spare.
  assert 166104 <= g.smem_bytes(2) < 166104 + 4096
  wide = _choose(1, 16384, 16, 128, 16384, 16, False)
  assert (wide.block_q, wide.stages, wide.ds_slots, wide.dq_columns_split) == (64, 2, 2, True)
  assert wide.dq_tile == (64, 64) and wide.fits(2)
  assert 198792 <= wide.smem_bytes(2) < 198792 + 4096
  # With loop_descriptors (taken here) the kernel adds one int32 scratch, 1 KiB with alignment
  # (199,832 bytes lowered): still within the estimate's 4 KiB of barriers and alignment.
  assert wide.loop_descriptors and 198792 + 1024 < wide.smem_bytes(2)
  causal = _choose(2, 197, 4, 64, 131, 2, True, block_qs=(128, 64))
  assert (causal.block_q, causal.stages, causal.ds_slots) == (128, 2, 1)
  assert (causal.q_len_padded, causal.kv_len_padded, causal.mask_kv_len) == (256, 256, True)
  assert causal.programs == 2 * 2 * 2
  assert _choose(1, 64, 1, 512, 64, 1, False) is None  # No tile of head_dim 512 fits.
  with pytest.raises(ValueError, match=r"heads \(6\) must be a multiple of kv_heads \(4\)"):
    mosaic_bwd.BwdGeometry(1, 6, 4, 64, 64, 128, 64, 0.125, False)


def test_backward_geometry_refuses_bad_values():
  with pytest.raises(ValueError, match=r"block_q must be one of \(64, 128\), got 32"):
    mosaic_bwd.BwdGeometry(1, 1, 1, 64, 64, 128, 64, 0.125, False, block_q=32)
  with pytest.raises(ValueError, match="padded lengths must be multiples of 128 .queries. and "
                                       "128 .keys., got 64 and 128"):
    mosaic_bwd.BwdGeometry(1, 1, 1, 64, 64, 128, 64, 0.125, False, block_q=128)
  with pytest.raises(ValueError, match="stages must be at least 2, got 1"):
    mosaic_bwd.BwdGeometry(1, 1, 1, 64, 64, 128, 64, 0.125, False, stages=1)
  with pytest.raises(ValueError, match="ds_slots must be 1 or 2, got 3"):
    mosaic_bwd.BwdGeometry(1, 1, 1, 64, 64, 128, 64, 0.125, False, ds_slots=3)
  with pytest.raises(ValueError, match="lag_dq needs ds_slots 2 and persistent_programs 0, got 1 "
                                       "and 0"):
    mosaic_bwd.BwdGeometry(1, 1, 1, 64, 128, 128, 128, 0.125, False, ds_slots=1, lag_dq=True)
  with pytest.raises(ValueError, match="lag_dq needs ds_slots 2 and persistent_programs 0, got 2 "
                                       "and 1"):
    mosaic_bwd.BwdGeometry(1, 1, 1, 64, 128, 128, 128, 0.125, False, persistent_programs=1,
                           lag_dq=True)


@pytest.mark.parametrize("shape,causal,lag", [
    ((16, 1024, 32, 128, 1024, 32), False, True),    # A7: one head per kv head, 16 query steps
    ((4, 4096, 32, 128, 4096, 8), False, True),      # A8: 4 query heads per key/value head
    ((4, 4096, 32, 128, 4096, 8), True, True),       # A10
    ((1, 16384, 16, 128, 16384, 16), False, True),   # A6: one head, 256 steps
    ((1, 16384, 16, 128, 16384, 16), True, True),    # A9
    ((3, 2560, 12, 128, 2560, 12), False, True),     # H4: 40 steps
    ((2, 1088, 16, 128, 1088, 16), False, True),     # 17 steps
    ((2, 1000, 16, 128, 1000, 16), True, True),      # 16 steps (padded to 1024)
    ((32, 2048, 16, 64, 2048, 4), False, False),     # head_dim 64: one warpgroup's dQ product
    ((32, 2048, 16, 64, 2048, 16), True, False),
    # dot_product_attention_test's GPU cases at head_dim 128 with one head per key/value head
    ((1, 128, 2, 128, 384, 2), True, True),          # programs with no query step
    ((2, 1000, 4, 128, 1000, 4), False, True),       # keys masked
    ((1, 1100, 2, 128, 1100, 2), True, True),        # 18 steps
])
def test_lag_and_biased_accumulators_at_head_dim_128(shape, causal, lag):
  """`choose` takes `BwdGeometry.lag_dq` (and with it `paired_loads`) and
  `biased_accumulators` at every head_dim-128 shape (dQ split by columns, two dS^T slots), and
  neither at head_dim 64."""
  b, t, h, d, s, k = shape
  g = _choose(b, t, h, d, s, k, causal, block_qs=(128, 64) if causal else (64,))
  assert g.ds_slots == 2 or d == 64
  assert g.lag_dq == lag
  assert g.paired_loads == lag
  assert g.biased_accumulators == (d == 128)


@pytest.mark.parametrize("biased", [False, True])
def test_lse_input_gives_the_probabilities_the_kernel_computes(biased):
  """What `lse_input` passes, used as the kernel uses it (with biased accumulators S^T's
  accumulator starts at its negation and P^T = exp2(acc c); else P^T = exp2(S^T c - lse_in)),
  gives softmax's probabilities exp(S^T scale - lse), within float32 rounding."""
  g = dataclasses.replace(_choose(1, 256, 1, 128, 256, 1, False), biased_accumulators=biased)
  rng = np.random.default_rng(3)
  s = rng.normal(size=(64, 64)).astype(np.float32) * 12  # keys x queries, unscaled scores
  lse = np.log(np.exp(s * g.scale).sum(axis=0)).astype(np.float32)  # per query
  lse_in = np.asarray(mosaic_bwd.lse_input(jnp.asarray(lse), g))
  c = np.float32(g.scale * mosaic_bwd.LOG2E)
  if biased:
    p = np.exp2((s - lse_in[None, :]) * c)
  else:
    p = np.exp2(s * c - lse_in[None, :])
  want = np.exp(s * g.scale - lse[None, :])
  np.testing.assert_allclose(p, want, rtol=2e-5, atol=1e-7)
  np.testing.assert_allclose(p.sum(axis=0), 1.0, rtol=2e-5)


@pytest.mark.parametrize("d,causal,ds_slots", [(128, True, 2), (128, False, 2), (128, False, 1),
                                              (64, True, 2)])
def test_backward_lowers_with_and_without_biased_accumulators(d, causal, ds_slots):
  """Both forms lower (with and without the lag, which needs two dS^T slots; at head_dim 64,
  where `choose` never takes it, too), a causal call with keys masked past the length included,
  and they are different kernels."""
  g = dataclasses.replace(_choose(2, 300, 4, d, 600, 2, causal), ds_slots=ds_slots,
                          lag_dq=ds_slots == 2 and d == 128)
  without, with_ = (
      _assert_backward_lowers_for_cuda(dataclasses.replace(g, biased_accumulators=on))
      for on in (False, True))
  assert without != with_


@pytest.mark.parametrize("shape,causal,registers", [
    ((1, 16384, 16, 128, 16384, 16), True, 240),     # A9: causal, one head per kv head
    ((1, 1100, 2, 128, 1100, 2), True, 240),
    ((1, 128, 2, 128, 384, 2), True, 240),           # with programs of no query step
    ((1, 16384, 16, 128, 16384, 16), False, 232),    # A6: not causal
    ((2, 6144, 16, 128, 6144, 16), False, 232),      # H2
    ((4, 4096, 32, 128, 4096, 8), True, 232),        # A10: grouped
    ((16, 1024, 32, 128, 1024, 32), False, 232),     # A7
    ((32, 2048, 16, 64, 2048, 16), True, 232),       # head_dim 64
])
def test_compute_warpgroups_take_240_registers_for_causal_one_head_per_kv_head_at_128(
    shape, causal, registers):
  b, t, h, d, s, k = shape
  g = _choose(b, t, h, d, s, k, causal, block_qs=(128, 64) if causal else (64,))
  assert (g.compute_registers, g.producer_registers) == (registers, 24 if registers > 232 else 40)
  # setmaxnreg only moves registers within the block's launch allocation (384 threads x 168).
  assert 128 * (2 * g.compute_registers + g.producer_registers) <= 3 * 128 * 168


def test_causal_launches_of_few_waves_start_their_longest_programs_first():
  kw = dict(q_len=3072, heads=16, kv_heads=4, kv_len=3072, head_dim=64, scale=0.125,
            itemsize=2, max_stages=4, block_qs=(128, 64))
  # 2x3072x16x64 kv4: 24 key blocks x 2 x 4 = 192 programs, 1.5 per SM of 132.
  g = mosaic_bwd.choose(batch=2, causal=True, sms=132, **kw)
  assert (g.programs, g.longest_first) == (192, True)
  assert not mosaic_bwd.choose(batch=2, causal=False, sms=132, **kw).longest_first
  # 8 programs per SM at most: 1056 on 132 SMs; 44 batches make 44 x 96 = 4224.
  assert not mosaic_bwd.choose(batch=44, causal=True, sms=132, **kw).longest_first
  assert mosaic_bwd.choose(batch=11, causal=True, sms=132, **kw).programs == 1056
  assert mosaic_bwd.choose(batch=11, causal=True, sms=132, **kw).longest_first
  assert not mosaic_bwd.choose(batch=12, causal=True, sms=132, **kw).longest_first
  assert mosaic_bwd.LONGEST_FIRST_MAX_WAVES == 8
  # Traced on a CPU device, the count is an H200's, not the CPU's.
  assert pallas_lib.gpu_sm_count() == pallas_lib.DEFAULT_SMS == 132
  assert mosaic_bwd.choose(batch=11, causal=True, **kw).longest_first
  with pytest.raises(ValueError, match="sms must be at least 1, got 0"):
    mosaic_bwd.choose(batch=2, causal=True, sms=0, **kw)


@pytest.mark.parametrize("longest_first", [False, True])
def test_program_coords_cover_every_block_once(longest_first):
  g = mosaic_bwd.BwdGeometry(batch=2, heads=6, kv_heads=3, q_len_padded=512, kv_len=512,
                             kv_len_padded=512, head_dim=64, scale=0.125, causal=True,
                             longest_first=longest_first)
  coords = [tuple(int(x) for x in mosaic_bwd.program_coords(g, pid)) for pid in range(g.programs)]
  assert sorted(coords) == [(j, b, h) for j in range(4) for b in range(2) for h in range(3)]
  if longest_first:
    # Every (batch, head)'s first key block (the longest causal program) starts first.
    assert [c[0] for c in coords] == [j for j in range(4) for _ in range(6)]
    assert coords[:3] == [(0, 0, 0), (0, 1, 0), (0, 0, 1)]
  else:
    assert coords[:5] == [(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0), (0, 1, 0)]
  # Without a causal mask every program has the same work: the order stays.
  plain = dataclasses.replace(g, causal=False)
  assert mosaic_bwd.program_coords(plain, 1)[0] == 1


def test_grouped_non_causal_programs_walk_heads_and_steps_as_one_loop_in_nested_order():
  g = mosaic_bwd.BwdGeometry(batch=1, heads=6, kv_heads=2, q_len_padded=192, kv_len=128,
                             kv_len_padded=128, head_dim=64, scale=0.125, causal=False)
  assert g.flat_steps and (g.group, g.q_steps) == (3, 3)
  steps = [tuple(int(x) for x in mosaic_bwd.flat_head_step(g, 1, t))
           for t in range(g.group * g.q_steps)]
  assert steps == [(h, n) for h in (3, 4, 5) for n in range(3)]
  # One query head per key/value head, or a causal mask: heads around steps, as before.
  assert not dataclasses.replace(g, heads=2).flat_steps
  assert not dataclasses.replace(g, causal=True).flat_steps
  # The lowering case of test_forward_and_fused_backward_lower_for_cuda that takes this loop.
  lowered = _choose(2, 300, 8, 128, 300, 2, False)
  assert lowered.flat_steps and lowered.mask_kv_len and lowered.dq_columns_split


@pytest.mark.parametrize("heads,kv_len,causal,j,q_len,block_q", [
    (6, 128, False, 0, 320, 64),   # 3 query heads per key/value head: one flat loop
    (6, 100, False, 0, 320, 64),   # flat, every step masks the keys past 100
    (4, 256, True, 1, 320, 64),    # causal, grouped: two phases, 2 heads x 2 masked, then 2 x 1
    (6, 256, True, 1, 192, 64),    # causal, grouped: 3 heads x 1 masked step, no unmasked phase
    (6, 256, True, 1, 384, 128),   # causal, grouped, 128-row steps: 1 masked step a head, then 1
    (4, 256, True, 1, 128, 64),    # causal, grouped, the block past every query: no step at all
    (4, 200, True, 0, 320, 64),    # causal, grouped, keys past 200 masked: heads around steps
    (2, 100, True, 0, 320, 64),    # causal, one head per group, keys past 100 masked everywhere
    (2, 256, True, 1, 320, 64),    # causal, one head per group: the diagonal, then the rest
    (2, 128, False, 0, 320, 64),   # one head per group, no mask
])
def test_producer_and_compute_warpgroups_walk_the_same_steps(heads, kv_len, causal, j, q_len,
                                                             block_q):
  g = mosaic_bwd.BwdGeometry(batch=1, heads=heads, kv_heads=2, q_len_padded=q_len, kv_len=kv_len,
                             kv_len_padded=256, head_dim=64, scale=0.125, causal=causal,
                             block_q=block_q)
  kvh, first = 1, int(mosaic_bwd.first_step(g, j))
  room = max(g.group * g.q_steps, 1)

  def walk(split_masked):
    def body(h, n, masked, carry):
      rec, i = carry
      flag = -1 if masked is None else int(masked)
      return rec.at[i].set(jnp.stack([h, n, jnp.int32(flag)]).astype(jnp.int32)), i + 1

    # `first` reaches the walk traced, as in the kernel (loop bounds known only at run time).
    rec, count = jax.jit(lambda first: mosaic_bwd.walk_steps(
        g, kvh, first, body, (jnp.full((room, 3), -9, jnp.int32), 0),
        split_masked=split_masked))(jnp.int32(first))
    return [tuple(r) for r in rec[:int(count)].tolist()]

  diagonal = first + mosaic_bwd.BLOCK_KV // g.block_q
  heads_of_kvh = range(kvh * g.group, (kvh + 1) * g.group)
  want = [(h, n, int(g.mask_kv_len or (causal and n < diagonal)))
          for h in heads_of_kvh for n in range(first, g.q_steps)]
  assert g.phased_steps == (causal and g.group > 1 and kv_len == 256)
  if g.phased_steps:
    # Every head's masked diagonal steps, heads slowest, then every head's unmasked steps.
    want = sorted(want, key=lambda s: (-s[2], s[0], s[1]))
  assert len(want) == g.item_steps(j) and bool(want) == (first < g.q_steps)
  assert walk(True) == want
  assert walk(False) == [(h, n, -1) for h, n, _ in want]


@pytest.mark.parametrize("b,t,h,k,d,causal,programs,spread", [
    (16, 1024, 32, 32, 128, False, 132, 1.032),  # A7's shape: 4096 equal items, 31 or 32 each
    (4, 4096, 32, 8, 128, True, 132, 1.0005),    # A10's: 1024 causal items of 8 to 256 steps
    (2, 3072, 16, 4, 64, True, 132, 1.31),       # H3's: 192 items on 132 programs, 1 or 2 each
    (1, 300, 4, 2, 64, True, 3, 1.0),            # odd length, 6 causal items
    (2, 256, 2, 2, 64, False, 8, 1.0),           # as many programs as items
])
def test_persistent_backward_runs_every_item_once_with_even_loads(b, t, h, k, d, causal, programs,
                                                                  spread):
  """`BwdGeometry.persistent_programs` (`items_of`, `item`, `mosaic_work.dealt_item`): every
  (key block, batch, key/value head) exactly once, and each program's query steps (plus one per
  item, for its keys' load and store) within `spread` x the mean (causal items, of unequal
  lengths, dealt longest first, every other round reversed)."""
  g = dataclasses.replace(mosaic_bwd.choose(batch=b, q_len=t, heads=h, kv_heads=k, kv_len=t,
                                            head_dim=d, scale=0.125, causal=causal, itemsize=2,
                                            max_stages=4, sms=132,
                                            block_qs=(128, 64) if causal else (64,)),
                          longest_first=causal, persistent_programs=programs, lag_dq=False)
  assert g.launched == programs
  seen, loads = [], []
  for pid in range(programs):
    count = g.items_of(pid)
    assert count == int(mosaic_work.dealt_count(jnp.int32(pid), g.programs, programs, causal))
    load = 0
    for i in range(count):
      item = g.item(pid, i)
      assert item == int(mosaic_work.dealt_item(jnp.int32(pid), jnp.int32(i), programs, causal))
      j = int(mosaic_bwd.program_coords(g, item)[0])
      seen.append(tuple(int(x) for x in mosaic_bwd.program_coords(g, item)))
      load += int(g.item_steps(j)) + 1
    loads.append(load)
  assert sorted(seen) == [(j, bi, kh) for j in range(g.kv_blocks) for bi in range(b)
                          for kh in range(k)]
  assert max(loads) <= spread * sum(loads) / programs
  # One program per item is the launch without persistence.
  plain = dataclasses.replace(g, persistent_programs=0)
  assert (plain.launched, plain.items_of(3), plain.item(3, 0)) == (g.programs, 1, 3)


def test_persistent_backward_refuses_bad_values():
  kw = dict(batch=1, heads=2, kv_heads=2, q_len_padded=256, kv_len=256, kv_len_padded=256,
            head_dim=64, scale=0.125)
  with pytest.raises(ValueError, match=r"persistent_programs must be in \[0, 4\] \(the work "
                                       r"items\), got 5"):
    mosaic_bwd.BwdGeometry(causal=False, persistent_programs=5, **kw)
  with pytest.raises(ValueError, match="persistent_programs must be in"):
    mosaic_bwd.BwdGeometry(causal=False, persistent_programs=-1, **kw)
  with pytest.raises(ValueError, match="persistent_programs needs longest_first with causal"):
    mosaic_bwd.BwdGeometry(causal=True, persistent_programs=2, **kw)
  assert mosaic_bwd.BwdGeometry(causal=True, persistent_programs=2, longest_first=True,
                                **kw).launched == 2
  # choose leaves it off: slower at every shape the H200 measured.
  assert _choose(16, 1024, 32, 128, 1024, 32, False).persistent_programs == 0


@pytest.mark.parametrize("d,causal,programs,kv_len", [
    (128, False, 5, 600), (128, True, 5, 600), (64, True, 7, 600),
    (128, True, 5, 640),  # no key mask: `phased_steps`, with each item's first step at run time
])
def test_persistent_backward_lowers_for_cuda(d, causal, programs, kv_len):
  """The persistent backward at both head dims, causal with more keys than queries (items with
  no query step: their keys and values load at once, their dK and dV are zero)."""
  g = dataclasses.replace(
      mosaic_bwd.choose(batch=2, q_len=300, heads=4, kv_heads=2, kv_len=kv_len, head_dim=d,
                        scale=0.125, causal=causal, itemsize=2, max_stages=4,
                        block_qs=(128, 64) if causal else (64,), sms=132),
      persistent_programs=programs, lag_dq=False)
  assert g.programs == 20 and g.longest_first == causal
  assert g.phased_steps == (kv_len == 640)
  _assert_backward_lowers_for_cuda(g)


@pytest.mark.parametrize("shape,causal", [
    ((32, 2048, 16, 64, 2048, 16), False),   # the comparison's A4 shape
    ((2, 197, 4, 64, 131, 2), True),         # odd lengths, grouped heads, 128-row steps
    ((2, 256, 4, 128, 384, 4), False),       # head_dim 128: dQ split by columns
    ((1, 1000, 4, 64, 300, 1), True),        # multi-query, more queries than keys
    ((1, 256, 2, 64, 256, 2), True),         # causal, no key padding: masked then clean steps
    ((1, 256, 4, 128, 256, 2), True),        # causal, head_dim 128, grouped: two phases, split dQ
    ((1, 256, 4, 64, 256, 2), True),         # causal, head_dim 64, grouped: two phases
    ((2, 300, 8, 128, 300, 2), False),       # grouped heads, one loop of steps, keys masked
    ((1, 256, 2, 128, 256, 2), True),        # causal, head_dim 128, one head: 240 registers
    ((2, 300, 8, 80, 300, 2), False),        # head_dim 80: the kernels at 128, zero-padded
    ((1, 256, 4, 40, 200, 4), True),         # head_dim 40: the kernels at 64, zero-padded
    ((8, 1, 32, 128, 1000, 8), False),       # decode: 4 query heads folded into rows per kv head
    ((2, 24, 16, 80, 700, 2), False),        # folded (192 rows) and zero-padded
])
def test_forward_and_fused_backward_lower_for_cuda(shape, causal):
  b, t, h, d, s, k = shape
  if shape == (1, 256, 2, 128, 256, 2):
    g = _choose(b, t, h, d, s, k, causal, block_qs=(128, 64))
    assert (g.compute_registers, g.paired_loads) == (240, True)
  impl = MosaicAttention()
  q = jax.ShapeDtypeStruct((b, t, h, d), jnp.bfloat16)
  kv = jax.ShapeDtypeStruct((b, s, k, d), jnp.bfloat16)

  def fwd_bwd(q, k, v, dout):
    spec = base.make_spec(q, k, v, None, None, causal, None)
    out, residuals = impl.forward((q, k, v, None, None), spec, impl.phase_config(spec, "fwd"))
    return (out,) + impl.backward(residuals, dout, spec, impl.phase_config(spec, "bwd"))[:3]

  exported = jax.export.export(jax.jit(fwd_bwd), platforms=["cuda"])(q, kv, kv, q)
  assert [(a.shape, a.dtype) for a in exported.out_avals] == [
      ((b, t, h, d), jnp.bfloat16), ((b, t, h, d), jnp.bfloat16),
      ((b, s, k, d), jnp.bfloat16), ((b, s, k, d), jnp.bfloat16)]
  # Two Mosaic GPU kernels: the persistent forward and the fused backward.
  assert re.findall(r"custom_call @(\w+)", exported.mlir_module()).count("mosaic_gpu_v2") == 2


def _gradient_module() -> str:
  """The MLIR of MosaicAttention's forward and backward at 2x256x4x64 bfloat16 exported for
  CUDA, traced now (so under the environment the test set)."""
  impl = MosaicAttention()
  q = jax.ShapeDtypeStruct((2, 256, 4, 64), jnp.bfloat16)

  def grads(q, k, v, dout):
    spec = base.make_spec(q, k, v, None, None, False, None)
    _, residuals = impl.forward((q, k, v, None, None), spec, impl.phase_config(spec, "fwd"))
    return impl.backward(residuals, dout, spec, impl.phase_config(spec, "bwd"))[:3]

  return jax.export.export(jax.jit(grads), platforms=["cuda"])(q, q, q, q).mlir_module()


@pytest.mark.parametrize("flags,kernels", [
    ("--xla_gpu_deterministic_ops=true", 3), ("--xla_gpu_exclude_nondeterministic_ops", 3),
    ("--xla_gpu_deterministic_ops=false", 2), ("", 2)])
def test_deterministic_ops_take_the_split_backward(monkeypatch, flags, kernels):
  """With XLA_FLAGS asking for determinism the backward is the dQ and dK/dV kernels (no atomic
  adds): three Mosaic GPU kernels with the forward instead of two."""
  monkeypatch.setenv("XLA_FLAGS", flags)
  monkeypatch.delenv("PJRTKIT_ATTENTION_DQ_SUM", raising=False)
  module = _gradient_module()
  assert re.findall(r"custom_call @(\w+)", module).count("mosaic_gpu_v2") == kernels


@pytest.mark.parametrize("d,causal", [(64, False), (64, True), (128, False), (128, True)])
def test_fixed_point_dq_backward_lowers_for_cuda(d, causal):
  """`BwdGeometry.fixed_point_dq` (dQ summed in int32, `fixed_point`) at both head dims, one
  warpgroup's dQ product per step and the lagged, column-split one, causal with items that have
  no query step; its factor rows are counted in shared memory and change nothing else `choose`
  picks."""
  g = _choose(2, 300, 4, d, 600, 2, causal)
  fixed = mosaic_bwd.choose(batch=2, q_len=300, heads=4, kv_heads=2, kv_len=600, head_dim=d,
                            scale=1 / math.sqrt(d), causal=causal, itemsize=2, max_stages=4,
                            fixed_point_dq=True)
  assert fixed == dataclasses.replace(g, fixed_point_dq=True)
  assert fixed.factor_slots == g.stages + 2
  assert fixed.smem_bytes(2) == g.smem_bytes(2) + (g.stages + 2) * g.block_q * 4
  dq_sum = f"tensor<2x{g.q_len_padded}x4x{d}xi32>"  # the int32 sum the kernel adds into
  assert dq_sum in _assert_backward_lowers_for_cuda(fixed)
  assert dq_sum not in _assert_backward_lowers_for_cuda(g)


@pytest.mark.parametrize("value,kernels,int32_sum", [
    ("fixed_point", 2, True), ("float32", 2, False), ("split", 3, False)])
def test_dq_sum_variable_picks_the_backward(monkeypatch, value, kernels, int32_sum):
  """``PJRTKIT_ATTENTION_DQ_SUM`` (`fixed_point.dq_sum`): the fused kernel with dQ summed in
  int32 or float32, or the split kernels."""
  monkeypatch.delenv("XLA_FLAGS", raising=False)
  monkeypatch.setenv("PJRTKIT_ATTENTION_DQ_SUM", value)
  module = _gradient_module()
  assert re.findall(r"custom_call @(\w+)", module).count("mosaic_gpu_v2") == kernels
  assert ("tensor<2x256x4x64xi32>" in module) == int32_sum


@pytest.mark.parametrize("causal,longest_first", [(False, False), (True, False), (True, True)])
def test_fused_backward_with_64_row_steps_lowers_for_cuda(causal, longest_first):
  """`mosaic_bwd.backward` directly at block_q 64 (what non-causal calls take; causal calls take
  128 first), causal included, with one dS^T slot, in both program orders."""
  g = mosaic_bwd.BwdGeometry(batch=1, heads=4, kv_heads=2, q_len_padded=320, kv_len=300,
                             kv_len_padded=384, head_dim=64, scale=0.125, causal=causal,
                             stages=3, block_q=64, ds_slots=1, longest_first=longest_first)
  _assert_backward_lowers_for_cuda(g)


@pytest.mark.parametrize("d,causal,kv_len", [
    (64, True, 600),    # one warpgroup's dQ product per step; items with no query step
    (128, True, 600),   # dQ split by columns; items with no query step
    (128, False, 300),  # keys masked
])
def test_lagged_dq_backward_lowers_for_cuda(d, causal, kv_len):
  """`BwdGeometry.lag_dq` where `choose` would not take it too: head_dim 64, and causal calls
  with more keys than queries, whose last programs have no query step (warpgroup 0 still lets
  warpgroup 1 start, and no dQ product runs)."""
  g = dataclasses.replace(_choose(2, 300, 4, d, kv_len, 2, causal), lag_dq=True)
  assert g.ds_slots == 2 and g.block_q == 64
  _assert_backward_lowers_for_cuda(g)


@pytest.mark.parametrize("shape,causal,in_loop", [
    ((16, 1024, 32, 128, 1024, 32), False, True),    # A7
    ((4, 4096, 32, 128, 4096, 8), False, True),      # A8
    ((4, 4096, 32, 128, 4096, 8), True, True),       # A10: causal, grouped
    ((1, 16384, 16, 128, 16384, 16), False, True),   # A6
    ((2, 6144, 16, 128, 6144, 16), False, True),     # H2
    ((3, 2560, 12, 128, 2560, 12), False, True),     # H4
    ((1, 16384, 16, 128, 16384, 16), True, True),    # A9: causal, one head per kv head
    ((1, 1100, 2, 128, 1100, 2), True, True),
    ((32, 2048, 16, 64, 2048, 16), False, False),    # head_dim 64
    ((2, 3072, 16, 64, 3072, 4), True, False),
])
def test_loop_descriptors_at_head_dim_128(shape, causal, in_loop):
  """`BwdGeometry.loop_descriptors`: with it (and the lag and biased accumulators `choose` takes
  with it) ptxas 13.0 (the H200's toolchain, jax 0.11.2) spills nothing in the fused backward at
  the comparison's head_dim-128 shapes, where without it it spilled up to 216 bytes; causal calls
  of one query head per key/value head keep 240 registers."""
  b, t, h, d, s, k = shape
  g = _choose(b, t, h, d, s, k, causal, block_qs=(128, 64) if causal else (64,))
  assert g.loop_descriptors == in_loop
  assert g.loop_descriptors == (d == 128)
  assert g.compute_registers == (240 if d == 128 and causal and h == k else 232)


@pytest.mark.parametrize("d,causal", [(128, True), (128, False), (64, True)])
def test_backward_lowers_with_and_without_loop_descriptors(d, causal):
  """Both forms lower at head_dim 128 and 64 (where `choose` never takes it), a causal call with
  keys masked past the length included, and they are different kernels (whether ptxas then keeps
  the descriptors in the loop is measured by tools/kernels_gpu/ptxas_local.py)."""
  g = _choose(2, 300, 4, d, 600, 2, causal)
  without, with_ = (_assert_backward_lowers_for_cuda(dataclasses.replace(g, loop_descriptors=on))
                    for on in (False, True))
  assert without != with_


def test_backward_drops_pallas_auto_barriers_at_head_dim_64_only():
  assert not _choose(32, 2048, 16, 64, 2048, 16, False).auto_barriers
  assert _choose(1, 16384, 16, 128, 16384, 16, False, max_stages=2).auto_barriers


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
