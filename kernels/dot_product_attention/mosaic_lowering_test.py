"""The compiled "mosaic" attention kernels, checked without a GPU: the backward's geometry choice
(shared memory, blocks, stages), and lowering for CUDA (``jax.export(..., platforms=["cuda"])``
runs Pallas's Mosaic GPU lowering on the CPU, which catches shape, layout, transform and barrier
errors in the warp-specialised kernels that Pallas's interpreter cannot run). Their numerics are
checked on the H200 (tools/kernels_gpu: dot_product_attention_test's GPU tests).
"""

from __future__ import annotations

import math
import re
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit.kernels.dot_product_attention import base  # noqa: E402
from pjrtkit.kernels.dot_product_attention import mosaic_bwd  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import MosaicAttention  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import MosaicAttentionConfig  # noqa: E402


def _choose(b, t, h, d, s, k, causal, max_stages=4, block_qs=(64,)):
  return mosaic_bwd.choose(batch=b, q_len=t, heads=h, kv_heads=k, kv_len=s, head_dim=d,
                           scale=1 / math.sqrt(d), causal=causal, itemsize=2,
                           max_stages=max_stages, block_qs=block_qs)


def test_backward_geometry_fits_hopper_shared_memory():
  g = _choose(32, 2048, 16, 64, 2048, 16, False)
  assert (g.block_q, g.stages, g.ds_slots, g.dq_columns_split) == (64, 4, 2, False)
  assert (g.q_steps, g.kv_blocks, g.programs, g.group) == (32, 16, 8192, 1)
  # Keys, values 2 x 16 KiB; Q, dO 4 stages x 2 x 8 KiB; lse, delta 2 KiB; dS^T 2 x 16 KiB;
  # dQ staging 2 x 16 KiB; 4 KiB of barriers and alignment.
  assert g.smem_bytes(2) == 32768 + 65536 + 2048 + 32768 + 32768 + 4096
  wide = _choose(1, 16384, 16, 128, 16384, 16, False)
  assert (wide.block_q, wide.stages, wide.ds_slots, wide.dq_columns_split) == (64, 2, 2, True)
  assert wide.dq_tile == (64, 64) and wide.fits(2)
  causal = _choose(2, 197, 4, 64, 131, 2, True, block_qs=(128, 64))
  assert (causal.block_q, causal.stages, causal.ds_slots) == (128, 2, 1)
  assert (causal.q_len_padded, causal.kv_len_padded, causal.mask_kv_len) == (256, 256, True)
  assert causal.programs == 2 * 2 * 2
  assert _choose(1, 64, 1, 512, 64, 1, False) is None  # No tile of head_dim 512 fits.


def test_backward_geometry_refuses_bad_values():
  with pytest.raises(ValueError, match=r"block_q must be one of \(64, 128\), got 32"):
    mosaic_bwd.BwdGeometry(1, 1, 1, 64, 64, 128, 64, 0.125, False, block_q=32)
  with pytest.raises(ValueError, match="padded lengths must be multiples of 128 .queries. and "
                                       "128 .keys., got 64 and 128"):
    mosaic_bwd.BwdGeometry(1, 1, 1, 64, 64, 128, 64, 0.125, False, block_q=128)
  with pytest.raises(ValueError, match="stages must be at least 2, got 1"):
    mosaic_bwd.BwdGeometry(1, 1, 1, 64, 64, 128, 64, 0.125, False, stages=1)
  with pytest.raises(ValueError, match="ds_slots must be 1 or 2, got 3"):
    mosaic_bwd.BwdGeometry(1, 1, 1, 64, 64, 128, 64, 0.125, False, ds_slots=3)


@pytest.mark.parametrize("shape,causal", [
    ((32, 2048, 16, 64, 2048, 16), False),   # the comparison's A4 shape
    ((2, 197, 4, 64, 131, 2), True),         # odd lengths, grouped heads, 128-row steps
    ((2, 256, 4, 128, 384, 4), False),       # head_dim 128: dQ split by columns
    ((1, 1000, 4, 64, 300, 1), True),        # multi-query, more queries than keys
])
def test_forward_and_fused_backward_lower_for_cuda(shape, causal):
  b, t, h, d, s, k = shape
  impl = MosaicAttention()
  q = jax.ShapeDtypeStruct((b, t, h, d), jnp.bfloat16)
  kv = jax.ShapeDtypeStruct((b, s, k, d), jnp.bfloat16)

  def fwd_bwd(q, k, v, dout):
    spec = base.make_spec(q, k, v, None, None, causal, None)
    out, residuals = impl.forward((q, k, v, None, None), spec, impl.phase_config(spec, "fwd"))
    return (out,) + impl.backward(residuals, dout, spec, impl.phase_config(spec, "bwd"))[:3]

  exported = jax.export.export(jax.jit(fwd_bwd), platforms=["cuda"])(q, kv, kv, q)
  assert [(a.shape, a.dtype) for a in exported.out_avals] == [
      ((b, t, h, d), jnp.bfloat16), ((b, t, h, d), jnp.bfloat16),
      ((b, s, k, d), jnp.bfloat16), ((b, s, k, d), jnp.bfloat16)]
  # Two Mosaic GPU kernels: the persistent forward and the fused backward.
  assert re.findall(r"custom_call @(\w+)", exported.mlir_module()).count("mosaic_gpu_v2") == 2


@pytest.mark.parametrize("flags,kernels", [
    ("--xla_gpu_deterministic_ops=true", 3), ("--xla_gpu_exclude_nondeterministic_ops", 3),
    ("--xla_gpu_deterministic_ops=false", 2), ("", 2)])
def test_deterministic_ops_take_the_split_backward(monkeypatch, flags, kernels):
  """With XLA_FLAGS asking for determinism the backward is the dQ and dK/dV kernels (no atomic
  adds): three Mosaic GPU kernels with the forward instead of two."""
  monkeypatch.setenv("XLA_FLAGS", flags)
  impl = MosaicAttention()
  q = jax.ShapeDtypeStruct((2, 256, 4, 64), jnp.bfloat16)

  def grads(q, k, v, dout):
    spec = base.make_spec(q, k, v, None, None, False, None)
    _, residuals = impl.forward((q, k, v, None, None), spec, impl.phase_config(spec, "fwd"))
    return impl.backward(residuals, dout, spec, impl.phase_config(spec, "bwd"))[:3]

  exported = jax.export.export(jax.jit(grads), platforms=["cuda"])(q, q, q, q)
  assert re.findall(r"custom_call @(\w+)", exported.mlir_module()).count("mosaic_gpu_v2") == kernels


def test_bwd_phase_config_keeps_four_query_steps_in_flight():
  q = jax.ShapeDtypeStruct((32, 2048, 16, 64), jnp.bfloat16)
  spec = base.make_spec(q, q, q, None, None, False, None)
  assert MosaicAttention().phase_config(spec, "bwd") == MosaicAttentionConfig(64, 4)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
