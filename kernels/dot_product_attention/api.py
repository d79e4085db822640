"""dot_product_attention's public function and its implementations table."""

from __future__ import annotations

from typing import Any, Sequence

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core import autotune_cache, empty
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Family, Op, register_family
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.dot_product_attention import base
from pjrtkit.kernels.dot_product_attention import batching
from pjrtkit.kernels.dot_product_attention import sharding
from pjrtkit.kernels.dot_product_attention.cudnn import CudnnAttention
from pjrtkit.kernels.dot_product_attention.mosaic import MosaicAttention
from pjrtkit.kernels.dot_product_attention.mosaic.attention import (
    KERNEL_HEAD_DIMS as MOSAIC_KERNEL_HEAD_DIMS)
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
    "cudnn": CudnnAttention(),
}

_SMALL_LOGITS = 1 << 20
"""Below this many logits (B*H*T*S) "xla" is used: one fused XLA program beats kernel calls."""

_NATIVE_MIN_LOGITS = 1 << 15
"""From this many logits on pjrtkit's CPU device, "native" first: below, its fixed cost per call
outweighs the work (docs/kernels.md)."""


def rule(spec: Spec, device: DeviceInfo, phase: str) -> list[str]:
  """The documented choice for ``implementation=None`` without a tuned result.

  NVIDIA GPU: "mosaic", "cudnn", "triton", "xla" at head_dim 64 and 128 ("cudnn" first at the
  others), the first that serves the call, forward and gradient alike. "mosaic" first, from the H200 comparisons of 2026-12-01 and 2026-12-04 (bf16,
  CUPTI, docs/kernels.md "H200: against cuDNN, XLA and Tokamax"): warp specialised, at cuDNN's
  speed or above at every row it serves (head_dim 64 and 128; in an earlier comparison forward
  453-635 TFLOP/s against "triton"'s 303-446 at every forward row, forward+backward 426.7
  against 273.3 at 32x2048x16x64 and 565.4 against 358.4 at 1x16384x16x128). "cudnn" next:
  where "mosaic" refuses a shape "triton" reached 0.43x and 0.52x of cuDNN on the H200 (issue 50,
  2026-12-04: head_dim 256 forward 317 against cuDNN's 733 TFLOP/s, head_dim 80
  forward+backward 190 against 367), so the other 16-bit head dims (multiples of 8 up to 256)
  take cuDNN first, then "mosaic", which runs those up to 128 zero-padded to 64 or 128 (at
  head_dim 80 the work of 128, 1.6x, where cuDNN's 367 TFLOP/s is about what "mosaic" reaches
  at 128 divided by 1.6). "triton" then serves what both refuse (float32, head dims that are not a multiple
  of 8, compute capability below 8.0, local windows and soft caps), and "xla" the rest (bias or
  mask where cuDNN refuses them, a value head dim of its own).
  pjrtkit's CPU device: "native" (f32/bf16, no bias; no mask but a key mask ``[B or 1, 1, 1,
  S]``, as ``key_value_seq_lengths`` gives) from 2**15 logits, then "xla_chunked" for more than
  2**20 logits, else "xla". "native" took 0.14-0.19x of "xla_chunked"'s forward time and
  0.20-0.25x of its forward+backward with every key attended, 0.02-0.10x / 0.03-0.15x causal,
  windowed or with key lengths (2 cores, docs/results/kernels/attention_options_native_cpu.md
  and kernels_large_pjrtkit_pjrtkit_cpu_attention.json). Against "xla" at small calls
  (attention_small_native_cpu.md): forward+backward 0.68-0.87x at 2**15 logits, 0.90-1.16x at
  2**14, 1.40-2.62x at 2**7 (fractions of a millisecond: the call's fixed cost).
  Elsewhere: "xla_chunked" for more than 2**20 logits (memory linear in sequence length), else
  "xla". Off GPUs the forward and the gradient follow the same rule; tuned results may choose
  them differently. Unsupported entries are skipped; "xla" always serves.
  """
  b, t, h, _, s, _ = base.dims(spec)
  fallback = "xla_chunked" if b * h * t * s > _SMALL_LOGITS else "xla"
  if device.is_gpu:
    if spec.arg("query").shape[3] in MOSAIC_KERNEL_HEAD_DIMS:
      return ["mosaic", "cudnn", "triton", "xla"]
    return ["cudnn", "mosaic", "triton", "xla"]
  if device.is_pjrtkit_cpu and b * h * t * s >= _NATIVE_MIN_LOGITS:
    return ["native", fallback]
  return [fallback]


FAMILY = Family(base.OP_NAME, IMPLEMENTATIONS, rule)
register_family(FAMILY)


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None, *,
                          scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          logits_soft_cap: float | None = None, precision: Any = None,
                          implementation: str | Sequence[str] | None = None,
                          q_sharding: Any = None) -> Any:
  """Scaled dot-product attention in ``[*batch, seq, heads, head_dim]`` layout (Tokamax's and
  ``jax.nn.dot_product_attention``'s arguments).

  Args:
    query: ``[*B, T, H, D]`` (any number of batch dimensions, none included), float32, bfloat16
      or float16.
    key: ``[*B, S, K, D]`` with ``H % K == 0`` (grouped-query; multi-query when K == 1).
    value: ``[*B, S, K, Dv]``; the output has value's head dim.
    bias: float, broadcastable to ``[*B, H, T, S]`` (as many dimensions), added to the scaled
      logits.
    mask: bool, broadcastable to ``[*B, H, T, S]``; True where a query may attend a key.
    scale: logit scale; None for ``1/sqrt(D)``.
    is_causal: query t attends keys s <= t, top-left aligned also when the query length T
      differs from the key length S (as ``jax.nn.dot_product_attention``): a decode step with
      T < S that should see every key is a call without it.
    query_seq_lengths: int ``[*B]``: queries at or past a batch element's length attend no key
      (their rows average every value, as fully masked rows do in ``jax.nn`` and Tokamax).
    key_value_seq_lengths: int ``[*B]``: keys at or past a batch element's length are masked.
    local_window_size: ``w`` or ``(left, right)``: query t attends keys ``t - left .. t + right``
      only (``w`` for both sides).
    logits_soft_cap: ``c``: logits (scaled, bias added) become ``c * tanh(logits / c)``.
    precision: None, a ``jax.lax.Precision`` or a pair of them (for ``q k^T`` and for ``p v``).
    implementation: "xla" (plain JAX, serves every call), "xla_chunked" (key chunks, memory
      linear in S), "native" (pjrtkit's CPU device), "triton" (Pallas Triton, NVIDIA GPUs),
      "mosaic" (Pallas Mosaic GPU, Hopper; 16-bit, head_dim a multiple of 8 up to
      128, run at 64 or 128), "cudnn" (cuDNN's flash
      attention through ``jax.nn``, NVIDIA GPUs; 16-bit, head_dim a multiple of 8 up to 256),
      a sequence of these (the first that serves the call), or None to choose per device, shape
      and dtype (tuned results, else `rule`). "xla", "xla_chunked", "native" and "triton" take
      `local_window_size` and `logits_soft_cap`, "xla" and "xla_chunked" ``Dv != D``; the
      sequence lengths become a mask (``key_value_seq_lengths`` a key mask ``[B, 1, 1, S]``,
      which "native" takes too).
    q_sharding: a ``jax.sharding.NamedSharding`` of `query` whose mesh axes split the batch
      and/or head dimensions: the attention runs under ``shard_map`` on each device's share
      (key and value split like the query's batch and heads; bias and mask where they are not
      broadcast). None: no sharding of its own (``jit`` partitions as usual).

  Returns:
    ``[*B, T, H, Dv]`` in the query's dtype. Without keys (S = 0) every row is zeros (an empty
    weighted sum, as ``jax.nn.dot_product_attention`` gives; a query past its
    ``query_seq_lengths`` entry too) with zero gradients; a call with no keys or an empty output
    runs no implementation (`pjrtkit.kernels.core.empty`), so every implementation name gives it.

  Raises:
    TypeError, ValueError: for arguments of the wrong type, dtype or shape (naming the parameter;
      a head_dim of 0 included).
    UnsupportedImplementationError: when `implementation` cannot serve this call (an
      ``ExceptionGroup`` of them when none of a sequence can).
  """
  lengths = tuple(None if a is None else jnp.asarray(a)
                  for a in (query_seq_lengths, key_value_seq_lengths))
  inputs = (query, key, value, bias, mask) + lengths

  def attend(q: Any, k: Any, v: Any, b: Any, m: Any) -> Any:
    spec = base.make_spec(q, k, v, b, m, is_causal, scale, local_window_size=local_window_size,
                          logits_soft_cap=logits_soft_cap, precision=precision)
    if base.is_empty(spec):
      return empty.answer(FAMILY, implementation, lambda: base.empty_output(spec))
    return FAMILY.call(spec, (q, k, v, b, m), implementation)

  if q_sharding is None:
    return batching.Call.make(*inputs).run(attend)
  # The whole call's checks (and the implementation's refusals) before splitting it, on shapes
  # alone (an explicitly sharded query need not agree with key and value here), without the
  # autotune cache (which would measure the whole, unsplit call).
  shapes = [a if a is None or not hasattr(a, "shape") else jax.ShapeDtypeStruct(a.shape, a.dtype)
            for a in inputs]
  with autotune_cache.using(enabled=False):
    jax.eval_shape(lambda *a: batching.Call.make(*a).run(attend), *shapes)
  return sharding.run_sharded(inputs, attend, q_sharding)
