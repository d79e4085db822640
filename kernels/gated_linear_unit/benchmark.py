"""gated_linear_unit in the kernel comparison (``python -m tools.bench.kernel_compare``): its
contenders and its FLOP count.

Contenders: pjrtkit.kernels' implementations (``triton``, ``mosaic``, ``xla`` and the automatic
choice ``None``), a plain jnp SwiGLU (one einsum, XLA's fusion; ratios are taken against it and the
correctness guard compares with it), and Tokamax's ``mosaic``, ``triton`` and ``xla``. Every one
takes ``(x, fused weights)`` with ``activation=jax.nn.silu``.

FLOPs: forward = 4 * rows * k * n (two products); forward+backward = 3x the forward.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.comparison import (FWD_BWD, OURS, TOKAMAX, XLA_REF, Case, Contender,
                                             Forward, OpBenchmark, import_tokamax)
from pjrtkit.kernels.gated_linear_unit import arg_specs
from pjrtkit.kernels.gated_linear_unit.api import gated_linear_unit

CONVENTION = "TFLOP/s: forward FLOPs = 4*rows*k*n (gate and up products); fwd+bwd = 3x forward"


def flops(case: Case) -> float:
  """FLOPs counted for a case."""
  rows, k, n = case.shape
  return 4.0 * rows * k * n * (3 if case.phase == FWD_BWD else 1)


def pk_forward(case: Case, implementation: str | None) -> Forward:
  """pjrtkit.kernels' SwiGLU with `implementation`."""
  del case
  return lambda x, w: gated_linear_unit(x, w, activation=jax.nn.silu,
                                        implementation=implementation)


def _pk(implementation: str | None) -> Callable[[Case], Forward]:
  return lambda case: pk_forward(case, implementation)


def jnp_swiglu(x: jax.Array, w: jax.Array) -> jax.Array:
  """SwiGLU in plain jnp: one einsum, silu and product in float32."""
  y = jnp.einsum("mk,kjn->mjn", x, w, preferred_element_type=jnp.float32)
  return (jax.nn.silu(y[:, 0]) * y[:, 1]).astype(x.dtype)


def _tokamax(implementation: str) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    del case
    tokamax = import_tokamax()
    return lambda x, w: tokamax.gated_linear_unit(x, w, activation=jax.nn.silu,
                                                  implementation=implementation)
  return make


def contenders() -> list[Contender]:
  """Ours (triton, mosaic, xla, None), plain jnp, Tokamax (mosaic, triton, xla)."""
  ours = [Contender(f"pk {impl}", OURS, arg_specs.OP, _pk(impl), impl)
          for impl in ("triton", "mosaic", "xla")]
  ours.append(Contender("pk None", OURS, arg_specs.OP, _pk(None), None))
  return ours + [Contender("XLA jnp", XLA_REF, arg_specs.OP, lambda case: jnp_swiglu)] + [
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
    baselines=("XLA jnp", "pk xla"),
    references=("XLA jnp", "pk xla"),
)
"""gated_linear_unit's part of the kernel comparison."""
