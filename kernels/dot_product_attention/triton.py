"""dot_product_attention "triton": Pallas ``pallas_call`` kernels lowered through Triton.

Flash attention: the forward tiles queries over the grid and loops over key blocks with an
online softmax (no [T, S] matrix), saving the log-sum-exp; the backward runs a dQ kernel (grid
over query blocks) and a dK/dV kernel (grid over key blocks, per query head, summed over each
key/value group afterwards). Sequence lengths are padded to the blocks and head_dim to a power of
two (padded keys are masked). Serves float32 (full float32 dots, not TF32), bfloat16 and float16,
causal or not, grouped/multi-query heads, ``local_window_size`` (the loops visit only the key
blocks, and query blocks, a window reaches) and ``logits_soft_cap``; not bias or mask. On the
CPU it runs under ``pallas_interpret()`` only (Pallas's HLO interpreter).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.interpret import interpret_enabled
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.dot_product_attention import base

_NEG_INF = float("-inf")


@dataclasses.dataclass(frozen=True)
class TritonAttentionConfig:
  """Attributes: block_q / block_k: tile sizes (powers of two >= 16); num_warps, num_stages:
  Triton's launch parameters (forward and backward)."""

  block_q: int = 64
  block_k: int = 64
  num_warps: int = 4
  num_stages: int = 2

  def __post_init__(self) -> None:
    for name in ("block_q", "block_k"):
      value = getattr(self, name)
      if value < 16 or value & (value - 1):
        raise ValueError(f"{name} must be a power of two >= 16, got {value}")


def _dot(a, b):
  """a @ b with float32 accumulation; float32 operands in full float32 (not Triton's tf32)."""
  if a.dtype == jnp.float32 and b.dtype == jnp.float32:
    return plt.dot(a, b, allow_tf32=False)
  return plt.dot(a, b)


def _params(config: TritonAttentionConfig) -> dict[str, Any]:
  if interpret_enabled():
    return {"interpret": True}
  return {"compiler_params": plt.CompilerParams(num_warps=config.num_warps,
                                                num_stages=config.num_stages)}


def _scores(q, k, scale, soft_cap):
  """float32 ``q k^T * scale``, soft-capped when `soft_cap` is set."""
  s = _dot(q, k.T).astype(jnp.float32) * scale
  if soft_cap is not None:
    s = soft_cap * jnp.tanh(s / soft_cap)
  return s


def _valid(i, j, *, block_q, block_k, kv_len, causal, window):
  """Which (query, key) pairs of query block i and key block j are attended."""
  qpos = i * block_q + lax.broadcasted_iota(jnp.int32, (block_q, block_k), 0)
  kpos = j * block_k + lax.broadcasted_iota(jnp.int32, (block_q, block_k), 1)
  valid = kpos < kv_len
  if causal:
    valid = valid & (qpos >= kpos)
  if window is not None:
    valid = valid & (kpos >= qpos - window[0]) & (kpos <= qpos + window[1])
  return valid


def _key_blocks(i, *, block_q, block_k, num_k_blocks, causal, window):
  """The key blocks [lower, upper) query block i attends (causality and the window)."""
  lower, upper = 0, num_k_blocks
  last_q = (i + 1) * block_q - 1
  if causal:
    upper = jnp.minimum(lax.div(last_q, block_k) + 1, upper)
  if window is not None:
    lower = lax.div(jnp.maximum(i * block_q - window[0], 0), block_k)
    upper = jnp.minimum(lax.div(last_q + window[1], block_k) + 1, upper)
  return lower, upper


def _query_blocks(j, *, block_q, block_k, num_q_blocks, causal, window):
  """The query blocks [lower, upper) that attend key block j."""
  lower, upper = 0, num_q_blocks
  first_k, last_k = j * block_k, (j + 1) * block_k - 1
  if causal:
    lower = lax.div(first_k, block_q)
  if window is not None:
    lower = jnp.maximum(lower, lax.div(jnp.maximum(first_k - window[1], 0), block_q))
    upper = jnp.minimum(lax.div(last_k + window[0], block_q) + 1, upper)
  return lower, upper


def _soft_cap_grad(ds, s, soft_cap):
  """ds through ``c tanh(x / c)``: times ``1 - (s / c)^2`` (s the capped logits)."""
  if soft_cap is None:
    return ds
  return ds * (1.0 - jnp.square(s / soft_cap))


def _fwd_kernel(q_ref, k_ref, v_ref, o_ref, lse_ref, *, scale, causal, window, soft_cap, block_q,
                block_k, kv_len, num_k_blocks):
  i = pl.program_id(0)
  q = q_ref[...]
  where = dict(block_q=block_q, block_k=block_k, kv_len=kv_len, causal=causal, window=window)

  def body(j, carry):
    acc, m, l = carry
    k = k_ref[pl.ds(j * block_k, block_k), :]
    v = v_ref[pl.ds(j * block_k, block_k), :]
    s = jnp.where(_valid(i, j, **where), _scores(q, k, scale, soft_cap), _NEG_INF)
    m_new = jnp.maximum(m, jnp.max(s, axis=1))
    alpha = jnp.exp(m - m_new)
    p = jnp.exp(s - m_new[:, None])
    l = l * alpha + jnp.sum(p, axis=1)
    acc = acc * alpha[:, None] + _dot(p.astype(v.dtype), v).astype(jnp.float32)
    return acc, m_new, l

  lower, upper = _key_blocks(i, block_q=block_q, block_k=block_k, num_k_blocks=num_k_blocks,
                             causal=causal, window=window)
  init = (jnp.zeros(q.shape, jnp.float32), jnp.full((block_q,), base.MASK_VALUE, jnp.float32),
          jnp.zeros((block_q,), jnp.float32))
  acc, m, l = lax.fori_loop(lower, upper, body, init)
  o_ref[...] = (acc / l[:, None]).astype(o_ref.dtype)
  lse_ref[...] = m + jnp.log(l)


def _dq_kernel(q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, dq_ref, *, scale, causal, window,
               soft_cap, block_q, block_k, kv_len, num_k_blocks):
  i = pl.program_id(0)
  q, do = q_ref[...], do_ref[...]
  lse, delta = lse_ref[...], delta_ref[...]
  where = dict(block_q=block_q, block_k=block_k, kv_len=kv_len, causal=causal, window=window)

  def body(j, dq):
    k = k_ref[pl.ds(j * block_k, block_k), :]
    v = v_ref[pl.ds(j * block_k, block_k), :]
    s = _scores(q, k, scale, soft_cap)
    p = jnp.where(_valid(i, j, **where), jnp.exp(s - lse[:, None]), 0.0)
    dp = _dot(do, v.T).astype(jnp.float32)
    ds = _soft_cap_grad(p * (dp - delta[:, None]), s, soft_cap)
    return dq + _dot(ds.astype(k.dtype), k).astype(jnp.float32)

  lower, upper = _key_blocks(i, block_q=block_q, block_k=block_k, num_k_blocks=num_k_blocks,
                             causal=causal, window=window)
  dq = lax.fori_loop(lower, upper, body, jnp.zeros(q.shape, jnp.float32))
  dq_ref[...] = dq * scale


def _dkv_kernel(q_ref, k_ref, v_ref, do_ref, lse_ref, delta_ref, dk_ref, dv_ref, *, scale, causal,
                window, soft_cap, block_q, block_k, kv_len, num_q_blocks):
  j = pl.program_id(0)
  k, v = k_ref[...], v_ref[...]
  where = dict(block_q=block_q, block_k=block_k, kv_len=kv_len, causal=causal, window=window)

  def body(i, carry):
    dk, dv = carry
    q = q_ref[pl.ds(i * block_q, block_q), :]
    do = do_ref[pl.ds(i * block_q, block_q), :]
    lse = lse_ref[pl.ds(i * block_q, block_q)]
    delta = delta_ref[pl.ds(i * block_q, block_q)]
    s = _scores(q, k, scale, soft_cap)
    p = jnp.where(_valid(i, j, **where), jnp.exp(s - lse[:, None]), 0.0)
    dv = dv + _dot(p.astype(do.dtype).T, do).astype(jnp.float32)
    dp = _dot(do, v.T).astype(jnp.float32)
    ds = _soft_cap_grad(p * (dp - delta[:, None]), s, soft_cap)
    dk = dk + _dot(ds.astype(q.dtype).T, q).astype(jnp.float32)
    return dk, dv

  lower, upper = _query_blocks(j, block_q=block_q, block_k=block_k, num_q_blocks=num_q_blocks,
                               causal=causal, window=window)
  init = (jnp.zeros(k.shape, jnp.float32), jnp.zeros(v.shape, jnp.float32))
  dk, dv = lax.fori_loop(lower, upper, body, init)
  dk_ref[...] = dk * scale
  dv_ref[...] = dv


def _options(spec: Spec) -> dict[str, Any]:
  """The kernels' static masking and logit options of this call."""
  left = base.option(spec, "window_left")
  return {"scale": spec.param("scale"), "causal": spec.param("is_causal"),
          "window": None if left is None else (left, base.option(spec, "window_right")),
          "soft_cap": base.option(spec, "logits_soft_cap")}


class _Layout:
  """Padded sizes of one call."""

  def __init__(self, spec: Spec, config: TritonAttentionConfig) -> None:
    self.b, self.t, self.h, self.d, self.s, self.k = base.dims(spec)
    self.g = self.h // self.k
    self.dp = pallas_lib.next_pow2(self.d)
    self.tp = pallas_lib.round_up(self.t, config.block_q)
    self.sp = pallas_lib.round_up(self.s, config.block_k)
    self.nq, self.nk = self.tp // config.block_q, self.sp // config.block_k

  def pad_q(self, x: Any) -> Any:
    return pallas_lib.pad_axis(pallas_lib.pad_axis(x, 1, self.tp), 3, self.dp)

  def pad_kv(self, x: Any) -> Any:
    return pallas_lib.pad_axis(pallas_lib.pad_axis(x, 1, self.sp), 3, self.dp)


class TritonAttention(Op[TritonAttentionConfig]):
  """Flash attention as Pallas Triton kernels."""

  op_name = base.OP_NAME
  implementation = "triton"
  config_cls = TritonAttentionConfig

  def phase_config(self, spec: Spec, phase: str) -> TritonAttentionConfig:
    """Untuned choice, from the H200 runs (2026-12-01, bf16, CUPTI): the 16-bit forward at
    head_dim 128 with 128-row query tiles, 8 warps, 3 stages (412 against 345 TFLOP/s for
    64/64/4/2 at 1x16384x16x128); everything else, the backward included, 64/64/4/2 (the
    backward at 32x2048x16x64 lost 4-56 % with every other tile measured)."""
    query = spec.arg("query")
    if phase == "fwd" and query.shape[3] == 128 and query.dtype in ("bfloat16", "float16"):
      return TritonAttentionConfig(128, 64, 8, 3)
    return self.default_config(spec)

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = pallas_lib.gpu_unsupported_reason(device, "Triton", (8, 0))
    if reason:
      return reason
    reason = base.flash_kernel_reason(spec)
    if reason:
      return reason
    if spec.arg("query").dtype not in base.FLOAT_DTYPES:
      return f"dtype {spec.arg('query').dtype} is not supported ({', '.join(base.FLOAT_DTYPES)})"
    if spec.arg("query").shape[3] > 256:
      return "head_dim above 256 is not supported"
    return None

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[TritonAttentionConfig]:
    return tuple(TritonAttentionConfig(q, k, w, st) for q in (64, 128) for k in (32, 64, 128)
                 for w in (4, 8) for st in (2, 3))

  def forward(self, args: tuple[Any, ...], spec: Spec, config: TritonAttentionConfig
              ) -> tuple[Any, Any]:
    q, k, v, bias, mask = args
    lay = _Layout(spec, config)
    bq = config.block_q
    kernel = functools.partial(_fwd_kernel, block_q=bq, block_k=config.block_k, kv_len=lay.s,
                               num_k_blocks=lay.nk, **_options(spec))
    g = lay.g
    out, lse = pl.pallas_call(
        kernel,
        grid=(lay.nq, lay.b, lay.h),
        in_specs=[
            pl.BlockSpec((None, bq, None, lay.dp), lambda i, b, h: (b, i, h, 0)),
            pl.BlockSpec((None, lay.sp, None, lay.dp), lambda i, b, h: (b, 0, h // g, 0)),
            pl.BlockSpec((None, lay.sp, None, lay.dp), lambda i, b, h: (b, 0, h // g, 0)),
        ],
        out_specs=[
            pl.BlockSpec((None, bq, None, lay.dp), lambda i, b, h: (b, i, h, 0)),
            pl.BlockSpec((None, None, bq), lambda i, b, h: (b, h, i)),
        ],
        out_shape=[jax.ShapeDtypeStruct((lay.b, lay.tp, lay.h, lay.dp), q.dtype),
                   jax.ShapeDtypeStruct((lay.b, lay.h, lay.tp), jnp.float32)],
        name="pjrtkit_attention_fwd", **_params(config),
    )(lay.pad_q(q), lay.pad_kv(k), lay.pad_kv(v))
    out = out[:, :lay.t, :, :lay.d]
    return out, (q, k, v, bias, mask, out, lse[:, :, :lay.t])

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: TritonAttentionConfig
               ) -> tuple[Any, ...]:
    q, k, v, _, _, out, lse = base.common_residuals(residuals)
    lay = _Layout(spec, config)
    bq, bk, g = config.block_q, config.block_k, lay.g
    dlt = pallas_lib.pad_axis(base.delta(out, dout), 2, lay.tp)
    lse_p = pallas_lib.pad_axis(lse, 2, lay.tp)
    qp, dop = lay.pad_q(q), lay.pad_q(dout.astype(q.dtype))
    kp, vp = lay.pad_kv(k), lay.pad_kv(v)
    common = dict(block_q=bq, block_k=bk, kv_len=lay.s, **_options(spec))
    q_block = pl.BlockSpec((None, bq, None, lay.dp), lambda i, b, h: (b, i, h, 0))
    kv_full = pl.BlockSpec((None, lay.sp, None, lay.dp), lambda i, b, h: (b, 0, h // g, 0))
    row_block = pl.BlockSpec((None, None, bq), lambda i, b, h: (b, h, i))
    dq = pl.pallas_call(
        functools.partial(_dq_kernel, num_k_blocks=lay.nk, **common),
        grid=(lay.nq, lay.b, lay.h),
        in_specs=[q_block, kv_full, kv_full, q_block, row_block, row_block],
        out_specs=q_block,
        out_shape=jax.ShapeDtypeStruct((lay.b, lay.tp, lay.h, lay.dp), jnp.float32),
        name="pjrtkit_attention_dq", **_params(config),
    )(qp, kp, vp, dop, lse_p, dlt)
    q_full = pl.BlockSpec((None, lay.tp, None, lay.dp), lambda j, b, h: (b, 0, h, 0))
    kv_block = pl.BlockSpec((None, bk, None, lay.dp), lambda j, b, h: (b, j, h // g, 0))
    dkv_out = pl.BlockSpec((None, bk, None, lay.dp), lambda j, b, h: (b, j, h, 0))
    row_full = pl.BlockSpec((None, None, lay.tp), lambda j, b, h: (b, h, 0))
    dk, dv = pl.pallas_call(
        functools.partial(_dkv_kernel, num_q_blocks=lay.nq, **common),
        grid=(lay.nk, lay.b, lay.h),
        in_specs=[q_full, kv_block, kv_block, q_full, row_full, row_full],
        out_specs=[dkv_out, dkv_out],
        out_shape=[jax.ShapeDtypeStruct((lay.b, lay.sp, lay.h, lay.dp), jnp.float32)] * 2,
        name="pjrtkit_attention_dkv", **_params(config),
    )(qp, kp, vp, dop, lse_p, dlt)

    def per_kv_head(x: Any) -> Any:
      x = x[:, :lay.s, :, :lay.d]
      return x.reshape(lay.b, lay.s, lay.k, g, lay.d).sum(axis=3)

    return dq[:, :lay.t, :, :lay.d], per_kv_head(dk), per_kv_head(dv), None, None
