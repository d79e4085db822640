"""dot_product_attention "mosaic": Pallas kernels lowered through Mosaic GPU (Hopper, sm_90+).

Flash attention with warpgroup matrix multiplies (``plgpu.wgmma``) on bf16/f16 tiles in swizzled
shared memory, filled by TMA copies (``copy_gmem_to_smem``). Forward, compiled: the
warp-specialised kernel of ``mosaic_fwd`` (two compute warpgroups, one TMA producer). Forward under
``pallas_interpret()`` (whose interpreter cannot lower that kernel): `_fwd_kernel`, one program
per (query block of 64 rows, batch, head), keys/values double-buffered, the same arithmetic.
Backward, compiled: the warp-specialised kernel of ``mosaic_bwd`` (one program per 128 keys:
dK and dV in registers, dQ added to a float32 array by TMA reduce-adds, so dQ's rounding varies
from run to run, or to an int32 one in fixed point; ``XLA_FLAGS=--xla_gpu_deterministic_ops=true``
takes the split kernels below: `fixed_point.dq_sum`). Backward under
``pallas_interpret()``: a dQ kernel over query blocks and a dK/dV kernel over key blocks (per
query head, summed over each group afterwards), single-warpgroup, recomputing probabilities from
the log-sum-exp, the next step's tiles in flight while the current one computes: the same
arithmetic. Sequences are padded to the blocks (padded keys masked). Serves bfloat16/float16,
causal or not, grouped/multi-query heads; not bias or mask, not float32 (wgmma takes 16-bit
operands). The kernels are built for head_dim 64 and 128; the other multiples of 8 up to 128
run them on query, key and value zero-padded to the next of the two (`layouts.kernel_head_dim`; the
scale stays the caller's, the padded columns add nothing to the logits, the output's and the
gradients' padded columns are dropped), at the padded width's cost. Calls without a causal mask
whose queries fill less than one program's 128 rows (decode steps, short chunks) and whose query
heads share key/value heads run with each group's query heads folded into the query rows
(`layouts.folds_groups`): the rows of one key/value head's group form one attention of ``T * group``
rows, so a decode step computes ``group`` rows of each padded 128-row tile rather than one and
reads each key/value head once.

The interpreted kernels take scratch memory and barriers from ``pl.run_scoped`` and keep their
inputs in global memory, as Pallas's Mosaic GPU interpreter needs, so CI runs them under
``pallas_interpret()``; the compiled kernels run in the H200 checks (tools/kernels_gpu).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
import jax.experimental.pallas.mosaic_gpu as plgpu

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.interpret import interpret_enabled
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.dot_product_attention import base
from pjrtkit.kernels.dot_product_attention.mosaic import bwd as mosaic_bwd
from pjrtkit.kernels.dot_product_attention.mosaic import fixed_point
from pjrtkit.kernels.dot_product_attention.mosaic import fwd as mosaic_fwd
from pjrtkit.kernels.dot_product_attention.mosaic import work as mosaic_work
# The forward's launch decisions (re-exported: `mosaic.forward_programs` etc.).
from pjrtkit.kernels.dot_product_attention.mosaic.launch import (  # noqa: F401
    BLOCK_Q as _BLOCK_Q, CAUSAL_PERSISTENT_MAX_KEYS, LISTED_MAX_EXTRA_IMBALANCE,
    SPLIT_TAIL_MAX_RUNS, SPLIT_TAIL_MIN_GAIN, forward_programs, listed_forward,
    split_forward_tail)
# Padding and group folding (re-exported: `mosaic.attention.kernel_head_dim` etc.).
from pjrtkit.kernels.dot_product_attention.mosaic.layouts import (  # noqa: F401
    KERNEL_HEAD_DIMS, fold, fold_rows, folds_groups, kernel_head_dim, unfold, unfold_rows,
    with_head_dim, with_query_shape)

_DTYPES = ("bfloat16", "float16")
_NEG_INF = float("-inf")


@dataclasses.dataclass(frozen=True)
class MosaicAttentionConfig:
  """Attributes:
    block_kv: keys per forward step (a multiple of 64; the backward's blocks are its own).
    stages: key/value tiles the forward keeps in flight (2 or more); the fused backward keeps
      as many query steps in flight, fewer where they do not fit in shared memory.
  The query block is 64 rows per warpgroup (one wgmma tile; the forward's two compute
  warpgroups cover 128 rows)."""

  block_kv: int = 128
  stages: int = 2

  def __post_init__(self) -> None:
    if self.block_kv < 64 or self.block_kv % 64:
      raise ValueError(f"block_kv must be a positive multiple of 64, got {self.block_kv}")
    if self.stages < 2:
      raise ValueError(f"stages must be at least 2, got {self.stages}")

  def smem_bytes(self, head_dim: int, itemsize: int) -> int:
    """Shared memory the forward kernel needs at `head_dim`: two query slots per compute
    warpgroup, `stages` key and value tiles, the log-sum-exp rows, room for a program's row of
    the tile list and its barrier (counted whether or not the launch takes one,
    `listed_forward`), plus 4 KiB for barriers and alignment (block_kv 128 with 3 stages at
    head_dim 128 measured 2680 bytes over the tiles)."""
    return ((4 * _BLOCK_Q + 2 * self.stages * self.block_kv) * head_dim * itemsize
            + 2 * _BLOCK_Q * 4 + 4 * mosaic_work.LISTED_MAX_WIDTH + 8 + 4096)


_SMEM_LIMIT = pallas_lib.HOPPER_SMEM_LIMIT
_BWD_BLOCK_KV = 64
"""The interpreted backward kernels' key block, whatever the config (when they were the compiled
backward too, on the H200 at 32x2048x16x64 bf16 the gradient took 6.3 ms with 64 and 9.7 ms with
128, and at head_dim 128 a 128-key dK/dV tile does not fit in shared memory)."""


def _smem(shape: tuple[int, ...], dtype: Any) -> Any:
  """A swizzled shared-memory tile wgmma can read (rows of 64 16-bit elements = 128 bytes).

  Pallas's Mosaic GPU interpreter does not model the tiling/swizzle transforms inside
  ``run_scoped`` (it expects the transformed shape), and they do not change values, so they are
  left out when interpreting.
  """
  if interpret_enabled():
    return plgpu.SMEM(shape, dtype)
  return pallas_lib.wgmma_smem(shape, dtype)


def _mm(a: Any, b: Any, shape: tuple[int, int]) -> Any:
  """``a @ b`` with one wgmma into a fresh float32 accumulator (waited for)."""

  def body(acc_ref: Any) -> Any:
    plgpu.wgmma(acc_ref, a, b)
    return acc_ref[...]

  return pl.run_scoped(body, plgpu.ACC(shape, jnp.float32))


def _mm_staged(x: Any, stage: Any, b: Any, shape: tuple[int, int]) -> Any:
  """``x @ b`` for a register value `x`: written to the shared-memory tile `stage` first (Pallas's
  Mosaic GPU interpreter takes wgmma's left operand from shared memory only)."""
  stage[...] = x.astype(stage.dtype)
  plgpu.commit_smem()
  return _mm(stage, b, shape)


def _iota(shape: tuple[int, int], dim: int) -> Any:
  return plgpu.broadcasted_iota(jnp.int32, shape, dim, layout=plgpu.Layout.WGMMA)


def _valid(q0: Any, k0: Any, shape: tuple[int, int], kv_len: int, causal: bool,
           rows_are_queries: bool = True) -> Any:
  qdim, kdim = (0, 1) if rows_are_queries else (1, 0)
  kpos = k0 + _iota(shape, kdim)
  valid = kpos < kv_len
  if causal:
    valid = valid & (q0 + _iota(shape, qdim) >= kpos)
  return valid


def _row_vector(value: float, n: int) -> Any:
  return plgpu.layout_cast(jnp.full((n,), value, jnp.float32), plgpu.Layout.WGMMA.reduce(1))


def _program_ids(num_blocks: tuple[int, int, int]) -> tuple[Any, Any, Any]:
  """(block, batch, head) of this program on the flattened 1-D grid (the Mosaic GPU interpreter
  computed wrong values for programs beyond the first along a third grid dimension)."""
  pid = pallas_lib.mosaic_program_id()
  nblk, nb, nh = num_blocks
  return lax.rem(pid, nblk), lax.rem(lax.div(pid, nblk), nb), lax.div(pid, nblk * nb)


def _fwd_kernel(q_g, k_g, v_g, o_g, lse_g, *, num_blocks, scale, causal, block_kv, kv_len,
                num_steps,
                group, head_dim, dtype):
  i, b, h = _program_ids(num_blocks)
  kvh = lax.div(h, group)
  q_rows = pl.ds(i * _BLOCK_Q, _BLOCK_Q)
  steps = num_steps
  if causal:
    steps = jnp.minimum(lax.div((i + 1) * _BLOCK_Q + block_kv - 1, block_kv), num_steps)

  def scoped(q_s, k_s, v_s, lse_s, p_s, q_bar, k_bar, v_bar):
    def issue(step, slot):
      rows = pl.ds(step * block_kv, block_kv)
      plgpu.copy_gmem_to_smem(k_g.at[b, kvh, rows], k_s.at[slot], k_bar.at[slot])
      plgpu.copy_gmem_to_smem(v_g.at[b, kvh, rows], v_s.at[slot], v_bar.at[slot])

    plgpu.copy_gmem_to_smem(q_g.at[b, h, q_rows], q_s, q_bar.at[0])
    issue(0, 0)

    if num_steps > 1:

      @pl.when(steps > 1)
      def _():
        issue(1, 1)

    plgpu.barrier_wait(q_bar.at[0])

    def body(step, carry):
      acc, m, l = carry
      slot = lax.rem(step, 2)
      plgpu.barrier_wait(k_bar.at[slot])
      s = _mm(q_s, k_s.at[slot].transpose((1, 0)), (_BLOCK_Q, block_kv)) * scale
      s = jnp.where(_valid(i * _BLOCK_Q, step * block_kv, s.shape, kv_len, causal), s, _NEG_INF)
      m_new = jnp.maximum(m, s.max(axis=1))
      alpha = jnp.exp(m - m_new)
      p = jnp.exp(s - lax.broadcast_in_dim(m_new, s.shape, [0]))
      l = l * alpha + p.sum(axis=1)
      plgpu.barrier_wait(v_bar.at[slot])
      pv = _mm_staged(p, p_s, v_s.at[slot], (_BLOCK_Q, head_dim))
      acc = acc * lax.broadcast_in_dim(alpha, acc.shape, [0]) + pv

      @pl.when(step + 2 < steps)
      def _():
        issue(step + 2, slot)

      return acc, m_new, l

    acc0 = plgpu.layout_cast(jnp.zeros((_BLOCK_Q, head_dim), jnp.float32), plgpu.Layout.WGMMA)
    acc, m, l = lax.fori_loop(0, steps, body,
                              (acc0, _row_vector(base.MASK_VALUE, _BLOCK_Q),
                               _row_vector(0.0, _BLOCK_Q)))
    q_s[...] = (acc / lax.broadcast_in_dim(l, acc.shape, [0])).astype(dtype)
    lse_s[...] = m + jnp.log(l)
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(q_s, o_g.at[b, h, q_rows])
    plgpu.copy_smem_to_gmem(lse_s, lse_g.at[b, h, q_rows])
    plgpu.wait_smem_to_gmem(0)

  pl.run_scoped(scoped, _smem((_BLOCK_Q, head_dim), dtype),
                _smem((2, block_kv, head_dim), dtype), _smem((2, block_kv, head_dim), dtype),
                plgpu.SMEM((_BLOCK_Q,), jnp.float32), _smem((_BLOCK_Q, block_kv), dtype),
                plgpu.Barrier(num_barriers=1), plgpu.Barrier(num_barriers=2),
                plgpu.Barrier(num_barriers=2))


def _dq_kernel(q_g, k_g, v_g, do_g, lse_g, delta_g, dq_g, *, num_blocks, scale, causal, block_kv,
               kv_len,
               num_steps, group, head_dim, dtype):
  i, b, h = _program_ids(num_blocks)
  kvh = lax.div(h, group)
  q_rows = pl.ds(i * _BLOCK_Q, _BLOCK_Q)
  steps = num_steps
  if causal:
    steps = jnp.minimum(lax.div((i + 1) * _BLOCK_Q + block_kv - 1, block_kv), num_steps)

  def scoped(q_s, do_s, k_s, v_s, lse_s, delta_s, dq_s, ds_s, bars, k_bar, v_bar):
    def issue(step, slot):
      rows = pl.ds(step * block_kv, block_kv)
      plgpu.copy_gmem_to_smem(k_g.at[b, kvh, rows], k_s.at[slot], k_bar.at[slot])
      plgpu.copy_gmem_to_smem(v_g.at[b, kvh, rows], v_s.at[slot], v_bar.at[slot])

    plgpu.copy_gmem_to_smem(q_g.at[b, h, q_rows], q_s, bars.at[0])
    plgpu.copy_gmem_to_smem(do_g.at[b, h, q_rows], do_s, bars.at[1])
    plgpu.copy_gmem_to_smem(lse_g.at[b, h, q_rows], lse_s, bars.at[2])
    plgpu.copy_gmem_to_smem(delta_g.at[b, h, q_rows], delta_s, bars.at[3])
    issue(0, 0)
    if num_steps > 1:
      pl.when(steps > 1)(lambda: issue(1, 1))
    for n in range(4):
      plgpu.barrier_wait(bars.at[n])
    lse = plgpu.load(lse_s, layout=plgpu.Layout.WGMMA.reduce(1))
    delta = plgpu.load(delta_s, layout=plgpu.Layout.WGMMA.reduce(1))

    def body(step, dq):
      slot = lax.rem(step, 2)
      plgpu.barrier_wait(k_bar.at[slot])
      plgpu.barrier_wait(v_bar.at[slot])
      shape = (_BLOCK_Q, block_kv)
      s = _mm(q_s, k_s.at[slot].transpose((1, 0)), shape) * scale
      p = jnp.exp(s - lax.broadcast_in_dim(lse, shape, [0]))
      p = jnp.where(_valid(i * _BLOCK_Q, step * block_kv, shape, kv_len, causal), p, 0.0)
      dp = _mm(do_s, v_s.at[slot].transpose((1, 0)), shape)
      ds = p * (dp - lax.broadcast_in_dim(delta, shape, [0]))
      dq = dq + _mm_staged(ds, ds_s, k_s.at[slot], (_BLOCK_Q, head_dim))
      # Both tiles of this slot are read (each wgmma above was waited for): refill it.
      pl.when(step + 2 < steps)(lambda: issue(step + 2, slot))
      return dq

    dq0 = plgpu.layout_cast(jnp.zeros((_BLOCK_Q, head_dim), jnp.float32), plgpu.Layout.WGMMA)
    dq = lax.fori_loop(0, steps, body, dq0)
    dq_s[...] = dq * scale
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(dq_s, dq_g.at[b, h, q_rows])
    plgpu.wait_smem_to_gmem(0)

  pl.run_scoped(scoped, _smem((_BLOCK_Q, head_dim), dtype), _smem((_BLOCK_Q, head_dim), dtype),
                _smem((2, block_kv, head_dim), dtype), _smem((2, block_kv, head_dim), dtype),
                plgpu.SMEM((_BLOCK_Q,), jnp.float32), plgpu.SMEM((_BLOCK_Q,), jnp.float32),
                plgpu.SMEM((_BLOCK_Q, head_dim), jnp.float32), _smem((_BLOCK_Q, block_kv), dtype),
                plgpu.Barrier(num_barriers=4), plgpu.Barrier(num_barriers=2),
                plgpu.Barrier(num_barriers=2))


def _dkv_kernel(q_g, k_g, v_g, do_g, lse_g, delta_g, dk_g, dv_g, *, num_blocks, scale, causal,
                block_kv,
                kv_len, num_q_steps, group, head_dim, dtype):
  j, b, h = _program_ids(num_blocks)
  kvh = lax.div(h, group)
  k_rows = pl.ds(j * block_kv, block_kv)
  first = lax.div(j * block_kv, _BLOCK_Q) if causal else 0

  def scoped(k_s, v_s, q_s, do_s, lse_s, delta_s, dk_s, dv_s, pt_s, dst_s, kv_bars, q_bar,
             do_bar, lse_bar, delta_bar):
    def issue(step, slot):
      rows = pl.ds(step * _BLOCK_Q, _BLOCK_Q)
      plgpu.copy_gmem_to_smem(q_g.at[b, h, rows], q_s.at[slot], q_bar.at[slot])
      plgpu.copy_gmem_to_smem(do_g.at[b, h, rows], do_s.at[slot], do_bar.at[slot])
      plgpu.copy_gmem_to_smem(lse_g.at[b, h, rows], lse_s.at[slot], lse_bar.at[slot])
      plgpu.copy_gmem_to_smem(delta_g.at[b, h, rows], delta_s.at[slot], delta_bar.at[slot])

    plgpu.copy_gmem_to_smem(k_g.at[b, kvh, k_rows], k_s, kv_bars.at[0])
    plgpu.copy_gmem_to_smem(v_g.at[b, kvh, k_rows], v_s, kv_bars.at[1])
    # Query step n uses slot (n - first) % 2; the first two are issued before the loop.
    pl.when(first < num_q_steps)(lambda: issue(first, 0))
    pl.when(first + 1 < num_q_steps)(lambda: issue(first + 1, 1))
    plgpu.barrier_wait(kv_bars.at[0])
    plgpu.barrier_wait(kv_bars.at[1])

    def body(step, carry):
      dk, dv = carry
      slot = lax.rem(step - first, 2)
      for bar in (q_bar, do_bar, lse_bar, delta_bar):
        plgpu.barrier_wait(bar.at[slot])
      shape = (block_kv, _BLOCK_Q)
      q_t, do_t = q_s.at[slot], do_s.at[slot]
      lse = plgpu.load(lse_s.at[slot], layout=plgpu.Layout.WGMMA.reduce(0))
      delta = plgpu.load(delta_s.at[slot], layout=plgpu.Layout.WGMMA.reduce(0))
      st = _mm(k_s, q_t.transpose((1, 0)), shape) * scale
      pt = jnp.exp(st - lax.broadcast_in_dim(lse, shape, [1]))
      pt = jnp.where(_valid(step * _BLOCK_Q, j * block_kv, shape, kv_len, causal, False), pt, 0.0)
      dv = dv + _mm_staged(pt, pt_s, do_t, (block_kv, head_dim))
      dpt = _mm(v_s, do_t.transpose((1, 0)), shape)
      dst = pt * (dpt - lax.broadcast_in_dim(delta, shape, [1]))
      dk = dk + _mm_staged(dst, dst_s, q_t, (block_kv, head_dim))
      pl.when(step + 2 < num_q_steps)(lambda: issue(step + 2, slot))
      return dk, dv

    zero = plgpu.layout_cast(jnp.zeros((block_kv, head_dim), jnp.float32), plgpu.Layout.WGMMA)
    dk, dv = lax.fori_loop(first, num_q_steps, body, (zero, zero))
    dk_s[...] = dk * scale
    dv_s[...] = dv
    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem(dk_s, dk_g.at[b, h, k_rows])
    plgpu.copy_smem_to_gmem(dv_s, dv_g.at[b, h, k_rows])
    plgpu.wait_smem_to_gmem(0)

  pl.run_scoped(scoped, _smem((block_kv, head_dim), dtype), _smem((block_kv, head_dim), dtype),
                _smem((2, _BLOCK_Q, head_dim), dtype), _smem((2, _BLOCK_Q, head_dim), dtype),
                plgpu.SMEM((2, _BLOCK_Q), jnp.float32), plgpu.SMEM((2, _BLOCK_Q), jnp.float32),
                plgpu.SMEM((block_kv, head_dim), jnp.float32),
                plgpu.SMEM((block_kv, head_dim), jnp.float32), _smem((block_kv, _BLOCK_Q), dtype),
                _smem((block_kv, _BLOCK_Q), dtype), plgpu.Barrier(num_barriers=2),
                plgpu.Barrier(num_barriers=2), plgpu.Barrier(num_barriers=2),
                plgpu.Barrier(num_barriers=2), plgpu.Barrier(num_barriers=2))


def _heads_major(x: Any, length: int) -> Any:
  """``[B, L, N, D]`` -> ``[B, N, length, D]`` (zero-padded): each head's rows contiguous, so
  every TMA copy is one contiguous 2-D tile."""
  return jnp.swapaxes(pallas_lib.pad_axis(x, 1, length), 1, 2)


class MosaicAttention(Op[MosaicAttentionConfig]):
  """Flash attention as Pallas Mosaic GPU kernels."""

  op_name = base.OP_NAME
  implementation = "mosaic"
  config_cls = MosaicAttentionConfig

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = pallas_lib.gpu_unsupported_reason(device, "Mosaic GPU", (9, 0), only_major=9)
    if reason:
      return reason
    if base.has_bias_or_mask(spec):
      return "bias and mask are not supported (use 'triton' without them, or 'xla_chunked')"
    reason = base.extras_reason(spec)
    if reason:
      return reason
    dtype = spec.arg("query").dtype
    if dtype not in _DTYPES:
      return f"dtype {dtype} is not supported (accepted: {', '.join(_DTYPES)}; wgmma operands)"
    d = spec.arg("query").shape[3]
    if d % 8 or not 0 < d <= KERNEL_HEAD_DIMS[-1]:
      return (f"head_dim must be a multiple of 8 up to {KERNEL_HEAD_DIMS[-1]}, got {d} (the "
              f"kernels run head_dim {' and '.join(map(str, KERNEL_HEAD_DIMS))}, the others "
              "zero-padded to them; larger head dims overflow the backward's shared memory)")
    scale = spec.param("scale")
    if not scale > 0:
      # The compiled forward takes the row maximum of the unscaled scores and scales it
      # (max(s) * c == max(s * c) only for c > 0) and masks before scaling (-inf * c).
      return f"scale must be positive, got {scale} (use 'triton' or 'xla' for other scales)"
    return None

  def default_config(self, spec: Spec) -> MosaicAttentionConfig:
    """Untuned choice, from the H200 runs (bf16, CUPTI): 256 keys per step at head_dim 64 without
    a causal mask (421 against 373 TFLOP/s for 128 at 32x2048x16x64; causal 303 against 316),
    128 up to head_dim 128 (644 TFLOP/s at 1x16384x16x128; 64 keys with 4 stages: 530), 64
    beyond (shared memory; no kernel head dim is). Decided at the kernels' head dim
    (`kernel_head_dim`)."""
    d = kernel_head_dim(spec.arg("query").shape[3])
    if d <= 64 and not spec.param("is_causal"):
      return MosaicAttentionConfig(256, 2)
    return MosaicAttentionConfig(128, 2)

  def phase_config(self, spec: Spec, phase: str) -> MosaicAttentionConfig:
    """The forward: `default_config`. The gradient: up to 4 query steps in flight in the fused
    backward, fewer where they do not fit (on the H200 at 32x2048x16x64 bf16 it took 3.13 ms
    with 4 and 3.25 ms with 2; causal calls take 128-row steps, which fit 2); its key blocks do
    not depend on the config, and the split kernels ignore it."""
    if phase == "bwd":
      return MosaicAttentionConfig(_BWD_BLOCK_KV, 4)
    return self.default_config(spec)

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[MosaicAttentionConfig]:
    d = kernel_head_dim(spec.arg("query").shape[3])
    candidates = (MosaicAttentionConfig(64, 4), MosaicAttentionConfig(128, 2),
                  MosaicAttentionConfig(128, 3), MosaicAttentionConfig(256, 2))
    return tuple(c for c in candidates if c.smem_bytes(d, 2) <= _SMEM_LIMIT)

  def _layout(self, spec: Spec, config: MosaicAttentionConfig) -> dict[str, Any]:
    b, t, h, d, s, k = base.dims(spec)
    return dict(b=b, t=t, h=h, d=d, s=s, k=k, g=h // k, tp=pallas_lib.round_up(t, _BLOCK_Q),
                sp=pallas_lib.round_up(s, config.block_kv))

  def forward(self, args: tuple[Any, ...], spec: Spec, config: MosaicAttentionConfig
              ) -> tuple[Any, Any]:
    return self._forward(args, spec, config, with_lse=True)

  def forward_output(self, args: tuple[Any, ...], spec: Spec, config: MosaicAttentionConfig
                     ) -> Any:
    """The compiled kernel without its log-sum-exp output, which only the backward reads: on
    the H200 (one process each, outputs bitwise equal) 1x16384x16x128 causal 690.4 -> 692.4
    TFLOP/s and 32x2048x16x64 518.1 -> 522.2 in one run, 681.6 -> 682.9 and 519.7 -> 524.6
    in another. 1x16384x16x128 without a causal mask measured lower both times, within its
    spread between rounds (683.9 -> 679.7 and 677.6 -> 675.9; rounds 621-696)."""
    return self._forward(args, spec, config, with_lse=False)[0]

  def _forward(self, args: tuple[Any, ...], spec: Spec, config: MosaicAttentionConfig,
               with_lse: bool) -> tuple[Any, Any]:
    q, k, v, bias, mask = args
    if not folds_groups(spec):
      return self._forward_padded(args, spec, config, with_lse)
    t, h, kh = q.shape[1], q.shape[2], k.shape[2]
    qf = fold(q, kh)
    out, res = self._forward_padded((qf, k, v, bias, mask), with_query_shape(spec, qf.shape),
                                    config, with_lse)
    out = unfold(out, t, h)
    lse = None if res[6] is None else unfold_rows(res[6], t, h)
    return out, (q, k, v, bias, mask, out, lse)

  def _forward_padded(self, args: tuple[Any, ...], spec: Spec, config: MosaicAttentionConfig,
                      with_lse: bool) -> tuple[Any, Any]:
    q, k, v, bias, mask = args
    d = q.shape[3]
    dp = kernel_head_dim(d)
    if dp == d:
      return self._forward_at_kernel_dim(args, spec, config, with_lse)
    # Residuals keep the caller's arrays (a training step holds them): `backward` pads again.
    padded = tuple(pallas_lib.pad_axis(x, 3, dp) for x in (q, k, v)) + (bias, mask)
    out, res = self._forward_at_kernel_dim(padded, with_head_dim(spec, dp), config, with_lse)
    out = out[..., :d]
    return out, (q, k, v, bias, mask, out, res[6])

  def _forward_at_kernel_dim(self, args: tuple[Any, ...], spec: Spec,
                             config: MosaicAttentionConfig, with_lse: bool) -> tuple[Any, Any]:
    q, k, v, bias, mask = args
    b, t, h, d, s, kh = base.dims(spec)
    if config.smem_bytes(d, q.dtype.itemsize) > _SMEM_LIMIT:
      raise ValueError(f"MosaicAttentionConfig{dataclasses.astuple(config)} needs "
                       f"{config.smem_bytes(d, q.dtype.itemsize)} bytes of shared memory at "
                       f"head_dim {d}, more than the {_SMEM_LIMIT} a Hopper block has")
    if interpret_enabled():
      return self._interpreted_forward(args, spec, config)
    tp = pallas_lib.round_up(t, 2 * _BLOCK_Q)
    sp = pallas_lib.round_up(s, config.block_kv)
    tiles = tp // (2 * _BLOCK_Q) * b * h
    programs = forward_programs(tiles, spec.param("is_causal"), tp, sp, config.block_kv)
    geometry = mosaic_fwd.FwdGeometry(
        batch=b, heads=h, kv_heads=kh, q_len_padded=tp, kv_len=s, kv_len_padded=sp,
        head_dim=d, block_q=_BLOCK_Q, block_kv=config.block_kv,
        stages=max(2, min(config.stages, sp // config.block_kv)),
        scale=spec.param("scale"), causal=spec.param("is_causal"), programs=programs,
        with_lse=with_lse)
    if split_forward_tail(geometry):
      geometry = dataclasses.replace(geometry, split_tail=True)
    elif listed_forward(geometry):
      geometry = dataclasses.replace(geometry, listed=True)
    out, lse = mosaic_fwd.forward(pallas_lib.pad_axis(q, 1, tp), pallas_lib.pad_axis(k, 1, sp),
                                  pallas_lib.pad_axis(v, 1, sp), geometry)
    out = out[:, :t]
    return out, (q, k, v, bias, mask, out, lse[:, :, :t] if with_lse else None)

  def _interpreted_forward(self, args: tuple[Any, ...], spec: Spec,
                           config: MosaicAttentionConfig) -> tuple[Any, Any]:
    """The forward under `pallas_interpret`: one warpgroup per 64 query rows, keys/values double
    buffered (`_fwd_kernel`). Pallas's Mosaic GPU interpreter (JAX 0.11.2 and 0.12) cannot lower
    the warp-specialised kernel of ``mosaic_fwd`` (its wgmma pipeline effects), so CI checks the
    forward's arithmetic here and the H200 run checks ``mosaic_fwd`` compiled."""
    q, k, v, bias, mask = args
    lay = self._layout(spec, config)
    bkv = config.block_kv
    kernel = functools.partial(
        _fwd_kernel, scale=spec.param("scale"), causal=spec.param("is_causal"), block_kv=bkv,
        kv_len=lay["s"], num_steps=lay["sp"] // bkv, group=lay["g"], head_dim=lay["d"],
        dtype=q.dtype)
    out, lse = pallas_lib.mosaic_call(
        functools.partial(kernel, num_blocks=(lay["tp"] // _BLOCK_Q, lay["b"], lay["h"])),
        grid=lay["tp"] // _BLOCK_Q * lay["b"] * lay["h"], num_inputs=3,
        out_shape=[jax.ShapeDtypeStruct((lay["b"], lay["h"], lay["tp"], lay["d"]), q.dtype),
                   jax.ShapeDtypeStruct((lay["b"], lay["h"], lay["tp"]), jnp.float32)],
        name="pjrtkit_attention_fwd_mosaic",
    )(_heads_major(q, lay["tp"]), _heads_major(k, lay["sp"]), _heads_major(v, lay["sp"]))
    out = jnp.swapaxes(out[:, :, :lay["t"]], 1, 2)
    return out, (q, k, v, bias, mask, out, lse[:, :, :lay["t"]])

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: MosaicAttentionConfig
               ) -> tuple[Any, ...]:
    q, k, v, bias, mask, out, lse = base.common_residuals(residuals)
    if not folds_groups(spec):
      return self._backward_padded(residuals, dout, spec, config)
    t, h, kh = q.shape[1], q.shape[2], k.shape[2]
    qf = fold(q, kh)
    dq, dk, dv, dbias, dmask = self._backward_padded(
        (qf, k, v, bias, mask, fold(out, kh), fold_rows(lse, kh)), fold(dout, kh),
        with_query_shape(spec, qf.shape), config)
    return unfold(dq, t, h), dk, dv, dbias, dmask

  def _backward_padded(self, residuals: Any, dout: Any, spec: Spec,
                       config: MosaicAttentionConfig) -> tuple[Any, ...]:
    q, k, v, bias, mask, out, lse = base.common_residuals(residuals)
    d = q.shape[3]
    dp = kernel_head_dim(d)
    if dp == d:
      return self._backward_at_kernel_dim(residuals, dout, spec, config)
    pad = functools.partial(pallas_lib.pad_axis, axis=3, size=dp)
    dq, dk, dv, dbias, dmask = self._backward_at_kernel_dim(
        (pad(q), pad(k), pad(v), bias, mask, pad(out), lse), pad(dout),
        with_head_dim(spec, dp), config)
    return dq[..., :d], dk[..., :d], dv[..., :d], dbias, dmask

  def _backward_at_kernel_dim(self, residuals: Any, dout: Any, spec: Spec,
                              config: MosaicAttentionConfig) -> tuple[Any, ...]:
    q, k, v, _, _, out, lse = base.common_residuals(residuals)
    # dQ's sum (`fixed_point.dq_sum`): the fused kernel's float32 reduce-adds (order-free), or in
    # int32 fixed point, or the split kernels (both bitwise the same every run).
    dq_sum = fixed_point.dq_sum()
    if not interpret_enabled() and dq_sum != "split":
      b, t, h, d, s, kh = base.dims(spec)
      # The config's `stages` query steps in flight, fewer where they do not fit; causal, 128
      # query rows per step first (H200, 32x2048x16x64 bf16: 1.81 ms against 1.84 ms for 64
      # rows with 4 stages; without a mask 3.19 against 3.13 ms, so 64 rows there).
      causal = spec.param("is_causal")
      geometry = mosaic_bwd.choose(
          batch=b, q_len=t, heads=h, kv_heads=kh, kv_len=s, head_dim=d,
          scale=spec.param("scale"), causal=causal, itemsize=q.dtype.itemsize,
          max_stages=config.stages, block_qs=(128, 64) if causal else (64,),
          fixed_point_dq=dq_sum == "fixed_point")
      if geometry is not None:
        return self._fused_backward(residuals, dout, geometry)
    return self._split_backward(residuals, dout, spec, config)

  def _fused_backward(self, residuals: Any, dout: Any, g: mosaic_bwd.BwdGeometry
                      ) -> tuple[Any, ...]:
    """The compiled backward: one warp-specialised kernel (``mosaic_bwd``)."""
    q, k, v, _, _, out, lse = base.common_residuals(residuals)
    t, s = q.shape[1], k.shape[1]
    tp, sp = g.q_len_padded, g.kv_len_padded
    dq, dk, dv = mosaic_bwd.backward(
        pallas_lib.pad_axis(q, 1, tp), pallas_lib.pad_axis(k, 1, sp),
        pallas_lib.pad_axis(v, 1, sp), pallas_lib.pad_axis(dout.astype(q.dtype), 1, tp),
        pallas_lib.pad_axis(mosaic_bwd.lse_input(lse, g), 2, tp),
        pallas_lib.pad_axis(base.delta(out, dout), 2, tp), g)
    return dq[:, :t].astype(q.dtype), dk[:, :s], dv[:, :s], None, None

  def _split_backward(self, residuals: Any, dout: Any, spec: Spec, config: MosaicAttentionConfig
                      ) -> tuple[Any, ...]:
    """A dQ kernel over query blocks and a dK/dV kernel over key blocks, single-warpgroup: the
    backward under `pallas_interpret` (whose interpreter cannot lower ``mosaic_bwd``), the
    compiled one when `fixed_point.dq_sum` says ``split`` (no atomic adds; H200, 32x2048x16x64:
    about 6 ms against the fused kernel's 3.3 ms) and where ``mosaic_bwd`` does not fit."""
    q, k, v, _, _, out, lse = base.common_residuals(residuals)
    config = dataclasses.replace(config, block_kv=_BWD_BLOCK_KV)
    lay = self._layout(spec, config)
    bkv = config.block_kv
    tp, sp = lay["tp"], lay["sp"]
    qp, dop = _heads_major(q, tp), _heads_major(dout.astype(q.dtype), tp)
    kp, vp = _heads_major(k, sp), _heads_major(v, sp)
    lse_p, dlt = (pallas_lib.pad_axis(x, 2, tp) for x in (lse, base.delta(out, dout)))
    common = dict(scale=spec.param("scale"), causal=spec.param("is_causal"), block_kv=bkv,
                  kv_len=lay["s"], group=lay["g"], head_dim=lay["d"], dtype=q.dtype)
    f32 = jnp.float32
    dq = pallas_lib.mosaic_call(
        functools.partial(_dq_kernel, num_steps=sp // bkv,
                          num_blocks=(tp // _BLOCK_Q, lay["b"], lay["h"]), **common),
        grid=tp // _BLOCK_Q * lay["b"] * lay["h"], num_inputs=6,
        out_shape=jax.ShapeDtypeStruct((lay["b"], lay["h"], tp, lay["d"]), f32),
        name="pjrtkit_attention_dq_mosaic",
    )(qp, kp, vp, dop, lse_p, dlt)
    dk, dv = pallas_lib.mosaic_call(
        functools.partial(_dkv_kernel, num_q_steps=tp // _BLOCK_Q,
                          num_blocks=(sp // bkv, lay["b"], lay["h"]), **common),
        grid=sp // bkv * lay["b"] * lay["h"], num_inputs=6,
        out_shape=[jax.ShapeDtypeStruct((lay["b"], lay["h"], sp, lay["d"]), f32)] * 2,
        name="pjrtkit_attention_dkv_mosaic",
    )(qp, kp, vp, dop, lse_p, dlt)

    def per_kv_head(x: Any) -> Any:
      x = jnp.swapaxes(x[:, :, :lay["s"]], 1, 2)
      return x.reshape(lay["b"], lay["s"], lay["k"], lay["g"], lay["d"]).sum(axis=3)

    dq = jnp.swapaxes(dq[:, :, :lay["t"]], 1, 2)
    return dq, per_kv_head(dk), per_kv_head(dv), None, None
