"""dot_product_attention in the kernel comparison (``python -m tools.bench.kernel_compare``):
its cases (the comparison's, A1-A10 and H1-H5, then the shape classes S1-S13 of issue 50, all of
``arg_specs``), its contenders and its FLOP count.

Contenders: pjrtkit.kernels' implementations (``mosaic``, ``triton``, ``xla_chunked``, ``xla``
and the automatic choice ``None``), cuDNN and XLA through ``jax.nn.dot_product_attention``, and
Tokamax's ``mosaic``, ``triton`` and ``xla``. Every one takes ``(q, k, v)`` with k and v of
``[B, S, K, D]``, ``H % K == 0`` (grouped-query cases). Ratios are taken against cuDNN, and the
correctness guard compares with cuDNN's output, where cuDNN runs.

FLOPs: forward = 4 * b * h * t * s * d (two matmuls of 2 * t * s * d per query head: h counts
query heads, GQA included; s the key length, the query's unless a case sets ``kv_seq``), halved
for causal; forward+backward = 3.5 x the forward count.
"""

from __future__ import annotations

from typing import Callable

import jax

from pjrtkit.kernels.core.comparison import (CUDNN, FWD_BWD, JAX, OURS, TOKAMAX, Case,
                                             Contender, Forward, OpBenchmark, import_tokamax)
from pjrtkit.kernels.dot_product_attention import arg_specs
from pjrtkit.kernels.dot_product_attention.api import dot_product_attention

BWD_FLOP_FACTOR = 3.5
"""forward+backward FLOPs / forward FLOPs."""
CONVENTION = ("TFLOP/s: forward FLOPs = 4*b*h*t*s*d, h = query heads (GQA too; halved for "
              "causal); fwd+bwd = 3.5x forward")
"""The throughput convention, as printed above each table."""


def flops(case: Case) -> float:
  """FLOPs counted for a case (module docstring: query heads, so a GQA case counts what the same
  shape without grouping would)."""
  b, t, h, d = case.shape
  s = getattr(case, "kv_seq", None) or t
  count = 4.0 * b * h * t * s * d
  if getattr(case, "causal", False):
    count /= 2
  if case.phase == FWD_BWD:
    count *= BWD_FLOP_FACTOR
  return count


def pk_forward(case: Case, implementation: str | None) -> Forward:
  """pjrtkit.kernels' attention of `case` with `implementation`: what every "pk" contender
  times."""
  causal = getattr(case, "causal", False)
  return lambda q, k, v: dot_product_attention(q, k, v, is_causal=causal,
                                               implementation=implementation)


def _pk(implementation: str | None) -> Callable[[Case], Forward]:
  return lambda case: pk_forward(case, implementation)


def _jax_nn(implementation: str) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    causal = getattr(case, "causal", False)
    return lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=causal,
                                                        implementation=implementation)
  return make


def _tokamax(implementation: str) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    tokamax = import_tokamax()
    causal = getattr(case, "causal", False)
    return lambda q, k, v: tokamax.dot_product_attention(q, k, v, is_causal=causal,
                                                         implementation=implementation)
  return make


def contenders() -> list[Contender]:
  """Ours (mosaic, triton, xla_chunked, xla, None), cuDNN and XLA via jax.nn, Tokamax."""
  ours = [Contender(f"pk {impl}", OURS, arg_specs.OP, _pk(impl), impl)
          for impl in ("mosaic", "triton", "xla_chunked", "xla")]
  ours.append(Contender("pk None", OURS, arg_specs.OP, _pk(None), None))
  return ours + [
      Contender("cuDNN", CUDNN, arg_specs.OP, _jax_nn("cudnn"), "cudnn"),
      Contender("jax.nn xla", JAX, arg_specs.OP, _jax_nn("xla"), "xla"),
  ] + [Contender(f"tokamax {impl}", TOKAMAX, arg_specs.OP, _tokamax(impl), impl)
       for impl in ("mosaic", "triton", "xla")]


BENCHMARK = OpBenchmark(
    name=arg_specs.OP,
    cases=arg_specs.CASES + arg_specs.SHAPE_CLASSES,
    quick_shapes=arg_specs.QUICK_SHAPES,
    unit="TFLOP/s",
    amount_key="flops",
    amount=flops,
    convention=CONVENTION,
    contenders=contenders,
    make_inputs=arg_specs.make_inputs,
    pk_forward=pk_forward,
    baselines=("cuDNN", "jax.nn xla", "pk xla"),
    references=("cuDNN", "jax.nn xla", "pk xla"),
    quick_of=arg_specs.quick_case,
)
"""dot_product_attention's part of the kernel comparison."""
