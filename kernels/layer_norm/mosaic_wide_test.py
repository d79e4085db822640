"""The wide-row Mosaic layer norm forward (``mosaic_wide``, the "mosaic" layer norm's forward for
more than 256 channels), checked without a GPU: its argument checks, its configs, and that it
lowers for CUDA (``jax.export(..., platforms=["cuda"])`` runs Pallas's Mosaic GPU lowering on the
CPU). Its numerics are checked on a GPU by layer_norm_test's `test_pallas_on_gpu` and
tools/kernels_gpu/ln_wide_bench.py.
"""

from __future__ import annotations

import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import op as op_lib  # noqa: E402
from pjrtkit.kernels.layer_norm import base, mosaic, mosaic_wide, triton, xla  # noqa: E402
from pjrtkit.kernels.layer_norm.pallas_common import PallasLayerNormConfig  # noqa: E402

H200 = testing.described_h200()


@pytest.mark.parametrize("n,c,dtype,params,subtract_mean,stages,per_sm", [
    (8192, 8192, "bfloat16", "bfloat16", True, 4, 1),
    (1000, 2048, "bfloat16", None, False, 2, 2),
    (7, 1024, "float32", "float32", True, 3, 1),  # fewer rows than programs
    (33, 4096, "float16", "float32", True, 5, 1),  # parameters wider than x
])
def test_forward_lowers_for_cuda(n, c, dtype, params, subtract_mean, stages, per_sm):
  x = jax.ShapeDtypeStruct((n, c), jnp.dtype(dtype))
  v = jax.ShapeDtypeStruct((c,), jnp.dtype(params)) if params else None

  def f(x, s, o):
    return mosaic_wide.forward(x, s, o, epsilon=1e-6, subtract_mean=subtract_mean, stages=stages,
                               programs_per_sm=per_sm)

  exported = jax.export.export(jax.jit(f), platforms=["cuda"])(x, v, v)
  assert [(a.shape, a.dtype) for a in exported.out_avals] == [((n, c), jnp.dtype(dtype))]
  module = exported.mlir_module()
  assert "pjrtkit_layer_norm_fwd_mosaic_wide" in module


def test_the_op_forward_lowers_for_cuda_along_another_axis():
  """MosaicLayerNorm's forward at 2048 channels on axis 1 (moved last, then restored)."""
  x = jax.ShapeDtypeStruct((3, 2048, 5), jnp.bfloat16)
  s = jax.ShapeDtypeStruct((2048,), jnp.float32)
  spec = base.make_spec(x, s, None, 1, 1e-5, False)

  def f(x, s):
    y, (_, _, _, mean, rstd) = mosaic.MosaicLayerNorm().forward(
        (x, s, None), spec, PallasLayerNormConfig(64, 3, 2))
    return y, mean, rstd

  exported = jax.export.export(jax.jit(f), platforms=["cuda"])(x, s)
  assert [a.shape for a in exported.out_avals] == [(3, 2048, 5), (3, 5), (3, 5)]
  assert "pjrtkit_layer_norm_fwd_mosaic_wide" in exported.mlir_module()


_NOT_A_MULTIPLE = (r"channels must be a positive multiple of 1024 \(a warpgroup's 128 threads x "
                   r"8 per load\) for rows wider than 256, got ")


@pytest.mark.parametrize("c,dtype,stages,per_sm,message", [
    (1000, "bfloat16", 4, 1, _NOT_A_MULTIPLE + "1000"),
    (512, "bfloat16", 4, 1, _NOT_A_MULTIPLE + "512"),
    # 2 x 4 rows of 32 KiB and two bf16 vectors of 32 KiB.
    (16384, "bfloat16", 4, 1, r"stages=4, programs_per_sm=1 need 327680 bytes of shared memory "
                              r"per SM at 16384 channels, more than the 232448"),
    (8192, "bfloat16", 3, 2, r"stages=3, programs_per_sm=2 need 262144 bytes"),
    # 272 rows of 128 in one TMA box (at most 256), though one stage would fit shared memory.
    (34816, "bfloat16", 1, 1, r"channels must be at most 32768 \(a row is copied as a "
                              r"\(channels / 128, 128\) TMA box of at most 256 rows\), got 34816"),
])
def test_refuses_rows_it_cannot_take(c, dtype, stages, per_sm, message):
  assert mosaic_wide.unsupported_reason(c, jnp.dtype(dtype).itemsize, [2, 2], stages, per_sm)
  with pytest.raises(ValueError, match="layer_norm mosaic: " + message):
    v = jnp.zeros((c,), jnp.bfloat16)
    mosaic_wide.forward(jnp.zeros((4, c), dtype), v, v, epsilon=1e-6, subtract_mean=True,
                        stages=stages, programs_per_sm=per_sm)


def test_shared_memory_counts_the_parameters_in_their_own_dtype():
  # float32 rows: 2 * 3 * 32 KiB; bf16 vectors 2 * 16 KiB: 229376 <= 232448 bytes.
  assert mosaic_wide.smem_bytes(8192, 4, [2, 2], 3) == 229376
  assert mosaic_wide.unsupported_reason(8192, 4, [2, 2], 3, 1) is None
  assert mosaic_wide.unsupported_reason(8192, 4, [4, 4], 3, 1) is not None  # 262144


def test_forward_counts_each_parameter_in_its_own_dtype():
  """float32 rows of 8192 channels with 3 stages (192 KiB): bf16 scale and offset fit (224 KiB),
  float32 ones do not (256 KiB)."""
  x = jax.ShapeDtypeStruct((64, 8192), jnp.float32)
  half = jax.ShapeDtypeStruct((8192,), jnp.bfloat16)
  f = lambda x, s, o: mosaic_wide.forward(x, s, o, epsilon=1e-6, subtract_mean=True,  # noqa
                                          stages=3, programs_per_sm=1)
  exported = jax.export.export(jax.jit(f), platforms=["cuda"])(x, half, half)
  assert [a.shape for a in exported.out_avals] == [(64, 8192)]
  full = jnp.zeros((8192,), jnp.float32)
  with pytest.raises(ValueError, match=r"stages=3, programs_per_sm=1 need 262144 bytes"):
    f(jnp.zeros((64, 8192), jnp.float32), full, full)


@pytest.mark.parametrize("kwargs,message", [
    (dict(stages=0, programs_per_sm=1), r"stages must be an int >= 1, got 0"),
    (dict(stages=2, programs_per_sm=0), r"programs_per_sm must be an int >= 1, got 0"),
    (dict(stages=2.0, programs_per_sm=1), r"stages must be an int >= 1, got 2.0"),
    (dict(stages=True, programs_per_sm=1), r"stages must be an int >= 1, got True"),
])
def test_forward_refuses_bad_counts(kwargs, message):
  with pytest.raises(ValueError, match="layer_norm mosaic: " + message):
    mosaic_wide.forward(jnp.zeros((4, 1024), jnp.bfloat16), None, None, epsilon=1e-6,
                        subtract_mean=True, **kwargs)


@pytest.mark.parametrize("kwargs,message", [
    (dict(stages=0), r"stages must be an int >= 1, got 0"),
    (dict(programs_per_sm=-1), r"programs_per_sm must be an int >= 1, got -1"),
    (dict(programs_per_sm=True), r"programs_per_sm must be an int >= 1, got True"),
])
def test_config_refuses_bad_values(kwargs, message):
  with pytest.raises(ValueError, match=message):
    PallasLayerNormConfig(64, **kwargs)


def _spec(shape, dtype="bfloat16", params="bfloat16"):
  x = jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
  v = jax.ShapeDtypeStruct(shape[-1:], jnp.dtype(params)) if params else None
  return base.make_spec(x, v, v, -1, 1e-6, True)


def test_autotuning_configs_are_those_that_fit_shared_memory():
  op = mosaic.MosaicLayerNorm()
  got = [(c.stages, c.programs_per_sm) for c in op.autotuning_configs(_spec((8192, 8192)))]
  # bf16 rows of 16 KiB and two 16 KiB vectors: (2 * stages + 2) * 16 KiB * per_sm <= 227 KiB.
  assert got == [(4, 1), (1, 1), (2, 1), (3, 1), (5, 1), (6, 1), (2, 2)]  # the default first
  got = [(c.stages, c.programs_per_sm)
         for c in op.autotuning_configs(_spec((64, 8192), "float32", "float32"))]
  assert got == [(2, 1), (1, 1)]  # (2 * stages + 2) * 32 KiB: 3 stages need 256 KiB
  # float32 at 16384 channels: even one stage needs 4 * 64 KiB, so the op refuses the call.
  reason = op.unsupported_reason(_spec((64, 16384), "float32", "float32"), H200)
  assert reason.startswith("stages=1, programs_per_sm=1 need 262144 bytes")
  narrow = op.autotuning_configs(_spec((64, 128)))
  assert [c.block_rows for c in narrow] == [64, 128]


def test_wide_rows_have_no_interpret_path():
  """Under pallas_interpret() (CI), rows wider than 256 channels are refused with the reason;
  rows it cannot take at all name the accepted channel counts."""
  spec = _spec((4, 2048))
  with pk.pallas_interpret():
    reason = mosaic.MosaicLayerNorm().unsupported_reason(spec, H200)
  assert reason == ("more than 256 channels take the wide-row kernel, which has no Pallas "
                    "interpreter path (plgpu.emit_pipeline); it runs compiled only")
  reason = mosaic.MosaicLayerNorm().unsupported_reason(_spec((4, 300)), H200)
  assert reason.startswith("channels must be a positive multiple of 1024")
  assert mosaic.MosaicLayerNorm().unsupported_reason(spec, H200) is None
  empty = mosaic.MosaicLayerNorm().unsupported_reason(_spec((0, 2048)), H200)
  assert empty == "x has no rows: the wide-row kernel launches one program per row at most"


def test_wide_gradient_runs_the_triton_backward_with_its_tuned_or_default_config(monkeypatch):
  """The wide-row gradient is "triton"'s backward with the config `implementation="triton"`
  takes on the H200 (the shipped tuned file's at 8192x8192, the per-phase default elsewhere)."""
  calls = []
  monkeypatch.setattr(triton.TritonLayerNorm, "backward",
                      lambda self, res, dout, spec, config: calls.append(config) or ())
  monkeypatch.setattr(mosaic, "current_device", lambda: H200)
  monkeypatch.setattr(triton, "sm_count", lambda: 132)  # the H200's, not this CPU's
  for shape in [(8192, 8192), (64, 8192)]:
    spec = _spec(shape)
    mosaic.MosaicLayerNorm().backward(None, None, spec, PallasLayerNormConfig(64, 4, 1))
    assert calls[-1] == op_lib.family("layer_norm").choose(spec, "triton", "bwd", H200).config
  tuned, untuned = calls
  assert (tuned.block_rows, tuned.num_warps, tuned.programs) == (1, 8, 264)  # kernels/tuned
  assert untuned == triton.TritonLayerNorm().phase_config(_spec((64, 8192)), "bwd")
  # Wider rows take Triton's chunked backward, also where `None` would take XLA's gradient
  # (float32 parameters above 16384 channels: that pairs XLA's gradient with XLA's forward).
  monkeypatch.setattr(xla.XlaLayerNorm, "backward",
                      lambda self, res, dout, spec, config: calls.append("xla") or ())
  chunked = triton.TritonLayerNormConfig(1, 4, 8 * 132, True, 1024)
  for shape, params in [((64, 16384), "bfloat16"), ((64, 20480), "float32")]:
    mosaic.MosaicLayerNorm().backward(None, None, _spec(shape, params=params),
                                      PallasLayerNormConfig(64, 1, 1))
    assert calls[-1] == chunked, shape
  assert "xla" not in calls and len(calls) == 4


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
