"""dot_product_attention "xla_chunked": plain JAX over key/value chunks with an online softmax.

Memory is linear in the sequence length: one ``[B, H, T, chunk]`` block of logits lives at a
time (a ``lax.scan`` over chunks), for the forward and for the backward. Serves every call.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.dot_product_attention import base
from pjrtkit.kernels.dot_product_attention.xla import attention_backward


@dataclasses.dataclass(frozen=True)
class ChunkedConfig:
  """Attributes: chunk_size: keys per chunk."""

  chunk_size: int = 512

  def __post_init__(self) -> None:
    if self.chunk_size < 1:
      raise ValueError(f"chunk_size must be >= 1, got {self.chunk_size}")


def _chunks(x: jax.Array | None, axis: int, size: int, count: int) -> jax.Array | None:
  """`x` padded along `axis` to count*size and split into [count, ...] chunks (None stays None;
  an axis of length 1 is broadcast: every chunk gets it)."""
  if x is None:
    return None
  if x.shape[axis] == 1:
    return jnp.broadcast_to(x[None], (count,) + x.shape)
  pad = count * size - x.shape[axis]
  widths = [(0, 0)] * x.ndim
  widths[axis] = (0, pad)
  x = jnp.pad(x, widths)
  x = x.reshape(x.shape[:axis] + (count, size) + x.shape[axis + 1:])
  return jnp.moveaxis(x, axis, 0)


def log_sum_exp(args: tuple[Any, ...], spec: Spec, chunk_size: int = 512) -> jax.Array:
  """The float32 log-sum-exp of each row's logits, ``[B, H, T]``, over key chunks of
  `chunk_size` (one ``[B, H, T, chunk]`` block of logits at a time; the softmax's running maximum
  and sum without the weighted values): the `lse` residual for a forward whose kernel does not
  give one ("cudnn")."""
  q, k, _, bias, mask = args
  b, t, h, _, s, _ = base.dims(spec)
  size = min(chunk_size, s)
  count = -(-s // size)
  xs = (_chunks(k, 1, size, count), _chunks(bias, 3, size, count),
        _chunks(mask, 3, size, count), jnp.arange(count) * size)

  def step(carry: Any, x: Any) -> tuple[Any, None]:
    m, l = carry
    kc, bc, mc, start = x
    logits, _ = base.mask_logits(base.grouped_logits(q, kc, spec), spec, bc, mc, start, s)
    m_new = jnp.maximum(m, jnp.max(logits, axis=-1))
    l = l * jnp.exp(m - m_new) + jnp.sum(jnp.exp(logits - m_new[..., None]), axis=-1)
    return (m_new, l), None

  init = (jnp.full((b, h, t), base.MASK_VALUE, jnp.float32), jnp.zeros((b, h, t), jnp.float32))
  (m, l), _ = jax.lax.scan(step, init, xs)
  return m + jnp.log(l)


class XlaChunkedAttention(Op[ChunkedConfig]):
  """Key/value chunks, online softmax forward, chunked backward from the saved log-sum-exp."""

  op_name = base.OP_NAME
  implementation = "xla_chunked"
  portable = True
  config_cls = ChunkedConfig

  def default_config(self, spec: Spec) -> ChunkedConfig:
    return ChunkedConfig(min(512, base.dims(spec)[4]))

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[ChunkedConfig]:
    s = base.dims(spec)[4]
    return tuple(ChunkedConfig(c) for c in (128, 256, 512, 1024) if c <= max(s, 128))

  def _split(self, args: tuple[Any, ...], spec: Spec, size: int) -> tuple[Any, int, int]:
    q, k, v, bias, mask = args
    s = k.shape[1]
    count = -(-s // size)
    xs = (_chunks(k, 1, size, count), _chunks(v, 1, size, count), _chunks(bias, 3, size, count),
          _chunks(mask, 3, size, count), jnp.arange(count) * size)
    return xs, s, count

  def forward(self, args: tuple[Any, ...], spec: Spec, config: ChunkedConfig) -> tuple[Any, Any]:
    q = args[0]
    b, t, h, _, _, _ = base.dims(spec)
    xs, s, _ = self._split(args, spec, config.chunk_size)

    def step(carry: Any, x: Any) -> tuple[Any, None]:
      m, l, acc = carry
      kc, vc, bc, mc, start = x
      logits, _ = base.mask_logits(base.grouped_logits(q, kc, spec), spec, bc, mc, start, s)
      m_new = jnp.maximum(m, jnp.max(logits, axis=-1))
      p = jnp.exp(logits - m_new[..., None])
      alpha = jnp.exp(m - m_new)
      l = l * alpha + jnp.sum(p, axis=-1)
      acc = (acc * jnp.swapaxes(alpha, 1, 2)[..., None]
             + base.weighted_values(p, vc, precision=base.precisions(spec)[1]))
      return (m_new, l, acc), None

    init = (jnp.full((b, h, t), base.MASK_VALUE, jnp.float32), jnp.zeros((b, h, t), jnp.float32),
            jnp.zeros((b, t, h, args[2].shape[3]), jnp.float32))
    (m, l, acc), _ = jax.lax.scan(step, init, xs)
    out = (acc / jnp.swapaxes(l, 1, 2)[..., None]).astype(q.dtype)
    lse = m + jnp.log(l)
    return out, (*args, out, lse)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: ChunkedConfig
               ) -> tuple[Any, ...]:
    q, k, v, bias, mask, out, lse = base.common_residuals(residuals)
    xs, s, count = self._split((q, k, v, bias, mask), spec, config.chunk_size)
    dlt = base.delta(out, dout)
    size = config.chunk_size

    def step(dq: jax.Array, x: Any) -> tuple[jax.Array, Any]:
      kc, vc, bc, mc, start = x
      dq_c, dk, dv, ds = attention_backward(q, kc, vc, bc, mc, dout, lse, dlt, spec, start, s)
      dbias = base.reduce_to(ds, bc.shape) if bc is not None else None
      return dq + dq_c, (dk, dv, dbias)

    dq, (dk, dv, dbias) = jax.lax.scan(step, jnp.zeros(q.shape, jnp.float32), xs)

    def unchunk(x: jax.Array, axis: int) -> jax.Array:
      x = jnp.moveaxis(x, 0, axis)
      x = x.reshape(x.shape[:axis] + (count * size,) + x.shape[axis + 2:])
      return jax.lax.slice_in_dim(x, 0, s, axis=axis)

    dk, dv = unchunk(dk, 1), unchunk(dv, 1)
    if bias is not None:
      dbias = unchunk(dbias, 3) if bias.shape[3] != 1 else jnp.sum(dbias, axis=0)
    return dq, dk, dv, dbias, None
