"""dot_product_attention's "native" kernel (pjrtkit's CPU device) beyond the plain call: key masks
(`key_value_seq_lengths` and a caller's [B or 1, 1, 1, S] mask) with blocks skipped and rows left
without keys, local windows and soft caps on small tiles, windows that leave queries without keys,
and what it refuses. Values and gradients against `base.reference` (highest precision,
differentiated by JAX); tolerances: `pjrtkit.kernels.testing.TOLERANCES`. Skipped off pjrtkit's
CPU device.
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
from pjrtkit.kernels.core import device as pk_device  # noqa: E402
from pjrtkit.kernels.core import op as op_lib  # noqa: E402
from pjrtkit.kernels.dot_product_attention import api, arg_specs, base  # noqa: E402
from pjrtkit.kernels.dot_product_attention import native as native_lib  # noqa: E402


@pytest.fixture(autouse=True)
def _on_the_cpu_device():
  testing.skip_unless_runnable("native")


# (T, S, key lengths of a batch of 3, options): a batch element with no key, lengths that are not
# a multiple of the 16-key block, one key only; causal rows, windows and both, where queries lose
# every key to the lengths and the window together; soft caps.
NATIVE_KEY_LENGTH_CASES = [
    (19, 27, (27, 5, 0), dict()),
    (19, 27, (13, 1, 27), dict(is_causal=True)),
    (40, 40, (33, 7, 0), dict(local_window_size=(7, 3))),
    (40, 40, (40, 7, 19), dict(local_window_size=(2, 0), is_causal=True)),
    (24, 40, (40, 17, 3), dict(logits_soft_cap=2.0, is_causal=True)),
    (57, 33, (33, 16, 32), dict(local_window_size=(30, 5), logits_soft_cap=1.5)),
]


def _key_length_arrays(t: int, s: int, dtype: str, seed: int):
  """q [3, t, 4, 24], k and v [3, s, 2, 24] (two query heads per key/value head)."""
  rng = np.random.default_rng(seed)
  q = jnp.asarray(rng.standard_normal((3, t, 4, 24)), dtype)
  k = jnp.asarray(rng.standard_normal((3, s, 2, 24)), dtype)
  v = jnp.asarray(rng.standard_normal((3, s, 2, 24)), dtype)
  return q, k, v


@pytest.mark.parametrize("case", range(len(NATIVE_KEY_LENGTH_CASES)))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_native_key_lengths_match_the_reference(case, dtype):
  """"native" with key_value_seq_lengths (a [3, 1, 1, S] key mask): through the public call
  (its default tiles) and with 8-row query and 16-key tiles (key blocks past a batch element's
  length skipped, partial blocks masked); rows without keys are the mean of every value and give
  value their share of the gradient, as in the reference."""
  t, s, lengths, options = NATIVE_KEY_LENGTH_CASES[case]
  q, k, v = _key_length_arrays(t, s, dtype, seed=20 + case)
  kvlen = jnp.asarray(lengths, jnp.int32)
  mask = jnp.asarray(np.arange(s)[None, :] < np.asarray(lengths)[:, None])[:, None, None, :]
  want = lambda q, k, v: base.reference(q, k, v, None, mask, **options)  # noqa: E731
  public = lambda q, k, v: pk.dot_product_attention(  # noqa: E731
      q, k, v, key_value_seq_lengths=kvlen, implementation="native", **options)
  testing.assert_value_and_grad_close(public, want, (q, k, v), dtype)
  spec = base.make_spec(q, k, v, None, mask, options.get("is_causal", False), None,
                        **{n: o for n, o in options.items() if n != "is_causal"})
  assert api.IMPLEMENTATIONS["native"].unsupported_reason(
      spec, pk_device.current_device()) is None
  choice = op_lib.Choice(api.IMPLEMENTATIONS["native"], native_lib.NativeAttentionConfig(8, 16),
                         "explicit")
  tiled = lambda q, k, v: op_lib.run(spec, (q, k, v, None, mask), "native", choice, choice)  # noqa: E731
  testing.assert_value_and_grad_close(tiled, want, (q, k, v), dtype)


@pytest.mark.parametrize("causal", [False, True])
def test_native_keeps_one_batch_elements_masked_nan_out_of_another(causal):
  """Each work item zeroes the key rows past its own keys that its tile products still read: an
  element with 5 keys after one whose masked key 10 holds NaN (in the same 16-key block) keeps
  a finite output and gradient equal to the reference."""
  rng = np.random.default_rng(40)
  q, k = (jnp.asarray(rng.standard_normal((8, n, 2, 8)), jnp.float32) for n in (12, 32))
  v = rng.standard_normal((8, 32, 2, 8)).astype(np.float32)
  keep = np.ones((8, 32), bool)
  keep[0::2, 10] = False
  v[0::2, 10] = np.nan
  keep[1::2, 5:] = False
  mask = jnp.asarray(keep)[:, None, None, :]
  v = jnp.asarray(v)
  spec = base.make_spec(q, k, v, None, mask, causal, None)
  choice = op_lib.Choice(api.IMPLEMENTATIONS["native"], native_lib.NativeAttentionConfig(8, 16),
                         "explicit")
  out, vjp = jax.vjp(lambda q, k, v: op_lib.run(spec, (q, k, v, None, mask), "native", choice,
                                                choice), q, k, v)
  grads = vjp(jnp.ones_like(out))
  odd = slice(1, None, 2)
  want, want_vjp = jax.vjp(lambda q, k, v: base.reference(q, k, v, None, mask[odd],
                                                          is_causal=causal),
                           q[odd], k[odd], v[odd])
  assert bool(jnp.all(jnp.isfinite(out[odd])))
  testing.assert_close(out[odd], want, "float32", "fwd")
  for got, ref in zip(grads, want_vjp(jnp.ones_like(want))):
    assert bool(jnp.all(jnp.isfinite(got[odd])))
    testing.assert_close(got[odd], ref, "float32", "grad")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(3, 1, 1, 40), (1, 1, 1, 40)])
def test_native_takes_a_callers_key_mask_with_holes(shape, dtype):
  """A caller's key mask that is not a prefix (holes, a batch element with its last keys kept,
  another with none kept in [1, 1, 1, S]'s case of one row for all), causal and not."""
  q, k, v = _key_length_arrays(24, 40, dtype, seed=30)
  rng = np.random.default_rng(31)
  keep = rng.random(shape) > 0.4
  keep[..., 0] = False  # Causal row 0 then has no key.
  if shape[0] == 3:
    keep[1, ..., :30] = False  # Only keys 30.. kept: the early causal rows have none.
    keep[2] = False
  mask = jnp.asarray(keep)
  for causal in (False, True):
    want = lambda q, k, v: base.reference(q, k, v, None, mask, is_causal=causal)  # noqa: E731,B023
    call = lambda q, k, v: pk.dot_product_attention(  # noqa: E731
        q, k, v, mask=mask, is_causal=causal, implementation="native")  # noqa: B023
    testing.assert_value_and_grad_close(call, want, (q, k, v), dtype)
    text = jax.jit(jax.grad(lambda q: jnp.sum(call(q, k, v).astype(jnp.float32)))).lower(
        q).as_text()
    assert "pjrtkit_kernels_attention_fwd_key_mask" in text
    assert "pjrtkit_kernels_attention_bwd_key_mask" in text


def test_native_refuses_bias_and_masks_other_than_key_masks():
  """A [N, 1, T, S] or [1, H, 1, S] mask, or a bias (with key lengths too), is refused by
  "native" with its reason; implementation=None then runs "xla"/"xla_chunked" (no native call,
  though the calls are causal with 3 x 4 x 64 x 96 logits, for which the rule lists "native"
  first). "triton" still refuses any mask."""
  q, k, v = _key_length_arrays(64, 96, "float32", seed=32)
  kvlen = jnp.array([96, 10, 0])
  rows = jnp.ones((3, 1, 64, 96), bool)
  heads = jnp.ones((1, 4, 1, 96), bool)
  for kwargs, needle in (
      (dict(mask=rows), r"a mask other than a key mask \(\[3 or 1, 1, 1, 96\]: one flag per "
                        r"batch element and key.*got shape \(3, 1, 64, 96\)"),
      (dict(mask=heads), r"got shape \(1, 4, 1, 96\)"),
      (dict(mask=rows, key_value_seq_lengths=kvlen), r"got shape \(3, 1, 64, 96\)"),
      (dict(bias=jnp.zeros((1, 1, 1, 96)), key_value_seq_lengths=kvlen),
       "bias is not supported"),
  ):
    with pytest.raises(pk.UnsupportedImplementationError, match=needle):
      pk.dot_product_attention(q, k, v, implementation="native", is_causal=True, **kwargs)
    text = jax.jit(lambda q: pk.dot_product_attention(  # noqa: B023
        q, k, v, is_causal=True, **kwargs)).lower(q).as_text()  # noqa: B023
    assert "pjrtkit_kernels_attention" not in text, kwargs
    assert "pjrtkit_kernels_attention" in jax.jit(lambda q: pk.dot_product_attention(
        q, k, v, is_causal=True)).lower(q).as_text()
  key_mask = jnp.ones((3, 1, 1, 96), bool)
  spec = base.make_spec(q, k, v, None, key_mask, False, None)
  assert base.is_key_mask(spec)
  assert "bias and mask are not supported" in api.IMPLEMENTATIONS["triton"].unsupported_reason(
      spec, testing.described_h200())


def test_native_key_mask_handler_refuses_a_mask_of_another_shape():
  """The key-mask handler called directly with a mask that does not fit: an error naming the
  shape, not an abort."""
  from pjrtkit.kernels.native import library  # pylint: disable=g-import-not-at-top
  library.ensure_registered()
  q, k, v = _key_length_arrays(8, 16, "float32", seed=33)
  config = native_lib.NativeAttentionConfig()
  spec = base.make_spec(q, k, v, None, None, False, None)
  attrs = api.IMPLEMENTATIONS["native"]._attrs(spec, config)  # pylint: disable=protected-access
  results = (jax.ShapeDtypeStruct(q.shape, q.dtype), jax.ShapeDtypeStruct((3, 4, 8), jnp.float32))
  call = jax.ffi.ffi_call(native_lib.FWD_KEY_MASK_TARGET, results)
  with pytest.raises(Exception, match=r"key_mask must be \[batch or 1, kv_seq\] = \[3 or 1, "
                                      r"16\], got \[2, 16\]"):
    jax.block_until_ready(call(q, k, v, jnp.ones((2, 16), bool), **attrs))
  out, _ = call(q, k, v, jnp.ones((1, 16), bool), **attrs)  # Still usable afterwards.
  testing.assert_close(out, base.reference(q, k, v), "float32", "fwd")


@pytest.mark.parametrize("case", range(len(arg_specs.WINDOW_CASES)))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_native_window_and_soft_cap_match_the_reference(case, dtype):
  """"native" with 8-row query and 16-key tiles: the key block ranges a window reaches, tiles
  wholly inside a window, the masks at their edges, the soft cap's gradient; 3 query heads per
  key/value head."""
  t, s, options = arg_specs.WINDOW_CASES[case]
  rng = np.random.default_rng(case)
  q = jnp.asarray(rng.standard_normal((2, t, 3, 24)), dtype)
  k = jnp.asarray(rng.standard_normal((2, s, 1, 24)), dtype)
  v = jnp.asarray(rng.standard_normal((2, s, 1, 24)), dtype)
  spec = base.make_spec(q, k, v, None, None, options.get("is_causal", False), None,
                        **{n: o for n, o in options.items() if n != "is_causal"})
  config = native_lib.NativeAttentionConfig(8, 16)
  choice = op_lib.Choice(api.IMPLEMENTATIONS["native"], config, "explicit")
  call = lambda q, k, v: op_lib.run(spec, (q, k, v, None, None), "native", choice, choice)  # noqa: E731
  want = lambda q, k, v: base.reference(q, k, v, **options)  # noqa: E731
  assert api.IMPLEMENTATIONS["native"].unsupported_reason(
      spec, pk_device.current_device()) is None
  testing.assert_value_and_grad_close(call, want, (q, k, v), dtype)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("options", [dict(local_window_size=(5, 2)),
                                     dict(local_window_size=(3, 0), is_causal=True),
                                     dict(local_window_size=(4, 1), logits_soft_cap=2.0)],
                         ids=["window", "window_causal", "window_soft_cap"])
def test_native_fills_the_rows_a_window_leaves_without_keys(options, dtype):
  # 40 queries on 13 keys: queries past 12 + left attend no key; their rows are the mean of the
  # values and give value dout / S, as in the reference. Blocks 8x16: a query block with rows on
  # both sides of the edge, and blocks wholly past it.
  rng = np.random.default_rng(5)
  q = jnp.asarray(rng.standard_normal((2, 40, 4, 16)), dtype)
  k = jnp.asarray(rng.standard_normal((2, 13, 2, 16)), dtype)
  v = jnp.asarray(rng.standard_normal((2, 13, 2, 16)), dtype)
  spec = base.make_spec(q, k, v, None, None, options.get("is_causal", False), None,
                        **{n: o for n, o in options.items() if n != "is_causal"})
  assert base.window_leaves_rows_without_keys(spec)
  assert api.IMPLEMENTATIONS["native"].unsupported_reason(spec, pk_device.current_device()) is None
  choice = op_lib.Choice(api.IMPLEMENTATIONS["native"], native_lib.NativeAttentionConfig(8, 16),
                         "explicit")
  call = lambda q, k, v: op_lib.run(spec, (q, k, v, None, None), "native", choice, choice)  # noqa: E731
  want = lambda q, k, v: base.reference(q, k, v, **options)  # noqa: E731
  testing.assert_value_and_grad_close(call, want, (q, k, v), dtype)
  mean = np.mean(np.asarray(v, np.float32), axis=1)  # [B, K, D]
  np.testing.assert_allclose(np.asarray(call(q, k, v)[:, 39], np.float32),
                             np.repeat(mean, 2, axis=1), rtol=1e-2 if dtype == "bfloat16" else 1e-6,
                             atol=1e-2 if dtype == "bfloat16" else 1e-6)
  # The public API, by name (the rule would take xla for so few logits).
  got = pk.dot_product_attention(q, k, v, implementation="native", **options)
  testing.assert_close(got, want(q, k, v), dtype, "fwd")


@pytest.mark.parametrize("masked", [False, True], ids=["plain", "key_lengths"])
def test_native_under_vmap(masked):
  """`jax.vmap` over q, k and v (and key lengths): the handlers run once per mapped element;
  values and gradients against the reference element by element."""
  rng = np.random.default_rng(5)
  q, k, v = (jnp.asarray(rng.standard_normal((2, 2, 19, 2, 16)), jnp.float32) for _ in range(3))
  lengths = jnp.asarray([[19, 4], [7, 19]], jnp.int32)

  def one(q, k, v, n, impl):
    kw = dict(key_value_seq_lengths=n) if masked else {}
    if impl is None:  # the key lengths as the [B, 1, 1, S] mask they stand for
      mask = (jnp.arange(k.shape[1])[None, :] < n[:, None])[:, None, None, :] if masked else None
      return base.reference(q, k, v, None, mask)
    return pk.dot_product_attention(q, k, v, implementation=impl, **kw)

  def loss(impl):
    return lambda q, k, v: jnp.sum(jnp.sin(jax.vmap(
        lambda q, k, v, n: one(q, k, v, n, impl))(q, k, v, lengths)))

  got = jax.vmap(lambda q, k, v, n: one(q, k, v, n, "native"))(q, k, v, lengths)
  want = jax.vmap(lambda q, k, v, n: one(q, k, v, n, None))(q, k, v, lengths)
  testing.assert_close(got, want, "float32", "fwd")
  for g, w in zip(jax.grad(loss("native"), (0, 1, 2))(q, k, v),
                  jax.grad(loss(None), (0, 1, 2))(q, k, v)):
    testing.assert_close(g, w, "float32", "grad")


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
