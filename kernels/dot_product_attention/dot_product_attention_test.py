"""dot_product_attention: every implementation against the reference, forward and gradient,
odd and even shapes, float32 and bfloat16, causal, grouped/multi-query heads, bias and mask.

Without a GPU (CI) "triton" and "mosaic" run in Pallas interpret mode; "mosaic" on single-program
shapes (Pallas's Mosaic GPU interpreter gives NaN from the second program of a grid on; the
kernels' loops over key/query blocks are still exercised). On an NVIDIA GPU (tools/kernels_gpu)
the same tests run the compiled kernels, and `test_pallas_on_gpu` adds multi-program shapes;
"native" is skipped there. Tolerances: `pjrtkit.kernels.testing.TOLERANCES`.
"""

from __future__ import annotations

import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import pallas as pallas_lib  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import attention as mosaic_attention  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import fwd as mosaic_fwd  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import work as mosaic_work  # noqa: E402
from pjrtkit.kernels.dot_product_attention import base as attention_base  # noqa: E402
from pjrtkit.kernels.dot_product_attention.base import reference  # noqa: E402
from pjrtkit.kernels.dot_product_attention.xla_chunked import ChunkedConfig  # noqa: E402

SHAPES = {  # (B, T, H, D, S, K)
    "odd_gqa": (2, 37, 4, 24, 29, 2),
    "even_mqa": (1, 64, 4, 32, 96, 1),
}


def _inputs(shape, dtype, seed=0):
  b, t, h, d, s, k = shape
  k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
  return (jax.random.normal(k1, (b, t, h, d), dtype), jax.random.normal(k2, (b, s, k, d), dtype),
          jax.random.normal(k3, (b, s, k, d), dtype))


def _check(impl, dtype, shape, causal, bias=None, mask=None):
  q, k, v = _inputs(shape, dtype)
  ours = lambda q, k, v, bias: pk.dot_product_attention(
      q, k, v, bias=bias, mask=mask, is_causal=causal, implementation=impl)
  ref = lambda q, k, v, bias: reference(q, k, v, bias, mask, is_causal=causal)
  loss = lambda f: lambda *a: jnp.sum(jnp.sin(f(*a).astype(jnp.float32)))
  argnums = (0, 1, 2, 3) if bias is not None else (0, 1, 2)
  testing.skip_unless_runnable(impl)
  # Float32 numerics in full float32 everywhere (XLA:GPU's default float32 dot is tf32).
  with jax.default_matmul_precision("highest"):
    with pk.pallas_interpret(testing.interpret(impl)):
      out = jax.jit(ours)(q, k, v, bias)
      grads = jax.jit(jax.grad(loss(ours), argnums=argnums))(q, k, v, bias)
    want_out = ref(q, k, v, bias)
    want_grads = jax.grad(loss(ref), argnums=argnums)(q, k, v, bias)
  testing.assert_close(out, want_out, dtype, "fwd")
  for g, w in zip(grads, want_grads):
    testing.assert_close(g, w, dtype, "grad")


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("impl", ["xla", "xla_chunked", "native"])
def test_numerics(impl, shape, dtype, causal):
  _check(impl, dtype, SHAPES[shape], causal)


@pytest.mark.parametrize("impl", ["xla", "xla_chunked"])
def test_bias_and_mask(impl):
  b, t, h, d, s, k = SHAPES["odd_gqa"]
  bias = jax.random.normal(jax.random.key(7), (1, h, t, s), jnp.float32)
  mask = jax.random.bernoulli(jax.random.key(8), 0.8, (b, 1, t, s))
  _check(impl, "float32", SHAPES["odd_gqa"], True, bias=bias, mask=mask)


@pytest.mark.parametrize("dtype,causal", [("float32", False), ("bfloat16", True)])
def test_triton_in_interpret_mode(dtype, causal):
  _check("triton", dtype, SHAPES["odd_gqa"], causal)


@pytest.mark.parametrize("causal,kv_len", [(False, 64), (True, 64), (False, 200)])
def test_mosaic_in_interpret_mode(causal, kv_len):
  shape = (1, 64, 1, 64, kv_len, 1)
  if kv_len == 64:
    _check("mosaic", "bfloat16", shape, causal)
    return
  q, k, v = _inputs(shape, "bfloat16")  # Several key steps: forward and dQ (one program each).
  with pk.pallas_interpret(testing.interpret("mosaic")):
    out = jax.jit(lambda q, k, v: pk.dot_product_attention(q, k, v, implementation="mosaic"))(
        q, k, v)
    dq = jax.jit(jax.grad(lambda q: jnp.sum(pk.dot_product_attention(
        q, k, v, implementation="mosaic").astype(jnp.float32))))(q)
  testing.assert_close(out, reference(q, k, v), "bfloat16", "fwd")
  want = jax.grad(lambda q: jnp.sum(reference(q, k, v).astype(jnp.float32)))(q)
  testing.assert_close(dq, want, "bfloat16", "grad")


@pytest.mark.parametrize("shape,causal", [((1, 64, 1, 40, 64, 1), True),
                                          ((1, 64, 1, 80, 64, 1), False)])
def test_mosaic_pads_other_head_dims_in_interpret_mode(shape, causal):
  """Head dims the kernels are not built for (40 runs at 64, 80 at 128): forward and every
  gradient against the reference, through the padded kernels (single-program shapes, as
  above; `test_pallas_on_gpu` runs them compiled on several programs)."""
  _check("mosaic", "bfloat16", shape, causal)


@pytest.mark.parametrize("shape", [(1, 1, 4, 64, 64, 1), (1, 16, 4, 40, 50, 1),
                                   (2, 3, 8, 64, 40, 2)])
def test_mosaic_folds_query_groups_into_rows_in_interpret_mode(shape):
  """Short queries without a causal mask whose heads share key/value heads run as one attention
  of T * group rows per key/value head (`folds_groups`): a decode step, a 16-query chunk at a
  padded head dim; forward and every gradient against the reference. The first two are one
  program (the interpreter's limit, above); the third (two key/value heads: two programs)
  checks the folding itself, a permutation of query rows (`test_pallas_on_gpu`'s `decode_gqa`
  and `chunk_gqa_80` run folded calls compiled)."""
  b, t, h, d, s, k = shape
  q, k_, v = _inputs(shape, "bfloat16")
  spec = attention_base.make_spec(q, k_, v, None, None, False, None)
  assert mosaic_attention.folds_groups(spec)
  assert not mosaic_attention.folds_groups(attention_base.make_spec(q, k_, v, None, None, True,
                                                                    None))
  if k == 1:
    _check("mosaic", "bfloat16", shape, False)
    return
  # Folding is a permutation of query rows: `_fold` then `_unfold` is the identity, and the
  # folded rows of one key/value head are exactly its group's query heads.
  x = jnp.arange(b * t * h * d).reshape(b, t, h, d)
  folded = mosaic_attention.fold(x, k)
  assert folded.shape == (b, t * h // k, k, d)
  np.testing.assert_array_equal(mosaic_attention.unfold(folded, t, h), x)
  g = h // k
  np.testing.assert_array_equal(folded[1, 2 * g + 3, 1], x[1, 2, 1 * g + 3])
  rows = jnp.arange(b * h * t).reshape(b, h, t)
  np.testing.assert_array_equal(
      mosaic_attention.unfold_rows(mosaic_attention.fold_rows(rows, k), t, h), rows)
  np.testing.assert_array_equal(mosaic_attention.fold_rows(rows, k)[1, 1, 2 * g + 3],
                                rows[1, 1 * g + 3, 2])


def _xla_and_mosaic(shape, causal=False):
  from pjrtkit.kernels.core.op import NoConfig  # pylint: disable=g-import-not-at-top
  from pjrtkit.kernels.dot_product_attention.xla import XlaAttention  # pylint: disable=g-import-not-at-top
  q, k, v = _inputs(shape, "bfloat16")
  spec = attention_base.make_spec(q, k, v, None, None, causal, None)
  mosaic = mosaic_attention.MosaicAttention()
  return (q, k, v), spec, (XlaAttention(), NoConfig()), (mosaic, mosaic.default_config(spec))


def test_mosaic_residuals_are_the_shared_layout_other_backwards_read():
  """A folded and padded call (head_dim 40 run at 64, 4 query heads folded onto one key/value
  head) leaves the residuals every implementation's backward reads: the caller's q, k, v, the
  output and the log-sum-exp ``[B, H, T]`` as "xla"'s forward leaves them; and each backward
  takes the other's residuals (autotuning and tuned results pair them)."""
  (q, k, v), spec, (xla, none), (mosaic, config) = _xla_and_mosaic((1, 16, 4, 40, 50, 1))
  dout = jax.random.normal(jax.random.key(3), q.shape, q.dtype)
  args = (q, k, v, None, None)
  with pk.pallas_interpret(testing.interpret("mosaic")):
    _, ours = jax.jit(lambda *a: mosaic.forward(a, spec, config))(*args)
    theirs = xla.forward(args, spec, none)[1]
    for got, want in zip(ours[:3], args[:3]):
      assert got.shape == want.shape
      np.testing.assert_array_equal(got, want)
    assert ours[3] is None and ours[4] is None
    assert ours[5].shape == theirs[5].shape and ours[6].shape == theirs[6].shape == (1, 4, 16)
    testing.assert_close(ours[5], theirs[5], "bfloat16", "fwd")
    testing.assert_close(ours[6], theirs[6], "float32", "grad")
    want = xla.backward(theirs, dout, spec, none)[:3]
    crossed = (jax.jit(lambda r, d: mosaic.backward(r, d, spec, config)[:3])(theirs, dout),
               xla.backward(ours, dout, spec, none)[:3])
  for grads in crossed:
    for got, w in zip(grads, want):
      testing.assert_close(got, w, "bfloat16", "grad")


@pytest.mark.parametrize("shape,causal", [
    ((2, 3, 8, 40, 33, 2), False), ((1, 5, 12, 80, 17, 3), False), ((2, 7, 8, 96, 20, 4), False),
    ((1, 9, 6, 128, 40, 6), False), ((1, 9, 4, 80, 40, 2), True), ((2, 130, 4, 96, 70, 2), False)])
def test_mosaic_folding_and_padding_wire_several_kv_heads(monkeypatch, shape, causal):
  """Folding and padding around the kernels with more than one key/value head (which the
  interpreter cannot run: the second program gives NaN), the kernels replaced by "xla" at the
  shapes they would get: output, residuals and gradients equal "xla"'s own, in float32. The
  last three are not folded (one query head per key/value head; a causal mask; 128 queries or
  more)."""
  (q, k, v), spec, (xla, none), (mosaic, config) = _xla_and_mosaic(shape, causal)
  q, k, v = (x.astype(jnp.float32) for x in (q, k, v))
  spec = attention_base.make_spec(q, k, v, None, None, causal, None)
  seen = []

  def kernel_forward(self, args, kspec, kconfig, with_lse):
    seen.append(kspec.arg("query").shape)
    assert kspec.arg("query").shape[3] in mosaic_attention.KERNEL_HEAD_DIMS
    out, res = xla.forward(args, kspec, none)
    return out, res[:6] + ((res[6] if with_lse else None),)

  monkeypatch.setattr(mosaic_attention.MosaicAttention, "_forward_at_kernel_dim", kernel_forward)
  monkeypatch.setattr(mosaic_attention.MosaicAttention, "_backward_at_kernel_dim",
                      lambda self, res, dout, kspec, kconfig: xla.backward(res, dout, kspec, none))
  dout = jax.random.normal(jax.random.key(4), q.shape, q.dtype)
  args = (q, k, v, None, None)
  with jax.default_matmul_precision("highest"):
    out, res = mosaic.forward(args, spec, config)
    grads = mosaic.backward(res, dout, spec, config)[:3]
    want_out, want_res = xla.forward(args, spec, none)
    want_grads = xla.backward(want_res, dout, spec, none)[:3]
  b, t, h, d, s, kh = shape
  dp = mosaic_attention.kernel_head_dim(d)
  folded = not causal and t < 128 and h != kh
  assert mosaic_attention.folds_groups(spec) == folded
  assert seen == [(b, t * h // kh, kh, dp) if folded else (b, t, h, dp)]
  for got, want in zip(res[:3], (q, k, v)):
    assert got is want
  for got, want in [(out, want_out), (res[5], want_res[5]), (res[6], want_res[6])] + list(
      zip(grads, want_grads)):
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
  assert mosaic.forward_output(args, spec, config).shape == out.shape


GPU_SHAPES = {  # (B, T, H, D, S, K): several programs per grid axis, odd lengths.
    "odd_gqa_64": (2, 197, 4, 64, 131, 2),
    "gqa_80": (2, 197, 8, 80, 300, 2),  # zero-padded to 128
    "mha_96": (1, 384, 4, 96, 384, 4),  # zero-padded to 128
    "decode_gqa": (8, 1, 32, 128, 1000, 8),  # not causal: 4 query heads folded per kv head
    "chunk_gqa_80": (2, 24, 16, 80, 700, 2),  # folded (192 rows) and padded
    "even_d128": (2, 256, 4, 128, 384, 4),
    "mqa_512": (1, 512, 8, 64, 512, 1),
}


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", list(GPU_SHAPES))
@pytest.mark.parametrize("impl", ["triton", "mosaic"])
def test_pallas_on_gpu(impl, shape, dtype, causal):
  testing.skip_unless_gpu()
  if impl == "mosaic" and dtype == "float32":
    pytest.skip("mosaic takes 16-bit operands (wgmma)")
  _check(impl, dtype, GPU_SHAPES[shape], causal)


@pytest.mark.parametrize("shape,causal", [
    ((2, 1024, 16, 64, 1000, 8), False),
    ((1, 2048, 16, 128, 2048, 16), False),
    ((4, 1100, 8, 64, 1100, 4), True),
])
def test_mosaic_persistent_forward_on_gpu(shape, causal):
  """More tiles (pairs of 64-row query blocks x batch x heads: 256 and 288 here) than an H200 has
  SMs (132): each CTA of the persistent forward runs one to three tiles, with odd key lengths
  and grouped heads. The causal shape's tiles average 640 keys, so it runs persistent too, its
  tiles dealt out by length (`mosaic_fwd._tile_index`; a tile list, `mosaic_attention.listed_forward`,
  would be less even here)."""
  testing.skip_unless_gpu()
  b, t, h = shape[:3]
  tiles = -(-t // 128) * b * h
  assert tiles > pallas_lib.sm_count()
  if causal:
    tp = -(-t // 128) * 128
    assert mosaic_attention.forward_programs(tiles, True, tp, tp, 128) < tiles
  _check("mosaic", "bfloat16", shape, causal)


@pytest.mark.parametrize("shape,block_kv,programs", [
    ((4, 1100, 8, 64, 1100, 4), 64, None),  # 288 tiles, 64-key steps (drains), GQA, padding
    ((2, 2048, 4, 128, 2048, 4), 128, 7),   # head_dim 128, 128 tiles on 7 programs
])
def test_mosaic_listed_forward_on_gpu(shape, block_kv, programs):
  """The causal persistent forward running the tiles `mosaic_work.tile_list` gives each program
  (`listed`, read from shared memory): against the reference, and bitwise equal to the same
  kernel dealing the tiles by length (`snake`), since only the program that runs a tile
  differs; the log-sum-exp too."""
  testing.skip_unless_gpu()
  b, t, h, d, s, kh = shape
  q, k, v = _inputs(shape, "bfloat16")
  tp, sp = -(-t // 128) * 128, -(-s // block_kv) * block_kv
  pad = lambda x, n: jnp.pad(x, ((0, 0), (0, n - x.shape[1]), (0, 0), (0, 0)))
  tiles = tp // 128 * b * h
  programs = programs or pallas_lib.sm_count()
  assert programs < tiles
  runs = []
  for listed in (False, True):
    g = mosaic_fwd.FwdGeometry(
        batch=b, heads=h, kv_heads=kh, q_len_padded=tp, kv_len=s, kv_len_padded=sp,
        head_dim=d, block_q=64, block_kv=block_kv, stages=2, scale=d ** -0.5, causal=True,
        programs=programs, listed=listed)
    assert g.snake != listed
    out, lse = jax.jit(lambda q, k, v, g=g: mosaic_fwd.forward(q, k, v, g))(
        pad(q, tp), pad(k, sp), pad(v, sp))
    runs.append((np.asarray(out[:, :t], np.float32), np.asarray(lse[:, :, :t])))
  (snake, snake_lse), (listed, listed_lse) = runs
  testing.assert_close(listed, reference(q, k, v, None, None, is_causal=True), "bfloat16",
                       "fwd")
  assert np.array_equal(listed, snake)
  assert np.array_equal(listed_lse, snake_lse)


def test_mosaic_causal_persistent_forward_with_skipped_steps_on_gpu():
  """64-key steps: on every pair warpgroup 1 needs one key step more than warpgroup 0, which
  skips it (the drain: it awaits that step's loads and releases its slots), in a persistent
  causal launch of 288 tiles; the forward against the reference, with its log-sum-exp (as
  differentiated calls run it) and without (`forward_output`, as other calls run it), whose
  outputs must be bitwise equal."""
  testing.skip_unless_gpu()
  from pjrtkit.kernels.dot_product_attention import base  # pylint: disable=g-import-not-at-top
  q, k, v = _inputs((4, 1100, 8, 64, 1100, 4), "bfloat16")
  spec = base.make_spec(q, k, v, None, None, True, None)
  config = mosaic_attention.MosaicAttentionConfig(64, 4)
  assert mosaic_attention.forward_programs(288, True, 1152, 1152, 64) == pallas_lib.sm_count() < 288
  op = mosaic_attention.MosaicAttention()
  out, res = jax.jit(lambda q, k, v: op.forward((q, k, v, None, None), spec, config))(q, k, v)
  assert res[-1].shape == (4, 8, 1100)  # the log-sum-exp, [B, H, T]
  testing.assert_close(out, reference(q, k, v, None, None, is_causal=True), "bfloat16", "fwd")
  out_only = jax.jit(lambda q, k, v: op.forward_output((q, k, v, None, None), spec, config))(
      q, k, v)
  assert bool(jnp.all(out_only == out))


@pytest.mark.parametrize("shape,block_kv,programs,with_lse", [
    ((2, 1024, 16, 64, 1024, 16), 128, None, True),  # 256 tiles: 124 split over the SM count
    ((3, 1024, 4, 64, 1000, 2), 128, 5, True),       # 1 tail tile in 5 pieces; padded keys, GQA
    ((1, 2048, 16, 128, 2048, 16), 128, 132, False),  # head_dim 128, 124 tail tiles, no lse
    ((2, 1024, 16, 64, 1024, 16), 128, 127, True),   # 2 tail tiles: 111 programs with no share
])
def test_mosaic_forward_with_split_tail_on_gpu(shape, block_kv, programs, with_lse):
  """The persistent forward with its last round split by key steps over all programs
  (`FwdGeometry.split_tail`): the output against the reference and against the same kernel
  without the split (the tail tiles close, the rest bitwise equal), the log-sum-exp within
  1e-5."""
  testing.skip_unless_gpu()
  b, t, h, d, s, kh = shape
  q, k, v = _inputs(shape, "bfloat16")
  sp = -(-s // block_kv) * block_kv
  pad = lambda x, n: jnp.pad(x, ((0, 0), (0, n - x.shape[1]), (0, 0), (0, 0)))
  tiles = -(-t // 128) * b * h
  programs = programs or min(tiles, pallas_lib.sm_count())
  if tiles % programs == 0:
    pytest.skip(f"{tiles} tiles divide evenly over this GPU's {programs} SMs: no tail to split")
  make = lambda split, lse: mosaic_fwd.FwdGeometry(
      batch=b, heads=h, kv_heads=kh, q_len_padded=-(-t // 128) * 128, kv_len=s,
      kv_len_padded=sp, head_dim=d, block_q=64, block_kv=block_kv, stages=2, scale=d ** -0.5,
      causal=False, programs=programs, with_lse=lse, split_tail=split)
  runs = {}
  for split in (False, True):
    g = make(split, True)
    out, lse = jax.jit(lambda q, k, v, g=g: mosaic_fwd.forward(q, k, v, g))(
        pad(q, g.q_len_padded), pad(k, sp), pad(v, sp))
    runs[split] = (np.asarray(out[:, :t], np.float32), np.asarray(lse[:, :, :t]))
  g = make(True, True)
  assert max(len(p) for p in mosaic_work.tail_pieces(g)) >= 2
  want = np.asarray(reference(q, k, v, None, None), np.float32)
  testing.assert_close(runs[True][0], want, "bfloat16", "fwd")
  (whole, whole_lse), (split, split_lse) = runs[False], runs[True]
  np.testing.assert_allclose(split_lse, whole_lse, rtol=0, atol=1e-5)
  # The pieces round their probabilities to bfloat16 against their own row maxima, so the tail
  # differs from the unsplit kernel by that rounding, not only by the output's: no further from
  # the reference than the unsplit kernel plus 2^-10, and within 2^-9 of it.
  err = lambda x: float(np.max(np.abs(x - want)))
  assert err(split) <= err(whole) + 2 ** -10, (err(split), err(whole))
  assert float(np.max(np.abs(split - whole))) <= 2 ** -9
  # Tiles of the full rounds do not change at all.
  tail_rows = np.zeros((b, t, h), bool)
  for tile in range(g.full_rounds * g.programs, g.tiles):
    pair, bi, hi = tile % g.q_pairs, tile // g.q_pairs % b, tile // (g.q_pairs * b)
    tail_rows[bi, pair * 128:(pair + 1) * 128, hi] = True
  assert np.array_equal(split[~tail_rows], whole[~tail_rows])
  if not with_lse:  # the kernel without its lse (calls that are not differentiated)
    g = make(True, False)
    out, lse = jax.jit(lambda q, k, v: mosaic_fwd.forward(q, k, v, g))(
        pad(q, g.q_len_padded), pad(k, sp), pad(v, sp))
    assert lse is None
    assert np.array_equal(np.asarray(out[:, :t], np.float32), split)


def test_mosaic_attention_splits_the_tail_on_gpu():
  """`pk.dot_product_attention(implementation="mosaic")` where `split_forward_tail` takes the
  split (1x8576x2x64: 134 tiles on 132 SMs, 2 tail tiles of 67 key steps in one run): the
  jitted call (the kernel without its lse) and its gradient (the merged lse read by the
  backward) against the reference."""
  testing.skip_unless_gpu()
  shape = (1, 8576, 2, 64, 8576, 2)
  programs = mosaic_attention.forward_programs(134, False, 8576, 8576, 128)
  g = mosaic_fwd.FwdGeometry(batch=1, heads=2, kv_heads=2, q_len_padded=8576, kv_len=8576,
                             kv_len_padded=8576, head_dim=64, block_q=64, block_kv=128,
                             stages=2, scale=0.125, causal=False, programs=programs)
  if not mosaic_attention.split_forward_tail(g):
    pytest.skip(f"no split on this GPU's {pallas_lib.sm_count()} SMs")
  _check("mosaic", "bfloat16", shape, False)


@pytest.mark.parametrize("shape,causal", [
    ((1, 128, 2, 64, 384, 1), True),     # key blocks past every query: dK = dV = 0
    ((2, 300, 4, 64, 1000, 2), False),   # 8 key blocks, the last one partly past kv_len
    ((1, 1000, 4, 64, 300, 4), True),    # more queries than keys, causal
    ((2, 300, 8, 128, 300, 2), False),   # grouped, head_dim 128: one loop of steps, split dQ
    ((2, 512, 8, 128, 512, 2), True),    # causal, grouped, head_dim 128: two phases of steps
    ((1, 128, 2, 128, 384, 2), True),    # head_dim 128, lagged dQ, programs with no query step
    ((2, 1000, 4, 128, 1000, 4), False),  # head_dim 128, 16 steps: lagged dQ, keys masked
    ((1, 1100, 2, 128, 1100, 2), True),  # head_dim 128, causal, 18 steps: lagged dQ, keys masked
])
def test_mosaic_fused_backward_on_gpu(shape, causal):
  """The warp-specialised backward (``mosaic_bwd``: one program per 128 keys, dQ by TMA
  reduce-add) at shapes the other GPU tests leave out."""
  testing.skip_unless_gpu()
  _check("mosaic", "bfloat16", shape, causal)


@pytest.mark.parametrize("causal", [False, True])
def test_mosaic_fused_backward_matches_the_split_kernels_on_gpu(monkeypatch, causal):
  """The fused backward (dQ by atomic reduce-adds) against the split dQ and dK/dV kernels that
  ``XLA_FLAGS=--xla_gpu_deterministic_ops=true`` selects: the same arithmetic summed in another
  order, so within the bfloat16 output tolerance (6x tighter than the gradient tolerance against
  the float32 reference); the split path is also bitwise the same twice."""
  testing.skip_unless_gpu()
  q, k, v = _inputs((2, 300, 4, 64, 1000, 2), "bfloat16")
  dout = jax.random.normal(jax.random.key(3), q.shape, q.dtype)

  def grads():  # A new function each time: traced again, so the flag is read again.
    attend = lambda q, k, v: pk.dot_product_attention(  # noqa: E731
        q, k, v, is_causal=causal, implementation="mosaic")
    return jax.jit(lambda q, k, v, d: jax.vjp(attend, q, k, v)[1](d))(q, k, v, dout)

  fused = grads()
  monkeypatch.setenv("XLA_FLAGS", "--xla_gpu_deterministic_ops=true")
  split, again = grads(), grads()
  for f, s, a in zip(fused, split, again):
    assert bool(jnp.all(s == a)), "the split backward is not bitwise repeatable"
    testing.assert_close(f, s, "bfloat16", "fwd")


@pytest.mark.parametrize("shape,causal", [
    ((2, 300, 4, 64, 1000, 2), False),   # one warpgroup's dQ product per step, keys masked
    ((1, 1000, 4, 64, 300, 4), True),    # 128-row causal steps
    ((2, 1000, 4, 128, 1000, 4), False),  # lagged, column-split dQ
    ((2, 512, 8, 128, 512, 2), True),    # causal, grouped, two phases of steps
])
def test_mosaic_fixed_point_backward_is_repeatable_and_matches_the_split_kernels_on_gpu(
    monkeypatch, shape, causal):
  """``PJRTKIT_ATTENTION_DQ_SUM=fixed_point``: the fused backward with dQ summed in int32 is
  bitwise the same in three calls and within the bfloat16 output tolerance of the split
  kernels (themselves checked against the float32 reference above)."""
  testing.skip_unless_gpu()
  q, k, v = _inputs(shape, "bfloat16")
  dout = jax.random.normal(jax.random.key(3), q.shape, q.dtype)

  def grads(lowered=False):  # A new function each time: traced again, the variable read again.
    attend = lambda q, k, v: pk.dot_product_attention(  # noqa: E731
        q, k, v, is_causal=causal, implementation="mosaic")
    f = jax.jit(lambda q, k, v, d: jax.vjp(attend, q, k, v)[1](d))
    return f.lower(q, k, v, dout).as_text() if lowered else f(q, k, v, dout)

  monkeypatch.setenv("PJRTKIT_ATTENTION_DQ_SUM", "split")
  split = grads()
  monkeypatch.setenv("PJRTKIT_ATTENTION_DQ_SUM", "fixed_point")
  fixed, again, third = grads(), grads(), grads()
  int32_sums = grads(lowered=True).count("xi32>")
  monkeypatch.setenv("PJRTKIT_ATTENTION_DQ_SUM", "float32")
  assert int32_sums > grads(lowered=True).count("xi32>"), "the fixed-point kernel did not run"
  for f, a, t, s in zip(fixed, again, third, split):
    assert bool(jnp.all(f == a)) and bool(jnp.all(f == t)), "fixed point is not repeatable"
    testing.assert_close(f, s, "bfloat16", "fwd")


def test_chunked_with_several_chunks_matches():
  q, k, v = _inputs(SHAPES["even_mqa"], "float32")
  impl = pk.dot_product_attention.__globals__["IMPLEMENTATIONS"]["xla_chunked"]
  spec = pk.dot_product_attention.__globals__["base"].make_spec(q, k, v, None, None, True, None)
  with jax.default_matmul_precision("highest"):  # XLA:GPU's default float32 dot is tf32.
    out, _ = impl.forward((q, k, v, None, None), spec, ChunkedConfig(16))
    want = reference(q, k, v, is_causal=True)
  testing.assert_close(out, want, "float32", "fwd")


def test_explicit_implementations_refuse_with_reasons():
  testing.skip_on_gpu("checks the refusals of pjrtkit's CPU device")
  q, k, v = _inputs(SHAPES["odd_gqa"], "float32")
  with pytest.raises(pk.UnsupportedImplementationError, match=(
      r"dot_product_attention: implementation='mosaic' cannot serve this call: Pallas Mosaic "
      r"GPU kernels need an NVIDIA GPU; this is platform 'pjrtkit', device kind 'pjrtkit_cpu' "
      r"\(no GPU\)")):
    pk.dot_product_attention(q, k, v, implementation="mosaic")
  with pytest.raises(pk.UnsupportedImplementationError, match=(
      r"implementation='native' cannot serve this call: a mask other than a key mask \(\[2 or 1, "
      r"1, 1, 29\]: one flag per batch element and key, as key_value_seq_lengths gives\) is not "
      r"supported, got shape \(1, 1, 37, 29\)")):
    pk.dot_product_attention(q, k, v, mask=jnp.ones((1, 1, 37, 29), bool), implementation="native")
  with pytest.raises(pk.UnsupportedImplementationError, match=(
      "implementation='native' cannot serve this call: bias is not supported")):
    pk.dot_product_attention(q, k, v, jnp.ones((1, 1, 37, 29)), implementation="native")
  with pk.pallas_interpret():
    with pytest.raises(pk.UnsupportedImplementationError, match=(
        "implementation='mosaic' cannot serve this call: dtype float32 is not supported")):
      pk.dot_product_attention(q, k, v, implementation="mosaic")


def test_argument_errors_name_the_parameter():
  q, k, v = _inputs(SHAPES["odd_gqa"], "float32")
  with pytest.raises(ValueError, match=r"query heads \(4\) must be a multiple of key/value heads "
                                       r"\(3\)"):
    pk.dot_product_attention(q, jnp.ones((2, 29, 3, 24)), jnp.ones((2, 29, 3, 24)))
  with pytest.raises(ValueError, match=r"mask must broadcast to \[\*batch, heads, q_seq, kv_seq\] "
                                       r"= \(2, 4, 37, 29\)"):
    pk.dot_product_attention(q, k, v, mask=jnp.ones((37, 29), bool))
  with pytest.raises(TypeError, match="query, key and value must have one dtype"):
    pk.dot_product_attention(q, k.astype(jnp.bfloat16), v)
  with pytest.raises(ValueError, match=r"query and key head_dim \(their last dimension\) must be "
                                       r">= 1, got 0"):
    pk.dot_product_attention(q[..., :0], k[..., :0], v)


@pytest.mark.parametrize("impl", ["xla", "xla_chunked", "native", "triton", "mosaic", "cudnn",
                                  None])
@pytest.mark.parametrize("q_shape, kv_shape", [
    ((2, 4, 2, 8), (2, 0, 1, 8)),   # no keys: every row an empty sum, zeros
    ((2, 0, 2, 8), (2, 3, 1, 8)),   # no queries
    ((0, 4, 2, 8), (0, 3, 1, 8)),   # no batch elements
    ((2, 4, 0, 8), (2, 3, 1, 8)),   # no query heads
])
def test_zero_size_calls_give_zeros_and_zero_gradients_as_jax_nn(impl, q_shape, kv_shape):
  """No keys, queries, batch elements or heads: zeros of the output's shape (as
  ``jax.nn.dot_product_attention``), with a bias, lengths and every option given, and exactly
  zero gradients; no implementation runs, so every name gives it (on any device)."""
  testing.skip_unless_runnable(impl)
  q, k, v = (jnp.asarray(np.random.default_rng(i).standard_normal(s), jnp.bfloat16)
             for i, s in enumerate((q_shape, kv_shape, kv_shape)))
  b, t, _, _ = q_shape
  bias = jnp.ones((b, 1, t, kv_shape[1]), jnp.float32)
  f = lambda q, k, v, bias: pk.dot_product_attention(  # noqa: E731
      q, k, v, bias, is_causal=True, key_value_seq_lengths=jnp.full((b,), 2),
      query_seq_lengths=jnp.full((b,), 1), local_window_size=(1, 1), logits_soft_cap=5.0,
      implementation=impl)
  out = jax.jit(f)(q, k, v, bias)
  assert out.shape == q_shape and out.dtype == jnp.bfloat16
  np.testing.assert_array_equal(np.asarray(out, np.float32), np.zeros(q_shape, np.float32))
  want = jax.nn.dot_product_attention(q, k, v)
  np.testing.assert_array_equal(np.asarray(out, np.float32), np.asarray(want, np.float32))
  grads = jax.jit(jax.grad(lambda *a: jnp.sum(f(*a).astype(jnp.float32) * 3.0),
                           argnums=(0, 1, 2, 3)))(q, k, v, bias)
  for g, a in zip(grads, (q, k, v, bias)):
    assert g.shape == a.shape and g.dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(g, np.float32), np.zeros(a.shape, np.float32))
  with pytest.raises(ValueError, match="unknown implementation='flash'"):
    pk.dot_product_attention(q, k, v, implementation="flash")


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
