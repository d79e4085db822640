"""dot_product_attention's public function and its implementations table."""

from __future__ import annotations

from typing import Any

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Family, Op, register_family
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.dot_product_attention import base
from pjrtkit.kernels.dot_product_attention.mosaic import MosaicAttention
from pjrtkit.kernels.dot_product_attention.native import NativeAttention
from pjrtkit.kernels.dot_product_attention.triton import TritonAttention
from pjrtkit.kernels.dot_product_attention.xla import XlaAttention
from pjrtkit.kernels.dot_product_attention.xla_chunked import XlaChunkedAttention

IMPLEMENTATIONS: dict[str, Op] = {
    "xla": XlaAttention(),
    "xla_chunked": XlaChunkedAttention(),
    "native": NativeAttention(),
    "triton": TritonAttention(),
    "mosaic": MosaicAttention(),
}

_SMALL_LOGITS = 1 << 20
"""Below this many logits (B*H*T*S) "xla" is used: one fused XLA program beats kernel calls."""


def rule(spec: Spec, device: DeviceInfo, phase: str) -> list[str]:
  """The documented choice for ``implementation=None`` without a tuned result.

  NVIDIA GPU, from the H200 comparisons of 2026-12-01 (bf16, CUPTI, docs/kernels.md "H200: against cuDNN,
  XLA and Tokamax"): "mosaic" for the forward and the gradient (warp specialised; in an
  earlier comparison forward 453-635 TFLOP/s against "triton"'s 303-446 at every forward
  row, forward+backward 426.7 against 273.3 at 32x2048x16x64 and 565.4 against 358.4 at
  1x16384x16x128), then "triton" (bias, mask, float32 or another head_dim), then "xla".
  pjrtkit's CPU device: "native" (f32/bf16, no bias/mask); with a bias or a mask "xla_chunked"
  for more than 2**20 logits, else "xla". Elsewhere: "xla_chunked" for more than 2**20 logits
  (memory linear in sequence length), else "xla". Off GPUs the forward and the gradient follow
  the same rule; tuned results may choose them differently. Unsupported entries are skipped; "xla"
  always serves.
  """
  b, t, h, _, s, _ = base.dims(spec)
  big = b * h * t * s > _SMALL_LOGITS
  if device.is_gpu:
    return ["mosaic", "triton", "xla"]
  if device.is_pjrtkit_cpu:
    return ["native", "xla_chunked" if big else "xla"]
  return ["xla_chunked" if big else "xla"]


FAMILY = Family(base.OP_NAME, IMPLEMENTATIONS, rule)
register_family(FAMILY)


def dot_product_attention(query: Any, key: Any, value: Any, *, bias: Any = None, mask: Any = None,
                          is_causal: bool = False, scale: float | None = None,
                          implementation: str | None = None) -> Any:
  """Scaled dot-product attention in ``[batch, seq, heads, head_dim]`` layout.

  Args:
    query: ``[B, T, H, D]``, float32, bfloat16 or float16.
    key: ``[B, S, K, D]`` with ``H % K == 0`` (grouped-query; multi-query when K == 1).
    value: ``[B, S, K, D]``.
    bias: float, broadcastable to ``[B, H, T, S]`` (4 dimensions), added to the scaled logits.
    mask: bool, broadcastable to ``[B, H, T, S]``; True where a query may attend a key.
    is_causal: query t attends keys s <= t.
    scale: logit scale; None for ``1/sqrt(D)``.
    implementation: "xla", "xla_chunked", "native" (pjrtkit's CPU device), "triton" or "mosaic"
      (NVIDIA GPUs), or None to choose per device, shape and dtype (tuned results, else `rule`).

  Returns:
    ``[B, T, H, D]`` in the query's dtype.

  Raises:
    TypeError, ValueError: for arguments of the wrong type, dtype or shape (naming the parameter).
    UnsupportedImplementationError: when `implementation` cannot serve this call.
  """
  spec = base.make_spec(query, key, value, bias, mask, is_causal, scale)
  return FAMILY.call(spec, (query, key, value, bias, mask), implementation)
