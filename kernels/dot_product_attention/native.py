"""dot_product_attention "native": C++ XLA FFI flash attention (``native/attention_*.cc``) on
pjrtkit's CPU device: tiled, online softmax, no [T, S] matrix, multithreaded over
(batch, kv head, query blocks), vectorised per instruction set; forward and backward.

Serves float32 and bfloat16, causal or not, grouped/multi-query heads, ``local_window_size``
(only the key blocks a query block reaches are visited) and ``logits_soft_cap``; not bias or mask
(``implementation=None`` then takes "xla_chunked" or "xla").
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
    reason = base.flash_kernel_reason(spec)
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
    out, lse = jax.ffi.ffi_call(
        "pjrtkit_kernels_attention_fwd",
        (jax.ShapeDtypeStruct(q.shape, q.dtype), jax.ShapeDtypeStruct((b, h, t), jnp.float32)))(
            q, k, v, **self._attrs(spec, config))
    return out, (q, k, v, bias, mask, out, lse)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NativeAttentionConfig
               ) -> tuple[Any, ...]:
    library.ensure_registered()
    q, k, v, _, _, out, lse = base.common_residuals(residuals)
    f32 = lambda x: jax.ShapeDtypeStruct(x.shape, jnp.float32)  # noqa: E731
    dq, dk, dv = jax.ffi.ffi_call(
        "pjrtkit_kernels_attention_bwd", (f32(q), f32(k), f32(v)))(
            q, k, v, out, lse, dout.astype(q.dtype), **self._attrs(spec, config))
    return dq, dk, dv, None, None
