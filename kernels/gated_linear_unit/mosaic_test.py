"""gated_linear_unit "mosaic": the Hopper forward kernel's lowering for CUDA at every config it
tunes over, with every activation it applies, fused weights and a pair (``jax.export(...,
platforms=["cuda"])`` with an abstract H200 as the target: it runs Pallas's Mosaic GPU lowering on
any machine, which catches shape, layout, transform and shared-memory errors; not barrier
errors, which show only when the kernel runs); its geometry (rows padded, stages fitted to
shared memory, programs); refusals; a differentiated call taking "xla"'s forward and gradient;
and, on a Hopper GPU, its values against the definition (skipped elsewhere: the kernel has no
interpreted path). Tolerances: `pjrtkit.kernels.testing.TOLERANCES`.
"""

from __future__ import annotations

import dataclasses
import re
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import device as device_lib  # noqa: E402
from pjrtkit.kernels.core import functions  # noqa: E402
from pjrtkit.kernels.core import triton_matmul as tm  # noqa: E402
from pjrtkit.kernels.core.device import DeviceInfo  # noqa: E402
from pjrtkit.kernels.gated_linear_unit import api, arg_specs, base  # noqa: E402
from pjrtkit.kernels.gated_linear_unit import mosaic as gm  # noqa: E402

Config = gm.MosaicGatedLinearUnitConfig
H200 = DeviceInfo(platform="cuda", kind="NVIDIA H200", compute_capability=(9, 0))


def _hopper() -> bool:
  return testing.on_gpu() and device_lib.current_device().compute_capability[0] == 9


_operands = arg_specs.random_operands


def _export(x_shape, n, fused, dtype, activation, config):
  x, weights, _ = _operands(x_shape, n, fused, dtype)
  spec, args = base.make_spec(x, weights, activation, None)
  avals = [jax.ShapeDtypeStruct(a.shape, a.dtype) if a is not None else None for a in args]
  with tm.lowering_target():
    return jax.export.export(
        jax.jit(lambda *a: gm.MosaicGatedLinearUnit().forward_output(a, spec, config)),
        platforms=["cuda"])(*avals)


def _tuned_configs() -> list[Config]:
  x, weights, _ = _operands((256, 256), 384, True, "bfloat16")
  spec, _ = base.make_spec(x, weights, jax.nn.silu, None)
  return list(gm.MosaicGatedLinearUnit().autotuning_configs(spec))


@pytest.mark.parametrize("config", _tuned_configs(), ids=str)
def test_every_tuned_config_lowers_for_cuda(config):
  # k = 1024: at least `stages` k steps, so the pipeline keeps every config's depth.
  exported = _export((300, 1024), 384, True, "bfloat16", jax.nn.silu, config)
  assert [(a.shape, a.dtype) for a in exported.out_avals] == [((300, 384), jnp.bfloat16)]
  assert "pjrtkit_gated_linear_unit_fwd_mosaic" in exported.mlir_module()


@pytest.mark.parametrize("activation", [None] + sorted(gm.IN_KERNEL_ACTIVATIONS))
@pytest.mark.parametrize("fused", [True, False])
def test_every_in_kernel_activation_lowers_with_either_weights(activation, fused):
  act = functions.resolve(activation)
  exported = _export((2, 70, 128), 192, fused, "float16", act, Config(128, 64, 64, 4, 2))
  assert [(a.shape, a.dtype) for a in exported.out_avals] == [((2, 70, 192), jnp.float16)]


def test_geometry_pads_rows_and_fits_stages_in_shared_memory():
  g = gm.geometry(300, 4096, 14336, True, Config(), 2, 132)
  assert (g.m, g.tile_m, g.tiles, g.programs) == (384, 128, (3, 112), 132)
  # 48 KiB per step, 32 KiB of output tiles: 4 steps fit in 227 KiB.
  assert gm.stage_bytes(Config(), 2) == 48 * 1024 and gm.epilogue_bytes(Config(), 2) == 32 * 1024
  assert g.stages == 4
  assert gm.fitted_stages(Config(64, 128, 128, 4, 8), 2) == 2  # 96 KiB steps
  assert gm.fitted_stages(Config(64, 64, 64, 8, 8), 2) == 6  # 32 KiB steps, 16 KiB output
  small = gm.geometry(5, 64, 128, False, Config(), 2, 132)
  assert (small.m, small.tiles, small.programs) == (128, (1, 1), 1)


def test_config_is_validated_naming_the_field():
  with pytest.raises(ValueError, match="block_n must be 64 or 128, got 96"):
    Config(block_n=96)
  with pytest.raises(ValueError, match="block_m \\* block_n must be at most 8192"):
    Config(block_m=128, block_n=128)
  with pytest.raises(ValueError, match="stages and band must be >= 1"):
    Config(stages=0)


def test_default_config_follows_n():
  op = gm.MosaicGatedLinearUnit()
  for n, want in ((384, Config()), (192, Config(block_m=128, block_n=64))):
    x, weights, _ = _operands((8, 64), n, True, "bfloat16")
    spec, _ = base.make_spec(x, weights, None, None)
    assert op.default_config(spec) == want
    assert all(n % c.block_n == 0 for c in op.autotuning_configs(spec))


@pytest.mark.parametrize("x_dtype, w_dtype, n, k, activation, precision, match", [
    ("float32", "float32", 128, 64, None, None, "x dtype float32 is not supported"),
    ("bfloat16", "float16", 128, 64, None, None, "weights \\(float16\\) of another dtype"),
    ("bfloat16", "bfloat16", 96, 64, None, None,
     "n \\(96\\) and k \\(64\\) must be positive multiples of 64"),
    ("bfloat16", "bfloat16", 128, 48, None, None, "n \\(128\\) and k \\(48\\)"),
    ("bfloat16", "bfloat16", 128, 64, jax.nn.relu, None,
     "activation relu is not applied in the kernel"),
    ("bfloat16", "bfloat16", 128, 64, None, jax.lax.DotAlgorithmPreset.BF16_BF16_BF16,
     "precision BF16_BF16_BF16 is not the kernel's products \\(accepted: None, a "
     "jax.lax.Precision, DEFAULT or BF16_BF16_F32\\)"),
    ("float16", "float16", 128, 64, None, jax.lax.DotAlgorithmPreset.BF16_BF16_F32,
     "precision BF16_BF16_F32 .* DEFAULT or F16_F16_F32"),
])
def test_refusals_name_the_reason(x_dtype, w_dtype, n, k, activation, precision, match):
  x = jnp.zeros((4, k), x_dtype)
  w = jnp.zeros((k, 2, n), w_dtype)
  spec, _ = base.make_spec(x, w, activation, precision)
  with pk.pallas_interpret(False):
    reason = gm.MosaicGatedLinearUnit().unsupported_reason(spec, H200)
  assert reason is not None and re.search(match, reason), reason


@pytest.mark.parametrize("precision", [None, jax.lax.Precision.HIGHEST, "float32",
                                       jax.lax.DotAlgorithmPreset.DEFAULT,
                                       jax.lax.DotAlgorithmPreset.BF16_BF16_F32])
def test_precisions_of_the_kernels_products_are_served(precision):
  x, weights, _ = _operands((8, 64), 128, True, "bfloat16")
  spec, _ = base.make_spec(x, weights, None, precision)
  with pk.pallas_interpret(False):
    assert gm.MosaicGatedLinearUnit().unsupported_reason(spec, H200) is None


def test_geometry_refuses_a_config_that_does_not_divide_the_shape():
  with pytest.raises(ValueError, match="k \\(320\\) must be a positive multiple of block_k "
                     "\\(128\\)"):
    gm.geometry(64, 320, 256, True, Config(64, 128, 128, 2, 8), 2, 132)
  with pytest.raises(ValueError, match="n \\(192\\) must be a positive multiple of block_n "
                     "\\(128\\)"):
    gm.geometry(64, 256, 192, True, Config(), 2, 132)


def test_no_rows_give_an_empty_result_without_the_kernel():
  x, weights, _ = _operands((0, 64), 128, False, "bfloat16")
  spec, args = base.make_spec(x, weights, jax.nn.silu, None)
  out = gm.MosaicGatedLinearUnit().forward_output(args, spec, Config())
  assert out.shape == (0, 128) and out.dtype == jnp.bfloat16


def test_refused_off_hopper_and_in_interpret_mode():
  x, weights, _ = _operands((8, 64), 128, True, "bfloat16")
  spec, _ = base.make_spec(x, weights, None, None)
  op = gm.MosaicGatedLinearUnit()
  with pk.pallas_interpret(False):
    assert op.unsupported_reason(spec, H200) is None
    a100 = dataclasses.replace(H200, kind="NVIDIA A100", compute_capability=(8, 0))
    assert "compute capability 9.0+" in op.unsupported_reason(spec, a100)
    cpu = DeviceInfo(platform="cpu", kind="cpu", compute_capability=None)
    assert "need an NVIDIA GPU" in op.unsupported_reason(spec, cpu)
  with pk.pallas_interpret():
    assert "compiled only" in op.unsupported_reason(spec, H200)
  if not testing.on_gpu():
    with pytest.raises(pk.UnsupportedImplementationError, match="implementation='mosaic'"):
      pk.gated_linear_unit(x, weights, implementation="mosaic")


def test_a_differentiated_call_takes_the_xla_forward_and_gradient():
  x, weights, dout = _operands((3, 64), 128, True, "bfloat16")
  spec, args = base.make_spec(x, weights, jax.nn.silu, None)
  op, ref = gm.MosaicGatedLinearUnit(), api.IMPLEMENTATIONS["xla"]
  out, residuals = op.forward(args, spec, Config())
  want_out, want_residuals = ref.forward(args, spec, pk.NoConfig())
  assert jnp.array_equal(out, want_out)
  for g, w in zip(jax.tree.leaves(residuals), jax.tree.leaves(want_residuals)):
    assert jnp.array_equal(g, w)
  for g, w in zip(op.backward(residuals, dout, spec, Config()),
                  ref.backward(want_residuals, dout, spec, pk.NoConfig())):
    assert (g is None and w is None) or jnp.array_equal(g, w)


CASES = [  # (x shape, n, fused, dtype, activation, config)
    ((300, 256), 384, True, "bfloat16", jax.nn.silu, Config()),            # rows padded
    ((2, 200, 512), 256, False, "bfloat16", jax.nn.gelu, Config(128, 64, 64, 4, 2)),
    ((64, 128), 128, True, "float16", None, Config(64, 128, 128, 2, 8)),
    ((1000, 384), 640, True, "bfloat16", jax.nn.sigmoid, Config(64, 64, 64, 6, 4)),
    ((8, 4096), 1024, True, "bfloat16", jnp.tanh, Config()),                # few rows
    # More tiles than programs (512 and 640 on 132 SMs): the persistent loop reuses the pipeline
    # and the output tile; k steps (5) not a multiple of the stages.
    ((4096, 512), 2048, True, "bfloat16", jax.nn.silu, Config()),
    ((2560, 320), 2048, False, "bfloat16", jax.nn.gelu, Config(128, 64, 64, 4, 4)),
]


@pytest.mark.skipif(not _hopper(), reason="the compiled Mosaic GPU kernel needs a Hopper GPU "
                    "(sm_90); tools/gpu/open_issue_checks.sh PART=t runs it on the H200")
@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_against_the_definition_on_hopper(case):
  x_shape, n, fused, dtype, activation, config = CASES[case]
  x, weights, _ = _operands(x_shape, n, fused, dtype, seed=case)
  spec, args = base.make_spec(x, weights, activation, None)
  got = jax.jit(lambda *a: gm.MosaicGatedLinearUnit().forward_output(a, spec, config))(*args)
  assert got.shape == x_shape[:-1] + (n,) and got.dtype == x.dtype
  testing.assert_close(got, base.reference(x, weights, activation), dtype, "fwd")
  public = pk.gated_linear_unit(x, weights, activation=activation, implementation="mosaic")
  testing.assert_close(public, base.reference(x, weights, activation), dtype, "fwd")


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
