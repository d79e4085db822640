"""ragged_dot "triton": the kernels' forward, epilogues and gradient against "xla", their refusals,
and their lowering for CUDA.

Without a GPU (CI) the kernels run in Pallas interpret mode; on an NVIDIA GPU the numerics tests
run them compiled. The lowering tests export the kernels for CUDA on any machine
(``jax.export(..., platforms=["cuda"])`` with an abstract H200 as the target,
`triton_matmul.lowering_target`): Pallas's Triton lowering then checks the kernels' shapes,
index arithmetic and dots without a GPU. Tolerances: `pjrtkit.kernels.testing.TOLERANCES`.
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
from pjrtkit.kernels.core import triton_matmul as tm  # noqa: E402
from pjrtkit.kernels.core.device import DeviceInfo  # noqa: E402
from pjrtkit.kernels.ragged_dot import api, base, schedule  # noqa: E402
from pjrtkit.kernels.ragged_dot.triton import (TritonRaggedDot,  # noqa: E402
                                               TritonRaggedDotConfig)
from pjrtkit.kernels.ragged_dot.xla import XlaRaggedDot  # noqa: E402

_TRANSPOSED = jax.lax.RaggedDotDimensionNumbers(
    dot_dimension_numbers=(([1], [2]), ([], [])), lhs_ragged_dimensions=[0],
    rhs_group_dimensions=[0])
"""rhs ``[g, n, k]``."""

_SMALL = TritonRaggedDotConfig(16, 16, 16, 4, 2, 2)
"""16-row tiles: groups span and share tiles at the test shapes; bands of 2 items."""


def _operands(m, k, n, sizes, local, layout, dtype, seed=0):
  k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
  lhs = jax.random.normal(k1, (m, k), jnp.float32).astype(dtype)
  shape = (local, k, n) if layout == "kn" else (local, n, k)
  rhs = jax.random.normal(k2, shape, jnp.float32).astype(dtype)
  return lhs, rhs, jnp.asarray(sizes, jnp.int32), k3


def _spec(lhs, rhs, sizes, offset, layout, activation=None, fuse=None, precision=None):
  dn = base.DEFAULT_RAGGED_DOT_DIM_NUMS if layout == "kn" else _TRANSPOSED
  spec, _ = base.make_spec(lhs, rhs, sizes, dn, precision, None, offset, activation, False,
                           fuse)
  return spec


def _phases(op, config, args, spec, dout):
  """(output of `forward`, its `pre` residual, `forward_output`, the lhs and rhs cotangents).
  Without an epilogue `forward_output` is `forward`'s output (the same kernel, not run twice)."""
  epilogue = spec.param("activation") is not None or spec.param("fuse_gateup_activation")

  def run(*a):
    *args_, dout_ = a
    out, residuals = op.forward(tuple(args_), spec, config)
    only = op.forward_output(tuple(args_), spec, config) if epilogue else out
    dlhs, drhs, _, _ = op.backward(residuals, dout_, spec, config)
    return out, residuals[-1], only, dlhs, drhs

  with pk.pallas_interpret(testing.interpret("triton")):
    return jax.jit(run)(*args, dout)


def _check(lhs, rhs, sizes, offset, layout, key, dtype, config, activation=None, fuse=None):
  # HIGHEST: float32 products in full float32 on a GPU for "xla" too (the kernels' float32 dots
  # always are).
  spec = _spec(lhs, rhs, sizes, offset, layout, activation, fuse, jax.lax.Precision.HIGHEST)
  args = (lhs, rhs, sizes, offset)
  n_out = spec.arg("rhs").shape[2 if layout == "kn" else 1] // (2 if fuse else 1)
  dout = jax.random.normal(key, (lhs.shape[0], n_out), jnp.float32).astype(
      spec.param("out_dtype"))
  got = _phases(TritonRaggedDot(), config, args, spec, dout)
  want = _phases(XlaRaggedDot(), pk.NoConfig(), args, spec, dout)
  for what, g, w in zip(("fwd", "pre", "fwd", "grad", "grad"), got, want):
    if w is None:
      assert g is None
      continue
    testing.assert_close(g, w, dtype, "fwd" if what == "pre" else what)
  return got


CASES = {  # name: (m, k, n, group sizes, local groups, group offset)
    # Uneven and empty groups; 27 of 40 rows covered: tile 0 shared by groups 0 and 2, tile 1
    # by groups 2 and 3 then zeros, tile 2 untouched (zeroed by a padding item).
    "uneven_empty_tail": (40, 24, 40, (5, 0, 19, 3, 0), 5, None),
    # One group over four tiles, k and n not multiples of the blocks.
    "spanning": (64, 37, 20, (50, 14), 2, None),
    # rhs holds groups 2..4 of 6 (rows 26-44): tile 0 untouched before them, tiles 3 and 4
    # after, rows 16-25 and 45-47 zeroed by the first and the last item.
    "offset": (80, 16, 32, (6, 20, 0, 12, 7, 4), 3, 2),
    # No local rows at all: every item is padding, every tile zeroed.
    "offset_empty": (40, 16, 16, (10, 0, 0, 30), 2, 1),
    # Every dimension a multiple of the blocks, one group: no masks in the kernels.
    "exact": (32, 32, 32, (32,), 1, None),
}


@pytest.mark.parametrize("case,layout,dtype", [
    *[(case, layout, "float32") for case in CASES for layout in ("kn", "nk")
      if layout == "kn" or case not in ("offset_empty", "exact")],
    ("uneven_empty_tail", "kn", "bfloat16"), ("spanning", "nk", "bfloat16"),
    ("offset", "kn", "bfloat16")])
def test_kernels_against_xla(case, layout, dtype):
  m, k, n, sizes, local, offset = CASES[case]
  lhs, rhs, sizes, key = _operands(m, k, n, sizes, local, layout, dtype)
  group_offset = None if offset is None else jnp.asarray([offset], jnp.int32)
  out, _, _, dlhs, drhs = _check(lhs, rhs, sizes, group_offset, layout, key, dtype, _SMALL)
  # Rows outside the local groups are exactly zero, and so are their lhs cotangents.
  starts, ends = schedule.local_bounds(sizes, group_offset, local, m)
  covered = np.zeros(m, bool)
  for s, e in zip(np.asarray(starts), np.asarray(ends)):
    covered[s:e] = True
  assert np.all(np.asarray(out, np.float32)[~covered] == 0)
  assert np.all(np.asarray(dlhs, np.float32)[~covered] == 0)
  want = base.reference(lhs, rhs if layout == "kn" else jnp.swapaxes(rhs, 1, 2), sizes,
                        offset or 0)
  testing.assert_close(out, want, dtype, "fwd")
  assert drhs.shape == rhs.shape and drhs.dtype == rhs.dtype


EPILOGUES = [  # (activation, fuse_gateup_activation, layout)
    (jax.nn.silu, None, "kn"),          # the activation in the kernel (forward_output)
    (None, "silu", "nk"),               # gate and up accumulators in the kernel
    (jax.nn.relu, "gelu_tanh", "kn"),   # both
    (None, "gelu", "kn"),               # exact gelu: applied after the kernel by XLA
    (lambda v: v * jnp.tanh(v), None, "nk"),  # a custom activation: after the kernel
    # sigmoid(0) = 0.5: rows outside every group (edge rows of a shared tile, the untouched
    # tile) hold the epilogue of a zero product, as "xla" gives them.
    (jax.nn.sigmoid, None, "kn"),
    (jax.nn.sigmoid, "silu", "nk"),
]


@pytest.mark.parametrize("activation,fuse,layout", EPILOGUES)
def test_epilogues_against_xla(activation, fuse, layout):
  lhs, rhs, sizes, key = _operands(40, 24, 64, (5, 0, 19, 3, 0), 5, layout, "float32", seed=1)
  _check(lhs, rhs, sizes, None, layout, key, "float32", _SMALL, activation, fuse)


def test_rows_outside_the_local_groups_hold_the_activation_of_zero():
  m, k, n, sizes, local, offset = CASES["offset"]
  lhs, rhs, sizes, key = _operands(m, k, n, sizes, local, "kn", "float32", seed=2)
  off = jnp.asarray([offset], jnp.int32)
  out = _check(lhs, rhs, sizes, off, "kn", key, "float32", _SMALL, jax.nn.sigmoid)[0]
  np.testing.assert_array_equal(np.asarray(out)[:26], 0.5)
  np.testing.assert_array_equal(np.asarray(out)[45:], 0.5)


def test_what_the_forward_kernels_write():
  """`forward_output` with a fused gate-up writes ``[m, n/2]`` from one kernel; `forward`
  writes it and the float32 product ``[m, n]`` (the residual `pre`) from one kernel; with the
  exact gelu gate (not lowered in Triton) the kernel writes the float32 product alone."""
  lhs, rhs, sizes, _ = _operands(40, 24, 64, (5, 0, 19, 3, 0), 5, "kn", "bfloat16")
  spec = _spec(lhs, rhs, sizes, None, "kn", None, "silu")
  op = TritonRaggedDot()

  def kernel_outputs(fn):
    with pk.pallas_interpret():
      jaxpr = jax.make_jaxpr(fn)(lhs, rhs, sizes)
    return [[(v.aval.shape, v.aval.dtype) for v in e.outvars] for e in jaxpr.eqns
            if e.primitive.name == "pallas_call"]

  only = kernel_outputs(lambda *a: op.forward_output((*a, None), spec, _SMALL))
  assert only == [[((40, 32), jnp.dtype(jnp.bfloat16))]]
  fwd = kernel_outputs(lambda *a: op.forward((*a, None), spec, _SMALL))
  assert fwd == [[((40, 32), jnp.dtype(jnp.bfloat16)), ((40, 64), jnp.dtype(jnp.float32))]]
  exact = _spec(lhs, rhs, sizes, None, "kn", None, "gelu")
  for fn in (op.forward, op.forward_output):
    outputs = kernel_outputs(lambda *a, fn=fn: fn((*a, None), exact, _SMALL))
    assert outputs == [[((40, 64), jnp.dtype(jnp.float32))]]


@pytest.mark.parametrize("layout", ["kn", "nk"])
def test_public_api_value_and_grad(layout):
  """``pk.ragged_dot`` / ``ragged_dot_general`` with implementation="triton" (default config,
  fitted to the shapes) against "xla", under jit and grad."""
  lhs, rhs, sizes, _ = _operands(70, 48, 40, (30, 0, 25, 15), 4, layout, "bfloat16", seed=2)
  dn = base.DEFAULT_RAGGED_DOT_DIM_NUMS if layout == "kn" else _TRANSPOSED

  def loss(impl):
    def f(a, b):
      y = pk.ragged_dot_general(a, b, sizes, dn, implementation=impl)
      return jnp.sum(jnp.sin(y.astype(jnp.float32))), y
    return f

  with pk.pallas_interpret(testing.interpret("triton")):
    (_, y), grads = jax.jit(jax.value_and_grad(loss("triton"), argnums=(0, 1),
                                               has_aux=True))(lhs, rhs)
  (_, want_y), want = jax.value_and_grad(loss("xla"), argnums=(0, 1), has_aux=True)(lhs, rhs)
  testing.assert_close(y, want_y, "bfloat16", "fwd")
  for g, w in zip(grads, want):
    testing.assert_close(g, w, "bfloat16", "grad")


def test_refusals():
  lhs, rhs, sizes, _ = _operands(8, 16, 16, (4, 4), 2, "kn", "float32")
  if not testing.on_gpu():
    with pytest.raises(pk.UnsupportedImplementationError, match="need an NVIDIA GPU"):
      pk.ragged_dot(lhs, rhs, sizes, implementation="triton")
  with pk.pallas_interpret():
    with pytest.raises(pk.UnsupportedImplementationError, match="integer operands"):
      pk.ragged_dot(lhs.astype(jnp.int32), rhs.astype(jnp.int32), sizes,
                    implementation="triton")
    with pytest.raises(pk.UnsupportedImplementationError, match="must share a dtype"):
      pk.ragged_dot(lhs, rhs.astype(jnp.bfloat16), sizes, implementation="triton")
    contracting = jax.lax.RaggedDotDimensionNumbers(
        dot_dimension_numbers=(([0], [0]), ([], [])), lhs_ragged_dimensions=[0],
        rhs_group_dimensions=[])
    with pytest.raises(pk.UnsupportedImplementationError, match="ragged_dot's layout"):
      pk.ragged_dot_general(lhs, lhs, sizes, contracting, implementation="triton")
    with pytest.raises(pk.UnsupportedImplementationError, match="no Pallas Triton lowering"):
      pk.ragged_dot(lhs, rhs, sizes, precision=jax.lax.DotAlgorithmPreset.ANY_F8_ANY_F8_F32,
                    implementation="triton")


def test_rule_takes_triton_on_gpus_only():
  lhs, rhs, sizes, _ = _operands(8, 16, 16, (4, 4), 2, "kn", "bfloat16")
  spec = _spec(lhs, rhs, sizes, None, "kn")
  h200 = DeviceInfo("cuda", "NVIDIA H200", (9, 0))
  cpu = DeviceInfo("pjrtkit", "pjrtkit_cpu", None)
  for phase in ("fwd", "bwd"):
    assert api.rule(spec, h200, phase)[0] == "triton"
    assert api.rule(spec, cpu, phase) == ["native", "xla_grouped", "xla"]
  assert api.FAMILY.choose(spec, None, "fwd", h200).op.implementation == "triton"


def test_configs():
  with pytest.raises(ValueError, match="block_n must be a power of two >= 16"):
    TritonRaggedDotConfig(block_n=24)
  with pytest.raises(ValueError, match="num_warps"):
    TritonRaggedDotConfig(num_warps=3)
  lhs = jax.ShapeDtypeStruct((4096, 7168), jnp.bfloat16)
  spec = _spec(lhs, jax.ShapeDtypeStruct((8, 7168, 2048), jnp.bfloat16),
               jax.ShapeDtypeStruct((8,), jnp.int32), None, "kn")
  op = TritonRaggedDot()
  assert op.default_config(spec) == TritonRaggedDotConfig(128, 128, 64, 8, 4)
  # 64 groups of 16 rows on average: 64-row tiles.
  small = _spec(jax.ShapeDtypeStruct((1024, 7168), jnp.bfloat16),
                jax.ShapeDtypeStruct((64, 7168, 2048), jnp.bfloat16),
                jax.ShapeDtypeStruct((64,), jnp.int32), None, "kn")
  assert op.default_config(small).block_m == 64
  # float32 operands: k steps of 32 keep the 4 stages within 160 KiB of shared memory.
  f32 = _spec(jax.ShapeDtypeStruct((4096, 7168), jnp.float32),
              jax.ShapeDtypeStruct((8, 7168, 2048), jnp.float32),
              jax.ShapeDtypeStruct((8,), jnp.int32), None, "kn")
  assert op.default_config(f32) == TritonRaggedDotConfig(128, 128, 32, 8, 4)
  assert all(tm.smem_bytes(c, 4) <= 227 * 1024 for c in op.autotuning_configs(f32))
  configs = op.autotuning_configs(spec)
  assert configs[0] == op.default_config(spec) and len(configs) == len(set(configs)) > 8
  # Blocks shrink to tiny dimensions.
  tiny = _spec(jax.ShapeDtypeStruct((10, 20), jnp.float32),
               jax.ShapeDtypeStruct((2, 20, 8), jnp.float32),
               jax.ShapeDtypeStruct((2,), jnp.int32), None, "kn")
  assert all(c.block_m == 16 and c.block_n == 16 and c.block_k <= 32
             for c in op.autotuning_configs(tiny))
  args = op.example_args(tiny)
  assert args[2].dtype == jnp.int32 and int(jnp.sum(args[2])) == 10


# --- lowering for CUDA ------------------------------------------------------------------------

def _export(fn, *structs):
  with tm.lowering_target():
    exported = jax.export.export(jax.jit(fn), platforms=["cuda"],
                                 disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(*structs)
  return exported, exported.mlir_module().count("@__gpu$xla.gpu.triton(")


@pytest.mark.parametrize("layout,dtype,offset,fuse", [
    ("kn", jnp.bfloat16, False, None),
    ("nk", jnp.bfloat16, True, "silu"),
    ("kn", jnp.float32, True, "gelu_tanh"),
    ("nk", jnp.float16, False, None),
])
def test_lowers_for_cuda(layout, dtype, offset, fuse):
  """Default configs at an MoE-like shape whose dimensions are not multiples of the tiles: the
  forward (the float32 product for the residual, or the output), `forward_output` (with a fused
  gate-up: two accumulators), and the backward's two kernels."""
  m, k, n, g = 1000, 320, 544, 8
  lhs = jax.ShapeDtypeStruct((m, k), dtype)
  rhs = jax.ShapeDtypeStruct((g, k, n) if layout == "kn" else (g, n, k), dtype)
  sizes = jax.ShapeDtypeStruct((g + 2 * offset,), jnp.int32)
  group_offset = jax.ShapeDtypeStruct((1,), jnp.int32) if offset else None
  spec = _spec(lhs, rhs, sizes, group_offset, layout, None, fuse)
  op = TritonRaggedDot()
  config = op.default_config(spec)
  n_out = n // 2 if fuse else n

  def f(a, b, s, o, dout):
    out, residuals = op.forward((a, b, s, o), spec, config)
    only = op.forward_output((a, b, s, o), spec, config)
    return (out, only) + op.backward(residuals, dout, spec, config)[:2]

  dout = jax.ShapeDtypeStruct((m, n_out), dtype)
  structs = (lhs, rhs, sizes, group_offset or jax.ShapeDtypeStruct((1,), jnp.int32), dout)
  if not offset:
    f_no_offset = f
    f = lambda a, b, s, o, d: f_no_offset(a, b, s, None, d)  # noqa: E731
  exported, kernels = _export(f, *structs)
  assert [a.shape for a in exported.out_avals] == [(m, n_out), (m, n_out), (m, k), rhs.shape]
  assert kernels == 4


def test_autotuning_configs_lower_for_cuda():
  """Every autotuning candidate at a bf16 MoE shape lowers (forward only)."""
  lhs = jax.ShapeDtypeStruct((2048, 512), jnp.bfloat16)
  rhs = jax.ShapeDtypeStruct((8, 512, 1024), jnp.bfloat16)
  sizes = jax.ShapeDtypeStruct((8,), jnp.int32)
  spec = _spec(lhs, rhs, sizes, None, "kn")
  op = TritonRaggedDot()
  for config in op.autotuning_configs(spec):
    _, kernels = _export(lambda a, b, s, c=config: op.forward_output((a, b, s, None), spec, c),
                         lhs, rhs, sizes)
    assert kernels == 1, config


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
