"""dot_product_attention "native": C++ XLA FFI flash attention (``native/attention_*.cc``) on
pjrtkit's CPU device: tiled, online softmax, no [T, S] matrix, multithreaded over
(batch, kv head, query blocks), vectorised per instruction set; forward and backward.

Serves float32 and bfloat16, causal or not, grouped/multi-query heads, ``local_window_size``
(only the key blocks a query block reaches are visited), ``logits_soft_cap`` and a key mask: a
`mask` of shape ``[B or 1, 1, 1, S]`` (one flag per batch element and key, what
``key_value_seq_lengths`` becomes; `base.is_key_mask`), passed to the handlers
``pjrtkit_kernels_attention_{fwd,bwd}_key_mask`` as bool ``[B or 1, S]``; the keys past a batch
element's last kept key are not visited, so padded batches cost less. Not a bias, nor any other
mask (``implementation=None`` then takes "xla_chunked" or "xla"). Calls without a mask keep the
handlers ``pjrtkit_kernels_attention_{fwd,bwd}`` (and programs exported with them still run).

A query row that attends no key (every key masked by the key mask, causality and the window
together; a window alone leaves the queries past ``S - 1 + left`` without keys) is, as in "xla"
and `base.reference`, the mean of all S values of its key/value head; the kernel leaves it 0
with log-sum-exp -inf, and this module puts the mean there (`_fill_rows_without_keys`) and, in
the backward, gives value that row's cotangent divided by S on every key
(`_rows_without_keys_dvalue`); query and key get nothing from it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.dot_product_attention import base
from pjrtkit.kernels.layer_norm.native import native_unsupported_reason
from pjrtkit.kernels.native import library


FWD_TARGET = "pjrtkit_kernels_attention_fwd"
BWD_TARGET = "pjrtkit_kernels_attention_bwd"
FWD_KEY_MASK_TARGET = "pjrtkit_kernels_attention_fwd_key_mask"
"""The forward with a key mask: ``(q, k, v, key_mask) -> (out, lse)``."""
BWD_KEY_MASK_TARGET = "pjrtkit_kernels_attention_bwd_key_mask"
"""The backward with a key mask: ``(q, k, v, key_mask, out, lse, dout) -> (dq, dk, dv)``."""
_VMAP = "sequential"
"""Under `jax.vmap` the handlers run once per mapped element (as the other native ops')."""


@dataclasses.dataclass(frozen=True)
class NativeAttentionConfig:
  """Attributes: block_q: query rows per tile; block_k: keys per tile."""

  block_q: int = 64
  block_k: int = 128

  def __post_init__(self) -> None:
    for name in ("block_q", "block_k"):
      value = getattr(self, name)
      if not 1 <= value <= 4096:
        raise ValueError(f"{name} must be in [1, 4096], got {value}")


class NativeAttention(Op[NativeAttentionConfig]):
  """Flash attention in C++ for pjrtkit's CPU device."""

  op_name = base.OP_NAME
  implementation = "native"
  config_cls = NativeAttentionConfig

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = base.flash_kernel_reason(spec, accepts_key_mask=True, accepts_rows_without_keys=True)
    if reason:
      return reason
    return native_unsupported_reason(device, spec.arg("query").dtype)

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[NativeAttentionConfig]:
    return tuple(NativeAttentionConfig(q, k) for q in (32, 64, 128) for k in (64, 128, 256))

  def _attrs(self, spec: Spec, config: NativeAttentionConfig) -> dict[str, Any]:
    left, right = base.option(spec, "window_left"), base.option(spec, "window_right")
    cap = base.option(spec, "logits_soft_cap")
    return {"scale": np.float32(spec.param("scale")),
            "causal": np.int64(spec.param("is_causal")),
            "block_q": np.int64(config.block_q), "block_k": np.int64(config.block_k),
            "window_left": np.int64(-1 if left is None else left),
            "window_right": np.int64(-1 if right is None else right),
            "soft_cap": np.float32(0.0 if cap is None else cap)}

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NativeAttentionConfig
              ) -> tuple[Any, Any]:
    library.ensure_registered()
    q, k, v, bias, mask = args
    b, t, h, _, _, _ = base.dims(spec)
    results = (jax.ShapeDtypeStruct(q.shape, q.dtype), jax.ShapeDtypeStruct((b, h, t), jnp.float32))
    attrs = self._attrs(spec, config)
    if mask is None:
      out, lse = jax.ffi.ffi_call(FWD_TARGET, results, vmap_method=_VMAP)(q, k, v, **attrs)
    else:
      out, lse = jax.ffi.ffi_call(FWD_KEY_MASK_TARGET, results, vmap_method=_VMAP)(
          q, k, v, _key_mask(mask), **attrs)
    if _may_leave_rows_without_keys(spec):
      out = _fill_rows_without_keys(out, lse, v)
    return out, (q, k, v, bias, mask, out, lse)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NativeAttentionConfig
               ) -> tuple[Any, ...]:
    library.ensure_registered()
    q, k, v, _, mask, out, lse = base.common_residuals(residuals)
    f32 = lambda x: jax.ShapeDtypeStruct(x.shape, jnp.float32)  # noqa: E731
    results = (f32(q), f32(k), f32(v))
    attrs = self._attrs(spec, config)
    if mask is None:
      dq, dk, dv = jax.ffi.ffi_call(BWD_TARGET, results, vmap_method=_VMAP)(
          q, k, v, out, lse, dout.astype(q.dtype), **attrs)
    else:
      dq, dk, dv = jax.ffi.ffi_call(BWD_KEY_MASK_TARGET, results, vmap_method=_VMAP)(
          q, k, v, _key_mask(mask), out, lse, dout.astype(q.dtype), **attrs)
    if _may_leave_rows_without_keys(spec):
      dv = dv + _rows_without_keys_dvalue(lse, dout, v)
    return dq, dk, dv, None, None


def _may_leave_rows_without_keys(spec: Spec) -> bool:
  """Whether some query row of `spec`'s call may attend no key: a key mask (data decides), or a
  window leaving queries past ``S - 1 + left`` without keys."""
  return spec.arg("mask") is not None or base.window_leaves_rows_without_keys(spec)


def _key_mask(mask: jax.Array) -> jax.Array:
  """A key mask ``[B or 1, 1, 1, S]`` as the handlers take it: bool ``[B or 1, S]``."""
  return mask.reshape(mask.shape[0], mask.shape[3])


def _rows_without_keys(lse: jax.Array) -> jax.Array:
  """bool ``[B, H, T]``: the rows that attend no key. The kernel gives them lse -inf; "xla"
  gives them ``MASK_VALUE + log(S)``, which rounds to `MASK_VALUE` (its lse may reach a native
  backward)."""
  return lse <= base.MASK_VALUE


def _fill_rows_without_keys(out: jax.Array, lse: jax.Array, value: jax.Array) -> jax.Array:
  """`out` ``[B, T, H, Dv]`` with the rows that attend no key set to the mean of all S values of
  their key/value head (the kernel leaves them 0)."""
  mean = base.mean_of_values(value, out.shape[2])
  empty = jnp.transpose(_rows_without_keys(lse), (0, 2, 1))[..., None]  # [B, T, H, 1]
  return jnp.where(empty, mean.astype(out.dtype), out)


def _rows_without_keys_dvalue(lse: jax.Array, dout: jax.Array, value: jax.Array) -> jax.Array:
  """float32 ``[B, 1, K, Dv]``: what the rows that attend no key give value's cotangent on every
  key, their dout / S summed over the rows and the query heads of each key/value head (each such
  row is the mean of the S values)."""
  b, _, h, dv_dim = dout.shape
  s, kv_heads = value.shape[1], value.shape[2]
  empty = _rows_without_keys(lse).astype(jnp.float32)  # [B, H, T]
  per_head = jnp.einsum("bht,bthd->bhd", empty, dout.astype(jnp.float32),
                        precision=jax.lax.Precision.HIGHEST)
  per_kv_head = per_head.reshape(b, kv_heads, h // kv_heads, dv_dim).sum(axis=2)
  return (per_kv_head / s)[:, None]
