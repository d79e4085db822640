"""triangle_multiplication in the kernel comparison (``python -m tools.bench.kernel_compare``):
its contenders and its FLOP count.

Contenders: pjrtkit.kernels' implementations (``composed``, ``xla`` and the automatic choice
``None``), the plain-JAX definition at the default precision (ratios are taken against it and the
correctness guard compares with it), and Tokamax's ``xla``. Every one takes the ten arrays.

FLOPs: forward = 2*n^2*(4*c*h + h*d + c*d) (the input projections and gates, the output
projection and gate) + 2*n^3*h (the triangle contraction); forward+backward = 3x the forward.
"""

from __future__ import annotations

from typing import Any, Callable

import jax

from pjrtkit.kernels.core.comparison import (FWD_BWD, OURS, TOKAMAX, XLA_REF, Case, Contender,
                                             Forward, OpBenchmark, import_tokamax)
from pjrtkit.kernels.triangle_multiplication import arg_specs, base
from pjrtkit.kernels.triangle_multiplication.api import triangle_multiplication

CONVENTION = ("TFLOP/s: forward FLOPs = 2*n^2*(4*c*h + h*d + c*d) + 2*n^3*h; "
              "fwd+bwd = 3x forward")


def flops(case: Case) -> float:
  """FLOPs counted for a case."""
  n, c, h, d = case.shape
  count = 2.0 * n * n * (4 * c * h + h * d + c * d) + 2.0 * n ** 3 * h
  return count * (3 if case.phase == FWD_BWD else 1)


def pk_forward(case: Case, implementation: str | None) -> Forward:
  """pjrtkit.kernels' update with `implementation`."""
  kind = case.triangle_type
  return lambda *a: triangle_multiplication(*a, triangle_type=kind,
                                            implementation=implementation)


def _pk(implementation: str | None) -> Callable[[Case], Forward]:
  return lambda case: pk_forward(case, implementation)


def _plain(case: Case) -> Forward:
  """The definition in plain JAX (jnp layer norms, matmuls at the default precision)."""

  def run(*args: Any) -> Any:
    spec = base.make_spec(args, case.triangle_type, None, 1e-6)
    return base.compute(args, spec, base.plain_layer_norm, base.plain_glu)

  return run


def _tokamax(case: Case) -> Forward:
  tokamax = import_tokamax()
  kind = case.triangle_type
  return lambda *a: tokamax.triangle_multiplication(*a, triangle_type=kind,
                                                    implementation="xla")


def contenders() -> list[Contender]:
  """Ours (composed, xla, None), plain JAX, Tokamax xla."""
  ours = [Contender(f"pk {impl}", OURS, arg_specs.OP, _pk(impl), impl)
          for impl in ("composed", "xla")]
  ours.append(Contender("pk None", OURS, arg_specs.OP, _pk(None), None))
  return ours + [Contender("XLA jnp", XLA_REF, arg_specs.OP, _plain),
                 Contender("tokamax xla", TOKAMAX, arg_specs.OP, _tokamax, "xla")]


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
"""triangle_multiplication's part of the kernel comparison."""
