"""Measuring one case of the kernel comparison on one device: every contender compiled, checked
against the reference output, timed with `pjrtkit.kernels.benchmarking` in interleaved rounds.

Every contender of a case is compiled and checked first; then each round times every contender in
turn (`iterations` calls each), each round starting one contender later, so a clock or power drift
over the case falls on all of them alike rather than on whoever ran last. A contender's time is
the median of its round medians.

A contender that raises anywhere (build, trace, compile, run, timing) becomes a skip carrying the
exception text; the run goes on with the next one. The correctness guard compares each contender's
output (and, for fwd+bwd, every input gradient) with the reference contender's (the op's
``references``: cuDNN for attention where it runs, the plain jnp layer norm for layer norm): max |got - want|
relative to max(1, max |want|), against the bfloat16 tolerances of `pjrtkit.kernels.testing`
(2e-2 forward, 1.25e-1 gradients). A contender over the tolerance is a mismatch and is never
marked best.
"""

from __future__ import annotations

import dataclasses
import statistics
import traceback
from typing import Any, Sequence

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels import testing
from tools.bench import compare_cases
from tools.bench import compare_contenders as cc
from tools.bench.compare_cases import Case

OK, SKIP = "ok", "skip"
TOLERANCE_FWD = testing.TOLERANCES[("bfloat16", "fwd")]
TOLERANCE_GRAD = testing.TOLERANCES[("bfloat16", "grad")]


@dataclasses.dataclass(frozen=True)
class Result:
  """One contender on one case and platform.

  Attributes:
    case: the case id; contender, group: who ran.
    status: ``ok`` or ``skip``.
    ms: median time (ms) of the timed iterations; times_ms: every iteration.
    throughput: TFLOP/s or TB/s at `ms` (`compare_cases` conventions).
    method: the timing method (``cupti`` on NVIDIA GPUs).
    compile_ms: lowering + compile time.
    reason: a skip's exception text; trace: the last lines of its traceback.
    chosen: for pjrtkit's implementation=None, the implementation each phase took.
    reference: whose output the check compared with (None: this is the reference, or none ran).
    errors: per output (``out``, ``grad0``...) the relative error against the reference.
    check: ``ok``, ``reference``, ``mismatch`` or ``unchecked``.
  """

  case: str
  contender: str
  group: str
  status: str
  ms: float | None = None
  times_ms: tuple[float, ...] = ()
  throughput: float | None = None
  method: str | None = None
  compile_ms: float | None = None
  reason: str | None = None
  trace: str | None = None
  chosen: str | None = None
  reference: str | None = None
  errors: tuple[tuple[str, float], ...] = ()
  check: str = "unchecked"


def relative_errors(got: Any, want: Any) -> list[tuple[str, float, float]]:
  """(name, error, tolerance) per output leaf: max |got - want| / max(1, max |want|); the first
  leaf is the forward output, the others gradients."""
  got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
  if len(got_leaves) != len(want_leaves):
    raise ValueError(f"{len(got_leaves)} outputs against the reference's {len(want_leaves)}")
  out = []
  for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
    if g.shape != w.shape:
      raise ValueError(f"output {i} has shape {g.shape}, the reference's {w.shape}")
    err = _error(g, jax.device_put(w, list(g.devices())[0]))
    out.append(("out" if i == 0 else f"grad{i - 1}", float(err),
                TOLERANCE_FWD if i == 0 else TOLERANCE_GRAD))
  return out


@jax.jit
def _error(got: jax.Array, want: jax.Array) -> jax.Array:
  g, w = got.astype(jnp.float32), want.astype(jnp.float32)
  return jnp.max(jnp.abs(g - w)) / jnp.maximum(1.0, jnp.max(jnp.abs(w)))


def check_of(errors: Sequence[tuple[str, float, float]]) -> str:
  """``ok`` when every error is within its tolerance (NaN is not), else ``mismatch``."""
  return "ok" if all(err <= tol for _, err, tol in errors) else "mismatch"


def _ordered(contenders: Sequence[cc.Contender], op: str) -> list[cc.Contender]:
  """Reference candidates first (in preference order), then the rest as listed."""
  refs = cc.references(op)
  first = sorted((c for c in contenders if c.name in refs), key=lambda c: refs.index(c.name))
  return first + [c for c in contenders if c.name not in refs]


def measure_case(case: Case, contenders: Sequence[cc.Contender], device: jax.Device,
                 iterations: int, method: str | None, log: Any = None,
                 rounds: int = 1) -> list[Result]:
  """Runs every contender of `case` on `device`: compiled and checked in turn, then timed in
  `rounds` interleaved rounds of `iterations` calls; results in the order of `contenders`."""
  if rounds < 1:
    raise ValueError(f"rounds must be at least 1, got {rounds}")
  results: dict[str, Result] = {}
  timed: dict[str, tuple[Any, list[Any]]] = {}  # name -> (runner, each round's data)
  reference: tuple[str, Any] | None = None
  with jax.default_device(device):
    args = cc.make_inputs(case)
    for contender in _ordered(contenders, case.op):
      result, outputs, runner = _prepare_one(case, contender, args, reference)
      if (reference is None and result.status == OK and
          contender.name in cc.references(case.op)):
        reference = (contender.name, outputs)
        result = dataclasses.replace(result, check="reference")
      del outputs
      results[contender.name] = result
      if runner is not None:
        timed[contender.name] = (runner, [])
    del reference
    names = list(timed)
    for r in range(rounds):
      # Each round starts one contender later, so no contender always times first.
      for name in names[r % len(names):] + names[:r % len(names)]:
        runner, datas = timed[name]
        if results[name].status != OK:
          continue
        try:
          datas.append(runner(args, method=method, iterations=iterations))
        except Exception as e:  # pylint: disable=broad-except
          results[name] = _skip(case, results[name].contender, results[name].group, e)
    for name, (_, datas) in timed.items():
      if results[name].status == OK:
        results[name] = _timed(case, results[name], datas)
    for contender in _ordered(contenders, case.op):
      if log is not None:
        log(_log_line(case, results[contender.name]))
    del args, timed
  jax.clear_caches()
  return [results[c.name] for c in contenders]


def _skip(case: Case, name: str, group: str, e: Exception) -> Result:
  trace = " / ".join(line.strip() for line in traceback.format_exc().strip().splitlines()[-5:-1])
  return Result(case.id, name, group, SKIP, reason=cc.reason_of(e), trace=trace)


def _prepare_one(case: Case, contender: cc.Contender, args: list[jax.Array],
                 reference: tuple[str, Any] | None) -> tuple[Result, Any, Any]:
  """One contender built, compiled, run once and checked: (its untimed Result, its outputs for
  the reference, its benchmark runner); outputs and runner are None when it is skipped."""
  try:
    fn = cc.phase_function(contender.make(case), case)
    runner = pk.benchmarking.compile_benchmark(jax.jit(fn), args)
    outputs = jax.block_until_ready(runner.compiled(*args))
    errors: list[tuple[str, float, float]] = []
    if reference is not None:
      errors = relative_errors(outputs, reference[1])
    chosen = None
    if contender.group == cc.OURS and contender.implementation is None:
      chosen = cc.automatic_choice(fn, args)
  except Exception as e:  # pylint: disable=broad-except
    return _skip(case, contender.name, contender.group, e), None, None
  return Result(
      case.id, contender.name, contender.group, OK,
      compile_ms=round(runner.lowering_time_ms + runner.compile_time_ms, 3), chosen=chosen,
      reference=reference[0] if reference else None,
      errors=tuple((n, e) for n, e, _ in errors),
      check=check_of(errors) if reference else "unchecked"), outputs, runner


def _timed(case: Case, result: Result, datas: Sequence[Any]) -> Result:
  """`result` with its time: the median of the rounds' medians; every call in `times_ms`."""
  ms = statistics.median(d.median_evaluation_time_ms for d in datas)
  return dataclasses.replace(
      result, ms=ms,
      times_ms=tuple(round(t, 6) for d in datas for t in d.evaluation_times_ms),
      throughput=compare_cases.throughput(case, ms),
      method=datas[0].method)


def _log_line(case: Case, r: Result) -> str:
  if r.status == SKIP:
    return f"{case.id} {r.contender}: skip: {r.reason}"
  chosen = f" [{r.chosen}]" if r.chosen else ""
  return (f"{case.id} {r.contender}: {r.ms:.4f} ms, {r.throughput:.2f} "
          f"{compare_cases.throughput_unit(case.op)}, check {r.check}{chosen}")
