"""dot_product_attention: the shape classes models use (issue 50; `arg_specs.SHAPE_CLASSES`) and
the "cudnn" implementation.

* The classes as records: `AttentionCase`'s key length and dtype, labels, the comparison's records
  unchanged, the stand-ins, the inputs, the FLOP count, the call specs (the "ci" ones run with
  ``implementation=None`` against "xla", the others abstractly).
* Each class at a small shape, forward and gradient of "xla_chunked" and of "triton" (Pallas
  interpret mode without a GPU) against the float32 reference (`base.reference`, differentiated
  by JAX, full float32 matmuls): head_dim 80, 96, 192 and 256; lengths that are not a multiple of
  the blocks; query length != key length (decode T=1, prefill T=16, T > S), causal or not;
  query heads per key/value head 4, 8 and 16, and multi-query; float16 and bfloat16.
* The causal mask with T != S: top-left aligned (query t attends keys s <= t, as
  ``jax.nn.dot_product_attention``) in "xla", "xla_chunked", "triton", "native" and "mosaic"
  (one-program shapes in interpret mode), with exact values at T=1.
* "cudnn": refused off GPUs with its reason; `unsupported_reason` and the rule on an abstract
  H200 (and an A100, a T4); its residual plumbing on the CPU through a stand-in that asks
  ``jax.nn`` for its "xla" implementation (gradient from the forward's pullback without a second
  forward, the `lse` residual removed by XLA when only the pullback is read, any forward paired
  with any backward); on an NVIDIA GPU its forward and gradient against "xla" and two jitted
  gradients bitwise equal.

Tolerances: `pjrtkit.kernels.testing.TOLERANCES`.
"""

from __future__ import annotations

import dataclasses
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import call_specs  # noqa: E402
from pjrtkit.kernels.core import op as op_lib  # noqa: E402
from pjrtkit.kernels.core import tuned as tuned_lib  # noqa: E402
from pjrtkit.kernels.core.comparison import FWD, FWD_BWD  # noqa: E402
from pjrtkit.kernels.core.device import DeviceInfo  # noqa: E402
from pjrtkit.kernels.dot_product_attention import api, arg_specs, base, benchmark  # noqa: E402
from pjrtkit.kernels.dot_product_attention import cudnn, xla_chunked  # noqa: E402
from pjrtkit.kernels.dot_product_attention.base import reference  # noqa: E402

H200 = DeviceInfo("cuda", "NVIDIA H200", (9, 0))
A100 = DeviceInfo("cuda", "NVIDIA A100-SXM4-80GB", (8, 0))
T4 = DeviceInfo("cuda", "Tesla T4", (7, 5))


def _inputs(shape, dtype, seed=0):
  b, t, h, d, s, k = shape
  k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
  return (jax.random.normal(k1, (b, t, h, d), dtype), jax.random.normal(k2, (b, s, k, d), dtype),
          jax.random.normal(k3, (b, s, k, d), dtype))


def _loss(f):
  return lambda q, k, v: jnp.sum(jnp.sin(f(q, k, v).astype(jnp.float32)))


def _check(impl, shape, dtype, causal, grad=True):
  """`impl` (forward, and the gradient of a sine loss with `grad`) against the reference."""
  testing.skip_unless_runnable(impl)
  q, k, v = _inputs(shape, dtype)
  ours = lambda q, k, v: pk.dot_product_attention(q, k, v, is_causal=causal,  # noqa: E731
                                                  implementation=impl)
  ref = lambda q, k, v: reference(q, k, v, is_causal=causal)  # noqa: E731
  with jax.default_matmul_precision("highest"):
    with pk.pallas_interpret(testing.interpret(impl)):
      out = jax.jit(ours)(q, k, v)
      grads = jax.jit(jax.grad(_loss(ours), argnums=(0, 1, 2)))(q, k, v) if grad else ()
    want = jax.jit(ref)(q, k, v)
    want_grads = jax.jit(jax.grad(_loss(ref), argnums=(0, 1, 2)))(q, k, v) if grad else ()
  testing.assert_close(out, want, dtype, "fwd")
  for g, w in zip(grads, want_grads):
    testing.assert_close(g, w, dtype, "grad")


# --- the classes as records -----------------------------------------------------------------------

def test_shape_classes_cover_the_issue():
  classes = {c.id: c for c in arg_specs.SHAPE_CLASSES}
  assert [c.label for c in arg_specs.SHAPE_CLASSES] == [
      "S1 attention fwd+bwd 16x1024x32x80",
      "S2 attention fwd 16x1024x32x96",
      "S3 attention fwd 8x2048x16x192",
      "S4 attention fwd 8x2048x16x256",
      "S5 attention fwd+bwd 8x2048x16x256",
      "S6 attention fwd+bwd 16x1000x32x128",
      "S7 attention fwd+bwd causal 4x2000x32x128 kv8",
      "S8 attention fwd+bwd causal 4x4096x32x128 kv4",
      "S9 attention fwd+bwd 4x4096x32x128 kv2",
      "S10 attention fwd+bwd 4x4096x32x128 kv1",
      "S11 attention fwd+bwd 16x1024x32x128 float16",
      "S12 attention fwd 128x1x32x128 kv8 s4096",
      "S13 attention fwd 32x16x32x128 kv8 s4096",
  ]
  assert all(c.extra and not c.held_out for c in arg_specs.SHAPE_CLASSES)
  assert {c.shape[3] for c in arg_specs.SHAPE_CLASSES} == {80, 96, 128, 192, 256}
  assert {c.shape[2] // c.kv_shape[2] for c in arg_specs.SHAPE_CLASSES} == {1, 4, 8, 16, 32}
  assert (classes["S12"].kv_shape, classes["S13"].kv_shape) == ((128, 4096, 8, 128),
                                                                (32, 4096, 8, 128))
  # The comparison's cases are not among them: its default list stays as it was.
  assert not {c.id for c in arg_specs.CASES} & set(classes)
  assert [c.id for c in arg_specs.CASES][-1] == "H5" and len(arg_specs.CASES) == 15


def test_quick_stand_ins_keep_head_dim_dtype_causality_and_groups():
  for case in arg_specs.SHAPE_CLASSES:
    small = arg_specs.quick_case(case)
    assert small.shape == arg_specs.SHAPE_CLASS_QUICK[case.id][0]
    assert (small.shape[3], small.dtype, small.causal, small.phase) == (
        case.shape[3], case.dtype, case.causal, case.phase)
    assert small.shape[2] // small.kv_shape[2] == case.shape[2] // case.kv_shape[2]
    assert (small.kv_seq is None) == (case.kv_seq is None)
  assert arg_specs.quick_case(arg_specs.SHAPE_CLASSES[11]).label == (
      "S12 attention fwd 2x1x8x128 kv2 s256")
  a8 = arg_specs.CASES[7]
  assert arg_specs.quick_case(a8) == a8.with_shape(arg_specs.QUICK_SHAPES[a8.shape])


def test_attention_case_key_length_and_dtype():
  case = arg_specs.AttentionCase("X", arg_specs.OP, (2, 16, 8, 64), FWD, kv_heads=2, kv_seq=100,
                                 dtype="float16")
  assert case.kv_shape == (2, 100, 2, 64)
  assert case.label == "X attention fwd 2x16x8x64 kv2 s100 float16"
  record = case.record()
  assert (record["kv_seq"], record["dtype"], record["kv_shape"]) == (100, "float16",
                                                                     (2, 100, 2, 64))
  assert case.with_shape((1, 4, 4, 64), 30).kv_shape == (1, 30, 1, 64)
  assert case.with_shape((1, 4, 4, 64)).kv_seq == 100
  same = arg_specs.AttentionCase("Y", arg_specs.OP, (2, 16, 8, 64), FWD)
  assert same.kv_shape == (2, 16, 8, 64) and same.label == "Y attention fwd 2x16x8x64"
  with pytest.raises(ValueError, match="Y: kv_seq given for a case whose key length is the "
                                       "query's"):
    same.with_shape((1, 4, 4, 64), 30)
  with pytest.raises(ValueError, match=r"Z: dtype must be one of \('bfloat16', 'float16', "
                                       r"'float32'\), got 'int8'"):
    arg_specs.AttentionCase("Z", arg_specs.OP, (1, 8, 2, 64), FWD, dtype="int8")
  with pytest.raises(ValueError, match="Z: kv_seq must be >= 1, got 0"):
    arg_specs.AttentionCase("Z", arg_specs.OP, (1, 8, 2, 64), FWD, kv_seq=0)


def test_the_comparison_records_are_unchanged():
  """No new keys in the comparison's records (its JSON stays as it was)."""
  for case in arg_specs.CASES:
    assert set(case.record()) == {"id", "op", "shape", "phase", "extra", "held_out", "causal",
                                  "kv_heads", "label", "kv_shape"}
  assert arg_specs.CASES[7].record() == {
      "id": "A8", "op": "attention", "shape": (4, 4096, 32, 128), "phase": "fwd+bwd",
      "extra": True, "held_out": False, "causal": False, "kv_heads": 8,
      "label": "A8 attention fwd+bwd 4x4096x32x128 kv8", "kv_shape": (4, 4096, 8, 128)}


def test_inputs_and_flops_follow_key_length_and_dtype():
  s12, s11 = arg_specs.SHAPE_CLASSES[11], arg_specs.SHAPE_CLASSES[10]
  shapes = [(a.shape, str(a.dtype)) for a in jax.eval_shape(lambda: arg_specs.make_inputs(s12))]
  assert shapes == [((128, 1, 32, 128), "bfloat16"), ((128, 4096, 8, 128), "bfloat16"),
                    ((128, 4096, 8, 128), "bfloat16")]
  shapes = [(a.shape, str(a.dtype)) for a in jax.eval_shape(lambda: arg_specs.make_inputs(s11))]
  assert shapes == [((16, 1024, 32, 128), "float16")] * 4
  assert benchmark.flops(s12) == 4 * 128 * 32 * 1 * 4096 * 128 == 8589934592
  assert benchmark.flops(s11) == 3.5 * 4 * 16 * 32 * 1024 * 1024 * 128
  assert benchmark.flops(arg_specs.CASES[0]) == 2199023255552  # A1 as before


def test_shape_class_call_specs():
  specs = arg_specs.SHAPE_CLASS_CALL_SPECS
  ids = [c.id for c in arg_specs.SHAPE_CLASSES]
  assert [s.name for s in specs] == ids + [f"{i}-quick" for i in ids]
  assert [s.name for s in call_specs.tagged(specs, "primary")] == ids
  for spec, case in zip(call_specs.tagged(specs, "ci"), arg_specs.SHAPE_CLASSES):
    args, kwargs = spec.arguments(0)
    small = arg_specs.quick_case(case)
    assert [(a.shape, str(a.dtype)) for a in args] == [
        (small.shape, small.dtype), (small.kv_shape, small.dtype), (small.kv_shape, small.dtype)]
    assert kwargs == {"is_causal": case.causal} and spec.doc == small.label
    got = jax.jit(lambda *a: pk.dot_product_attention(*a, **kwargs))(*args)
    want = jax.jit(lambda *a: pk.dot_product_attention(*a, **kwargs, implementation="xla"))(*args)
    testing.assert_close(got, want, str(want.dtype), "fwd")
  for spec, case in zip(call_specs.tagged(specs, "primary"), arg_specs.SHAPE_CLASSES):

    # Traced abstractly: nothing of the H200 sizes is allocated.
    args = jax.eval_shape(lambda spec=spec: spec.arguments(0)[0])
    assert [(a.shape, str(a.dtype)) for a in args] == [
        (case.shape, case.dtype), (case.kv_shape, case.dtype), (case.kv_shape, case.dtype)]
    out = jax.eval_shape(lambda spec=spec: pk.dot_product_attention(
        *spec.arguments(0)[0], **spec.arguments(0)[1]))
    assert (out.shape, str(out.dtype)) == (case.shape, case.dtype)


# --- the classes' numerics -------------------------------------------------------------------------

NUMERICS = {  # name: ((B, T, H, D, S, K), dtype, causal)
    "hd80": ((1, 37, 2, 80, 45, 1), "float32", True),
    "hd80_bf16": ((1, 40, 2, 80, 40, 2), "bfloat16", False),
    "hd96": ((1, 37, 2, 96, 37, 2), "float32", False),
    "hd192": ((1, 33, 1, 192, 33, 1), "float32", True),
    "hd256": ((1, 33, 1, 256, 20, 1), "float32", False),
    "t100_gqa4_causal": ((1, 100, 4, 32, 100, 1), "float32", True),
    "group8_causal": ((1, 40, 8, 32, 40, 1), "float32", True),
    "group16": ((1, 24, 16, 16, 30, 1), "float32", False),
    "mqa": ((2, 19, 4, 32, 23, 1), "float32", False),
    "float16_causal": ((1, 70, 2, 64, 70, 2), "float16", True),
    "decode_t1": ((2, 1, 4, 64, 77, 2), "float32", False),
    "decode_t1_causal": ((2, 1, 4, 32, 77, 2), "float32", True),
    "prefill_t16": ((1, 16, 4, 64, 100, 2), "float32", False),
    "prefill_t16_causal": ((1, 16, 4, 32, 100, 2), "float32", True),
    "t_above_s_causal": ((1, 90, 2, 32, 40, 2), "float32", True),
}


@pytest.mark.parametrize("name", list(NUMERICS))
def test_xla_chunked(name):
  shape, dtype, causal = NUMERICS[name]
  _check("xla_chunked", shape, dtype, causal)


@pytest.mark.parametrize("name", list(NUMERICS))
def test_triton(name):
  """Pallas interpret mode without a GPU (64x64 blocks: every length here pads)."""
  shape, dtype, causal = NUMERICS[name]
  _check("triton", shape, dtype, causal)


@pytest.mark.parametrize("shape,causal", [((1, 100, 2, 32, 100, 2), True),
                                          ((2, 16, 4, 64, 130, 1), False),
                                          ((1, 90, 2, 32, 40, 2), True)])
def test_xla_chunked_with_several_chunks(shape, causal):
  """Chunks of 48 keys: the last one partly past the key length."""
  q, k, v = _inputs(shape, "float32")
  dout = jax.random.normal(jax.random.key(4), q.shape)
  spec = base.make_spec(q, k, v, None, None, causal, None)
  impl = api.IMPLEMENTATIONS["xla_chunked"]
  config = xla_chunked.ChunkedConfig(48)
  def ours(q, k, v, dout):
    out, res = impl.forward((q, k, v, None, None), spec, config)
    lse = xla_chunked.log_sum_exp((q, k, v, None, None), spec, 48)
    return out, res[6], lse, impl.backward(res, dout, spec, config)[:3]

  def want_of(q, k, v, dout):
    want, pullback = jax.vjp(lambda q, k, v: reference(q, k, v, is_causal=causal), q, k, v)
    lse = api.IMPLEMENTATIONS["xla"].forward((q, k, v, None, None), spec, None)[1][6]
    return want, lse, pullback(dout)

  with jax.default_matmul_precision("highest"):
    out, res_lse, lse, grads = jax.jit(ours)(q, k, v, dout)
    want, want_lse, want_grads = jax.jit(want_of)(q, k, v, dout)
  testing.assert_close(out, want, "float32", "fwd")
  for g, w in zip(grads, want_grads):
    testing.assert_close(g, w, "float32", "grad")
  np.testing.assert_allclose(np.asarray(lse), np.asarray(want_lse), rtol=0, atol=1e-5)
  np.testing.assert_allclose(np.asarray(res_lse), np.asarray(want_lse), rtol=0, atol=1e-5)


def test_log_sum_exp_with_bias_and_mask():
  q, k, v = _inputs((2, 12, 4, 16, 50, 2), "float32")
  bias = jax.random.normal(jax.random.key(7), (1, 4, 12, 50))
  mask = jax.random.bernoulli(jax.random.key(8), 0.7, (2, 1, 12, 50))
  spec = base.make_spec(q, k, v, bias, mask, True, None)
  with jax.default_matmul_precision("highest"):
    lse = jax.jit(lambda *a: xla_chunked.log_sum_exp(a, spec, 16))(q, k, v, bias, mask)
    want = jax.jit(lambda *a: api.IMPLEMENTATIONS["xla"].forward(a, spec, None)[1][6])(
        q, k, v, bias, mask)
  np.testing.assert_allclose(np.asarray(lse), np.asarray(want), rtol=0, atol=1e-5)


# --- causal with T != S: one alignment everywhere ---------------------------------------------

@pytest.mark.parametrize("impl", ["xla", "xla_chunked", "triton", "native"])
@pytest.mark.parametrize("t,s", [(1, 9), (5, 12), (12, 5)])
def test_causal_alignment_is_top_left_as_jax_nn(impl, t, s):
  testing.skip_unless_runnable(impl)
  q, k, v = _inputs((1, t, 2, 16, s, 1), "float32")
  with jax.default_matmul_precision("highest"), pk.pallas_interpret(testing.interpret(impl)):
    got = jax.jit(lambda q, k, v: pk.dot_product_attention(q, k, v, is_causal=True,
                                                           implementation=impl))(q, k, v)
    want = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="xla")
  testing.assert_close(got, want, "float32", "fwd")
  if t == 1:  # The one query sees key 0 only: the output is value 0, exactly as rounded.
    np.testing.assert_allclose(np.asarray(got)[:, 0], np.broadcast_to(
        np.asarray(v)[:, 0], (1, 2, 16)), rtol=0, atol=1e-6)


@pytest.mark.parametrize("shape", [(1, 16, 1, 64, 64, 1), (1, 64, 1, 64, 40, 1)])
def test_mosaic_causal_alignment_in_interpret_mode(shape):
  """One program per kernel (the Mosaic GPU interpreter gives NaN from a grid's second program
  on; the backward's kernels take 64 queries and 64 keys a program): T=16 against 64 keys, T=64
  against 40."""
  _check("mosaic", shape, "bfloat16", True)


# --- "cudnn" --------------------------------------------------------------------------------------

def _spec(shape, dtype="bfloat16", causal=False, bias_shape=None, mask_shape=None, scale=None):
  b, t, h, d, s, k = shape
  q = jax.ShapeDtypeStruct((b, t, h, d), jnp.dtype(dtype))
  kv = jax.ShapeDtypeStruct((b, s, k, d), jnp.dtype(dtype))
  bias = None if bias_shape is None else jax.ShapeDtypeStruct(bias_shape, jnp.float32)
  mask = None if mask_shape is None else jax.ShapeDtypeStruct(mask_shape, jnp.bool_)
  return base.make_spec(q, kv, kv, bias, mask, causal, scale)


def test_cudnn_is_refused_off_gpus_with_its_reason():
  testing.skip_on_gpu("checks the refusal of pjrtkit's CPU device")
  q, k, v = _inputs((1, 8, 2, 64, 8, 2), "bfloat16")
  message = (r"dot_product_attention: implementation='cudnn' cannot serve this call: cuDNN "
             r"attention needs an NVIDIA GPU; this is platform 'pjrtkit', device kind "
             r"'pjrtkit_cpu' \(no GPU\). Use implementation=None, 'xla' or 'xla_chunked' here")
  for interpret in (False, True):  # No interpret mode: it is not a Pallas kernel.
    with pk.pallas_interpret(interpret), pytest.raises(pk.UnsupportedImplementationError,
                                                       match=message):
      pk.dot_product_attention(q, k, v, implementation="cudnn")
  assert "cudnn" not in api.FAMILY.supported(_spec((1, 8, 2, 64, 8, 2)), pk.current_device())


def test_cudnn_unsupported_reason():
  op = api.IMPLEMENTATIONS["cudnn"]
  for shape in [(2, 128, 8, d, 128, 2) for d in (64, 80, 96, 128, 192, 256)] + [
      (4, 1, 32, 128, 4096, 8), (2, 1000, 16, 128, 1000, 1), (1, 2000, 32, 128, 2000, 2)]:
    assert op.unsupported_reason(_spec(shape), H200) is None, shape
  assert op.unsupported_reason(_spec((2, 64, 4, 128, 64, 4), "float16", causal=True), H200) is None
  assert op.unsupported_reason(_spec((2, 64, 4, 128, 64, 4), bias_shape=(1, 4, 64, 64),
                                     mask_shape=(2, 1, 64, 64)), H200) is None
  assert op.unsupported_reason(_spec((2, 64, 4, 128, 64, 4), bias_shape=(1, 1, 1, 64),
                                     mask_shape=(1, 1, 64, 1)), H200) is None
  assert op.unsupported_reason(_spec((1, 64, 2, 128, 64, 2)), A100) is None
  refusals = [
      (_spec((1, 64, 2, 64, 64, 2), "float32"), H200,
       "dtype float32 is not supported (accepted: bfloat16, float16; use 'triton' or 'xla' for "
       "float32)"),
      (_spec((1, 64, 2, 260, 64, 2)), H200,
       "head_dim must be a multiple of 8 up to 256 on compute capability 9.0 (256 from 9.0 on, "
       "128 below), got 260"),
      (_spec((1, 64, 2, 84, 64, 2)), H200,
       "head_dim must be a multiple of 8 up to 256 on compute capability 9.0 (256 from 9.0 on, "
       "128 below), got 84"),
      (_spec((1, 64, 2, 192, 64, 2)), A100,
       "head_dim must be a multiple of 8 up to 128 on compute capability 8.0 (256 from 9.0 on, "
       "128 below), got 192"),
      (_spec((1, 64, 2, 64, 64, 2)), T4,
       "cuDNN's flash attention needs compute capability 8.0+, this GPU (Tesla T4) has 7.5"),
      (_spec((1, 64, 2, 64, 64, 2), bias_shape=(1, 2, 1, 64)), H200,
       "a bias or mask must span the query and key lengths, [., ., q_seq=64, kv_seq=64] in one "
       "of them (JAX's cuDNN call adds the mask to the bias and takes no broadcast over those "
       "two), got (1, 2, 1, 64)"),
      (_spec((1, 63, 2, 64, 64, 2), mask_shape=(1, 1, 63, 64)), H200,
       "with a bias or mask the query and key lengths must be even (cuDNN's backward with a "
       "bias), got q_seq=63, kv_seq=64"),
  ]
  for spec, device, want in refusals:
    assert op.unsupported_reason(spec, device) == want
  for bad in (0.0, -0.125):
    assert op.unsupported_reason(_spec((1, 64, 2, 64, 64, 2), scale=bad), H200).startswith(
        f"scale must be positive, got {bad}")


def test_the_gpu_rule_takes_cudnn_after_mosaic_at_its_head_dims_and_before_it_elsewhere(
    monkeypatch):
  monkeypatch.setattr(tuned_lib, "shipped_result", lambda kind: None)
  spec = _spec((16, 1024, 32, 80, 1024, 32))
  assert api.rule(spec, H200, "fwd") == api.rule(spec, H200, "bwd") == [
      "cudnn", "mosaic", "triton", "xla"]
  for d in (64, 128):
    assert api.rule(_spec((16, 1024, 32, d, 1024, 32)), H200, "fwd") == [
        "mosaic", "cudnn", "triton", "xla"]
  chosen = lambda spec, device=H200: [  # noqa: E731
      api.FAMILY.choose(spec, None, phase, device).op.implementation for phase in ("fwd", "bwd")]
  assert chosen(spec) == ["cudnn", "cudnn"]                             # head_dim 80
  assert chosen(_spec((8, 2048, 16, 256, 2048, 16))) == ["cudnn", "cudnn"]
  assert chosen(_spec((128, 1, 32, 128, 4096, 8))) == ["mosaic", "mosaic"]
  assert chosen(_spec((128, 1, 32, 96, 4096, 8))) == ["cudnn", "cudnn"]   # decode, head_dim 96
  assert chosen(_spec((4, 4096, 32, 128, 4096, 8))) == ["mosaic", "mosaic"]
  assert chosen(_spec((2, 256, 4, 80, 256, 4), "float32")) == ["triton", "triton"]
  assert chosen(_spec((2, 256, 4, 84, 256, 4))) == ["triton", "triton"]
  assert chosen(_spec((2, 256, 4, 260, 256, 4))) == ["xla", "xla"]
  assert chosen(_spec((2, 256, 4, 192, 256, 4)), A100) == ["triton", "triton"]
  assert chosen(_spec((2, 256, 4, 128, 256, 4), bias_shape=(1, 4, 256, 256))) == ["cudnn",
                                                                                  "cudnn"]
  assert chosen(_spec((2, 255, 4, 128, 255, 4), mask_shape=(1, 1, 255, 255))) == ["xla", "xla"]


class _XlaStandIn(cudnn.CudnnAttention):
  """`CudnnAttention` with ``jax.nn``'s "xla" implementation: its residual plumbing on the CPU.
  Its pullback's leaves are not cuDNN's, so the `lse` residual is computed (`log_sum_exp`)."""

  jax_implementation = "xla"

  def unsupported_reason(self, spec, device):
    return None

  def statistics(self, pullback, spec):
    return None


def _run(spec, args, fwd_op, bwd_op):
  """The call with `fwd_op`'s forward and `bwd_op`'s backward (as `Family.call` pairs them)."""
  choice = lambda o, phase: op_lib.Choice(o, o.phase_config(spec, phase), "explicit")  # noqa: E731
  return op_lib.run(spec, args, "cudnn", choice(fwd_op, "fwd"), choice(bwd_op, "bwd"))


@pytest.mark.parametrize("causal,with_bias", [(True, False), (False, True)])
def test_cudnn_residuals_pair_with_every_backward(causal, with_bias):
  """The stand-in's gradient from its own pullback, from another forward's residuals (its
  forward again) and its residuals read by "xla"'s and "xla_chunked"'s backward (its `lse`)."""
  shape = (2, 12, 4, 16, 20, 2)
  q, k, v = _inputs(shape, "float32")
  bias = jax.random.normal(jax.random.key(3), (1, 4, 12, 20)) if with_bias else None
  spec = base.make_spec(q, k, v, bias, None, causal, None)
  stand_in = _XlaStandIn()
  ref = lambda q, k, v, bias: reference(q, k, v, bias, is_causal=causal)  # noqa: E731
  loss = lambda f: lambda *a: jnp.sum(jnp.sin(f(*a)))  # noqa: E731
  argnums = (0, 1, 2, 3) if with_bias else (0, 1, 2)
  pairs = [(stand_in, stand_in), (api.IMPLEMENTATIONS["xla"], stand_in),
           (stand_in, api.IMPLEMENTATIONS["xla"]), (stand_in, api.IMPLEMENTATIONS["xla_chunked"])]
  with jax.default_matmul_precision("highest"):
    want = jax.grad(loss(ref), argnums=argnums)(q, k, v, bias)
    for fwd_op, bwd_op in pairs:
      ours = lambda q, k, v, bias, f=fwd_op, b=bwd_op: _run(spec, (q, k, v, bias, None), f, b)
      got = jax.jit(jax.grad(loss(ours), argnums=argnums))(q, k, v, bias)
      for g, w in zip(got, want):
        testing.assert_close(g, w, "float32", "grad")
      testing.assert_close(jax.jit(ours)(q, k, v, bias), ref(q, k, v, bias), "float32", "fwd")


def test_cudnn_gradient_reads_the_pullback_without_a_second_forward():
  """The compiled gradient through the stand-in has as many dots as JAX's own gradient of the
  same ``jax.nn`` call (one forward, one backward), and no loop: the `lse` residual's scan over
  key chunks, which only another backward reads, is gone."""
  q, k, v = _inputs((1, 64, 4, 32, 640, 2), "float32")
  spec = base.make_spec(q, k, v, None, None, True, None)
  stand_in = _XlaStandIn()
  ours = lambda q, k, v: _run(spec, (q, k, v, None, None), stand_in, stand_in)  # noqa: E731
  plain = lambda q, k, v: jax.nn.dot_product_attention(  # noqa: E731
      q, k, v, is_causal=True, implementation="xla")
  compiled = lambda f: jax.jit(jax.grad(_loss(f), argnums=(0, 1, 2))).lower(  # noqa: E731
      q, k, v).compile().as_text()
  ours_text, plain_text = compiled(ours), compiled(plain)
  assert ours_text.count(" dot(") == plain_text.count(" dot(") >= 4
  assert " while(" not in ours_text
  # The forward alone, with its residuals returned, does run the scan (1 loop).
  fwd_text = jax.jit(lambda q, k, v: stand_in.forward((q, k, v, None, None), spec,
                                                      op_lib.NoConfig())[1][6]).lower(
      q, k, v).compile().as_text()
  assert " while(" in fwd_text


def test_cudnn_statistics_are_the_one_float32_row_leaf():
  op = api.IMPLEMENTATIONS["cudnn"]
  spec = _spec((2, 8, 4, 64, 16, 2))
  stats = jnp.ones((2, 4, 8), jnp.float32)
  tree = ([jnp.ones((2, 8, 4, 64), jnp.bfloat16), stats], {"x": jnp.zeros((0,), jnp.bfloat16)})
  assert op.statistics(tree, spec) is stats
  assert op.statistics([stats, stats + 1], spec) is None      # Ambiguous: not taken.
  assert op.statistics([jnp.ones((2, 8, 4), jnp.float32)], spec) is None


@pytest.mark.skipif(not testing.on_gpu(), reason="cuDNN attention needs an NVIDIA GPU "
                    "(tools/kernels_gpu)")
@pytest.mark.parametrize("shape,dtype,causal", [
    ((2, 256, 4, 80, 256, 4), "bfloat16", False),
    ((2, 200, 8, 128, 200, 2), "bfloat16", True),
    ((1, 128, 2, 256, 128, 2), "bfloat16", False),
    ((2, 128, 16, 96, 128, 1), "float16", False),
    ((2, 1, 8, 128, 256, 2), "bfloat16", False),
    ((2, 16, 8, 192, 256, 2), "bfloat16", True),
])
def test_cudnn_on_gpu(shape, dtype, causal):
  """Forward and gradient against "xla"; cuDNN's statistics as the `lse` residual; two jitted
  gradients bitwise equal."""
  _check("cudnn", shape, dtype, causal)
  q, k, v = _inputs(shape, dtype)
  spec = base.make_spec(q, k, v, None, None, causal, None)
  op = api.IMPLEMENTATIONS["cudnn"]
  lse = jax.jit(lambda q, k, v: op.forward((q, k, v, None, None), spec, op_lib.NoConfig())[1][6])(
      q, k, v)
  want = jax.jit(lambda q, k, v: api.IMPLEMENTATIONS["xla"].forward(
      (q, k, v, None, None), spec, op_lib.NoConfig())[1][6])(q, k, v)
  np.testing.assert_allclose(np.asarray(lse), np.asarray(want), rtol=0, atol=2e-2)
  attend = lambda q, k, v: pk.dot_product_attention(q, k, v, is_causal=causal,  # noqa: E731
                                                    implementation="cudnn")
  first = jax.jit(jax.grad(_loss(attend), argnums=(0, 1, 2)))(q, k, v)
  second = jax.jit(jax.grad(_loss(attend), argnums=(0, 1, 2)))(q, k, v)
  for a, b in zip(first, second):
    assert bool(jnp.all(a == b)), "two gradients differ"


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
