"""layer_norm's public function and its implementations table."""

from __future__ import annotations

import math
from typing import Any, Sequence

import jax.numpy as jnp

from pjrtkit.kernels.core import empty
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Family, Op, register_family
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm import base, mosaic, triton
from pjrtkit.kernels.layer_norm.mosaic import MosaicLayerNorm
from pjrtkit.kernels.layer_norm.native import NativeLayerNorm
from pjrtkit.kernels.layer_norm.triton import TritonLayerNorm
from pjrtkit.kernels.layer_norm.xla import XlaLayerNorm

IMPLEMENTATIONS: dict[str, Op] = {
    "xla": XlaLayerNorm(),
    "native": NativeLayerNorm(),
    "triton": TritonLayerNorm(),
    "mosaic": MosaicLayerNorm(),
}


def rule(spec: Spec, device: DeviceInfo, phase: str) -> list[str]:
  """The documented choice for ``implementation=None`` without a tuned result, from the kernel
  tables in the README (``tools/bench/kernels.py``, ratio to "xla" in the same run).

  NVIDIA GPU: "triton", forward and gradient (H200 comparison of 2026-12-01, bf16, CUPTI,
  `phase_config`'s configs: forward 4.10 / 3.45 TB/s against XLA's 3.98 / 3.30 at 1048576x64 /
  8192x8192, forward+backward 3.51 / 2.97 against 1.60 / 1.22), then "xla"; except the forward
  of rows of 4096 channels or more (a multiple of 1024, at most 32768, where at least 2 rows fit
  in flight: `mosaic.prefers_wide_forward`), which takes "mosaic"'s wide-row kernel first (its
  default configs: 3.82 / 3.91 / 3.73 TB/s at 16384x4096 / 8192x8192 /
  4096x16384 against "triton"'s 3.30 / 3.54 / 1.92 and XLA's 3.14 / 3.37 / 1.76; at 32768x1024
  it was slower, 1.85 against 2.91). "mosaic" is not chosen for narrow rows: 3.77 and 2.68 TB/s
  at 1048576x64. The gradient of rows wider than 8192 channels is Triton's chunked backward
  (2.38 TB/s forward+backward at 4096x16384 against XLA's 1.04). "xla" where
  `triton.prefers_xla`: the forward of rows of 257 to 2048 channels
  (XLA 3.19 against 2.71 TB/s at 16384x2048, level at 512-1024), of rows wider than 32768
  channels, or wider than 16384 with parameters of another dtype than x, and the gradient of
  rows wider than 16384 channels where the forward is XLA's (XLA's gradient fuses its forward's
  statistics: 2.22 TB/s forward+backward at 1024x65536 against 1.71).
  pjrtkit's CPU device: "native", forward and gradient, float32 and bfloat16 (at 4096x4096:
  float32 forward 0.76-0.86x of xla's time, forward+gradient 0.74-0.77x, gradient from a given
  cotangent 0.80-0.84x; bfloat16 0.13-0.49x. One pass over memory each way, the backward's
  statistics recomputed so an unread forward is dropped, dx written over dy).
  Elsewhere: "xla". An implementation that cannot serve the call is skipped; "xla" always can.
  """
  if device.is_pjrtkit_cpu:
    return ["native", "xla"]
  if device.is_gpu:
    if phase == "fwd" and mosaic.prefers_wide_forward(spec):
      return ["mosaic", "triton", "xla"]
    if triton.prefers_xla(spec, phase):
      return ["xla"]
    return ["triton", "xla"]
  return ["xla"]


FAMILY = Family(base.OP_NAME, IMPLEMENTATIONS, rule)
register_family(FAMILY)


def layer_norm(x: Any, scale: Any, offset: Any, *, axis: int = -1, epsilon: float = 1e-6,
               scale_offset: float = 0.0, subtract_mean: bool = True,
               implementation: str | Sequence[str] | None = None) -> Any:
  """Layer normalisation (RMS normalisation with ``subtract_mean=False``) over `axis`.

  Args:
    x: the input, float32, bfloat16 or float16 (float64 with "xla").
    scale: ``[x.shape[axis]]`` multiplier, or None.
    offset: ``[x.shape[axis]]`` addend, or None.
    axis: the normalised axis.
    epsilon: added to the variance (mean square for RMS norm).
    scale_offset: added to `scale` (in float32) before it multiplies, as Tokamax's (Gemma's
      ``1 + scale``); ignored without a `scale`.
    subtract_mean: False for RMS norm.
    implementation: "xla", "native" (pjrtkit's CPU device), "triton" or "mosaic" (NVIDIA GPUs),
      a sequence of them (the first that serves the call runs), or None to choose per device,
      shape and dtype (tuned results, else `rule`).

  Returns:
    The normalised array, with x's shape and dtype. An empty x (no rows or no channels) runs no
    implementation (`pjrtkit.kernels.core.empty`): the result is empty too, and the gradients
    of scale and offset are zeros.

  Raises:
    TypeError, ValueError: for arguments of the wrong type, dtype or shape (naming the parameter).
    UnsupportedImplementationError: when `implementation` cannot serve this call (no GPU, dtype).
  """
  if isinstance(scale_offset, bool) or not isinstance(scale_offset, (int, float)):
    raise TypeError(f"layer_norm: scale_offset must be a number, got {scale_offset!r}")
  if not math.isfinite(scale_offset):
    raise ValueError(f"layer_norm: scale_offset must be finite, got {scale_offset!r}")
  if scale_offset and scale is not None and hasattr(scale, "dtype"):
    scale = scale.astype(jnp.promote_types(scale.dtype, jnp.float32)) + scale_offset
  spec = base.make_spec(x, scale, offset, axis, epsilon, subtract_mean)
  if empty.any_zero(x.shape):
    return empty.answer(FAMILY, implementation, lambda: jnp.zeros(x.shape, x.dtype))
  return FAMILY.call(spec, (x, scale, offset), implementation)
