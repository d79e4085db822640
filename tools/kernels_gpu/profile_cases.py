"""Runs chosen pjrtkit.kernels phases once each, for Nsight Compute (tools/kernels_gpu/profile.sh).

  python -m tools.kernels_gpu.profile_cases A1:mosaic:fwd A4:triton:bwd L2:triton:fwd ...

Each target is ``CASE:IMPLEMENTATION:PHASE`` with CASE a comparison case id (an op folder's
``arg_specs.py``, found by `compare_cases`),
IMPLEMENTATION one of pjrtkit's (``mosaic``, ``triton``, ``xla``, ...) or, at attention cases,
``cudnn`` (`jax.nn.dot_product_attention`'s, the comparison's cuDNN contender), PHASE ``fwd``
(the forward alone) or ``bwd`` (the implementation's forward runs once outside, then only its
backward kernels run in the profiled function).
Every target runs twice: a warm-up (compile), then the run profilers should look at; the line
``target <name> run 2`` is printed before it.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

import jax

from pjrtkit.kernels.core import comparison
from tools.bench import compare_cases, compare_contenders


def contender_forward(case: compare_cases.Case, implementation: str) -> Callable[..., Any]:
  """The forward of `implementation` at `case`: ``cudnn`` is the comparison's cuDNN contender
  (attention only), anything else pjrtkit's implementation of that name."""
  if implementation != compare_contenders.CUDNN:
    return compare_contenders.pk_forward(case, implementation)
  cudnn = compare_contenders.contenders_for(case.op, [compare_contenders.CUDNN])
  if not cudnn:
    raise ValueError(f"implementation 'cudnn' is for attention cases, got {case.id} ({case.op})")
  return cudnn[0].make(case)


def target_function(case: compare_cases.Case, implementation: str, phase: str
                    ) -> tuple[Callable[..., Any], list[Any]]:
  """The jitted phase of `implementation` at `case`'s shape, and its arguments."""
  forward = contender_forward(case, implementation)
  arrays = compare_contenders.make_inputs(case)
  n_in = len(comparison.forward_inputs(case, arrays))
  if phase == "fwd":
    return jax.jit(forward), arrays[:n_in]
  if phase != "bwd":
    raise ValueError(f"phase must be 'fwd' or 'bwd', got {phase!r}")
  # The pullback is a pytree holding the forward's residuals: jit takes it as an argument, so
  # the profiled function runs only the backward kernels.
  _, pullback = jax.vjp(forward, *arrays[:n_in])
  return jax.jit(lambda pb, ct: pb(ct)), [pullback, arrays[n_in]]


def main(argv: Sequence[str]) -> int:
  """Runs every target twice, printing a marker before the second run."""
  cases = {c.id: c for c in compare_cases.select()}
  for target in argv:
    try:
      case_id, implementation, phase = target.split(":")
      case = cases[case_id.upper()]
    except (ValueError, KeyError):
      raise SystemExit(f"target must be CASE:IMPLEMENTATION:PHASE with CASE one of "
                       f"{', '.join(cases)}, got {target!r}") from None
    try:
      fn, args = target_function(case, implementation, phase)
    except ValueError as e:
      raise SystemExit(f"target {target!r}: {e}") from None
    jax.block_until_ready(fn(*args))
    print(f"target {target} run 2", flush=True)
    jax.block_until_ready(fn(*args))
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
