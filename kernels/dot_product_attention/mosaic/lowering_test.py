"""The compiled "mosaic" attention forward (`mosaic_fwd`, `mosaic_work`), checked without a GPU:
its launches (persistent, listed, split tail) and lowering for CUDA (``jax.export(...,
platforms=["cuda"])`` runs Pallas's Mosaic GPU lowering on the CPU, which catches shape, layout,
transform and scratch-allocation errors in the warp-specialised kernels that Pallas's interpreter
cannot run; not barrier ordering or phase errors, which only show when they run). The backward's
checks are in bwd_test.py. Numerics are checked on the H200 (tools/kernels_gpu:
dot_product_attention_test's GPU tests).
"""

from __future__ import annotations

import dataclasses
import math
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.experimental.pallas.mosaic_gpu as plgpu  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit.kernels.core import pallas as pallas_lib  # noqa: E402
from pjrtkit.kernels.dot_product_attention import base  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import attention as mosaic_attention  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import fwd as mosaic_fwd  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import work as mosaic_work  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import MosaicAttention  # noqa: E402


def _causal_geometry(b, t, h, d, block_kv, programs, kv_len=None, kv_len_padded=None):
  return mosaic_fwd.FwdGeometry(batch=b, heads=h, kv_heads=h, q_len_padded=t,
                                kv_len=kv_len or kv_len_padded or t,
                                kv_len_padded=kv_len_padded or t, head_dim=d, block_q=64,
                                block_kv=block_kv, stages=2, scale=0.125, causal=True,
                                programs=programs)


@pytest.mark.parametrize("b,t,h,block_kv,programs,kv", [
    (1, 16384, 16, 128, 132, 16384), (32, 2048, 16, 128, 132, 2048), (3, 1024, 4, 64, 5, 1024),
    (1, 384, 1, 64, 2, 384), (2, 256, 3, 128, 5, 256), (1, 2048, 4, 128, 7, 512)])
def test_causal_persistent_forward_runs_every_tile_once_with_even_loads(b, t, h, block_kv,
                                                                        programs, kv):
  """The causal persistent order (`_tile_index`, `_local_tiles`, `_tile`): every tile exactly
  once, each (pair, batch, head) once, the key steps of each (fewer keys than queries in the
  last case), and each program's key steps within 1.2x of the mean (1.0023x at 1x16384x16x128
  on 132 programs, where dealing tiles pid, pid + 132, ... gave 1.57x)."""
  g = _causal_geometry(b, t, h, 64, block_kv, programs, kv_len_padded=kv)
  assert g.snake
  tiles, cells, loads = [], [], []
  for pid in range(programs):
    load = 0
    for i in range(int(mosaic_fwd._local_tiles(g, pid))):
      tile = int(mosaic_fwd._tile_index(g, pid, i))
      pair, bi, hi, _, steps = (int(x) for x in mosaic_fwd._tile(g, tile))
      tiles.append(tile)
      cells.append((pair, bi, hi))
      assert steps == min(-(-(pair + 1) * 128 // block_kv), kv // block_kv)
      load += steps
    loads.append(load)
  assert sorted(tiles) == list(range(g.tiles))
  assert sorted(cells) == [(p, bi, hi) for p in range(g.q_pairs) for bi in range(b)
                           for hi in range(h)]
  assert max(loads) <= 1.2 * sum(loads) / programs
  if (b, t, h) == (1, 16384, 16):
    assert max(loads) <= 1.0025 * sum(loads) / programs


def test_forward_programs_persistent_for_short_causal_tiles_only(monkeypatch):
  sms = 132  # an H200's (the CPU device reports its own count)
  monkeypatch.setattr(mosaic_attention.pallas_lib, "sm_count", lambda: sms)
  assert mosaic_attention.forward_programs(2048, False, 16384, 16384, 128) == sms
  assert mosaic_attention.forward_programs(100, False, 16384, 16384, 128) == 100  # fewer tiles than SMs
  assert mosaic_attention.forward_programs(2048, True, 16384, 16384, 128) == 2048  # 8256 keys per tile
  assert mosaic_attention.forward_programs(8192, True, 2048, 2048, 128) == sms  # 1088 keys
  assert mosaic_attention.forward_programs(8192, True, 2048, 2048, 64) == sms  # 1088 keys
  assert mosaic_attention.forward_programs(630, True, 8064, 8064, 128) == sms  # 4096 keys: the limit
  assert mosaic_attention.forward_programs(2048, True, 8192, 8192, 128) == 2048  # 4160 keys
  # 8192 queries, 1024 keys: steps stop at the 8 key blocks, 968 keys per tile on average
  # (4160 if they did not).
  assert mosaic_attention.forward_programs(2048, True, 8192, 1024, 128) == sms


def test_causal_persistent_forward_lowers_for_cuda():
  """The persistent causal forward with padded keys and a drain (64-key steps: the second
  warpgroup needs one step more than the first on every pair)."""
  g = _causal_geometry(3, 1024, 4, 64, 64, 5, kv_len=1000)
  x = jax.ShapeDtypeStruct((3, 1024, 4, 64), jnp.bfloat16)
  exported = jax.export.export(jax.jit(lambda q, k, v: mosaic_fwd.forward(q, k, v, g)),
                               platforms=["cuda"])(x, x, x)
  assert [a.shape for a in exported.out_avals] == [(3, 1024, 4, 64), (3, 4, 1024)]


@pytest.mark.parametrize("b,t,h,block_kv,programs,kv", [
    (1, 16384, 16, 128, 132, 16384), (32, 2048, 16, 128, 132, 2048), (3, 1024, 4, 64, 5, 1024),
    (1, 384, 1, 64, 2, 384), (1, 2048, 4, 128, 7, 512)])
def test_listed_forward_runs_every_tile_once_in_one_tile_per_cta_order(b, t, h, block_kv,
                                                                       programs, kv):
  """`FwdGeometry.listed` (`tile_list`, read by `_tile_index` / `_local_tiles`): every tile once,
  at least one per program, rows of 16 bytes, the tiles starting (each program running its list
  back to back, a tile costing its key steps + `_LISTED_TILE_COST`) in the one-tile-per-CTA
  order (each (batch, head) together, longest pair first), and the busiest program within one
  tile of the mean."""
  g = dataclasses.replace(_causal_geometry(b, t, h, 64, block_kv, programs, kv_len_padded=kv),
                          listed=True)
  assert not g.snake
  table = mosaic_work.tile_list(g)
  assert table.dtype == np.int32 and table.shape[0] == programs and table.shape[1] % 4 == 0
  starts, loads, longest = [], [], 0
  for pid in range(programs):
    row = table[pid]
    count = int(mosaic_fwd._local_tiles(g, pid, row))
    assert count >= 1 and np.all(row[1 + count:] == 0)
    load = 0
    for i in range(count):
      tile = int(mosaic_fwd._tile_index(g, pid, i, row))
      pair, bi, hi, _, steps = (int(x) for x in mosaic_fwd._tile(g, tile))
      assert pair == g.q_pairs - 1 - tile % g.q_pairs
      assert (bi, hi) == (tile // g.q_pairs % b, tile // (g.q_pairs * b))
      assert steps == min(-(-(pair + 1) * 128 // block_kv), kv // block_kv)
      starts.append((load, pid, tile))
      load += steps + mosaic_work.LISTED_TILE_COST
      longest = max(longest, steps + mosaic_work.LISTED_TILE_COST)
    loads.append(load)
  assert [tile for _, _, tile in sorted(starts)] == list(range(g.tiles))
  assert max(loads) <= sum(loads) / programs + longest


def test_listed_forward_lowers_for_cuda_and_refuses_other_launches():
  """The listed forward lowers with padded keys and 64-key steps, and with the widest row one
  TMA copy moves (32x2048x16x64 on 33 programs: 256 int32s); rows wider than that (36
  programs: 260) are refused, and so are launches without a causal mask or one tile each."""
  g = dataclasses.replace(_causal_geometry(3, 1024, 4, 64, 64, 5, kv_len=1000), listed=True)
  x = jax.ShapeDtypeStruct((3, 1024, 4, 64), jnp.bfloat16)
  exported = jax.export.export(jax.jit(lambda q, k, v: mosaic_fwd.forward(q, k, v, g)),
                               platforms=["cuda"])(x, x, x)
  assert [a.shape for a in exported.out_avals] == [(3, 1024, 4, 64), (3, 4, 1024)]
  x = jax.ShapeDtypeStruct((32, 2048, 16, 64), jnp.bfloat16)
  for programs, width in ((33, 256), (36, 260)):
    wide = dataclasses.replace(_causal_geometry(32, 2048, 16, 64, 128, programs), listed=True)
    assert mosaic_work.tile_list(wide).shape == (programs, width)
    lower = lambda: jax.export.export(  # noqa: E731
        jax.jit(lambda q, k, v, g=wide: mosaic_fwd.forward(q, k, v, g)), platforms=["cuda"])(
            x, x, x)
    if width <= mosaic_work.LISTED_MAX_WIDTH:
      assert [a.shape for a in lower().out_avals] == [(32, 2048, 16, 64), (32, 16, 2048)]
    else:
      with pytest.raises(ValueError, match="holds 260 int32s, more than the 256 one TMA copy"):
        lower()
  with pytest.raises(ValueError, match="listed needs a persistent launch with a causal mask"):
    dataclasses.replace(g, programs=g.tiles)
  with pytest.raises(ValueError, match="listed needs a persistent launch with a causal mask"):
    dataclasses.replace(g, causal=False)


def test_causal_persistent_forwards_run_from_a_list_where_it_is_about_as_even():
  """`mosaic_attention.listed_forward` and `mosaic_work.program_steps`: on at 32x2048x16x64 causal on 132
  SMs (8192 tiles, rows of 72 int32s; the busiest program's steps + per-tile cost 600 listed
  against 591 dealt by length, mean 589.58), off at 2x1024x8x64 on 20 programs with 64-key steps
  (72 against 65, mean 64) and at 4x1152x8x64 on 132 (36 against 27, mean 24), off without a
  causal mask, with one tile per program, with the split tail, and where a program's row would
  pass `mosaic_work.LISTED_MAX_WIDTH` (512x2048x16x64: 131072 tiles, about 993 per program;
  32x2048x16x64 on 36 programs: 260), and the rows at 33 programs (256) are taken."""
  g = _causal_geometry(32, 2048, 16, 64, 128, 132)
  assert mosaic_attention.listed_forward(g)
  assert mosaic_work.tile_list(dataclasses.replace(g, listed=True)).shape == (132, 72)
  for geometry, listed_max, dealt_max, total in (
      (g, 600, 591, 77824), (_causal_geometry(2, 1024, 8, 64, 64, 20), 72, 65, 1280),
      (_causal_geometry(4, 1152, 8, 64, 64, 132), 36, 27, 3168)):
    listed = mosaic_work.program_steps(dataclasses.replace(geometry, listed=True))
    dealt = mosaic_work.program_steps(geometry)
    assert (max(listed), max(dealt)) == (listed_max, dealt_max)
    assert sum(listed) == sum(dealt) == total
    assert mosaic_attention.listed_forward(geometry) == (geometry is g)
  assert not mosaic_attention.listed_forward(dataclasses.replace(g, causal=False))
  assert not mosaic_attention.listed_forward(_causal_geometry(1, 16384, 16, 128, 128, 2048))
  assert not mosaic_attention.listed_forward(_causal_geometry(512, 2048, 16, 64, 128, 132))
  assert not mosaic_attention.listed_forward(_causal_geometry(32, 2048, 16, 64, 128, 36))
  assert mosaic_attention.listed_forward(_causal_geometry(32, 2048, 16, 64, 128, 33))
  split = _split_geometry(1, 16384, 16, 128, 128, 132)
  assert not mosaic_attention.listed_forward(split)


def _split_geometry(b, t, h, d, block_kv, programs, kv_len=None, with_lse=True):
  return mosaic_fwd.FwdGeometry(batch=b, heads=h, kv_heads=h, q_len_padded=t,
                                kv_len=kv_len or t, kv_len_padded=t, head_dim=d, block_q=64,
                                block_kv=block_kv, stages=2, scale=0.125, causal=False,
                                programs=programs, with_lse=with_lse, split_tail=True)


@pytest.mark.parametrize("b,t,h,d,block_kv,programs,shares", [
    (1, 16384, 16, 128, 128, 132, (65, 66)),  # A1: 15 rounds + 68 tiles of 128 steps
    (32, 2048, 16, 64, 256, 132, (0, 1)),     # 62 rounds + 8 tiles of 8 steps
    (3, 1024, 4, 64, 128, 5, (1, 2)),         # 19 rounds + 1 tile in 5 pieces
    (2, 1024, 16, 64, 128, 132, (7, 8)),      # 1 round + 124 tiles
])
def test_split_tail_runs_every_key_step_of_every_tile_once(b, t, h, d, block_kv, programs,
                                                           shares):
  """`split_tail` (`_item`, `_local_tiles`, `tail_pieces`): the full rounds as before, then each
  program's share of the tail's key steps (sizes in `shares`) as one or two pieces; every (tile,
  key step) exactly once, and each tail tile merged from exactly the pieces that ran on it."""
  g = _split_geometry(b, t, h, d, block_kv, programs)
  ran, pieces = {}, {}
  for pid in range(programs):
    items = int(mosaic_fwd._local_tiles(g, pid))
    share = 0
    for i in range(items):
      tile, k0, k1, partial = (int(x) for x in mosaic_fwd._item(g, pid, i))
      assert bool(partial) == (i >= g.full_rounds)
      if i < g.full_rounds:
        assert (tile, k0, k1) == (pid + i * programs, 0, g.kv_steps)
      else:
        share += k1 - k0
        pieces.setdefault(tile - g.full_rounds * programs, []).append((pid, i - g.full_rounds))
      assert 0 <= k0 < k1 <= g.kv_steps
      for step in range(k0, k1):
        ran[tile, step] = ran.get((tile, step), 0) + 1
    assert shares[0] <= share <= shares[1]
    assert items - g.full_rounds <= 2
  assert len(ran) == g.tiles * g.kv_steps and set(ran.values()) == {1}
  assert [pieces[a] for a in range(g.tail_tiles)] == mosaic_work.tail_pieces(g)


def test_split_tail_merge_recovers_attention_from_partial_results():
  """`mosaic_work.merge_tail` on partial results computed here as the kernel writes them (per
  piece: its key steps' normalized output as bfloat16 hi + lo, and the base-2 log-sum-exp): the
  tail rows equal float64 attention within 1e-4 (the hi + lo pair carries about 16 bits), their
  log-sum-exp within 1e-5, and every other row is left as it was. 7 programs over 12 tiles leave
  5 tail tiles in 3 (batch, head) runs, each tile merged from two or three pieces."""
  b, t, h, d, programs = 2, 256, 3, 16, 7
  g = mosaic_fwd.FwdGeometry(batch=b, heads=h, kv_heads=h, q_len_padded=t, kv_len=t,
                             kv_len_padded=t, head_dim=d, block_q=64, block_kv=32, stages=2,
                             scale=0.25, causal=False, programs=programs, split_tail=True)
  assert [grp[1:] for grp in mosaic_work.tail_groups(g)] == [(1, 1, 1, 1), (2, 0, 2, 0),
                                                            (2, 1, 2, 0)]
  assert [len(p) for p in mosaic_work.tail_pieces(g)] == [2, 2, 3, 2, 2]
  rng = np.random.default_rng(0)
  q, k, v = (rng.standard_normal((b, t, h, d)) for _ in range(3))
  c = g.scale * math.log2(math.e)
  # What the kernel does not write stays as it was: NaN here, which the merge must not read.
  part_o = np.full((programs, 2, 2, 128, d), np.nan, np.float32)
  part_lse = np.full((programs, 2, 128), np.nan, np.float32)
  for pid in range(programs):
    for i in range(g.full_rounds, int(mosaic_fwd._local_tiles(g, pid))):
      tile, k0, k1, _ = (int(x) for x in mosaic_fwd._item(g, pid, i))
      pair, bi, hi = tile % g.q_pairs, tile // g.q_pairs % b, tile // (g.q_pairs * b)
      keys = slice(k0 * g.block_kv, k1 * g.block_kv)
      s2 = q[bi, pair * 128:(pair + 1) * 128, hi] @ k[bi, keys, hi].T * c
      m = s2.max(axis=1, keepdims=True)
      p = np.exp2(s2 - m)
      o = p @ v[bi, keys, hi] / p.sum(axis=1, keepdims=True)
      hi_part = np.asarray(jnp.asarray(o, jnp.bfloat16), np.float32)
      part_o[pid, i - g.full_rounds] = hi_part, o - hi_part
      part_lse[pid, i - g.full_rounds] = (m + np.log2(p.sum(axis=1, keepdims=True)))[:, 0]
  out0 = jnp.full((b, t, h, d), 7.0, jnp.float32)
  lse0 = jnp.full((b, h, t), 7.0, jnp.float32)
  out, lse = mosaic_work.merge_tail(g, out0, lse0, jnp.asarray(part_o, jnp.bfloat16),
                                    jnp.asarray(part_lse))
  out, lse = np.asarray(out), np.asarray(lse)
  scores = np.einsum("bqhd,bkhd->bhqk", q, k) * g.scale
  want_lse = np.log(np.exp(scores).sum(-1))
  want = np.einsum("bhqk,bkhd->bqhd", np.exp(scores - want_lse[..., None]), v)
  tail = np.zeros((b, t, h), bool)
  for tile in range(g.full_rounds * programs, g.tiles):
    pair, bi, hi = tile % g.q_pairs, tile // g.q_pairs % b, tile // (g.q_pairs * b)
    tail[bi, pair * 128:(pair + 1) * 128, hi] = True
  assert tail.sum() == 5 * 128
  np.testing.assert_allclose(out[tail], want[tail], rtol=0, atol=1e-4)
  np.testing.assert_allclose(lse.transpose(0, 2, 1)[tail], want_lse.transpose(0, 2, 1)[tail],
                             rtol=0, atol=1e-5)
  assert np.all(out[~tail] == 7.0) and np.all(lse.transpose(0, 2, 1)[~tail] == 7.0)


def test_split_tail_forward_lowers_for_cuda():
  """The split forward with its partial outputs (two per program) and the merge after it; the
  call returns the usual outputs."""
  for with_lse in (True, False):
    g = _split_geometry(3, 1024, 4, 64, 128, 5, kv_len=1000, with_lse=with_lse)
    x = jax.ShapeDtypeStruct((3, 1024, 4, 64), jnp.bfloat16)
    exported = jax.export.export(jax.jit(lambda q, k, v, g=g: mosaic_fwd.forward(q, k, v, g)),
                                 platforms=["cuda"])(x, x, x)
    want = [(3, 1024, 4, 64)] + [(3, 4, 1024)] * with_lse
    assert [a.shape for a in exported.out_avals] == want


def test_forward_splits_the_tail_where_it_saves_one_percent_of_steps():
  """`mosaic_attention.split_forward_tail`: on at 1x16384x16x128 on 132 SMs (the busiest program's key
  steps 2048 -> 1986), 3x1024x4x64 on 5 programs (160 -> 154) and 32x2048x16x64 with 256-key
  steps (504 -> 497, 1.4 %); off where it saves less (64x2048x16x64: 1000 -> 993, 0.7 %;
  1x2048x16x128: a tail of 124 tiles on 132 programs saves nothing), with a causal mask, one tile
  per program, no tail, or tail tiles in more than 4 (batch, head) runs."""

  def geometry(b, t, h, d, block_kv, programs, causal=False):
    return mosaic_fwd.FwdGeometry(batch=b, heads=h, kv_heads=h, q_len_padded=t, kv_len=t,
                                  kv_len_padded=t, head_dim=d, block_q=64, block_kv=block_kv,
                                  stages=2, scale=0.125, causal=causal, programs=programs)

  assert mosaic_attention.split_forward_tail(geometry(1, 16384, 16, 128, 128, 132))
  assert mosaic_attention.split_forward_tail(geometry(3, 1024, 4, 64, 128, 5))
  assert mosaic_attention.split_forward_tail(geometry(32, 2048, 16, 64, 256, 132))
  assert not mosaic_attention.split_forward_tail(geometry(64, 2048, 16, 64, 256, 132))
  assert not mosaic_attention.split_forward_tail(geometry(1, 2048, 16, 128, 128, 132))
  assert not mosaic_attention.split_forward_tail(geometry(1, 16384, 16, 128, 128, 132, causal=True))
  assert not mosaic_attention.split_forward_tail(geometry(1, 16384, 16, 128, 128, 2048))
  assert not mosaic_attention.split_forward_tail(geometry(1, 16896, 16, 128, 128, 132))  # 16 rounds
  # 128-row sequences: each tile its own (batch, head) run; 23 tail tiles in 23 runs.
  many = geometry(1, 128, 155, 64, 64, 132)
  assert many.tail_tiles == 23
  assert len(mosaic_work.tail_groups(dataclasses.replace(many, split_tail=True))) == 23
  assert not mosaic_attention.split_forward_tail(many)


def test_split_tail_refuses_causal_and_even_launches():
  with pytest.raises(ValueError, match="split_tail needs a persistent launch without a causal"):
    mosaic_fwd.FwdGeometry(batch=1, heads=2, kv_heads=2, q_len_padded=1024, kv_len=1024,
                           kv_len_padded=1024, head_dim=64, block_q=64, block_kv=128, stages=2,
                           scale=0.125, causal=True, programs=5, split_tail=True)
  with pytest.raises(ValueError, match="16 tiles on 8 programs"):
    _split_geometry(1, 1024, 2, 64, 128, 8)
  with pytest.raises(ValueError, match=r"kv_len_padded - kv_len must be below block_kv \(128\), "
                                       r"got 1024 - 896"):
    _split_geometry(3, 1024, 4, 64, 128, 5, kv_len=896)


def test_split_tail_refuses_shares_past_int32():
  """`tail_range` multiplies int32 program ids by the tail's step count inside the kernel: 131
  tail tiles of 2^17 key steps on 132 programs (2.27e9 > 2^31) are refused, 2^16 steps taken
  (the traced shares then equal the exact ones)."""
  def geometry(kv_len):
    return mosaic_fwd.FwdGeometry(batch=1, heads=263, kv_heads=263, q_len_padded=128,
                                  kv_len=kv_len, kv_len_padded=kv_len, head_dim=64, block_q=64,
                                  block_kv=128, stages=2, scale=0.125, causal=False,
                                  programs=132, split_tail=True)
  with pytest.raises(ValueError, match=r"programs x tail tiles x key steps below 2\^31, got "
                                       r"132 x 131 x 131072"):
    geometry(2 ** 24)
  g = geometry(2 ** 23)
  steps = g.tail_tiles * g.kv_steps
  for pid in (0, 1, 65, 130, 131):
    start, end = (int(x) for x in g.tail_range(jnp.int32(pid)))
    assert (start, end) == (pid * steps // 132, (pid + 1) * steps // 132) == g.tail_range(pid)


@pytest.mark.parametrize("causal,programs,one_warp", [
    (True, 5, True),     # causal, persistent
    (True, 16, True),    # causal, one tile per program
    (False, 4, False),   # no mask: the whole producer warpgroup loads
])
def test_causal_forwards_load_through_one_warp(monkeypatch, causal, programs, one_warp):
  """The producer's loads run under `plgpu.warp_map` (one warp) exactly for causal calls (seen
  while the kernel is traced for a CUDA export)."""
  calls = []
  real = plgpu.warp_map

  def recording(f):
    calls.append(f)
    return real(f)

  monkeypatch.setattr(plgpu, "warp_map", recording)
  g = mosaic_fwd.FwdGeometry(batch=2, heads=4, kv_heads=4, q_len_padded=256, kv_len=256,
                             kv_len_padded=256, head_dim=64, block_q=64, block_kv=64, stages=2,
                             scale=0.125, causal=causal, programs=programs)
  x = jax.ShapeDtypeStruct((2, 256, 4, 64), jnp.bfloat16)
  jax.export.export(jax.jit(lambda q, k, v: mosaic_fwd.forward(q, k, v, g)),
                    platforms=["cuda"])(x, x, x)
  assert len(calls) == (1 if one_warp else 0)


def test_forward_takes_turns_through_named_barriers():
  """The compute warpgroups' ping-pong is hardware named barriers of 256 threads (one warpgroup's
  sync and the other's arrive), in the kernel's serialised module as inline PTX (their ids are
  operands, not checked here)."""
  g = mosaic_fwd.FwdGeometry(batch=1, heads=2, kv_heads=2, q_len_padded=256, kv_len=256,
                             kv_len_padded=256, head_dim=64, block_q=64, block_kv=128, stages=2,
                             scale=0.125, causal=False, programs=4)
  x = jax.ShapeDtypeStruct((1, 256, 2, 64), jnp.bfloat16)
  module = jax.export.export(jax.jit(lambda q, k, v: mosaic_fwd.forward(q, k, v, g)),
                             platforms=["cuda"])(x, x, x).mlir_module()
  assert "bar.arrive $0, 256;" in module
  assert "bar.sync $0, 256;" in module


@pytest.mark.parametrize("with_lse", [True, False])
def test_forward_without_lse_lowers_with_one_output(with_lse):
  """Calls that are not differentiated take the kernel without its log-sum-exp output."""
  g = mosaic_fwd.FwdGeometry(batch=1, heads=2, kv_heads=2, q_len_padded=256, kv_len=256,
                             kv_len_padded=256, head_dim=128, block_q=64, block_kv=128, stages=2,
                             scale=0.125, causal=True, programs=2, with_lse=with_lse)
  x = jax.ShapeDtypeStruct((1, 256, 2, 128), jnp.bfloat16)
  exported = jax.export.export(jax.jit(lambda q, k, v: mosaic_fwd.forward(q, k, v, g)),
                               platforms=["cuda"])(x, x, x)
  want = [(1, 256, 2, 128), (1, 2, 256)] if with_lse else [(1, 256, 2, 128)]
  assert [a.shape for a in exported.out_avals] == want


def test_forward_output_asks_the_kernel_for_no_lse(monkeypatch):
  """`MosaicAttention.forward_output` (the call that is not differentiated) builds the compiled
  kernel with ``with_lse=False``; `forward` (under differentiation) with it."""
  seen = []

  def fake_forward(q, k, v, g):
    seen.append(g.with_lse)
    lse = jnp.zeros((g.batch, g.heads, g.q_len_padded), jnp.float32) if g.with_lse else None
    return jnp.zeros(q.shape, q.dtype), lse

  monkeypatch.setattr(mosaic_attention, "interpret_enabled", lambda: False)
  monkeypatch.setattr(mosaic_fwd, "forward", fake_forward)
  q = jnp.zeros((1, 200, 2, 64), jnp.bfloat16)
  spec = base.make_spec(q, q, q, None, None, True, 0.125)
  op = MosaicAttention()
  config = op.default_config(spec)
  out = op.forward_output((q, q, q, None, None), spec, config)
  assert out.shape == q.shape and seen == [False]
  out, residuals = op.forward((q, q, q, None, None), spec, config)
  assert seen == [False, True] and residuals[-1].shape == (1, 2, 200)


@pytest.mark.parametrize("args,message", [
    (("wait", 8, 256), r"op must be 'arrive' or 'sync', got 'wait'"),
    (("sync", 3, 256), r"barrier_id must be in \[8, 15\], got 3"),
    (("sync", 16, 256), r"barrier_id must be in \[8, 15\], got 16"),
    (("arrive", 8, 100), r"threads must be a positive multiple of 32 up to 1024, got 100"),
])
def test_named_barrier_refuses_bad_arguments(args, message):
  from pjrtkit.kernels.core import pallas as pallas_lib  # pylint: disable=g-import-not-at-top
  with pytest.raises(ValueError, match=message):
    pallas_lib.named_barrier(*args)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
