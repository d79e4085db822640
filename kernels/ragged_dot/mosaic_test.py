"""ragged_dot "mosaic": the Hopper forward kernel's lowering for CUDA at every config it tunes
over, both rhs layouts and output dtypes (``jax.export(..., platforms=["cuda"])`` with an abstract
H200 as the target: Pallas's Mosaic GPU lowering runs on any machine and catches shape, layout,
transform and shared-memory errors, not barrier errors); which rows each work item stores,
replayed on integers over the real schedule (every output row written once, with its group's
product or zero); its geometry and refusals; a differentiated call taking "triton"'s gradient;
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
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import device as device_lib  # noqa: E402
from pjrtkit.kernels.core import triton_matmul as tm  # noqa: E402
from pjrtkit.kernels.core.device import DeviceInfo  # noqa: E402
from pjrtkit.kernels.ragged_dot import api, base, schedule  # noqa: E402
from pjrtkit.kernels.ragged_dot import mosaic as rm  # noqa: E402

Config = rm.MosaicRaggedDotConfig
H200 = DeviceInfo(platform="cuda", kind="NVIDIA H200", compute_capability=(9, 0))
_TRANSPOSED = jax.lax.RaggedDotDimensionNumbers(
    dot_dimension_numbers=(([1], [2]), ([], [])), lhs_ragged_dimensions=[0],
    rhs_group_dimensions=[0])
"""rhs ``[g, n, k]``."""


def _hopper() -> bool:
  return testing.on_gpu() and device_lib.current_device().compute_capability[0] == 9


def _operands(m, k, n, sizes, local, contract, dtype, seed=0):
  k1, k2 = jax.random.split(jax.random.key(seed))
  lhs = jax.random.normal(k1, (m, k), jnp.float32).astype(dtype)
  shape = (local, k, n) if contract == 1 else (local, n, k)
  rhs = jax.random.normal(k2, shape, jnp.float32).astype(dtype)
  return lhs, rhs, jnp.asarray(sizes, jnp.int32)


def _spec(lhs, rhs, sizes, offset, contract, activation=None, fuse=None, precision=None,
          out_dtype=None):
  dn = base.DEFAULT_RAGGED_DOT_DIM_NUMS if contract == 1 else _TRANSPOSED
  spec, group_sizes = base.make_spec(lhs, rhs, sizes, dn, precision, out_dtype, offset,
                                     activation, False, fuse)
  return spec, (lhs, rhs, group_sizes, offset)


def _export(m, k, n, groups, contract, config, out_dtype=jnp.bfloat16):
  lhs = jax.ShapeDtypeStruct((m, k), jnp.bfloat16)
  rhs = jax.ShapeDtypeStruct((groups, k, n) if contract == 1 else (groups, n, k), jnp.bfloat16)
  sizes = jax.ShapeDtypeStruct((groups,), jnp.int32)
  with tm.lowering_target():
    return jax.export.export(jax.jit(
        lambda a, b, s: rm.rows_forward(a, b, contract, s, None, config, out_dtype)),
        platforms=["cuda"])(lhs, rhs, sizes)


def _tuned_configs() -> list[Config]:
  lhs, rhs, sizes = _operands(256, 512, 512, [128, 128], 2, 1, "bfloat16")
  spec, _ = _spec(lhs, rhs, sizes, None, 1)
  return list(rm.MosaicRaggedDot().autotuning_configs(spec))


@pytest.mark.parametrize("config", _tuned_configs(), ids=str)
def test_every_tuned_config_lowers_for_cuda(config):
  # k = 1024: at least `stages` k steps, so the pipeline keeps every config's depth.
  exported = _export(1000, 1024, 512, 8, 1, config)
  assert [(a.shape, a.dtype) for a in exported.out_avals] == [((1000, 512), jnp.bfloat16)]
  assert "pjrtkit_ragged_dot_fwd_mosaic" in exported.mlir_module()


@pytest.mark.parametrize("contract", [1, 2])
@pytest.mark.parametrize("out_dtype", [jnp.bfloat16, jnp.float32])
@pytest.mark.parametrize("block_n", [64, 128, 256])
def test_both_layouts_and_output_dtypes_lower(contract, out_dtype, block_n):
  exported = _export(384, 256, 512, 5, contract, Config(block_n=block_n), out_dtype)
  assert [(a.shape, a.dtype) for a in exported.out_avals] == [((384, 512), out_dtype)]


@pytest.mark.parametrize("contract", [1, 2])
def test_forward_and_gradient_lower_for_cuda(contract):
  """The forward and the gradient at an MoE-like shape with a group offset: d lhs by the Mosaic
  kernel (rhs contracted over the other dimension), d rhs by "triton"'s per-group kernel."""
  m, k, n, g = 1000, 512, 384, 4
  lhs = jax.ShapeDtypeStruct((m, k), jnp.bfloat16)
  rhs = jax.ShapeDtypeStruct((g, k, n) if contract == 1 else (g, n, k), jnp.bfloat16)
  sizes = jax.ShapeDtypeStruct((g + 2,), jnp.int32)
  offset = jax.ShapeDtypeStruct((1,), jnp.int32)
  spec, _ = _spec(lhs, rhs, sizes, offset, contract)
  op = rm.MosaicRaggedDot()
  config = op.default_config(spec)

  def f(a, b, s, o, dout):
    out, residuals = op.forward((a, b, s, o), spec, config)
    return (out,) + op.backward(residuals, dout, spec, config)[:2]

  with tm.lowering_target():
    exported = jax.export.export(jax.jit(f), platforms=["cuda"],
                                 disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(
        lhs, rhs, sizes, offset, jax.ShapeDtypeStruct((m, n), jnp.bfloat16))
  assert [a.shape for a in exported.out_avals] == [(m, n), (m, k), rhs.shape]
  name = "pjrtkit_ragged_dot_fwd_mosaic"
  one = _export(m, k, n, g, contract, config).mlir_module().count(name)  # one kernel's mentions
  text = exported.mlir_module()
  assert one > 0 and text.count(name) == 2 * one  # the forward and d lhs
  assert "pjrtkit_ragged_dot_group_grad" in text


def _replay(sizes, local, offset, m):
  """``written[r]``: for every row r of the output's row tiles (rows past the array are clipped
  by TMA), the list of what the kernel's stores
  put there (a local group's index, or -1 for zeros), from `owned_rows`, `schedule.untouched_tile` and
  `store_boxes` evaluated on the schedule's integers."""
  g = rm.geometry(m, 64, 128, 1, local, Config(), 2, 2, 132)
  sched = schedule.make(jnp.asarray(sizes, jnp.int32),
                        None if offset is None else jnp.asarray([offset], jnp.int32),
                        local, g.m, rm.TILE_M)
  group, tile, lo, hi = (np.asarray(a) for a in (sched.group, sched.tile, sched.row_lo,
                                                  sched.row_hi))
  count = int(sched.count)
  written = [[] for _ in range(g.row_tiles * rm.TILE_M)]
  for item in range(len(group)):
    for part in range(2):
      row0 = None
      if item < count:
        first, size = (int(v) for v in rm.owned_rows(item, count, int(lo[item]), int(hi[item]),
                                                     int(tile[item]), part))
        row0 = int(tile[item]) * rm.TILE_M + part * rm.WG_ROWS
        for box, offset_, taken in rm.store_boxes(first, size):
          if int(taken):
            assert int(taken) == box
            for r in range(row0 + int(offset_), row0 + int(offset_) + box):
              inside = lo[item] <= r < hi[item]
              written[r].append(int(group[item]) if inside else -1)
      else:
        t = int(schedule.untouched_tile(item - count, count, int(tile[0]),
                                  int(tile[max(count - 1, 0)]), g.row_tiles))
        if t < g.row_tiles:
          for r in range(t * rm.TILE_M + part * rm.WG_ROWS,
                         t * rm.TILE_M + (part + 1) * rm.WG_ROWS):
            written[r].append(-1)
  return written


OWNERSHIP_CASES = [  # (group sizes, local groups, group offset, rows)
    ([100, 0, 30, 200, 0, 1, 50], 7, None, 400),       # empty groups, boundaries inside tiles
    ([128, 128, 128], 3, None, 384),                    # groups on tile boundaries
    ([5, 3, 9], 3, None, 300),                          # all groups in one tile, rows after
    ([0, 0, 0, 0], 4, None, 256),                       # no rows at all: every tile zeroed
    ([40, 300, 7, 90, 60], 2, 1, 500),                  # group_offset: rows before and after
    ([1] * 200, 200, None, 200),                        # more groups than tiles
    ([0, 0, 64], 3, None, 1000),                        # the first group starts late
    ([500, 0, 0], 3, None, 700),                        # trailing empty groups, rows after
    ([300, 400, 500], 3, None, 900),                    # more group rows than lhs rows
    ([0, 0, 300, 200], 2, 0, 600),                      # no local rows, other groups' rows
    ([20, 0, 13], 3, None, 50),                         # fewer rows than one tile (padded)
    ([129, 1, 254, 616], 3, 1, 1000),                   # group_offset, last group to the end
]


@pytest.mark.parametrize("case", range(len(OWNERSHIP_CASES)))
def test_every_row_is_stored_once_with_its_groups_product_or_zero(case):
  sizes, local, offset, m = OWNERSHIP_CASES[case]
  written = _replay(sizes, local, offset, m)
  ends = np.cumsum(sizes)
  starts = ends - np.asarray(sizes)
  for r, what in enumerate(written):
    want = -1  # no local group: zero
    for g, (s, e) in enumerate(zip(starts, ends)):
      local_g = g - (offset or 0)
      if s <= r < e and 0 <= local_g < local:
        want = local_g
    if r < m:
      assert what == [want], (r, what, want)
    else:  # past the rows (clipped, or sliced off when padded): written at most once
      assert len(what) <= 1, (r, what)


def test_store_boxes_are_the_binary_digits_of_the_run():
  boxes = rm.store_boxes(3, 45)  # 45 = 32 + 8 + 4 + 1
  taken = [(box, int(offset)) for box, offset, t in boxes if int(t)]
  assert taken == [(32, 3), (8, 35), (4, 43), (1, 47)]
  assert [box for box, _, _ in boxes] == [64, 32, 16, 8, 4, 2, 1]
  assert [int(t) for _, _, t in rm.store_boxes(0, 64)] == [64, 0, 0, 0, 0, 0, 0]
  assert all(int(t) == 0 for _, _, t in rm.store_boxes(7, 0))


def test_geometry_pads_rows_and_fits_stages_in_shared_memory():
  g = rm.geometry(16384, 2048, 1408, 1, 64, Config(), 2, 2, 132)
  assert (g.m, g.row_tiles, g.items, g.col_tiles, g.programs) == (16384, 128, 191, 11, 132)
  # 32 KiB per step, 32 KiB of bfloat16 output tiles: 4 steps fit in 227 KiB.
  assert rm.stage_bytes(Config(), 2) == 32 * 1024 and rm.epilogue_bytes(Config(), 2) == 32 * 1024
  assert g.stages == 4
  assert rm.fitted_stages(Config(256, 64, 4, 8), 2, 2) == 3  # 48 KiB steps, 64 KiB output
  assert rm.fitted_stages(Config(256, 64, 4, 8), 2, 4) == 2  # float32 output: 128 KiB
  small = rm.geometry(5, 64, 128, 2, 1, Config(), 2, 2, 132)
  assert (small.m, small.items, small.col_tiles, small.programs) == (128, 1, 1, 1)


def test_config_and_geometry_are_validated_naming_the_field():
  with pytest.raises(ValueError, match="block_n must be 64, 128 or 256, got 96"):
    Config(block_n=96)
  with pytest.raises(ValueError, match="block_k must be 64 or 128, got 32"):
    Config(block_k=32)
  with pytest.raises(ValueError, match="stages and band must be >= 1"):
    Config(band=0)
  with pytest.raises(ValueError, match="k \\(320\\) must be a positive multiple of block_k "
                     "\\(128\\)"):
    rm.geometry(64, 320, 256, 1, 2, Config(128, 128), 2, 2, 132)
  with pytest.raises(ValueError, match="n \\(192\\) must be a positive multiple of block_n "
                     "\\(128\\)"):
    rm.geometry(64, 256, 192, 1, 2, Config(), 2, 2, 132)


def test_the_dlhs_product_gets_a_config_that_fits_it():
  fit = rm.MosaicRaggedDot._dlhs_config
  assert fit(Config(256, 128), 768, 1024) == Config(256, 128)
  assert fit(Config(256, 128), 1408, 4096) == Config(128, 128)  # k = 1408: 128 columns
  assert fit(Config(128, 128), 4096, 1344) == Config(128, 64)   # n = 1344 contracted: k steps of 64
  assert fit(Config(64, 64, 6, 4), 192, 64) == Config(64, 64, 6, 4)


def test_default_config_follows_n():
  op = rm.MosaicRaggedDot()
  for n, block_n in ((1408, 128), (768, 256), (192, 64)):
    lhs, rhs, sizes = _operands(8, 64, n, [8], 1, 1, "bfloat16")
    spec, _ = _spec(lhs, rhs, sizes, None, 1)
    assert op.default_config(spec) == Config(block_n=block_n)
    assert all(n % c.block_n == 0 for c in op.autotuning_configs(spec))


@pytest.mark.parametrize("dtype, rhs_dtype, n, k, kwargs, match", [
    ("float32", "float32", 128, 64, {}, "lhs dtype float32 is not supported"),
    ("bfloat16", "float16", 128, 64, {}, "rhs \\(float16\\) of another dtype than lhs"),
    ("bfloat16", "bfloat16", 96, 64, {}, "n \\(96\\) and k \\(64\\) must be multiples of 64"),
    ("bfloat16", "bfloat16", 128, 48, {}, "n \\(128\\) and k \\(48\\)"),
    ("bfloat16", "bfloat16", 128, 64, {"activation": jax.nn.relu},
     "activation and fuse_gateup_activation are not applied in the Mosaic kernel"),
    ("bfloat16", "bfloat16", 128, 64, {"fuse": "silu"}, "'triton' fuses them"),
    ("bfloat16", "bfloat16", 128, 64, {"out_dtype": jnp.int32},
     "preferred_element_type int32 is not written by the kernel \\(accepted: bfloat16, "
     "float16, float32\\)"),
    ("bfloat16", "bfloat16", 192, 64, {"out_dtype": jnp.float8_e4m3fn},
     "preferred_element_type float8_e4m3fn is not written"),
    ("bfloat16", "bfloat16", 128, 64,
     {"precision": jax.lax.DotAlgorithmPreset.BF16_BF16_BF16},
     "precision BF16_BF16_BF16 is not the kernel's products \\(accepted: None, a "
     "jax.lax.Precision, DEFAULT or BF16_BF16_F32\\)"),
])
def test_refusals_name_the_reason(dtype, rhs_dtype, n, k, kwargs, match):
  lhs = jnp.zeros((16, k), dtype)
  rhs = jnp.zeros((2, k, n), rhs_dtype)
  spec, _ = _spec(lhs, rhs, jnp.asarray([8, 8], jnp.int32), None, 1, **kwargs)
  with pk.pallas_interpret(False):
    reason = rm.MosaicRaggedDot().unsupported_reason(spec, H200)
  assert reason is not None and re.search(match, reason), reason


def test_other_layouts_and_empty_operands_are_refused():
  op = rm.MosaicRaggedDot()
  lhs = jnp.zeros((0, 64), jnp.bfloat16)
  spec, _ = _spec(lhs, jnp.zeros((2, 64, 128), jnp.bfloat16), jnp.zeros((2,), jnp.int32),
                  None, 1)
  with pk.pallas_interpret(False):
    assert "an empty operand" in op.unsupported_reason(spec, H200)


def test_refused_off_hopper_and_in_interpret_mode():
  lhs, rhs, sizes = _operands(16, 64, 128, [8, 8], 2, 1, "bfloat16")
  spec, _ = _spec(lhs, rhs, sizes, None, 1)
  op = rm.MosaicRaggedDot()
  with pk.pallas_interpret(False):
    assert op.unsupported_reason(spec, H200) is None
    a100 = dataclasses.replace(H200, kind="NVIDIA A100", compute_capability=(8, 0))
    assert "compute capability 9.0+" in op.unsupported_reason(spec, a100)
    b200 = dataclasses.replace(H200, kind="NVIDIA B200", compute_capability=(10, 0))
    assert "wgmma, which only compute capability 9.x has" in op.unsupported_reason(spec, b200)
    cpu = DeviceInfo(platform="cpu", kind="cpu", compute_capability=None)
    assert "need an NVIDIA GPU" in op.unsupported_reason(spec, cpu)
  with pk.pallas_interpret():
    assert "compiled only" in op.unsupported_reason(spec, H200)
  if not testing.on_gpu():
    with pytest.raises(pk.UnsupportedImplementationError, match="implementation='mosaic'"):
      pk.ragged_dot(lhs, rhs, sizes, implementation="mosaic")


def test_none_does_not_take_it_until_measured():
  assert api.IMPLEMENTATIONS["mosaic"].automatic is False
  lhs, rhs, sizes = _operands(256, 64, 128, [128, 128], 2, 1, "bfloat16")
  spec, _ = _spec(lhs, rhs, sizes, None, 1)
  assert "mosaic" not in api.rule(spec, H200, "fwd")


def _reference_rows_forward(x, rhs, contract, group_sizes, group_offset, config, out_dtype):
  """What `rows_forward` computes, in XLA (the kernel itself runs only on a Hopper GPU)."""
  del config
  rhs_kn = rhs if contract == 1 else jnp.swapaxes(rhs, 1, 2)
  offset = 0 if group_offset is None else group_offset[0]
  return jnp.asarray(base.reference(x, rhs_kn, group_sizes, int(offset)), out_dtype)


@pytest.mark.parametrize("contract", [1, 2])
def test_forward_and_gradient_against_xla_with_the_kernel_replaced(monkeypatch, contract):
  # The kernel replaced by its definition: `forward` returns its output and the residuals;
  # `backward` (d lhs by the kernel with rhs contracted the other way, d rhs by "triton"'s
  # per-group kernel) gives "xla"'s gradient.
  monkeypatch.setattr(rm, "rows_forward", _reference_rows_forward)
  lhs, rhs, sizes = _operands(48, 64, 128, [20, 0, 28], 3, contract, "bfloat16")
  spec, args = _spec(lhs, rhs, sizes, None, contract)
  dout = jax.random.normal(jax.random.key(3), (48, 128), jnp.float32).astype(jnp.bfloat16)
  op, xla = rm.MosaicRaggedDot(), api.IMPLEMENTATIONS["xla"]
  out, residuals = op.forward(args, spec, Config())
  assert out.dtype == jnp.bfloat16 and residuals[:3] == (lhs, rhs, sizes)
  assert residuals[3] is None and residuals[4] is None
  want_out, want_residuals = xla.forward(args, spec, pk.NoConfig())
  testing.assert_close(out, want_out, "bfloat16", "fwd")
  with pk.pallas_interpret():
    got = op.backward(residuals, dout, spec, Config())
  want = xla.backward(want_residuals, dout, spec, pk.NoConfig())
  for g, w in zip(got[:2], want[:2]):
    testing.assert_close(g, w, "bfloat16", "grad")
  assert got[2:] == (None, None)


VALUE_CASES = [  # (m, k, n, group sizes, local, offset, contract, dtype, out dtype, config)
    (1024, 512, 384, [100, 0, 30, 200, 0, 1, 50, 643], 8, None, 1, "bfloat16", None, Config()),
    (1000, 256, 512, [300, 0, 500], 3, None, 2, "bfloat16", None, Config(256)),     # rows after
    (640, 1024, 256, [40, 300, 7, 90, 60], 2, 1, 1, "float16", None, Config(64, 128, 3, 2)),
    (384, 256, 128, [0, 0, 0], 3, None, 1, "bfloat16", "float32", Config()),        # no rows
    (50, 128, 192, [20, 0, 13], 3, None, 1, "float16", "float16", Config(64)),      # padded
    # More pairs than programs (191 items x 11 column tiles on 132 SMs).
    (16384, 512, 1408, None, 64, None, 1, "bfloat16", None, Config()),
    (4096, 512, 768, [1] * 96 + [4000] + [0] * 31, 128, None, 2, "bfloat16", "float32",
     Config(256, 64, 4, 16)),
]


_ON_HOPPER = pytest.mark.skipif(
    not _hopper(), reason="the compiled Mosaic GPU kernel needs a Hopper GPU (sm_90); "
    "tools/gpu/open_issue_checks.sh PART=t runs it on the H200")


@_ON_HOPPER
@pytest.mark.parametrize("case", range(len(VALUE_CASES)))
def test_values_against_the_definition_on_hopper(case):
  m, k, n, sizes, local, offset, contract, dtype, out_dtype, config = VALUE_CASES[case]
  if sizes is None:
    sizes = list(base.generate_group_sizes(m=m, num_groups=local, seed=case))
  lhs, rhs, group_sizes = _operands(m, k, n, sizes, local, contract, dtype, seed=case)
  go = None if offset is None else jnp.asarray([offset], jnp.int32)
  spec, args = _spec(lhs, rhs, group_sizes, go, contract, out_dtype=out_dtype)
  got = jax.jit(lambda *a: rm.MosaicRaggedDot().forward_output(a, spec, config))(*args)
  rhs_kn = rhs if contract == 1 else jnp.swapaxes(rhs, 1, 2)
  want = base.reference(lhs, rhs_kn, group_sizes, offset or 0)
  assert got.shape == (m, n) and got.dtype == jnp.dtype(out_dtype or dtype)
  testing.assert_close(got, want, dtype, "fwd")
  # Rows no local group covers are exactly zero.
  assert np.array_equal(np.asarray(got, np.float32)[np.all(want == 0, axis=1)], 0.0 * want[
      np.all(want == 0, axis=1)])


@_ON_HOPPER
def test_gradient_through_the_public_function_on_hopper():
  lhs, rhs, sizes = _operands(1000, 256, 384, [300, 0, 500, 150], 4, 1, "bfloat16", seed=7)
  dout = jax.random.normal(jax.random.key(8), (1000, 384), jnp.float32)

  def loss(implementation):
    return lambda a, b: jnp.sum(pk.ragged_dot(a, b, sizes, implementation=implementation)
                                .astype(jnp.float32) * dout)

  got = jax.jit(jax.grad(loss("mosaic"), argnums=(0, 1)))(lhs, rhs)
  want = jax.jit(jax.grad(loss("xla"), argnums=(0, 1)))(lhs, rhs)
  for g, w in zip(got, want):
    testing.assert_close(g, w, "bfloat16", "grad")


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
