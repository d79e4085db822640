"""pjrtkit.kernels' user API on pjrtkit's CPU device: the issue's snippet (GPU implementations
refused, then a CPU variant run end to end), choice, autotuning, export, benchmarking, user ops."""

from __future__ import annotations

import dataclasses
import io
import json
import sys
import threading

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import device as device_lib  # noqa: E402
from pjrtkit.kernels.core import op as op_lib  # noqa: E402
from pjrtkit.kernels.core import tuned as tuned_lib  # noqa: E402
from pjrtkit.kernels.dot_product_attention import api as attention_api  # noqa: E402
from pjrtkit.kernels.dot_product_attention import base as attention_base  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import MosaicAttentionConfig  # noqa: E402
from pjrtkit.kernels.dot_product_attention.triton import TritonAttentionConfig  # noqa: E402
from pjrtkit.kernels.layer_norm import api as layer_norm_api  # noqa: E402
from pjrtkit.kernels.layer_norm import base as layer_norm_base  # noqa: E402
from pjrtkit.kernels.layer_norm import triton as layer_norm_triton  # noqa: E402
from pjrtkit.kernels.layer_norm.pallas_common import PallasLayerNormConfig  # noqa: E402


def _loss(x, scale, impls=("triton", "xla_chunked", None, "mosaic")):
  x = pk.layer_norm(x, scale=scale, offset=None, implementation=impls[0])
  x = pk.dot_product_attention(x, x, x, implementation=impls[1])
  x = pk.layer_norm(x, scale=scale, offset=None, implementation=impls[2])
  x = pk.dot_product_attention(x, x, x, implementation=impls[3])
  return jnp.sum(x)


def _inputs(shape=(2, 64, 2, 64)):
  key = jax.random.key(0)
  x = jax.random.normal(key, shape, jnp.bfloat16)
  scale = jax.random.normal(key, (shape[-1],), jnp.bfloat16)
  return x, scale


def test_issue_snippet_refuses_gpu_implementations_before_running():
  x, scale = _inputs()
  f_grad = jax.jit(jax.grad(_loss))
  with pytest.raises(pk.UnsupportedImplementationError, match=(
      "layer_norm: implementation='triton' cannot serve this call: Pallas Triton kernels need an "
      "NVIDIA GPU")):
    f_grad(x, scale)


def test_issue_snippet_cpu_variant_end_to_end():
  x, scale = _inputs()
  loss = lambda x, scale: _loss(x, scale, (None, "xla_chunked", None, "native"))  # noqa: E731
  f_grad = jax.jit(jax.grad(loss))
  out = f_grad(x, scale)
  assert out.shape == x.shape and bool(jnp.all(jnp.isfinite(out.astype(jnp.float32))))
  result = pk.autotune(f_grad, x, scale)
  assert isinstance(result, pk.AutotuningResult)
  assert result.device_kind == "pjrtkit_cpu"
  phases = sorted((c.op, c.phase, c.requested) for c in result.choices)
  assert phases == sorted([
      ("layer_norm", "fwd", "auto"), ("layer_norm", "bwd", "auto"),
      ("dot_product_attention", "fwd", "xla_chunked"), ("dot_product_attention", "bwd", "xla_chunked"),
      ("dot_product_attention", "fwd", "native"), ("dot_product_attention", "bwd", "native")])
  with result:
    out_tuned = f_grad(x, scale)
  assert out_tuned.shape == out.shape
  again = pk.AutotuningResult.loads(result.dumps())
  assert again.dumps() == result.dumps()
  with again:  # Deterministic replay: the same choices, the same program, the same values.
    assert (f_grad(x, scale) == out_tuned).all()
  exported = jax.export.export(f_grad, disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(
      jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(scale.shape, scale.dtype))
  back = jax.export.deserialize(exported.serialize())
  assert (back.call(x, scale) == out).all()
  f_std, args = pk.benchmarking.standardize_function(loss, kwargs={"x": x, "scale": scale})
  run = pk.benchmarking.compile_benchmark(f_std, args)
  bench = run(args)
  assert bench.method == "wallclock" and len(bench.evaluation_times_ms) == 10
  assert bench.median_evaluation_time_ms > 0 and bench.compile_time_ms > 0
  assert run(args, method="wallclock", iterations=3).evaluation_times_ms.__len__() == 3


def test_autotune_finds_calls_in_the_lowering_and_replays_choices():
  x, scale = _inputs((1, 48, 2, 32))
  f = jax.jit(jax.grad(lambda x: jnp.sum(pk.dot_product_attention(x, x, x, is_causal=True))))
  calls = pk.find_kernel_calls(f, x)
  assert sorted((c.phase, c.requested) for c in calls) == [("bwd", "auto"), ("fwd", "auto")]
  assert calls[0].spec.param("is_causal") is True
  assert calls[0].spec.arg("query").shape == (1, 48, 2, 32)
  result = pk.autotune(f, x, iterations=2)
  fwd = next(c for c in result.choices if c.phase == "fwd")
  assert fwd.implementation in ("xla", "xla_chunked", "native")
  assert {c[0] for c in fwd.candidates} == {"xla", "xla_chunked", "native"}
  forced = dataclasses.replace(fwd, implementation="native",
                               config=(("block_k", 32), ("block_q", 16)))
  pinned = pk.AutotuningResult(result.device_kind, (forced,))
  plain = jax.jit(lambda x: pk.dot_product_attention(x, x, x, is_causal=True)).lower(x).as_text()
  with pinned:
    tuned = jax.jit(lambda x: pk.dot_product_attention(x, x, x, is_causal=True)).lower(x).as_text()
  assert "pjrtkit_kernels_attention_fwd" not in plain    # The rule: xla (below 2**15 logits).
  assert "pjrtkit_kernels_attention_fwd" in tuned        # The pinned choice: native,
  assert "block_k = 32" in tuned and "block_q = 16" in tuned   # with its config.
  data = json.loads(pinned.dumps())
  assert data["device_kind"] == "pjrtkit_cpu"
  assert data["choices"][0]["config"] == {"block_k": 32, "block_q": 16}


def test_autotune_compiles_in_parallel_with_the_callers_contexts():
  x, _ = _inputs((1, 40, 2, 16))
  f = jax.jit(lambda x: jnp.sum(pk.dot_product_attention(x, x, x, implementation="triton")))
  threads = []
  compile_ = jax.stages.Lowered.compile

  def recording(self, *args, **kwargs):
    threads.append(threading.get_ident())
    return compile_(self, *args, **kwargs)

  with pk.pallas_interpret():  # Read on the lowering thread; the compile threads do not see it.
    serial = pk.autotune(f, x, iterations=1, compile_workers=1)
    with pytest.MonkeyPatch.context() as patch:
      patch.setattr(jax.stages.Lowered, "compile", recording)
      parallel = pk.autotune(f, x, iterations=1, compile_workers=4)
  assert threading.get_ident() not in threads and 1 < len(set(threads)) <= 4
  configs = lambda r: sorted(json.dumps(dict(c[1]), sort_keys=True)  # noqa: E731
                             for c in r.choices[0].candidates)
  assert configs(serial) == configs(parallel)
  triton = op_lib.family("dot_product_attention").implementations["triton"]
  assert len(configs(parallel)) == len(triton.autotuning_configs(parallel.choices[0].spec)) > 1
  for bad in (0, True, 2.0):
    with pytest.raises(ValueError, match=f"compile_workers must be a positive integer, got {bad}"):
      pk.autotune(f, x, compile_workers=bad)


def test_rule_per_device_shape_and_dtype():
  # 2 heads x 256 x 256 = 2**17 logits: native; 2 x 96 x 96 (< 2**15): xla (native's fixed cost).
  big, small = jnp.ones((1, 256, 2, 16), jnp.float32), jnp.ones((1, 96, 2, 16), jnp.float32)

  def lowered(q=big, **kw):
    return jax.jit(lambda q: pk.dot_product_attention(q, q, q, **kw)).lower(q).as_text()

  for kw in ({}, dict(is_causal=True), dict(local_window_size=(2, 2)),
             dict(local_window_size=(255, 255)), dict(logits_soft_cap=5.0)):
    assert "pjrtkit_kernels_attention_fwd" in lowered(**kw), kw
    assert "pjrtkit_kernels_attention_fwd" not in lowered(small, **kw), kw
  assert "pjrtkit_kernels_attention_fwd" in lowered(jnp.ones((1, 128, 2, 16), jnp.float32))  # 2**15
  assert "pjrtkit_kernels_attention_fwd" not in lowered(
      is_causal=True, mask=jnp.ones((1, 1, 256, 256), bool))
  assert "pjrtkit_kernels_attention_fwd" not in lowered(implementation="xla")
  # Key lengths and key masks ([B or 1, 1, 1, S]): native, through its key-mask handler.
  for kw in (dict(key_value_seq_lengths=jnp.array([5])), dict(mask=jnp.ones((1, 1, 1, 256), bool))):
    assert "pjrtkit_kernels_attention_fwd_key_mask" in lowered(**kw), kw
    assert "pjrtkit_kernels_attention_fwd_key_mask" in lowered(is_causal=True, **kw), kw
  assert "pjrtkit_kernels_attention_fwd" not in lowered(
      key_value_seq_lengths=jnp.array([5]), bias=jnp.ones((1, 1, 256, 256)))


def test_the_shipped_h200_choices_serve_their_calls_and_win_over_the_rule(monkeypatch):
  """kernels/tuned/NVIDIA_H200.json (tools/kernels_gpu/tune.py on the H200): every choice is a
  valid config of an implementation that serves its call there, still one of its candidates,
  the fastest of those measured, and what implementation=None (or the named implementation)
  then takes."""
  monkeypatch.setattr(layer_norm_triton, "sm_count", lambda: 132)  # The H200's, not this CPU's.
  shipped = tuned_lib.shipped_result("NVIDIA H200")
  assert shipped is not None and shipped.device_kind == "NVIDIA H200"
  autos = set()
  for c in shipped.choices:
    family = op_lib.family(c.op)
    impl = family.implementations[c.implementation]
    config = impl.config_cls(**dict(c.config))
    assert config in impl.autotuning_configs(c.spec), c.key()  # Not stale: still a candidate.
    assert c.implementation in family.supported(c.spec, H200), c.key()
    assert c.requested in ("auto", c.implementation)
    times = [t for _, _, t in c.candidates]
    assert times == sorted(times) and c.time_ms == pytest.approx(times[0], abs=1e-6)
    choice = family.choose(c.spec, None if c.requested == "auto" else c.requested, c.phase, H200)
    assert (choice.source, choice.op.implementation, choice.config) == (
        "tuned", c.implementation, config)
    if c.requested == "auto":
      autos.add((c.op, c.phase, c.spec.arg(c.spec.arg_names[0]).shape,
                 dict(c.spec.params).get("is_causal")))
  # Every shape of the H200 comparison, both phases (the forward-only causal 16384 row: forward).
  for shape, causal in [((1, 16384, 16, 128), False), ((32, 2048, 16, 64), False),
                        ((32, 2048, 16, 64), True)]:
    assert {p for o, p, s, k in autos if (s, k) == (shape, causal)} == {"fwd", "bwd"}
  assert ("dot_product_attention", "fwd", (1, 16384, 16, 128), True) in autos
  for shape in [(1048576, 64), (8192, 8192), (32, 2048, 16, 64)]:
    assert {p for o, p, s, k in autos if o == "layer_norm" and s == shape} == {"fwd", "bwd"}


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.bfloat16])
def test_layer_norm_rule_takes_native_forward_and_gradient_on_the_cpu_device(dtype):
  testing.skip_on_gpu("checks the rule of pjrtkit's CPU device")
  x = jnp.ones((8, 32), dtype)
  scale = jnp.ones((32,), jnp.float32)
  loss = lambda x, s: jnp.sum(pk.layer_norm(x, s, None).astype(jnp.float32))  # noqa: E731
  fwd = jax.jit(loss).lower(x, scale).as_text()
  grad = jax.jit(jax.grad(loss, argnums=(0, 1))).lower(x, scale).as_text()
  assert "pjrtkit_kernels_layer_norm_fwd" in fwd
  assert "pjrtkit_kernels_layer_norm_bwd" in grad


H200 = testing.described_h200()


def test_gpu_rule_and_phase_configs_follow_the_h200_runs(monkeypatch):
  """implementation=None on an H200 without a tuned file: the rule and `phase_config` (README
  "H200: against cuDNN, XLA and Tokamax"), each phase on its own."""
  monkeypatch.setattr(tuned_lib, "shipped_result", lambda kind: None)
  q = jax.ShapeDtypeStruct((32, 2048, 16, 64), jnp.bfloat16)
  spec = attention_base.make_spec(q, q, q, None, None, False, None)
  fwd = attention_api.FAMILY.choose(spec, None, "fwd", H200)
  bwd = attention_api.FAMILY.choose(spec, None, "bwd", H200)
  assert (fwd.op.implementation, fwd.config) == ("mosaic", MosaicAttentionConfig(256, 2))
  assert (bwd.op.implementation, bwd.config) == ("mosaic", MosaicAttentionConfig(64, 4))
  causal = attention_base.make_spec(q, q, q, None, None, True, None)
  assert attention_api.FAMILY.choose(causal, None, "fwd", H200).config == MosaicAttentionConfig(
      128, 2)
  wide = jax.ShapeDtypeStruct((1, 16384, 16, 128), jnp.bfloat16)
  wide_spec = attention_base.make_spec(wide, wide, wide, None, None, False, None)
  assert attention_api.FAMILY.choose(wide_spec, "triton", "fwd", H200).config == (
      TritonAttentionConfig(128, 64, 8, 3))
  assert attention_api.FAMILY.choose(wide_spec, "triton", "bwd", H200).config == (
      TritonAttentionConfig(64, 64, 4, 2))
  f32 = jax.ShapeDtypeStruct((1, 256, 2, 128), jnp.float32)
  f32_spec = attention_base.make_spec(f32, f32, f32, None, None, False, None)
  assert attention_api.FAMILY.choose(f32_spec, None, "fwd", H200).op.implementation == "triton"
  assert attention_api.FAMILY.choose(f32_spec, None, "fwd", H200).config == (
      TritonAttentionConfig())
  # Head dims the kernels are not built for run zero-padded (96 -> 128, 40 -> 64); the rule
  # puts cuDNN first there.
  for d, config in ((96, MosaicAttentionConfig(128, 2)), (40, MosaicAttentionConfig(256, 2))):
    odd = jax.ShapeDtypeStruct((1, 256, 2, d), jnp.bfloat16)
    odd_spec = attention_base.make_spec(odd, odd, odd, None, None, False, None)
    assert attention_api.FAMILY.choose(odd_spec, "mosaic", "fwd", H200).config == config
    assert attention_api.rule(odd_spec, H200, "fwd") == ["cudnn", "mosaic", "triton", "xla"]
    assert attention_api.FAMILY.choose(odd_spec, None, "fwd", H200).op.implementation == "cudnn"
  assert attention_api.rule(spec, H200, "fwd") == ["mosaic", "cudnn", "triton", "xla"]
  for d in (100, 136, 256):
    odd = jax.ShapeDtypeStruct((1, 256, 2, d), jnp.bfloat16)
    odd_spec = attention_base.make_spec(odd, odd, odd, None, None, False, None)
    with pytest.raises(pk.UnsupportedImplementationError,
                       match=f"head_dim must be a multiple of 8 up to 128, got {d}"):
      attention_api.FAMILY.choose(odd_spec, "mosaic", "fwd", H200)
  for bad_scale in (0.0, -0.125):
    negative = attention_base.make_spec(q, q, q, None, None, False, bad_scale)
    with pytest.raises(pk.UnsupportedImplementationError,
                       match=f"scale must be positive, got {bad_scale}"):
      attention_api.FAMILY.choose(negative, "mosaic", "fwd", H200)
    assert attention_api.FAMILY.choose(negative, None, "fwd", H200).op.implementation == "triton"

  x = jax.ShapeDtypeStruct((1048576, 64), jnp.bfloat16)
  ln = layer_norm_base.make_spec(x, None, None, -1, 1e-6, True)
  ln_fwd = layer_norm_api.FAMILY.choose(ln, None, "fwd", H200)
  ln_bwd = layer_norm_api.FAMILY.choose(ln, None, "bwd", H200)
  assert ln_fwd.op.implementation == ln_bwd.op.implementation == "triton"
  assert (ln_fwd.config.block_rows, ln_fwd.config.num_warps, ln_fwd.config.programs) == (256, 16, 0)
  assert (ln_bwd.config.block_rows, ln_bwd.config.num_warps, ln_bwd.config.programs) == (128, 8, 0)
  wide_x = jax.ShapeDtypeStruct((8192, 8192), jnp.bfloat16)
  wide_ln = layer_norm_base.make_spec(wide_x, None, None, -1, 1e-6, True)
  wide_fwd = layer_norm_api.FAMILY.choose(wide_ln, None, "fwd", H200)
  assert (wide_fwd.op.implementation, wide_fwd.config) == ("mosaic",
                                                           PallasLayerNormConfig(64, 4, 1))
  # "triton" at wide rows: one program per row reading the parameters per row where they have
  # x's dtype (none here), else two rows per program holding them (float32 parameters).
  assert layer_norm_api.FAMILY.choose(wide_ln, "triton", "fwd", H200).config == (
      layer_norm_triton.TritonLayerNormConfig(1, 8, 0, True, reload_params=True))
  f32_vector = jax.ShapeDtypeStruct((8192,), jnp.float32)
  f32_ln = layer_norm_base.make_spec(wide_x, f32_vector, None, -1, 1e-6, True)
  f32_fwd = layer_norm_api.FAMILY.choose(f32_ln, "triton", "fwd", H200).config
  assert (f32_fwd.block_rows, f32_fwd.num_warps, f32_fwd.reload_params) == (2, 16, False)
  wide_bwd = layer_norm_api.FAMILY.choose(wide_ln, None, "bwd", H200)
  assert (wide_bwd.op.implementation, wide_bwd.config) == (
      "triton", layer_norm_api.IMPLEMENTATIONS["triton"].default_config(wide_ln))
  # The wide-row forward's default configs per width (bf16 x), and
  # rows it does not take (2048 channels: the rule's "triton"; 4000: not a multiple of 1024).
  for shape, params, config in [
      ((16384, 4096), jnp.float32, PallasLayerNormConfig(64, 3, 2)),
      ((4096, 16384), jnp.bfloat16, PallasLayerNormConfig(64, 2, 1))]:
    x = jax.ShapeDtypeStruct(shape, jnp.bfloat16)
    v = jax.ShapeDtypeStruct(shape[-1:], params)
    choice = layer_norm_api.FAMILY.choose(
        layer_norm_base.make_spec(x, v, v, -1, 1e-6, True), None, "fwd", H200)
    assert (choice.op.implementation, choice.config) == ("mosaic", config), shape
  # Not taken first: 2048 channels (slower there; "xla" takes it), 4000 (not a multiple of 1024),
  # 34816 (more than a TMA box takes; "xla" there, below), and float32 vectors of 64 KiB each at
  # 16384 channels, which leave room for one stage only (not measured; "mosaic" named explicitly
  # still runs it).
  for shape, params, want in [((16384, 2048), None, "xla"), ((16384, 4000), None, "triton"),
                              ((4096, 16384), jnp.float32, "triton")]:
    x = jax.ShapeDtypeStruct(shape, jnp.bfloat16)
    v = None if params is None else jax.ShapeDtypeStruct(shape[-1:], params)
    spec = layer_norm_base.make_spec(x, v, v, -1, 1e-6, True)
    choice = layer_norm_api.FAMILY.choose(spec, None, "fwd", H200)
    assert choice.op.implementation == want, shape
    if params is not None:
      explicit = layer_norm_api.FAMILY.choose(spec, "mosaic", "fwd", H200)
      assert explicit.config == PallasLayerNormConfig(64, 1, 1)
  # "xla" where it measured faster than "triton" (`triton.prefers_xla`): the forward of 257-2048
  # channels, wider than 32768, or than 16384 with parameters of another dtype; the gradient
  # follows the forward above 16384 channels (XLA's gradient after XLA's forward), and is the
  # chunked Triton backward above 8192 (one row by 1024 channels per tile, 4 warps, 8 programs
  # per SM).
  chunked = layer_norm_triton.TritonLayerNormConfig(1, 4, 8 * layer_norm_triton.sm_count(), True,
                                                   1024)
  for shape, params, phase, want, config in [
      ((131072, 256), jnp.bfloat16, "fwd", "triton", None),
      ((65536, 257), None, "fwd", "xla", None),
      ((16384, 2048), jnp.float32, "fwd", "xla", None),
      ((16384, 2048), jnp.bfloat16, "bwd", "triton", None),
      ((8192, 8192), jnp.bfloat16, "bwd", "triton", None),
      ((4096, 12288), None, "bwd", "triton", chunked),
      ((4096, 16384), jnp.bfloat16, "bwd", "triton", chunked),
      ((4096, 16384), jnp.float32, "bwd", "triton", chunked),
      ((2048, 32768), jnp.bfloat16, "fwd", "triton", None),
      ((2048, 32768), jnp.bfloat16, "bwd", "triton", chunked),
      ((2048, 32768), jnp.float32, "fwd", "xla", None),
      ((2048, 32768), jnp.float32, "bwd", "xla", None),
      ((1024, 65536), jnp.bfloat16, "fwd", "xla", None),
      ((1024, 65536), jnp.bfloat16, "bwd", "xla", None),
      ((64, 34816), None, "fwd", "xla", None), ((64, 34816), None, "bwd", "xla", None)]:
    x = jax.ShapeDtypeStruct(shape, jnp.bfloat16)
    v = None if params is None else jax.ShapeDtypeStruct(shape[-1:], params)
    spec = layer_norm_base.make_spec(x, v, v, -1, 1e-6, True)
    choice = layer_norm_api.FAMILY.choose(spec, None, phase, H200)
    assert choice.op.implementation == want, (shape, params, phase)
    if config is not None:
      assert choice.config == config, (shape, params, phase)


def test_wgmma_kernels_refuse_gpus_after_hopper(monkeypatch):
  """The Mosaic kernels use Hopper's wgmma: a later GPU (here a stand-in B200, compute capability
  10.0) is refused with the reason, and implementation=None takes the next entry of the rule that
  serves the call."""
  monkeypatch.setattr(tuned_lib, "shipped_result", lambda kind: None)
  b200 = device_lib.DeviceInfo(platform="cuda", kind="NVIDIA B200", compute_capability=(10, 0))
  q = jax.ShapeDtypeStruct((32, 2048, 16, 64), jnp.bfloat16)
  spec = attention_base.make_spec(q, q, q, None, None, False, None)
  message = (r"Pallas Mosaic GPU kernels here use wgmma, which only compute capability 9.x has; "
             r"this GPU \(NVIDIA B200\) has 10.0")
  with pytest.raises(pk.UnsupportedImplementationError, match=message):
    attention_api.FAMILY.choose(spec, "mosaic", "bwd", b200)
  # The rule's next entry that serves a 16-bit head_dim-64 call there: cuDNN's.
  assert attention_api.FAMILY.choose(spec, None, "fwd", b200).op.implementation == "cudnn"
  assert attention_api.FAMILY.choose(spec, None, "bwd", b200).op.implementation == "cudnn"
  x = jax.ShapeDtypeStruct((1048576, 64), jnp.bfloat16)
  ln = layer_norm_base.make_spec(x, None, None, -1, 1e-6, True)
  with pytest.raises(pk.UnsupportedImplementationError, match=message):
    layer_norm_api.FAMILY.choose(ln, "mosaic", "fwd", b200)
  wide = layer_norm_base.make_spec(jax.ShapeDtypeStruct((8192, 8192), jnp.bfloat16), None, None,
                                   -1, 1e-6, True)
  assert layer_norm_api.FAMILY.choose(wide, None, "fwd", b200).op.implementation == "triton"


def test_export_refused_on_another_platform():
  x, scale = _inputs((1, 32, 1, 32))
  f = jax.jit(lambda x: pk.dot_product_attention(x, x, x, implementation="native"))
  exported = jax.export.export(f, disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(x)
  assert exported.platforms == ("pjrtkit",)
  back = jax.export.deserialize(exported.serialize())
  with jax.default_device(jax.devices("cpu")[0]):
    with pytest.raises(ValueError, match="exported for platforms .*pjrtkit.* but it is used on"):
      jax.jit(back.call)(jax.device_put(x, jax.devices("cpu")[0]))
  with pytest.raises(Exception, match="pjrtkit_kernels_attention_fwd"):
    jax.export.export(f)(x)  # Without the disabled checks JAX refuses our custom call.


class _FakeGpuBackend:
  """What pjrtkit's program check reads of a backend on pjrtkit's GPU device."""

  class _Device:
    backend = "xla_gpu"
    device_kind = "NVIDIA H200"

  def local_devices(self):
    return [self._Device()]


def test_export_of_native_kernels_is_refused_on_the_gpu_device():
  from jax_plugins.pjrtkit import _program_checks  # pylint: disable=g-import-not-at-top
  x, _ = _inputs((1, 32, 1, 32))
  f = jax.jit(lambda x: pk.dot_product_attention(x, x, x, implementation="native"))
  exported = jax.export.export(f, disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(x)
  back = jax.export.deserialize(exported.serialize())
  module = jax.jit(back.call).lower(x).compiler_ir("stablehlo")
  _program_checks.check(jax.devices()[0].client, module)  # The CPU device runs it.
  with pytest.raises(ValueError) as error:
    _program_checks.check(_FakeGpuBackend(), module)
  assert str(error.value) == (
      "pjrtkit: the program calls pjrtkit's native C++ kernels (custom call "
      "'pjrtkit_kernels_attention_fwd'), which only pjrtkit's xla_cpu device runs; this is "
      "pjrtkit's xla_gpu device (device kind 'NVIDIA H200'). A program exported (jax.export) on "
      "one pjrtkit device runs only on that device kind: export it again on this one, or choose "
      "an implementation this device has")


def test_profiler_method_says_why_on_pjrtkit():
  f_std, args = pk.benchmarking.standardize_function(lambda a: a * 2, jnp.ones(4))
  run = pk.benchmarking.compile_benchmark(f_std, args)
  with pytest.raises(ValueError, match="method='profiler': JAX's profiler trace has no device "
                                       "events on platform 'pjrtkit'"):
    run(args, method="profiler", iterations=1)
  with pytest.raises(ValueError, match="method='cupti' needs an NVIDIA GPU"):
    run(args, method="cupti", iterations=1)


@dataclasses.dataclass(frozen=True)
class ScaleConfig:
  block: int = 4


class ScaledSquare(pk.Op):
  """A user's own op: y = (x * alpha)**2, tunable over `block` (unused by the math)."""

  op_name = "scaled_square"
  implementation = "jnp"
  config_cls = ScaleConfig

  def _get_autotuning_configs(self, spec):
    return (ScaleConfig(4), ScaleConfig(8))

  def forward(self, args, spec, config):
    (x,) = args
    return (x * spec.param("alpha")) ** 2, args


def test_user_op_is_callable_differentiable_and_autotuned():
  op = ScaledSquare()
  x = jnp.arange(3.0)
  assert op(x, alpha=2.0).tolist() == [0.0, 4.0, 16.0]
  assert jax.grad(lambda x: op(x, alpha=2.0).sum())(x).tolist() == [0.0, 8.0, 16.0]
  result = pk.autotune(jax.jit(lambda x: op(x, alpha=2.0)), x, iterations=1)
  assert [(c.op, c.phase, c.implementation) for c in result.choices] == [
      ("scaled_square", "fwd", "jnp")]
  assert {dict(c[1])["block"] for c in result.choices[0].candidates} == {4, 8}


class RecordingSquare(ScaledSquare):
  """ScaledSquare that records which forward entry point ran and writes no residual when it can."""

  op_name = "recording_square"

  def __init__(self):
    self.calls = []

  def forward(self, args, spec, config):
    self.calls.append("forward")
    return super().forward(args, spec, config)

  def forward_output(self, args, spec, config):
    self.calls.append("forward_output")
    (x,) = args
    return (x * spec.param("alpha")) ** 2


def test_calls_that_are_not_differentiated_run_forward_output():
  """A call that is not differentiated runs `forward_output` (no residuals); under `jax.grad`
  (and `jax.vjp`) the forward with residuals runs, and the gradient is the same."""
  op = RecordingSquare()
  x = jnp.arange(3.0)
  assert jax.jit(lambda x: op(x, alpha=2.0))(x).tolist() == [0.0, 4.0, 16.0]
  assert op.calls == ["forward_output"]
  op.calls.clear()
  assert jax.grad(lambda x: op(x, alpha=2.0).sum())(x).tolist() == [0.0, 8.0, 16.0]
  assert "forward" in op.calls and "forward_output" not in op.calls
  op.calls.clear()
  y, _ = jax.vjp(lambda x: op(x, alpha=2.0), x)
  assert y.tolist() == [0.0, 4.0, 16.0] and op.calls[0] == "forward"


def test_autotune_times_the_forward_as_calls_that_are_not_differentiated_run_it():
  op = RecordingSquare()
  x = jnp.arange(3.0)
  pk.autotune(jax.jit(lambda x: op(x, alpha=2.0)), x, iterations=1)
  assert op.calls and set(op.calls) == {"forward_output"}


def test_default_forward_output_is_the_forward_without_residuals():
  op = ScaledSquare()
  x = jnp.arange(3.0)
  spec = op.make_spec(x, alpha=2.0)
  assert op.forward_output((x,), spec, op.default_config(spec)).tolist() == [0.0, 4.0, 16.0]


class FragileSquare(ScaledSquare):
  """ScaledSquare whose block-8 config fails to lower (a candidate that cannot be built)."""

  op_name = "fragile_square"

  def _get_autotuning_configs(self, spec):
    return (ScaleConfig(4), ScaleConfig(8), ScaleConfig(16))

  def forward(self, args, spec, config):
    if config.block == 8:
      raise ValueError("block 8 does not lower")
    return super().forward(args, spec, config)


def test_autotune_skips_candidates_that_fail_and_refuses_when_none_is_left(monkeypatch, caplog):
  op = FragileSquare()
  x = jnp.arange(3.0)
  f = jax.jit(lambda x: op(x, alpha=2.0))
  result = pk.autotune(f, x, iterations=1, compile_workers=2)
  assert sorted(dict(c[1])["block"] for c in result.choices[0].candidates) == [4, 16]
  assert "fragile_square fwd jnp ScaleConfig(block=8) failed: block 8 does not lower" in caplog.text

  def broken(*args, **kwargs):
    raise RuntimeError("the device went away")

  monkeypatch.setattr(pk.benchmarking.BenchmarkRunner, "__call__", broken)
  with pytest.raises(RuntimeError, match="no candidate of fragile_square \\(fwd\\) could be measured"):
    pk.autotune(f, x, iterations=1)


def test_autotuning_result_dump_and_load_take_text_files():
  """Tokamax's file-object names beside dumps/loads (prune_errors accepted: no errors kept)."""
  choice = pk.TunedChoice("scaled_square", "fwd", "auto", ScaledSquare().make_spec(
      jnp.arange(3.0), alpha=2.0), "jnp", (("block", 8),), 0.5, (("jnp", (("block", 8),), 0.5),))
  result = pk.AutotuningResult("pjrtkit_cpu", (choice,))
  out = io.StringIO()
  assert result.dump(out) is None
  assert out.getvalue() == result.dumps() == result.dumps(prune_errors=True)
  pruned = io.StringIO()
  result.dump(pruned, prune_errors=True)
  assert pruned.getvalue() == out.getvalue()
  back = pk.AutotuningResult.load(io.StringIO(out.getvalue()))
  assert back == result and back.dumps() == result.dumps()
  with pytest.raises(ValueError, match="AutotuningResult format 2 is not 1"):
    pk.AutotuningResult.load(io.StringIO('{"format": 2}'))


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
