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
  dvd = v.shape[3]
  qk_precision, pv_precision = base.precisions(spec)
  s, valid = base.mask_logits(base.grouped_logits(q, k, spec), spec, bias, mask, key_start,
                              key_len)
  sc = k.shape[1]
  # A row with every key masked averaged every (real) key's value in the forward: its weights are
  # 1 / key count, which exp(s - lse) cannot give (lse = MASK_VALUE + log(S) rounds to MASK_VALUE).
  empty_row = (lse <= base.MASK_VALUE)[..., None]
  total = sc if key_len is None else key_len
  p = jnp.where(empty_row, jnp.where(jnp.isfinite(s), 1.0 / total, 0.0),
                jnp.exp(s - lse[..., None]))
  do = dout.astype(jnp.float32)
  pg = p.reshape(b, kh, g, t, sc)
  dog = do.reshape(b, t, kh, g, dvd)
  dv = jnp.einsum("bkgts,btkgd->bskd", pg, dog, precision=pv_precision)
  dp = jnp.einsum("btkgd,bskd->bkgts", dog, v.astype(jnp.float32),
                  precision=pv_precision).reshape(b, h, t, sc)
  ds = p * (dp - dlt[..., None])
  cap = base.option(spec, "logits_soft_cap")
  if cap is not None:  # d(c tanh(u / c))/du = 1 - (s / c)^2 on the kept logits.
    kept = valid & (s > base.MASK_VALUE)
    ds = ds * jnp.where(kept, 1.0 - jnp.square(jnp.where(kept, s, 0.0) / cap), 0.0)
  ds = jnp.where(valid & ~empty_row, ds, 0.0)  # Logits do not move an empty row's output.
  dsg = ds.reshape(b, kh, g, t, sc)
  scale = spec.param("scale")
  dq = jnp.einsum("bkgts,bskd->btkgd", dsg, k.astype(jnp.float32),
                  precision=qk_precision).reshape(b, t, h, d) * scale
  dk = jnp.einsum("bkgts,btkgd->bskd", dsg, q.astype(jnp.float32).reshape(b, t, kh, g, d),
                  precision=qk_precision) * scale
  return dq, dk, dv, (ds if bias is not None else None)


class XlaAttention(Op[NoConfig]):
  """The reference implementation; serves every call."""

  op_name = base.OP_NAME
  implementation = "xla"
  portable = True
  symbolic_shapes = True

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    q, k, v, bias, mask = args
    s, _ = base.mask_logits(base.grouped_logits(q, k, spec), spec, bias, mask)
    lse = jax.nn.logsumexp(s, axis=-1)
    p = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))
    p = p / jnp.sum(p, axis=-1, keepdims=True)  # Exact for rows with every key masked too.
    out = base.weighted_values(p, v, q.dtype, base.precisions(spec)[1])
    return out, (q, k, v, bias, mask, out, lse)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig) -> tuple[Any, ...]:
    q, k, v, bias, mask, out, lse = base.common_residuals(residuals)
    dq, dk, dv, ds = attention_backward(q, k, v, bias, mask, dout, lse, base.delta(out, dout),
                                        spec)
    dbias = base.reduce_to(ds, bias.shape) if bias is not None else None
    return dq, dk, dv, dbias, None
