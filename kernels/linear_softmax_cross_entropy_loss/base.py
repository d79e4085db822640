"""linear_softmax_cross_entropy_loss: the call's checks and Spec, the reference, and the
residuals every implementation shares.

``loss_i = logsumexp(x_i @ w) - (x_i @ w)[labels_i]`` (softmax cross-entropy of the logits
``x @ w`` against integer labels), reduced by "sum", "mean" or "none". Logits, their
log-sum-exp and the loss are float32 whatever the inputs' dtype. A label outside ``[0, v)``
contributes ``logsumexp`` alone (no logit is picked, as with a one-hot of it).

Weights need at least one class (v >= 1). A call without rows (b = 0) or hidden units (h = 0)
never reaches an implementation (`is_empty`, `empty_result`): "sum" of no rows is 0, "mean" NaN
(0/0, as ``jnp.mean`` of an empty array and Tokamax), "none" an empty ``[0]``, with zero
gradients.

Arguments as every implementation takes them: ``(x [b, h], labels [b], weights [h, v])``.
Residuals: ``(x, labels, weights, lse)`` with `lse` float32 ``[b]``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core import empty, functions
from pjrtkit.kernels.core.spec import Spec

OP_NAME = "linear_softmax_cross_entropy_loss"
REDUCTIONS = ("sum", "mean", "none")


def make_spec(x: Any, labels: Any, weights: Any, reduction: str, precision: Any) -> Spec:
  """Checks a call and returns its Spec.

  Raises:
    TypeError, ValueError: naming the parameter and the accepted values.
  """
  for name, a in (("x", x), ("labels", labels), ("weights", weights)):
    if not hasattr(a, "shape") or not hasattr(a, "dtype"):
      raise TypeError(f"linear_softmax_cross_entropy_loss: {name} must be an array, got "
                      f"{type(a).__name__}")
  for name, a in (("x", x), ("weights", weights)):
    if not jnp.issubdtype(a.dtype, jnp.floating):
      raise TypeError(f"linear_softmax_cross_entropy_loss: {name} must have a floating dtype, "
                      f"got {jnp.dtype(a.dtype).name}")
  if not jnp.issubdtype(labels.dtype, jnp.integer):
    raise TypeError(f"linear_softmax_cross_entropy_loss: labels must have an integer dtype, got "
                    f"{jnp.dtype(labels.dtype).name}")
  if x.ndim != 2 or weights.ndim != 2 or labels.ndim != 1:
    raise ValueError(f"linear_softmax_cross_entropy_loss: need x [b, h], labels [b], weights "
                     f"[h, v]; got x {tuple(x.shape)}, labels {tuple(labels.shape)}, weights "
                     f"{tuple(weights.shape)}")
  if labels.shape[0] != x.shape[0] or weights.shape[0] != x.shape[1]:
    raise ValueError(f"linear_softmax_cross_entropy_loss: shapes do not agree: x "
                     f"{tuple(x.shape)}, labels {tuple(labels.shape)}, weights "
                     f"{tuple(weights.shape)} (need x [b, h], labels [b], weights [h, v])")
  if empty.is_zero(weights.shape[1]):
    raise ValueError(f"linear_softmax_cross_entropy_loss: weights must have at least one class "
                     f"(weights [h, v] with vocabulary size v >= 1), got weights of shape "
                     f"{tuple(weights.shape)}")
  if reduction not in REDUCTIONS:
    raise ValueError(f"linear_softmax_cross_entropy_loss: reduction must be one of "
                     f"{list(REDUCTIONS)}, got {reduction!r}")
  return Spec.make(OP_NAME, {"x": x, "labels": labels, "weights": weights},
                   {"reduction": reduction, "precision": functions.precision_name(precision)})


def is_empty(spec: Spec) -> bool:
  """Whether the call has no rows (b = 0) or no hidden units (h = 0): its loss is
  `empty_result`."""
  return empty.any_zero(spec.arg("x").shape)


def empty_result(spec: Spec) -> jax.Array:
  """The loss of an `is_empty` call, from shapes alone: without hidden units every logit is 0,
  so each row's loss is ``log(v)`` (whatever its label); reduced as any call ("sum" of no rows
  0, "mean" of no rows NaN, as ``jnp.mean`` of an empty array; "none" ``[b]``)."""
  b, v = spec.arg("x").shape[0], spec.arg("weights").shape[1]
  return reduce(jnp.full((b,), jnp.log(jnp.float32(v))), spec.param("reduction"))


def reduce(per_row: jax.Array, reduction: str) -> jax.Array:
  """The loss from the per-row losses (float32)."""
  if reduction == "sum":
    return jnp.sum(per_row)
  if reduction == "mean":
    return jnp.sum(per_row) / per_row.shape[0]
  return per_row


def row_cotangent(dout: jax.Array, reduction: str, rows: int) -> jax.Array:
  """Each row's loss cotangent ``[b]`` (float32) from the output's."""
  d = dout.astype(jnp.float32)
  if reduction == "sum":
    return jnp.broadcast_to(d, (rows,))
  if reduction == "mean":
    return jnp.broadcast_to(d / rows, (rows,))
  return d


def example_args(spec: Spec, seed: int) -> tuple[Any, ...]:
  """Example arguments with labels drawn uniformly from the vocabulary."""
  x, _, w = spec.example_args(seed)
  labels = jax.random.randint(jax.random.key(seed), spec.arg("labels").shape, 0, w.shape[1],
                              jnp.dtype(spec.arg("labels").dtype))
  return x, labels, w


def reference(x: jax.Array, labels: jax.Array, weights: jax.Array,
              reduction: str = "sum") -> jax.Array:
  """The plain-JAX definition (highest precision, full logits), differentiated by JAX in tests."""
  logits = jnp.matmul(x, weights, precision=jax.lax.Precision.HIGHEST,
                      preferred_element_type=jnp.float32)
  picked = jnp.sum(jnp.where(jnp.arange(weights.shape[1]) == labels[:, None], logits, 0.0),
                   axis=-1)
  return reduce(jax.nn.logsumexp(logits, axis=-1) - picked, reduction)
