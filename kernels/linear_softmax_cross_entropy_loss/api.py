"""linear_softmax_cross_entropy_loss's public function and its implementations table."""

from __future__ import annotations

from typing import Any, Sequence

import jax

from pjrtkit.kernels.core import empty
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Family, Op, register_family
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm.native import amx_products_pay
from pjrtkit.kernels.linear_softmax_cross_entropy_loss import base
from pjrtkit.kernels.linear_softmax_cross_entropy_loss.chunked_xla import (
    ChunkedXlaLinearSoftmaxCrossEntropyLoss)
from pjrtkit.kernels.linear_softmax_cross_entropy_loss.native import (
    NativeLinearSoftmaxCrossEntropyLoss)
from pjrtkit.kernels.linear_softmax_cross_entropy_loss.xla import (
    XlaLinearSoftmaxCrossEntropyLoss)

IMPLEMENTATIONS: dict[str, Op] = {
    "xla": XlaLinearSoftmaxCrossEntropyLoss(),
    "chunked_xla": ChunkedXlaLinearSoftmaxCrossEntropyLoss(),
    "native": NativeLinearSoftmaxCrossEntropyLoss(),
}

FULL_LOGITS_LIMIT = 1 << 26
"""Above this many logits (256 MiB of float32) ``implementation=None`` takes "chunked_xla"."""

NATIVE_MIN_WORK = 2**29
"""b x h x v from which the rule takes "native" on pjrtkit's CPU device (bfloat16 with AMX)."""


def _native_is_faster(spec: Spec) -> bool:
  """bfloat16 x and weights, AMX tiles for them, and enough work (`NATIVE_MIN_WORK`)."""
  x, w = spec.arg("x"), spec.arg("weights")
  return amx_products_pay((x.dtype, w.dtype), x.shape[0] * x.shape[1] * w.shape[1],
                          NATIVE_MIN_WORK)


def rule(spec: Spec, device: DeviceInfo, phase: str) -> list[str]:
  """The documented choice for ``implementation=None`` without a tuned result: "xla" while the
  full float32 logits are at most `FULL_LOGITS_LIMIT` elements, else "chunked_xla" (its
  temporaries stay ``block_b * block_v`` however large the vocabulary; see docs/kernels.md).
  On pjrtkit's CPU device, "native" ahead of those (chunked, its temporaries flat too) for
  bfloat16 x and weights when the CPU multiplies them on AMX tiles and the call has at least
  `NATIVE_MIN_WORK` b x h x v.
  """
  del phase
  b = spec.arg("x").shape[0]
  v = spec.arg("weights").shape[1]
  plain = ["xla"] if b * v <= FULL_LOGITS_LIMIT else ["chunked_xla", "xla"]
  if device.is_pjrtkit_cpu and _native_is_faster(spec):
    return ["native"] + plain
  return plain


FAMILY = Family(base.OP_NAME, IMPLEMENTATIONS, rule)
register_family(FAMILY)


def linear_softmax_cross_entropy_loss(x: Any, labels: Any, weights: Any, *,
                                      reduction: str = "sum", precision: Any = None,
                                      implementation: str | Sequence[str] | None = None
                                      ) -> jax.Array:
  """Softmax cross-entropy of the logits ``x @ weights`` against integer `labels`, without
  keeping the ``[b, v]`` logits in "chunked_xla".

  Args:
    x: ``[b, h]`` floating (the last layer's output).
    labels: ``[b]`` integer class indices (a label outside ``[0, v)`` picks no logit).
    weights: ``[h, v]`` floating projection to the vocabulary.
    reduction: "sum" (default), "mean" or "none" (``[b]`` per-row losses).
    precision: as for ``jax.lax.dot``.
    implementation: "xla", "chunked_xla", "native" (pjrtkit's CPU device), a sequence of them
      (the first that serves the call runs), or None to choose per call.

  Returns:
    float32: a scalar, or ``[b]`` for "none". Without rows (b = 0) "sum" is 0.0 and "mean" NaN
    (0/0, as ``jnp.mean`` of nothing); without hidden units (h = 0) each row's loss is
    ``log(v)``; such calls run no implementation (`pjrtkit.kernels.core.empty`) and every
    gradient is zero.

  Raises:
    TypeError, ValueError: for arguments of the wrong type, dtype or shape (naming the
      parameter; weights without classes, v = 0, included).
    UnsupportedImplementationError: when `implementation` cannot serve this call.
  """
  spec = base.make_spec(x, labels, weights, reduction, precision)
  if base.is_empty(spec):
    return empty.answer(FAMILY, implementation, lambda: base.empty_result(spec))
  return FAMILY.call(spec, (x, labels, weights), implementation)
