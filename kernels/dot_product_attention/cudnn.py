"""dot_product_attention "cudnn": cuDNN's flash attention through JAX's own
``jax.nn.dot_product_attention(..., implementation="cudnn")``, forward and backward.

The layout is JAX's ``[batch, seq, heads, head_dim]`` (cuDNN's BTNH), so the arrays go in as
they are; the scale is the call's (``1/sqrt(D)`` when None), passed explicitly. The forward runs
under ``jax.vjp`` and keeps JAX's pullback (a pytree of the cuDNN call's residuals: the inputs,
the output and cuDNN's float32 softmax statistics) after the seven shared residuals
(`base.common_residuals`); the backward calls it, so the gradient is cuDNN's backward kernel on
the forward's own statistics, without a second forward. The shared `lse` residual is cuDNN's
statistics, taken from the pullback (`CudnnAttention.statistics`): another implementation's
backward pairs with this forward at no extra cost. Where they cannot be found (a JAX whose
pullback holds them differently), `xla_chunked.log_sum_exp` computes them in plain XLA, which
XLA removes again when only cuDNN's backward reads the residuals (under ``jit``). Given another
forward's residuals (a tuned or cached choice may pair them), the backward runs the cuDNN
forward again under ``jax.vjp`` before its backward.

Serves NVIDIA GPUs of compute capability 8.0+, float16 and bfloat16, head_dim a multiple of 8 up
to 256 (128 below compute capability 9.0), grouped/multi-query heads, causal (top-left aligned,
as `base` defines it) or not, any key length; a bias and a mask where JAX's cuDNN call takes
them (`CudnnAttention.unsupported_reason`).
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.dot_product_attention import base
from pjrtkit.kernels.dot_product_attention.xla_chunked import log_sum_exp

DTYPES = ("bfloat16", "float16")
"""The dtypes cuDNN's flash attention takes (query, key and value alike)."""
MIN_CAPABILITY = (8, 0)
"""cuDNN's flash attention: Ampere and later."""
HOPPER = (9, 0)
"""From this compute capability on head_dim may be up to 256, below it up to 128."""


def max_head_dim(compute_capability: tuple[int, int]) -> int:
  """The largest head_dim JAX's cuDNN call accepts on a GPU of `compute_capability`."""
  return 256 if compute_capability >= HOPPER else 128


class CudnnAttention(Op[NoConfig]):
  """cuDNN flash attention, forward and backward, through ``jax.nn.dot_product_attention``."""

  op_name = base.OP_NAME
  implementation = "cudnn"
  own_residuals = True
  jax_implementation: ClassVar[str] = "cudnn"
  """What ``jax.nn.dot_product_attention`` is asked for; CPU tests of the residual plumbing run a
  subclass with "xla" here."""

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    if not device.is_gpu:
      return (f"cuDNN attention needs an NVIDIA GPU; this is {device.describe()} (no GPU). "
              f"Use implementation=None, 'xla' or 'xla_chunked' here")
    cc = device.compute_capability
    if cc < MIN_CAPABILITY:
      return (f"cuDNN's flash attention needs compute capability "
              f"{MIN_CAPABILITY[0]}.{MIN_CAPABILITY[1]}+, this GPU ({device.kind}) has "
              f"{cc[0]}.{cc[1]}")
    dtype = spec.arg("query").dtype
    if dtype not in DTYPES:
      return (f"dtype {dtype} is not supported (accepted: {', '.join(DTYPES)}; use 'triton' or "
              f"'xla' for float32)")
    reason = base.extras_reason(spec)
    if reason:
      return reason
    _, t, _, d, s, _ = base.dims(spec)
    limit = max_head_dim(cc)
    if d % 8 or d > limit:
      return (f"head_dim must be a multiple of 8 up to {limit} on compute capability "
              f"{cc[0]}.{cc[1]} (256 from 9.0 on, 128 below), got {d}")
    scale = spec.param("scale")
    if not scale > 0:
      return (f"scale must be positive, got {scale} (flash-attention kernels may take the row "
              f"maximum of the unscaled logits; other scales are not verified with cuDNN: use "
              f"'triton' or 'xla')")
    shapes = [a.shape for a in (spec.arg("bias"), spec.arg("mask")) if a is not None]
    if shapes:
      full = tuple(max(dims) for dims in zip(*shapes))
      if full[2:] != (t, s):
        return (f"a bias or mask must span the query and key lengths, [., ., q_seq={t}, "
                f"kv_seq={s}] in one of them (JAX's cuDNN call adds the mask to the bias and "
                f"takes no broadcast over those two), got {', '.join(map(str, shapes))}")
      if t % 2 or s % 2:
        return (f"with a bias or mask the query and key lengths must be even (cuDNN's backward "
                f"with a bias), got q_seq={t}, kv_seq={s}")
    return None

  def _attend(self, spec: Spec, mask: Any) -> Callable[..., Any]:
    """``(q, k, v, bias) -> out`` through JAX's cuDNN call with this call's parameters."""
    scale, causal = spec.param("scale"), spec.param("is_causal")

    def attend(q: jax.Array, k: jax.Array, v: jax.Array, bias: Any) -> jax.Array:
      if bias is not None:  # cuDNN adds a bias of the operands' dtype.
        bias = bias.astype(q.dtype)
      return jax.nn.dot_product_attention(q, k, v, bias, mask, scale=scale, is_causal=causal,
                                          implementation=self.jax_implementation)

    return attend

  def statistics(self, pullback: Any, spec: Spec) -> jax.Array | None:
    """cuDNN's softmax statistics held by `pullback` (the log-sum-exp of each row's scaled
    logits, float32 ``[B, H, T]``): its one float32 leaf of that shape, the operands being 16-bit;
    None when there is not exactly one."""
    b, t, h, _, _, _ = base.dims(spec)
    found = [leaf for leaf in jax.tree.leaves(pullback)
             if getattr(leaf, "dtype", None) == jnp.float32 and tuple(leaf.shape) == (b, h, t)]
    return found[0] if len(found) == 1 else None

  def forward_output(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> Any:
    q, k, v, bias, mask = args
    return self._attend(spec, mask)(q, k, v, bias)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    q, k, v, bias, mask = args
    out, pullback = jax.vjp(self._attend(spec, mask), q, k, v, bias)
    lse = self.statistics(pullback, spec)
    if lse is None:
      lse = log_sum_exp(args, spec)
    return out, (q, k, v, bias, mask, out, lse, pullback)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig) -> tuple[Any, ...]:
    q, k, v, bias, mask, out, _ = base.common_residuals(residuals)
    if len(residuals) > base.NUM_RESIDUALS:
      pullback = residuals[base.NUM_RESIDUALS]
    else:  # Another forward's residuals: cuDNN's forward again, for its statistics.
      _, pullback = jax.vjp(self._attend(spec, mask), q, k, v, bias)
    dq, dk, dv, dbias = pullback(dout.astype(out.dtype))
    return dq, dk, dv, dbias, None
