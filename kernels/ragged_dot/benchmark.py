"""ragged_dot in the kernel comparison (``python -m tools.bench.kernel_compare``): its
contenders and its FLOP count.

Contenders: pjrtkit.kernels' implementations (``triton``, ``mosaic``, ``native``, ``xla_grouped``,
``xla`` and the automatic choice ``None``), ``jax.lax.ragged_dot`` (XLA's own; ratios are taken against it and
the correctness guard compares with it), and Tokamax's ``mosaic``, ``triton`` and ``xla``. Every
one takes ``(lhs, rhs, group_sizes)``.

FLOPs: forward = 2 * m * k * n (rows past the last group would not count; the cases have none);
forward+backward = 3x the forward (dlhs and drhs are one product each).
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.comparison import (FWD_BWD, OURS, TOKAMAX, XLA_REF, Case, Contender,
                                             Forward, OpBenchmark, import_tokamax)
from pjrtkit.kernels.ragged_dot import arg_specs
from pjrtkit.kernels.ragged_dot.api import ragged_dot

CONVENTION = "TFLOP/s: forward FLOPs = 2*m*k*n; fwd+bwd = 3x forward"


def flops(case: Case) -> float:
  """FLOPs counted for a case."""
  _, m, k, n = case.shape
  return 2.0 * m * k * n * (3 if case.phase == FWD_BWD else 1)


def pk_forward(case: Case, implementation: str | None) -> Forward:
  """pjrtkit.kernels' ragged_dot with `implementation`."""
  del case
  return lambda lhs, rhs, sizes: ragged_dot(lhs, rhs, sizes, implementation=implementation)


def _pk(implementation: str | None) -> Callable[[Case], Forward]:
  return lambda case: pk_forward(case, implementation)


def lax_ragged_dot(lhs: jax.Array, rhs: jax.Array, sizes: jax.Array) -> jax.Array:
  """``jax.lax.ragged_dot`` summing in float32, the result in lhs's dtype."""
  return jax.lax.ragged_dot(lhs, rhs, sizes, preferred_element_type=jnp.float32).astype(lhs.dtype)


def _tokamax(implementation: str) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    del case
    tokamax = import_tokamax()
    return lambda lhs, rhs, sizes: tokamax.ragged_dot(lhs, rhs, sizes,
                                                      implementation=implementation)
  return make


def contenders() -> list[Contender]:
  """Ours (triton, mosaic, native, xla_grouped, xla, None), jax.lax.ragged_dot, Tokamax (mosaic,
  triton, xla)."""
  ours = [Contender(f"pk {impl}", OURS, arg_specs.OP, _pk(impl), impl)
          for impl in ("triton", "mosaic", "native", "xla_grouped", "xla")]
  ours.append(Contender("pk None", OURS, arg_specs.OP, _pk(None), None))
  return ours + [Contender("XLA lax", XLA_REF, arg_specs.OP, lambda case: lax_ragged_dot)] + [
      Contender(f"tokamax {impl}", TOKAMAX, arg_specs.OP, _tokamax(impl), impl)
      for impl in ("mosaic", "triton", "xla")]


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
    baselines=("XLA lax", "pk xla"),
    references=("XLA lax", "pk xla"),
)
"""ragged_dot's part of the kernel comparison."""
