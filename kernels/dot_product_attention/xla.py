"""dot_product_attention "xla": plain JAX with the full ``[B, H, T, S]`` logits."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.dot_product_attention import base


def attention_backward(q: jax.Array, k: jax.Array, v: jax.Array, bias: jax.Array | None,
                       mask: jax.Array | None, dout: jax.Array, lse: jax.Array, dlt: jax.Array,
                       spec: Spec, key_start: Any = 0, key_len: int | None = None
                       ) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array | None]:
  """Gradients for keys ``key_start ...`` of k/v (a chunk or all of them), from `lse` and
  ``dlt = rowsum(dout * out)``: (dq contribution, dk, dv, dlogits) in float32; dlogits is the
  bias cotangent before reduction (None without a bias)."""
  b, t, h, d = q.shape
  kh = k.shape[2]
  g = h // kh
  s, valid = base.mask_logits(base.grouped_logits(q, k, spec), spec, bias, mask, key_start,
                              key_len)
  p = jnp.exp(s - lse[..., None])
  do = dout.astype(jnp.float32)
  sc = k.shape[1]
  pg = p.reshape(b, kh, g, t, sc)
  dog = do.reshape(b, t, kh, g, d)
  dv = jnp.einsum("bkgts,btkgd->bskd", pg, dog)
  dp = jnp.einsum("btkgd,bskd->bkgts", dog, v.astype(jnp.float32)).reshape(b, h, t, sc)
  ds = p * (dp - dlt[..., None])
  ds = jnp.where(valid, ds, 0.0)
  dsg = ds.reshape(b, kh, g, t, sc)
  scale = spec.param("scale")
  dq = jnp.einsum("bkgts,bskd->btkgd", dsg, k.astype(jnp.float32)).reshape(b, t, h, d) * scale
  dk = jnp.einsum("bkgts,btkgd->bskd", dsg, q.astype(jnp.float32).reshape(b, t, kh, g, d)) * scale
  return dq, dk, dv, (ds if bias is not None else None)


class XlaAttention(Op[NoConfig]):
  """The reference implementation; serves every call."""

  op_name = base.OP_NAME
  implementation = "xla"

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    q, k, v, bias, mask = args
    s, _ = base.mask_logits(base.grouped_logits(q, k, spec), spec, bias, mask)
    lse = jax.nn.logsumexp(s, axis=-1)
    p = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))
    p = p / jnp.sum(p, axis=-1, keepdims=True)  # Exact for rows with every key masked too.
    out = base.weighted_values(p, v, q.dtype)
    return out, (q, k, v, bias, mask, out, lse)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig) -> tuple[Any, ...]:
    q, k, v, bias, mask, out, lse = base.common_residuals(residuals)
    dq, dk, dv, ds = attention_backward(q, k, v, bias, mask, dout, lse, base.delta(out, dout),
                                        spec)
    dbias = base.reduce_to(ds, bias.shape) if bias is not None else None
    return dq, dk, dv, dbias, None
