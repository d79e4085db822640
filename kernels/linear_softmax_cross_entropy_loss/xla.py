"""linear_softmax_cross_entropy_loss "xla": the full ``[b, v]`` logits in float32 (what XLA
makes of the definition); the gradient ``softmax - one_hot`` recomputed from the log-sum-exp."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.linear_softmax_cross_entropy_loss import base


def _logits(x: jax.Array, w: jax.Array, precision: Any) -> jax.Array:
  return jnp.matmul(x, w, precision=precision, preferred_element_type=jnp.float32)


class XlaLinearSoftmaxCrossEntropyLoss(Op[NoConfig]):
  """The reference implementation; serves every call; keeps ``b * v`` float32 logits."""

  op_name = base.OP_NAME
  implementation = "xla"
  portable = True
  symbolic_shapes = True

  def example_args(self, spec: Spec, seed: int = 0) -> tuple[Any, ...]:
    return base.example_args(spec, seed)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: NoConfig) -> tuple[Any, Any]:
    x, labels, w = args
    logits = _logits(x, w, functions.precision_of(spec.param("precision")))
    lse = jax.nn.logsumexp(logits, axis=-1)
    hit = jnp.arange(w.shape[1]) == labels[:, None]
    picked = jnp.sum(jnp.where(hit, logits, 0.0), axis=-1)
    loss = base.reduce(lse - picked, spec.param("reduction"))
    return loss, (x, labels, w, lse)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: NoConfig) -> tuple[Any, ...]:
    x, labels, w, lse = residuals
    precision = functions.precision_of(spec.param("precision"))
    drow = base.row_cotangent(dout, spec.param("reduction"), x.shape[0])
    logits = _logits(x, w, precision)
    hit = jnp.arange(w.shape[1]) == labels[:, None]
    s = (jnp.exp(logits - lse[:, None]) - hit) * drow[:, None]
    s = s.astype(x.dtype) if x.dtype != jnp.float32 else s
    dx = jnp.matmul(s, w.T, precision=precision, preferred_element_type=jnp.float32)
    dw = jnp.matmul(x.T, s, precision=precision, preferred_element_type=jnp.float32)
    return dx, None, dw
