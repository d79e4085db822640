"""gated_linear_unit "triton": the forward kernel (output and residual) and the gradient against
"xla", what `forward_output` writes, refusals, and lowering for CUDA.

Without a GPU (CI) the kernel runs in Pallas interpret mode; on an NVIDIA GPU the numerics tests
run it compiled. The lowering tests export it for CUDA on any machine
(``jax.export(..., platforms=["cuda"])`` with an abstract H200 as the target,
`triton_matmul.lowering_target`), every activation the kernel fuses included.
Tolerances: `pjrtkit.kernels.testing.TOLERANCES`.
"""

from __future__ import annotations

import functools
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import functions  # noqa: E402
from pjrtkit.kernels.core import triton_matmul as tm  # noqa: E402
from pjrtkit.kernels.core.device import DeviceInfo  # noqa: E402
from pjrtkit.kernels.gated_linear_unit import api, arg_specs, base  # noqa: E402
from pjrtkit.kernels.gated_linear_unit.triton import (  # noqa: E402
    TritonGatedLinearUnit, TritonGatedLinearUnitConfig)
from pjrtkit.kernels.gated_linear_unit.xla import XlaGatedLinearUnit  # noqa: E402

_SMALL = TritonGatedLinearUnitConfig(16, 16, 16, 4, 2, 2)
"""16 x 16 tiles: several row and column tiles, edges masked, at the test shapes."""


_operands = arg_specs.random_operands


def _phases(op, config, args, spec, dout):
  """(`forward`'s output, its residual y, `forward_output`, the cotangents of the arrays)."""

  def run(*a):
    *args_, dout_ = a
    out, residuals = op.forward(tuple(args_), spec, config)
    only = op.forward_output(tuple(args_), spec, config)
    return (out, residuals[-1], only) + tuple(op.backward(residuals, dout_, spec, config))

  with pk.pallas_interpret(testing.interpret("triton")):
    return jax.jit(run)(*args, dout)


def _exact_gelu(v):
  return jax.nn.gelu(v, approximate=False)


CASES = [  # (x shape, n, fused weights, dtype, activation)
    ((3, 7, 40), 36, True, "float32", None),           # 21 rows, k and n past the tiles
    ((50, 24), 40, False, "float32", jax.nn.silu),      # SwiGLU, separate weights
    ((2, 33, 48), 48, True, "bfloat16", jax.nn.gelu),  # GEGLU (tanh), bf16
    ((40, 16), 32, False, "float32", jax.nn.relu),     # every dimension a multiple of 16
    ((19, 32), 24, True, "float32", _exact_gelu),      # erf: applied by XLA after the kernel
    ((1, 20), 16, False, "float32", lambda v: v * jnp.tanh(v)),  # custom: after the kernel
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_forward_and_grad_against_xla(case):
  x_shape, n, fused, dtype, activation = CASES[case]
  x, weights, dout = _operands(x_shape, n, fused, dtype, seed=case)
  # HIGHEST: float32 products in full float32 on a GPU for "xla" too.
  spec, args = base.make_spec(x, weights, activation, jax.lax.Precision.HIGHEST)
  got = _phases(TritonGatedLinearUnit(), _SMALL, args, spec, dout)
  want = _phases(XlaGatedLinearUnit(), pk.NoConfig(), args, spec, dout)
  for what, g, w in zip(("fwd", "fwd", "fwd", "grad", "grad", "grad", "grad"), got, want):
    if w is None:
      assert g is None
      continue
    testing.assert_close(g, w, dtype, what)
  out, y = got[0], got[1]
  assert out.shape == x_shape[:-1] + (n,) and out.dtype == x.dtype
  assert y.shape == x_shape[:-1] + (2, n) and y.dtype == x.dtype
  testing.assert_close(out, base.reference(x, weights, activation), dtype, "fwd")


def _kernel_outputs(fn, *args):
  with pk.pallas_interpret():
    jaxpr = jax.make_jaxpr(fn)(*args)
  return [[v.aval.shape for v in e.outvars] for e in jaxpr.eqns
          if e.primitive.name == "pallas_call"]


@pytest.mark.parametrize("activation", [jax.nn.silu, _exact_gelu])
def test_only_forward_writes_the_residual(activation):
  """`forward_output` (a call that is not differentiated) writes the output alone; `forward`
  writes the output and y (``[m, 2n]``) from one kernel. An activation the kernel cannot apply
  makes it write y alone, and XLA applies the activation after it."""
  x, weights, _ = _operands((2, 9, 32), 48, True, "bfloat16")
  spec, args = base.make_spec(x, weights, activation, None)
  op = TritonGatedLinearUnit()
  only = _kernel_outputs(lambda *a: op.forward_output(a, spec, _SMALL), *args)
  both = _kernel_outputs(lambda *a: op.forward(a, spec, _SMALL), *args)
  if activation is jax.nn.silu:
    assert only == [[(18, 48)]] and both == [[(18, 48), (18, 96)]]
  else:
    assert only == [[(18, 96)]] and both == [[(18, 96)]]


def test_public_api_value_and_grad():
  x, weights, _ = _operands((4, 30, 64), 80, False, "bfloat16", seed=7)

  def loss(impl):
    def f(x, w):
      y = pk.gated_linear_unit(x, w, activation=jax.nn.silu, implementation=impl)
      return jnp.sum(jnp.sin(y.astype(jnp.float32))), y
    return f

  with pk.pallas_interpret(testing.interpret("triton")):
    (_, y), grads = jax.jit(jax.value_and_grad(loss("triton"), argnums=(0, 1),
                                               has_aux=True))(x, weights)
  (_, want_y), want = jax.value_and_grad(loss("xla"), argnums=(0, 1), has_aux=True)(x, weights)
  testing.assert_close(y, want_y, "bfloat16", "fwd")
  for g, w in zip(jax.tree.leaves(grads), jax.tree.leaves(want)):
    testing.assert_close(g, w, "bfloat16", "grad")


def test_refusals_and_rule():
  x, weights, _ = _operands((4, 16), 16, True, "float32")
  if not testing.on_gpu():
    with pytest.raises(pk.UnsupportedImplementationError, match="need an NVIDIA GPU"):
      pk.gated_linear_unit(x, weights, implementation="triton")
  with pk.pallas_interpret():
    with pytest.raises(pk.UnsupportedImplementationError, match="another dtype than x"):
      pk.gated_linear_unit(x.astype(jnp.bfloat16), weights, implementation="triton")
    with pytest.raises(pk.UnsupportedImplementationError, match="no Pallas Triton lowering"):
      pk.gated_linear_unit(x, weights, precision=jax.lax.DotAlgorithmPreset.ANY_F8_ANY_F8_F32,
                           implementation="triton")
  spec, _ = base.make_spec(x, weights, None, None)
  h200 = DeviceInfo("cuda", "NVIDIA H200", (9, 0))
  cpu = DeviceInfo("pjrtkit", "pjrtkit_cpu", None)
  assert api.rule(spec, h200, "fwd") == api.rule(spec, h200, "bwd") == ["xla"]
  assert api.rule(spec, cpu, "fwd") == api.rule(spec, cpu, "bwd") == ["xla"]


def test_configs():
  with pytest.raises(ValueError, match="block_k must be a power of two >= 16"):
    TritonGatedLinearUnitConfig(block_k=8)
  op = TritonGatedLinearUnit()
  spec, _ = base.make_spec(jax.ShapeDtypeStruct((8, 1024, 4096), jnp.bfloat16),
                           jax.ShapeDtypeStruct((4096, 2, 14336), jnp.bfloat16), None, None)
  assert op.default_config(spec) == TritonGatedLinearUnitConfig(128, 128, 64, 8, 3)
  # float32: k steps of 32 (two weight tiles per stage; 144 KiB in 3 stages).
  f32, _ = base.make_spec(jax.ShapeDtypeStruct((8, 1024, 4096), jnp.float32),
                          jax.ShapeDtypeStruct((4096, 2, 14336), jnp.float32), None, None)
  assert op.default_config(f32) == TritonGatedLinearUnitConfig(128, 128, 32, 8, 3)
  assert all(tm.smem_bytes(c, 4, 2) <= 227 * 1024 for c in op.autotuning_configs(f32))
  configs = op.autotuning_configs(spec)
  assert configs[0] == op.default_config(spec) and len(configs) == len(set(configs)) > 8
  tiny, _ = base.make_spec(jax.ShapeDtypeStruct((5, 20), jnp.float32),
                           jax.ShapeDtypeStruct((20, 2, 8), jnp.float32), None, None)
  assert all(c.block_m == c.block_n == 16 and c.block_k <= 32
             for c in op.autotuning_configs(tiny))


# --- lowering for CUDA ------------------------------------------------------------------------

def _export(fn, *structs):
  with tm.lowering_target():
    exported = jax.export.export(jax.jit(fn), platforms=["cuda"],
                                 disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(*structs)
  return exported, exported.mlir_module().count("@__gpu$xla.gpu.triton(")


@pytest.mark.parametrize("fused,dtype", [(True, jnp.bfloat16), (False, jnp.float32),
                                         (True, jnp.float16)])
def test_lowers_for_cuda(fused, dtype):
  """The default config at a shape whose dimensions are not multiples of the tiles: `forward`
  (output and y), `forward_output`, and the gradient."""
  x = jax.ShapeDtypeStruct((3, 333, 1000), dtype)
  w = jax.ShapeDtypeStruct((1000, 2, 700), dtype)
  op = TritonGatedLinearUnit()

  def f(x, w, dout):
    weights = w if fused else (w[:, 0], w[:, 1])
    spec, args = base.make_spec(x, weights, jax.nn.silu, None)
    config = op.default_config(spec)
    out, residuals = op.forward(args, spec, config)
    only = op.forward_output(args, spec, config)
    return (out, only, residuals[-1]) + tuple(
        g for g in op.backward(residuals, dout, spec, config) if g is not None)

  exported, kernels = _export(f, x, w, jax.ShapeDtypeStruct((3, 333, 700), dtype))
  shapes = [a.shape for a in exported.out_avals]
  assert shapes[:4] == [(3, 333, 700), (3, 333, 700), (3, 333, 2, 700), (3, 333, 1000)]
  assert kernels == 2


def test_every_fused_activation_lowers_for_cuda():
  """`triton_matmul.FUSABLE_ACTIVATIONS` (every name `functions.KNOWN` has) lower inside the
  kernel; the exact gelu (``erfc``) is why it is not applied there."""
  x = jax.ShapeDtypeStruct((64, 64), jnp.bfloat16)
  w = jax.ShapeDtypeStruct((64, 2, 64), jnp.bfloat16)
  op = TritonGatedLinearUnit()
  assert tm.FUSABLE_ACTIVATIONS == set(functions.KNOWN)

  def forward_output(x, w, activation):
    spec, args = base.make_spec(x, w, activation, None)
    return op.forward_output(args, spec, _SMALL)

  for name in sorted(tm.FUSABLE_ACTIVATIONS):
    _, kernels = _export(functools.partial(forward_output, activation=functions.KNOWN[name]),
                         x, w)
    assert kernels == 1, name


def test_autotuning_configs_lower_for_cuda():
  x = jax.ShapeDtypeStruct((1024, 512), jnp.bfloat16)
  w = jax.ShapeDtypeStruct((512, 2, 1024), jnp.bfloat16)
  op = TritonGatedLinearUnit()
  spec, _ = base.make_spec(x, w, jax.nn.silu, None)
  for config in op.autotuning_configs(spec):
    def f(x, w, c=config):
      s, args = base.make_spec(x, w, jax.nn.silu, None)
      return op.forward(args, s, c)[0]
    _, kernels = _export(f, x, w)
    assert kernels == 1, config


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
