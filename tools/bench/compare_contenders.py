"""The contenders of the GPU kernel comparison, found in the op folders (`compare_cases`), their
inputs and phase functions.

Every contender is a forward function of the case's arrays; `phase_function` turns it into what
is timed: the forward alone, or forward and backward through ``jax.vjp`` with a random output
cotangent (returns the output and every input's gradient). Whatever a contender raises while it
is built, traced, compiled or run is its skip reason (`reason_of`).
"""

from __future__ import annotations

from typing import Sequence

import jax

from pjrtkit import kernels as pk
from pjrtkit.kernels.core import op as op_lib
from pjrtkit.kernels.core.comparison import (CUDNN, GROUPS, JAX, OURS, TOKAMAX, XLA_REF, Case,
                                             Contender, Forward, phase_function, reason_of)
from tools.bench import compare_cases

__all__ = ["CUDNN", "GROUPS", "JAX", "OURS", "TOKAMAX", "XLA_REF", "Contender", "Forward",
           "automatic_choice", "baselines", "check_selection", "contenders_for", "make_inputs",
           "phase_function", "pk_forward", "reason_of", "references", "selector"]


def baselines(op: str) -> tuple[str, ...]:
  """Whom `op`'s ratios are taken against: the first of these that ran."""
  return compare_cases.benchmark_of(op).baselines


def references(op: str) -> tuple[str, ...]:
  """Whose output `op`'s correctness guard compares with: the first of these that ran."""
  return compare_cases.benchmark_of(op).references


def pk_forward(case: Case, implementation: str | None) -> Forward:
  """pjrtkit.kernels' op of `case` (the comparison's parameters) with `implementation`: the
  forward every "pk" contender times."""
  return compare_cases.benchmark_of(case.op).pk_forward(case, implementation)


def selector(name: str) -> str:
  """A contender's name as ``--contenders`` takes it on a command line: spaces as underscores
  (``pk_None``, ``tokamax_mosaic``); the name itself is accepted too."""
  return name.replace(" ", "_")


def check_selection(only: Sequence[str]) -> None:
  """Raises ValueError naming every entry of `only` that is neither a group nor a contender name
  (of any op), with the accepted values."""
  names = {c.name for b in compare_cases.op_benchmarks() for c in b.contenders()}
  accepted = set(GROUPS) | names | {selector(n) for n in names}
  unknown = [s for s in only if s not in accepted]
  if unknown:
    raise ValueError(f"--contenders: unknown {', '.join(map(repr, unknown))}; accepted: the "
                     f"groups {', '.join(GROUPS)} or the names "
                     f"{', '.join(sorted({selector(n) for n in names}))}")


def contenders_for(op: str, only: Sequence[str] = ()) -> list[Contender]:
  """The contenders of `op`, restricted to the groups or names (`selector` form or as named) in
  `only` (all when empty)."""
  every = compare_cases.benchmark_of(op).contenders()
  if not only:
    return every
  return [c for c in every if c.group in only or c.name in only or selector(c.name) in only]


def make_inputs(case: Case) -> list[jax.Array]:
  """The case's arrays on JAX's default device (its op's ``make_inputs``, fixed seed): the
  forward's inputs, plus the output cotangent for fwd+bwd."""
  return compare_cases.benchmark_of(case.op).make_inputs(case)


def automatic_choice(fn: Forward, args: Sequence[jax.Array]) -> str:
  """Which implementation each phase of pjrtkit's ``implementation=None`` calls in ``fn`` takes on
  the current device, e.g. ``fwd=triton (rule), bwd=triton (rule)``."""
  device = pk.current_device()
  parts = []
  for call in pk.find_kernel_calls(jax.jit(fn), *args):
    if call.requested != "auto":
      continue
    choice = op_lib.family(call.spec.op).choose(call.spec, None, call.phase, device)
    parts.append(f"{call.phase}={choice.op.implementation} ({choice.source})")
  return ", ".join(sorted(parts, key=lambda p: not p.startswith("fwd="))) or "no kernel call found"
