"""linear_softmax_cross_entropy_loss in the kernel comparison
(``python -m tools.bench.kernel_compare``): its contenders and its FLOP count. Peak memory as the
vocabulary grows: ``python -m pjrtkit.kernels.linear_softmax_cross_entropy_loss.memory``.

Contenders: pjrtkit.kernels' implementations (``chunked_xla``, ``xla`` and the automatic choice
``None``), a plain jnp loss (full logits and ``log_softmax``; ratios are taken against it and the
correctness guard compares with it), and Tokamax's ``chunked_xla`` and ``xla``. Every one takes
``(x, labels, weights)`` with reduction "sum".

FLOPs: forward = 2 * b * h * v (the logits); forward+backward = 3x the forward.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.comparison import (FWD_BWD, OURS, TOKAMAX, XLA_REF, Case, Contender,
                                             Forward, OpBenchmark, import_tokamax)
from pjrtkit.kernels.linear_softmax_cross_entropy_loss import arg_specs
from pjrtkit.kernels.linear_softmax_cross_entropy_loss.api import (
    linear_softmax_cross_entropy_loss)

CONVENTION = "TFLOP/s: forward FLOPs = 2*b*h*v (the logits); fwd+bwd = 3x forward"


def flops(case: Case) -> float:
  """FLOPs counted for a case."""
  b, h, v = case.shape
  return 2.0 * b * h * v * (3 if case.phase == FWD_BWD else 1)


def pk_forward(case: Case, implementation: str | None) -> Forward:
  """pjrtkit.kernels' loss with `implementation`."""
  del case
  return lambda x, labels, w: linear_softmax_cross_entropy_loss(x, labels, w,
                                                                implementation=implementation)


def _pk(implementation: str | None) -> Callable[[Case], Forward]:
  return lambda case: pk_forward(case, implementation)


def jnp_loss(x: jax.Array, labels: jax.Array, w: jax.Array) -> jax.Array:
  """The loss in plain jnp: float32 logits, log_softmax, the labels' entries summed."""
  logits = jnp.matmul(x, w, preferred_element_type=jnp.float32)
  logp = jax.nn.log_softmax(logits, axis=-1)
  return -jnp.sum(jnp.take_along_axis(logp, labels[:, None], axis=-1))


def _tokamax(implementation: str) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    del case
    tokamax = import_tokamax()
    return lambda x, labels, w: tokamax.linear_softmax_cross_entropy_loss(
        x, labels, w, implementation=implementation)
  return make


def contenders() -> list[Contender]:
  """Ours (chunked_xla, xla, None), plain jnp, Tokamax (chunked_xla, xla)."""
  ours = [Contender(f"pk {impl}", OURS, arg_specs.OP, _pk(impl), impl)
          for impl in ("chunked_xla", "xla")]
  ours.append(Contender("pk None", OURS, arg_specs.OP, _pk(None), None))
  return ours + [Contender("XLA jnp", XLA_REF, arg_specs.OP, lambda case: jnp_loss)] + [
      Contender(f"tokamax {impl}", TOKAMAX, arg_specs.OP, _tokamax(impl), impl)
      for impl in ("chunked_xla", "xla")]


BENCHMARK = OpBenchmark(
    name=arg_specs.OP,
    cases=arg_specs.CASES,
    quick_shapes=arg_specs.QUICK_SHAPES,
    unit="TFLOP/s",
    amount_key="flops",
    amount=flops,
    convention=CONVENTION,
    contenders=contenders,
    make_inputs=arg_specs.make_inputs,
    pk_forward=pk_forward,
    baselines=("XLA jnp", "pk xla"),
    references=("XLA jnp", "pk xla"),
)
"""linear_softmax_cross_entropy_loss's part of the kernel comparison."""
