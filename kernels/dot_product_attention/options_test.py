"""dot_product_attention's arguments beyond the four-dimension call (Tokamax's and ``jax.nn``'s):
local windows, logits soft cap, sequence lengths, a value head dim of its own, any number of
batch dimensions, positional bias and mask, precision, implementation sequences and
``q_sharding``; values and gradients against `base.reference` (highest precision, differentiated
by JAX), the kernels' refusals, and bad arguments refused naming the parameter. The "native"
kernel's key masks and small-tile windows: `native_options_test.py`.

Tolerances: `pjrtkit.kernels.testing.TOLERANCES`. Runs on pjrtkit's CPU device ("triton" in
Pallas interpret mode) and on a GPU (`tools/kernels_gpu/run.sh`, "triton" compiled); the sharding
cases run in a child process on JAX's CPU backend with 4 host devices.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import device as pk_device  # noqa: E402
from pjrtkit.kernels.core import op as op_lib  # noqa: E402
from pjrtkit.kernels.dot_product_attention import api, arg_specs, base, batching  # noqa: E402
from pjrtkit.kernels.dot_product_attention import triton as triton_lib  # noqa: E402
from pjrtkit.kernels.dot_product_attention.xla_chunked import ChunkedConfig  # noqa: E402

B, T, S, H, K, D = 2, 19, 27, 4, 2, 16


def _arrays(dtype: str, seed: int = 0, dv: int = D, batch: tuple[int, ...] = (B,)):
  rng = np.random.default_rng(seed)
  q = jnp.asarray(rng.standard_normal(batch + (T, H, D)), dtype)
  k = jnp.asarray(rng.standard_normal(batch + (S, K, D)), dtype)
  v = jnp.asarray(rng.standard_normal(batch + (S, K, dv)), dtype)
  return q, k, v


def _chunked(q, k, v, bias=None, mask=None, chunk: int = 8, **options):
  """"xla_chunked" with `chunk` keys per step (27 keys: a padded last chunk)."""
  spec = base.make_spec(q, k, v, bias, mask, options.pop("is_causal", False),
                        options.pop("scale", None), **options)
  choice = op_lib.Choice(api.IMPLEMENTATIONS["xla_chunked"], ChunkedConfig(chunk), "explicit")
  return op_lib.run(spec, (q, k, v, bias, mask), "xla_chunked", choice, choice)


OPTIONS = {
    "window_int": dict(local_window_size=3),
    "window_pair": dict(local_window_size=(5, 0)),
    "window_causal": dict(local_window_size=(2, 4), is_causal=True),
    "soft_cap": dict(logits_soft_cap=1.5),
    "soft_cap_causal_scale": dict(logits_soft_cap=4.0, is_causal=True, scale=0.4),
    "all": dict(logits_soft_cap=3.0, local_window_size=(6, 2), is_causal=True),
}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", sorted(OPTIONS))
@pytest.mark.parametrize("impl", [None, "xla", "xla_chunked", "native"])
def test_window_and_soft_cap_match_the_reference(impl, name, dtype):
  testing.skip_unless_runnable(impl)
  options = OPTIONS[name]
  q, k, v = _arrays(dtype)
  want = lambda q, k, v: base.reference(q, k, v, **options)  # noqa: E731
  if impl == "xla_chunked":
    call = lambda q, k, v: _chunked(q, k, v, **options)  # noqa: E731
  else:
    call = lambda q, k, v: pk.dot_product_attention(q, k, v, implementation=impl, **options)  # noqa: E731
  testing.assert_value_and_grad_close(call, want, (q, k, v), dtype)


def _length_mask(q_lengths, kv_lengths):
  rows = np.arange(T)[None, :] < np.asarray(q_lengths)[:, None]
  cols = np.arange(S)[None, :] < np.asarray(kv_lengths)[:, None]
  return jnp.asarray(rows[:, None, :, None] & cols[:, None, None, :])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("impl", [None, "xla", "xla_chunked"])
def test_sequence_lengths_are_the_mask_they_stand_for(impl, dtype):
  """Padded queries (rows with every key masked: they average every value, and value's
  gradient gets their 1/S share) and padded keys, with a caller's mask and bias too."""
  q, k, v = _arrays(dtype, seed=1)
  qlen, kvlen = jnp.array([11, T]), jnp.array([27, 4])
  rng = np.random.default_rng(2)
  bias = jnp.asarray(rng.standard_normal((B, 1, T, S)), jnp.float32)
  user = jnp.asarray(rng.random((1, H, T, S)) > 0.25)
  want_mask = _length_mask(qlen, kvlen) & user
  want = lambda q, k, v, b: base.reference(q, k, v, b, want_mask, is_causal=True)  # noqa: E731
  if impl == "xla_chunked":
    call = lambda q, k, v, b: _chunked(q, k, v, b, want_mask, is_causal=True)  # noqa: E731
  else:
    call = lambda q, k, v, b: pk.dot_product_attention(  # noqa: E731
        q, k, v, b, user, is_causal=True, query_seq_lengths=qlen, key_value_seq_lengths=kvlen,
        implementation=impl)
  testing.assert_value_and_grad_close(call, want, (q, k, v, bias), dtype)
  # The padded query rows: the mean of every value (as jax.nn and Tokamax give them).
  out = pk.dot_product_attention(q, k, v, query_seq_lengths=qlen, implementation=impl)
  mean = jnp.repeat(jnp.mean(v.astype(jnp.float32), axis=1), H // K, axis=1)
  testing.assert_close(out[0, 11:], jnp.broadcast_to(mean[0], (T - 11, H, D)), dtype, "fwd")


def test_lengths_make_no_query_by_key_mask():
  """Both lengths: the implementations get a [N, 1, 1, S] mask (memory linear in S); the query
  rows past their length are filled in after the call."""
  q, k, v = _arrays("float32")
  call = batching.Call.make(q, k, v, None, None, jnp.array([3, 9]), jnp.array([20, 27]))
  assert call.arrays[4].shape == (B, 1, 1, S)
  np.testing.assert_array_equal(np.asarray(call.query_lengths), [3, 9])


def test_a_finfo_min_bias_does_not_rank_kept_keys_below_masked_ones():
  """A bias of finfo.min on the keys a row keeps, with a mask on others: every logit of the row
  is at the masked value, so it averages every value (as Tokamax), and only value gets a
  gradient from it."""
  q, k, v = _arrays("float32", seed=10)
  bias = jnp.zeros((1, 1, T, S)).at[:, :, 2, 3:].set(jnp.finfo(jnp.float32).min)
  mask = jnp.ones((1, 1, T, S), bool).at[:, :, 2, :3].set(False)
  want = lambda q, k, v, b: base.reference(q, k, v, b, mask)  # noqa: E731
  for impl in ("xla", "xla_chunked"):
    if impl == "xla_chunked":
      call = lambda q, k, v, b: _chunked(q, k, v, b, mask)  # noqa: E731
    else:
      call = lambda q, k, v, b: pk.dot_product_attention(q, k, v, b, mask, implementation="xla")  # noqa: E731
    testing.assert_value_and_grad_close(call, want, (q, k, v, bias), "float32")
    out = call(q, k, v, bias)
    mean = jnp.repeat(jnp.mean(v, axis=1), H // K, axis=1)
    testing.assert_close(out[:, 2], mean, "float32", "fwd")


def test_fully_masked_rows_give_value_its_share_of_the_gradient():
  """dv of a row with every key masked: dout / S on every key (exp(s - lse) would give dout);
  "native" with a key mask masking every key."""
  q, k, v = _arrays("float32", seed=3)
  for impl, mask in (("xla", jnp.zeros((1, 1, T, S), bool)),
                     ("xla_chunked", jnp.zeros((1, 1, T, S), bool)),
                     ("native", jnp.zeros((1, 1, 1, S), bool))):
    dv = jax.grad(lambda v: jnp.sum(pk.dot_product_attention(q, k, v, mask=mask,  # noqa: B023
                                                             implementation=impl)), )(v)  # noqa: B023
    np.testing.assert_allclose(np.asarray(dv), np.full(v.shape, T * (H // K) / S), rtol=1e-5)


@pytest.mark.parametrize("impl", [None, "xla", "xla_chunked"])
def test_value_head_dim_of_its_own(impl):
  q, k, v = _arrays("float32", seed=4, dv=24)
  want = lambda q, k, v: base.reference(q, k, v, is_causal=True)  # noqa: E731
  if impl == "xla_chunked":
    call = lambda q, k, v: _chunked(q, k, v, is_causal=True)  # noqa: E731
  else:
    call = lambda q, k, v: pk.dot_product_attention(q, k, v, is_causal=True,  # noqa: E731
                                                    implementation=impl)
  assert call(q, k, v).shape == (B, T, H, 24)
  testing.assert_value_and_grad_close(call, want, (q, k, v), "float32")


@pytest.mark.parametrize("batch", [(), (3,), (2, 3), (1, 2, 2)])
def test_any_number_of_batch_dimensions(batch):
  """`[*B, T, H, D]`: the same as the flattened call, bias and mask broadcast over some of the
  batch dimensions, lengths of the batch's shape."""
  q, k, v = _arrays("float32", seed=5, batch=batch)
  n = int(np.prod(batch))
  rng = np.random.default_rng(6)
  bias = jnp.asarray(rng.standard_normal(batch[:-1] + (1,) * min(1, len(batch)) + (H, T, S)),
                     jnp.float32) if batch else jnp.asarray(rng.standard_normal((1, T, S)),
                                                            jnp.float32)
  kvlen = jnp.asarray(rng.integers(1, S + 1, size=batch), jnp.int32)
  got = pk.dot_product_attention(q, k, v, bias, key_value_seq_lengths=kvlen)
  assert got.shape == batch + (T, H, D)
  flat = lambda a: a.reshape((n,) + a.shape[len(batch):])  # noqa: E731
  full_bias = jnp.broadcast_to(bias, batch + bias.shape[len(batch):])
  want = base.reference(flat(q), flat(k), flat(v), flat(full_bias),
                        _length_mask(np.full(n, T), np.asarray(kvlen).reshape(-1)))
  testing.assert_close(got.reshape(want.shape), want, "float32", "fwd")


def test_positional_bias_and_mask_are_the_keyword_ones():
  q, k, v = _arrays("float32", seed=7)
  rng = np.random.default_rng(8)
  bias = jnp.asarray(rng.standard_normal((1, H, T, S)), jnp.float32)
  mask = jnp.asarray(rng.random((B, 1, T, S)) > 0.3)
  np.testing.assert_array_equal(np.asarray(pk.dot_product_attention(q, k, v, bias, mask)),
                                np.asarray(pk.dot_product_attention(q, k, v, bias=bias,
                                                                    mask=mask)))


def test_precision_highest_matches_the_reference_closely():
  q, k, v = _arrays("float32", seed=9)
  want = base.reference(q, k, v, is_causal=True)
  for precision in (jax.lax.Precision.HIGHEST, "highest",
                    (jax.lax.Precision.HIGHEST, jax.lax.Precision.HIGHEST)):
    got = pk.dot_product_attention(q, k, v, is_causal=True, precision=precision)
    testing.assert_close(got, want, "float32", "fwd")
  spec = base.make_spec(q, k, v, None, None, True, None, precision=(jax.lax.Precision.HIGHEST,
                                                                      jax.lax.Precision.HIGH))
  assert base.option(spec, "precision") == "HIGHEST,HIGH"
  assert base.precisions(spec) == (jax.lax.Precision.HIGHEST, jax.lax.Precision.HIGH)
  # The default precision adds no parameter: the Specs of tuned results are unchanged.
  plain = base.make_spec(q, k, v, None, None, True, None)
  assert base.make_spec(q, k, v, None, None, True, None, precision="default") == plain
  assert dict(plain.params) == {"is_causal": True, "scale": 0.25}


H200 = testing.described_h200()


@pytest.mark.parametrize("options,needle", [
    (dict(local_window_size=2), "local_window_size is not computed by this kernel"),
    (dict(logits_soft_cap=2.0), "logits_soft_cap is not computed by this kernel"),
    (dict(logits_soft_cap=2.0, local_window_size=1),
     "local_window_size and logits_soft_cap are not computed by this kernel"),
])
def test_kernels_refuse_what_they_do_not_compute(options, needle):
  """On an H200 (described): "mosaic" and "cudnn" refuse windows and soft caps, "triton" takes
  them; `None` then takes "triton"."""
  q, k, v = _arrays("bfloat16")
  spec = base.make_spec(q, k, v, None, None, False, None, **options)
  for impl in ("mosaic", "cudnn"):
    assert needle in api.IMPLEMENTATIONS[impl].unsupported_reason(spec, H200)
  assert api.IMPLEMENTATIONS["triton"].unsupported_reason(spec, H200) is None
  assert api.FAMILY.choose(spec, None, "fwd", H200).op.implementation == "triton"
  assert api.FAMILY.choose(spec, None, "bwd", H200).op.implementation == "triton"
  q16, k16, v16 = _arrays("bfloat16", dv=32)
  with pytest.raises(pk.UnsupportedImplementationError,
                     match=r"a value head dim \(32\) other than the query's \(16\)"):
    pk.dot_product_attention(q16, k16, v16, implementation="native")


@pytest.mark.parametrize("case", range(len(arg_specs.WINDOW_CASES)))
def test_triton_window_and_soft_cap_match_the_reference(case):
  """"triton" with 16-row tiles (Pallas interpret mode without a GPU, compiled on one): the key
  (and query) block ranges the window reaches, the masks at their edges, the soft cap's
  gradient."""
  t, s, options = arg_specs.WINDOW_CASES[case]
  rng = np.random.default_rng(case)
  q = jnp.asarray(rng.standard_normal((1, t, 2, 16)), jnp.float32)
  k = jnp.asarray(rng.standard_normal((1, s, 1, 16)), jnp.float32)
  v = jnp.asarray(rng.standard_normal((1, s, 1, 16)), jnp.float32)
  spec = base.make_spec(q, k, v, None, None, options.get("is_causal", False), None,
                        **{n: o for n, o in options.items() if n != "is_causal"})
  config = triton_lib.TritonAttentionConfig(16, 16, 4, 2)
  choice = op_lib.Choice(api.IMPLEMENTATIONS["triton"], config, "explicit")
  call = lambda q, k, v: op_lib.run(spec, (q, k, v, None, None), "triton", choice, choice)  # noqa: E731
  want = lambda q, k, v: base.reference(q, k, v, **options)  # noqa: E731
  with pk.pallas_interpret(testing.interpret("triton")):
    assert api.IMPLEMENTATIONS["triton"].unsupported_reason(
        spec, pk_device.current_device()) is None
    testing.assert_value_and_grad_close(call, want, (q, k, v), "float32")


def test_triton_refuses_windows_that_leave_queries_without_keys():
  q, k, v = (jnp.ones((1, 30, 2, 16)), jnp.ones((1, 10, 2, 16)), jnp.ones((1, 10, 2, 16)))
  with pk.pallas_interpret(testing.interpret("triton")):
    with pytest.raises(pk.UnsupportedImplementationError, match="leaves queries without any key"):
      pk.dot_product_attention(q, k, v, local_window_size=(5, 5), implementation="triton")
    pk.dot_product_attention(q, k, v, local_window_size=(20, 0), implementation="triton")


def test_implementation_sequences_take_the_first_that_serves():
  q, k, v = _arrays("float32")
  want = pk.dot_product_attention(q, k, v, implementation="xla_chunked")
  got = pk.dot_product_attention(q, k, v, implementation=("mosaic", "triton", "xla_chunked"))
  np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
  with pytest.raises(ExceptionGroup) as group:
    pk.dot_product_attention(q, k, v, implementation=["mosaic", "cudnn"])
  assert [e.implementation for e in group.value.exceptions] == ["mosaic", "cudnn"]
  assert all(isinstance(e, pk.UnsupportedImplementationError) for e in group.value.exceptions)
  with pytest.raises(pk.UnsupportedImplementationError):
    pk.dot_product_attention(q, k, v, implementation=["cudnn"])
  with pytest.raises(ValueError, match="non-empty sequence of names"):
    pk.dot_product_attention(q, k, v, implementation=[])
  with pytest.raises(ValueError, match="unknown implementation='flash'"):
    pk.dot_product_attention(q, k, v, implementation=("flash", "xla"))
  # Every op takes them.
  x = jnp.ones((4, 8), jnp.float32)
  np.testing.assert_array_equal(
      np.asarray(pk.layer_norm(x, None, None, implementation=("mosaic", "xla"))),
      np.asarray(pk.layer_norm(x, None, None, implementation="xla")))


@pytest.mark.parametrize("kwargs,error,needle", [
    (dict(local_window_size=-1), ValueError, r"local_window_size must be None, an int >= 0"),
    (dict(local_window_size=(1, 2, 3)), ValueError, r"a pair \(left, right\) of ints >= 0"),
    (dict(local_window_size=2.5), ValueError, "local_window_size"),
    (dict(logits_soft_cap=0.0), ValueError, "logits_soft_cap must be None or a finite number > 0"),
    (dict(logits_soft_cap=float("nan")), ValueError, "logits_soft_cap"),
    (dict(logits_soft_cap=True), ValueError, "logits_soft_cap"),
    (dict(precision=jax.lax.DotAlgorithmPreset.BF16_BF16_F32), ValueError,
     r"precision must be None, a jax.lax.Precision \(DEFAULT, HIGH, HIGHEST\) or a pair"),
    (dict(query_seq_lengths=jnp.ones((B,), jnp.float32)), TypeError,
     "query_seq_lengths must be an integer array, got float32"),
    (dict(key_value_seq_lengths=jnp.ones((3,), jnp.int32)), ValueError,
     r"key_value_seq_lengths must broadcast to the batch dimensions \(2,\), got shape \(3,\)"),
    (dict(q_sharding="data"), TypeError, "q_sharding must be None or a jax.sharding.NamedSharding"),
])
def test_bad_options_are_refused_naming_the_parameter(kwargs, error, needle):
  q, k, v = _arrays("float32")
  with pytest.raises(error, match=needle):
    pk.dot_product_attention(q, k, v, **kwargs)


def test_bad_batch_dimensions_are_refused_naming_the_parameter():
  q, k, v = _arrays("float32", batch=(2, 3))
  with pytest.raises(ValueError, match=r"key's batch dimensions must be the query's \(2, 3\)"):
    pk.dot_product_attention(q, k.reshape((3, 2) + k.shape[2:]), v)
  with pytest.raises(ValueError, match=r"query must be \[\*batch, seq, heads, head_dim\] \(at "
                                       r"least 3 dimensions\)"):
    pk.dot_product_attention(q[0, 0, 0], k, v)
  with pytest.raises(ValueError, match=r"bias must broadcast to \[\*batch, heads, q_seq, "
                                       r"kv_seq\] = \(2, 3, 4, 19, 27\)"):
    pk.dot_product_attention(q, k, v, jnp.ones((3, 1, 1, 1, 1)))


_SHARDED = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
from pjrtkit import kernels as pk
rng = np.random.default_rng(0)
q = jnp.asarray(rng.standard_normal((4, 16, 8, 32)), jnp.float32)
k = jnp.asarray(rng.standard_normal((4, 24, 4, 32)), jnp.float32)
v = jnp.asarray(rng.standard_normal((4, 24, 4, 32)), jnp.float32)
mask = jnp.asarray(rng.random((4, 1, 16, 24)) > 0.3)
kvlen = jnp.array([3, 24, 10, 17])
out = {}
for kind in ("Auto", "Explicit"):
  mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(getattr(AxisType, kind),) * 2)
  qs = NamedSharding(mesh, P("data", None, "model", None))
  f = lambda q, k, v, qs: jnp.sum(jnp.sin(pk.dot_product_attention(
      q, k, v, None, mask, is_causal=True, key_value_seq_lengths=kvlen, q_sharding=qs)))
  want, dwant = jax.value_and_grad(f, argnums=(0, 1, 2))(q, k, v, None)
  with jax.set_mesh(mesh):
    sharded = jax.jit(lambda q: pk.dot_product_attention(q, k, v, q_sharding=qs))(
        jax.device_put(q, qs))
    got, dgot = jax.jit(jax.value_and_grad(f, argnums=(0, 1, 2)), static_argnums=3)(
        jax.device_put(q, qs), k, v, qs)
  text = jax.jit(lambda q: pk.dot_product_attention(q, k, v, q_sharding=qs)).lower(q).as_text()
  errors = []
  for bad in (P(None, "data"), P(None, None, None, "model"), P(None, None, ("data", "model"))):
    try:
      pk.dot_product_attention(q, k[:, :, :2], v[:, :, :2], q_sharding=NamedSharding(mesh, bad))
    except ValueError as e:
      errors.append(str(e))
  out[kind] = {"loss": abs(float(got - want)),
               "grad": max(float(jnp.max(jnp.abs(a - b))) for a, b in zip(dgot, dwant)),
               "spec": list(tuple(sharded.sharding.spec) + (None,) * (4 - len(sharded.sharding.spec))),
               "manual": "manual_computation" in text,
               "mqa": float(jnp.max(jnp.abs(
                   pk.dot_product_attention(q, k[:, :, :1], v[:, :, :1], q_sharding=qs)
                   - pk.dot_product_attention(q, k[:, :, :1], v[:, :, :1])))),
               "errors": errors}
print(json.dumps(out))
"""


def test_q_sharding_runs_each_devices_share_under_shard_map():
  """4 host devices (2 x 2 mesh): batch over "data", heads over "model"; the values and
  gradients of the unsharded call, the output split like the query, shard_map in the lowering,
  multi-query key/value whole; splits of the sequence, head_dim or of key/value heads that do
  not divide refused naming q_sharding."""
  env = dict(os.environ, JAX_PLATFORMS="cpu",
             XLA_FLAGS="--xla_force_host_platform_device_count=4",
             PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
  proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_SHARDED)], env=env,
                        capture_output=True, text=True, timeout=300, check=False)
  assert proc.returncode == 0, proc.stderr[-4000:]
  got = json.loads(proc.stdout.strip().splitlines()[-1])
  for kind in ("Auto", "Explicit"):
    r = got[kind]
    assert r["loss"] <= 1e-3 and r["grad"] <= 1e-4 and r["mqa"] <= 1e-5, (kind, r)
    assert r["spec"] == ["data", None, "model", None], (kind, r["spec"])
    assert r["manual"], kind
    assert len(r["errors"]) == 3, (kind, r["errors"])
    assert "may split the query's batch and heads dimensions only" in r["errors"][0]
    assert "may split the query's batch and heads dimensions only" in r["errors"][1]
    assert "the 2 key/value heads must split likewise (a multiple of 4) or be one" in (
        r["errors"][2])


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
