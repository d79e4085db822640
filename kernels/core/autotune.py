"""`autotune(f, *args)`: find every kernel call in f's lowered program, measure each call's
candidate (implementation, config) pairs on the current device, keep the fastest.

Calls are found through the markers in the StableHLO of ``jax.jit(f).lower(*args)`` (see
`markers`), not by running f's Python again, so calls inside ``jax.grad``, ``vmap``-free
``scan`` bodies or nested jits are found as lowered. Each phase is tuned on its own: the forward
with the call's arguments (timed as `Op.forward_output`, as calls that are not differentiated
run it; differentiated calls run `Op.forward` with the same config), the gradient with residuals
made by the "xla" forward and a random output cotangent. A call that asked for an
implementation is tuned over that implementation's configs; a call with
``implementation=None`` over every implementation that serves it.

Tokamax's options: a call phase that already has a choice (active `AutotuningResult`s, the shipped
``kernels/tuned/<device kind>.json``, or, for ``implementation=None`` while the autotune cache is
active, its entry) is left out unless ``ignore_cache=True``; ``all_implementations=True`` also
measures every other implementation that serves a call (``automatic = False`` ones included) and
adds each one's fastest as the choice of calls that name it; ``timeout`` bounds each call phase's
compiling; ``progress_bar`` prints a line per call phase on stderr; ``max_workers`` is
``compile_workers``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import math
import os
import sys
import time
from typing import Any, Callable

import jax
import numpy as np

from pjrtkit.kernels import benchmarking
from pjrtkit.kernels.core import autotune_cache
from pjrtkit.kernels.core import device as device_lib
from pjrtkit.kernels.core import markers
from pjrtkit.kernels.core import op as op_lib
from pjrtkit.kernels.core import tuned as tuned_lib
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.core.tuned import AutotuningResult, TunedChoice

_LOG = logging.getLogger("pjrtkit.kernels")


def find_kernel_calls(f: Callable[..., Any], *args: Any, **kwargs: Any
                      ) -> tuple[markers.KernelCall, ...]:
  """Every kernel call (phase, requested implementation, spec) in ``jax.jit(f)``'s lowering."""
  jitted = f if hasattr(f, "lower") else jax.jit(f)
  text = jitted.lower(*args, **kwargs).as_text(debug_info=True)
  return markers.find_calls(text)


def _phase_inputs(phase: str, spec: Spec, maker: op_lib.Op) -> tuple[list[Any], Any]:
  """The arrays a phase is timed with: the forward takes the call's example arguments; the
  gradient takes `maker`'s forward residuals (default config) and a random output cotangent
  (then the second item is the residuals' tree)."""
  args = maker.example_args(spec, seed=0)
  if phase == "fwd":
    return list(args), None
  out, residuals = jax.jit(lambda *a: maker.forward(a, spec, maker.default_config(spec)))(*args)
  rng = np.random.default_rng(1)
  dout = jax.numpy.asarray(rng.standard_normal(out.shape), out.dtype)
  leaves, tree = jax.tree.flatten(residuals)
  return leaves + [dout], tree


def _residual_maker(family: op_lib.Family, name: str) -> str:
  """Whose forward makes the residuals a gradient candidate `name` is timed with: "xla" (one set
  for every candidate) when the family has it, else the candidate's own implementation."""
  return "xla" if "xla" in family.implementations else name


def _phase_function(impl: op_lib.Op, phase: str, spec: Spec, config: Any,
                    tree: Any, with_residuals: bool = False) -> Callable[..., Any]:
  """A function of the phase's arrays (see `_phase_inputs`) running one phase of `impl`: the
  forward as a call that is not differentiated runs it (`Op.forward_output`), or with
  `with_residuals` as a differentiated call runs it (`Op.forward`: output and residuals)."""
  if phase == "fwd":
    if with_residuals:
      return lambda *a: impl.forward(a, spec, config)
    return lambda *a: impl.forward_output(a, spec, config)

  def bwd(*arrays: Any) -> Any:
    res = jax.tree.unflatten(tree, arrays[:-1])
    return impl.backward(res, arrays[-1], spec, config)

  return bwd


def _compile_all(lowered: list[Any], workers: int, timeout: float | None = None) -> list[Any]:
  """Compiles the lowered candidates (`_lower`'s results), `workers` at a time, keeping each
  one's `BenchmarkRunner` or exception, in order. Lowering stays on the caller's thread: it
  reads JAX's thread-local contexts (the default device, Pallas interpret mode). Compiling reads
  only JAX's global config (a ``with``-scoped setting such as ``jax.log_compiles()`` does not
  reach the workers); XLA and the Triton and Mosaic GPU compilers release the GIL. A runner's
  compile time is measured while other candidates compile beside it.

  With `timeout` (seconds), a candidate not compiled that long after compiling began is left
  out as a `TimeoutError`: those not started are cancelled, and a compile already running (it
  cannot be stopped) is waited for before this returns, so nothing compiles while candidates
  are timed. With one worker, compiles run on the caller's thread and those not started by the
  deadline are left out."""

  def attempt(item: Any) -> Any:
    if isinstance(item, Exception):
      return item
    lowered_fn, lowering_ms = item
    try:
      start = time.perf_counter()
      compiled = lowered_fn.compile()
      return benchmarking.BenchmarkRunner(compiled, lowering_ms,
                                          (time.perf_counter() - start) * 1e3)
    except Exception as e:  # pylint: disable=broad-except
      return e

  if workers <= 1 or len(lowered) <= 1:
    deadline = None if timeout is None else time.monotonic() + timeout
    return [TimeoutError(f"not compiled within timeout={timeout} s")
            if deadline is not None and time.monotonic() > deadline
            and not isinstance(item, Exception) else attempt(item) for item in lowered]
  pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(workers, len(lowered))))
  try:
    pending = [item if isinstance(item, Exception) else pool.submit(attempt, item)
               for item in lowered]
    deadline = None if timeout is None else time.monotonic() + timeout
    out = []
    for item in pending:
      if isinstance(item, Exception):
        out.append(item)
        continue
      left = None if deadline is None else max(0.0, deadline - time.monotonic())
      try:
        out.append(item.result(timeout=left))
      except concurrent.futures.TimeoutError:
        out.append(TimeoutError(f"not compiled within timeout={timeout} s"))
    return out
  finally:
    pool.shutdown(wait=True, cancel_futures=True)


def _lower(fn: Callable[..., Any], args: list[Any]) -> Any:
  """``(jax.jit(fn).lower(*args), milliseconds)``, or the exception it raised."""
  try:
    start = time.perf_counter()
    lowered = jax.jit(fn).lower(*args)
    return lowered, (time.perf_counter() - start) * 1e3
  except Exception as e:  # pylint: disable=broad-except
    return e


def _default_workers() -> int:
  """The CPUs this process may run on (affinity, not the machine's count), at most 8."""
  try:
    cpus = len(os.sched_getaffinity(0))
  except AttributeError:  # Not on Linux.
    cpus = os.cpu_count() or 1
  return max(1, min(8, cpus))


Candidate = tuple[str, tuple[tuple[str, Any], ...], float]
"""(implementation, config as sorted (field, value) pairs, median time in ms)."""
Check = Callable[[Any, Any], "str | None"]
"""(candidate's outputs, reference's outputs) -> why they disagree, None when they agree."""
Timer = Callable[[benchmarking.BenchmarkRunner, list[Any], str, str, Any, int, "str | None"],
                 float]
"""(runner, arguments, phase, implementation, config, iterations, method) -> milliseconds."""


def time_runner(runner: benchmarking.BenchmarkRunner, args: list[Any], phase: str, name: str,
                config: Any, iterations: int, method: str | None) -> float:
  """The default `Timer`: the median of `runner`'s `benchmarking` run."""
  del phase, name, config
  return runner(args, method=method, iterations=iterations).median_evaluation_time_ms


def candidate_pairs(family: op_lib.Family, spec: Spec, names: list[str]) -> list[tuple[str, Any]]:
  """(implementation, config) for every config `autotuning_configs` gives each of `names`."""
  return [(name, config) for name in names
          for config in family.implementations[name].autotuning_configs(spec)]


def measure_phase(family: op_lib.Family, spec: Spec, phase: str, pairs: list[tuple[str, Any]],
                  device: device_lib.DeviceInfo, *, iterations: int = 5,
                  method: str | None = None, compile_workers: int | None = None,
                  with_residuals: bool = False, reference: str | None = None,
                  check: Check | None = None, timer: Timer = time_runner,
                  timeout: float | None = None) -> list[Candidate]:
  """Measures one phase of `spec` for every (implementation, config) of `pairs`.

  The candidates are lowered one by one on the caller's thread, compiled `compile_workers` at a
  time, then timed one at a time. With `reference` and `check`, each candidate's outputs (one
  call) are compared with those of `reference`'s default config on the same inputs first; a
  candidate `check` rejects is left out (logged), as is one that fails to compile or run.

  Args:
    family: the op family.
    spec: the call.
    phase: "fwd" or "bwd".
    pairs: the candidates.
    device: the current device (named in errors).
    iterations: timed calls per candidate (median taken).
    method: the `benchmarking` method; None picks the best for the device.
    compile_workers: threads compiling candidates (default: the CPUs, at most 8).
    with_residuals: time the forward as a differentiated call runs it (`Op.forward`).
    reference: the implementation whose outputs candidates are checked against.
    check: compares a candidate's outputs with the reference's.
    timer: measures one compiled candidate.
    timeout: seconds the candidates may take to compile (`_compile_all`); None: no limit.

  Returns:
    The candidates measured, fastest first (ties by implementation, then config).

  Raises:
    RuntimeError: when no candidate could be measured, or the phase's inputs could not be made.
  """
  if not pairs:
    raise RuntimeError(f"autotune: {spec.op} ({phase}) has no candidate on {device.describe()}")
  workers = _default_workers() if compile_workers is None else compile_workers
  inputs: dict[str, tuple[list[Any], Any]] = {}

  def inputs_for(name: str) -> tuple[list[Any], Any]:
    maker = _residual_maker(family, name)
    if maker not in inputs:
      try:
        inputs[maker] = _phase_inputs(phase, spec, family.implementations[maker])
      except Exception as e:  # pylint: disable=broad-except
        raise RuntimeError(f"autotune: the {phase} inputs of {spec.op} (from its {maker!r} "
                           f"forward) could not be made on {device.describe()}: {e}") from e
    return inputs[maker]

  lowered = []
  for name, config in pairs:
    fn_args, tree = inputs_for(name)
    lowered.append(_lower(_phase_function(family.implementations[name], phase, spec, config,
                                          tree, with_residuals), fn_args))
  want = None
  if reference is not None and check is not None:
    ref = family.implementations[reference]
    ref_args, ref_tree = inputs_for(reference)
    want = jax.jit(_phase_function(ref, phase, spec, ref.default_config(spec), ref_tree,
                                   with_residuals))(*ref_args)
  candidates = []
  for (name, config), runner in zip(pairs, _compile_all(lowered, workers, timeout)):
    fn_args = inputs_for(name)[0]
    try:
      if isinstance(runner, Exception):
        raise runner
      if want is not None:
        why = check(runner.compiled(*fn_args), want)
        if why is not None:
          _LOG.warning("autotune: %s %s %s %s left out: %s", spec.op, phase, name, config, why)
          continue
      t = timer(runner, fn_args, phase, name, config, iterations, method)
    except Exception as e:  # pylint: disable=broad-except
      _LOG.warning("autotune: %s %s %s %s failed: %s", spec.op, phase, name, config, e)
      continue
    candidates.append((name, op_lib.config_to_json(config), t))
  if not candidates:
    raise RuntimeError(f"autotune: no candidate of {spec.op} ({phase}) could be measured on "
                       f"{device.describe()}")
  candidates.sort(key=lambda c: (c[2], c[0], c[1]))
  return candidates


def _workers(compile_workers: int | None, max_workers: int | None) -> int:
  """The compile threads `autotune` uses: `compile_workers`, or Tokamax's `max_workers` for the
  same setting; the default when neither is given.

  Raises:
    ValueError: a value that is not a positive integer, or both given and different.
  """
  given = {name: value for name, value in (("compile_workers", compile_workers),
                                            ("max_workers", max_workers)) if value is not None}
  for name, value in given.items():
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
      raise ValueError(f"{name} must be a positive integer, got {value!r}")
  if len(set(given.values())) > 1:
    raise ValueError(f"compile_workers={compile_workers} and max_workers={max_workers} name the "
                     "same setting (max_workers is Tokamax's name); give one")
  return next(iter(given.values())) if given else _default_workers()


def _timeout(timeout: float | None) -> float | None:
  """`timeout` checked: None or a positive number of seconds (infinity taken as None).

  Raises:
    ValueError: for anything else.
  """
  if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                              or not timeout > 0):
    raise ValueError(f"timeout must be None or a positive number of seconds, got {timeout!r}")
  return None if timeout is None or math.isinf(timeout) else float(timeout)


def _has_choice(family: op_lib.Family, phase: str, requested: str, spec: Spec,
                device: device_lib.DeviceInfo, mode: str) -> bool:
  """Whether a call phase already has a choice it takes without autotuning: a tuned one (active
  results, then the shipped file) that fits it, or for ``implementation=None`` while the autotune
  cache is active its entry for `mode` ("fwd" or "fwd+bwd")."""
  found = tuned_lib.lookup(device.kind, spec.op, phase, requested, spec)
  if found is not None:
    if requested != markers.AUTO:
      if found.implementation == requested:
        return True
    else:
      op = family.implementations.get(found.implementation)
      if op is not None and op.automatic and op.unsupported_reason(spec, device) is None:
        return True
  if requested == markers.AUTO and autotune_cache.active():
    entry = autotune_cache.cached_entry(spec, mode, device)
    return entry is not None and phase in entry.choices
  return False


def _serving(family: op_lib.Family, spec: Spec, device: device_lib.DeviceInfo) -> list[str]:
  """Every implementation that serves `spec` on `device`, ``automatic = False`` ones included."""
  return [n for n, op in family.implementations.items()
          if op.unsupported_reason(spec, device) is None]


def _choice(spec: Spec, phase: str, requested: str, found: list[Candidate]) -> TunedChoice:
  """The TunedChoice of `requested` from its candidates (fastest first)."""
  best = found[0]
  return TunedChoice(spec.op, phase, requested, spec, best[0], best[1], round(best[2], 6),
                     tuple(found))


class _Progress:
  """One line per call phase on stderr (Tokamax's ``progress_bar``), or nothing."""

  def __init__(self, total: int, enabled: bool) -> None:
    self.total, self.enabled, self.done = total, enabled, 0
    self.start = time.perf_counter()

  def _print(self, text: str) -> None:
    if self.enabled:
      print(f"pk.autotune: {text}", file=sys.stderr, flush=True)

  def step(self, spec: Spec, phase: str, requested: str, candidates: int) -> None:
    """Announces the next call phase and its number of candidates."""
    self.done += 1
    self._print(f"[{self.done}/{self.total}] {spec.op} {phase} implementation={requested}: "
                f"{candidates} candidate{'' if candidates == 1 else 's'}")

  def finish(self, skipped: int) -> None:
    """The closing line: call phases tuned and left out, seconds taken."""
    left = (f"; {skipped} left out, already tuned or cached (ignore_cache=True measures them)"
            if skipped else "")
    self._print(f"{self.total} call phase{'' if self.total == 1 else 's'} tuned in "
                f"{time.perf_counter() - self.start:.1f} s{left}")


def autotune(f: Callable[..., Any], *args: Any, iterations: int = 5, method: str | None = None,
             compile_workers: int | None = None, ignore_cache: bool = False,
             all_implementations: bool = False, progress_bar: bool = True,
             timeout: float | None = 600.0, max_workers: int | None = None,
             **kwargs: Any) -> AutotuningResult:
  """Autotunes every kernel call in ``f(*args, **kwargs)`` on the current device.

  The candidates of a call are lowered one by one, compiled `compile_workers` at a time, then
  timed one at a time, so no two candidates share the device while they are measured.

  Args:
    f: a function or a jitted function (e.g. ``jax.jit(jax.grad(loss))``).
    *args: its arguments (arrays or ``jax.ShapeDtypeStruct``).
    iterations: timed calls per candidate (median taken).
    method: the `benchmarking` method; None picks the best for the device.
    compile_workers: threads compiling candidates (default: the CPUs this process may use, at
      most 8; 1 compiles one at a time).
    ignore_cache: Tokamax's option. False (default): a call phase that already has a choice is
      left out of the result (it keeps that choice): a tuned one of an active
      `AutotuningResult` or of the shipped ``kernels/tuned/<device kind>.json``, or, for
      ``implementation=None`` while `autotune_cache` is active, its cache entry (lowering `f`
      measures a missing one, as any call does). True: every call phase is measured, and `f`
      is lowered with the autotune cache off (so lowering measures nothing).
    all_implementations: Tokamax's option. True: each call is also measured with every other
      implementation that serves it on this device (``automatic = False`` ones included, which
      ``implementation=None`` never takes); the result adds, per implementation, its fastest
      config as the choice of calls that name it. A call's own choice still comes only from
      the implementations it may take.
    progress_bar: Tokamax's option: a line per call phase (candidates to measure) and a closing
      line on stderr; False prints nothing.
    timeout: Tokamax's option: seconds a call phase's candidates may take to compile, counted
      from the start of its compiling; a candidate not compiled by then is left out (logged;
      a compile already running is waited for before timing). None: no limit.
    max_workers: Tokamax's name for `compile_workers`.
    **kwargs: keyword arguments of f. The names above are autotune's own; to pass an argument
      of one of those names to f, bind it first (``functools.partial(f, timeout=...)``).

  Returns:
    An AutotuningResult for the current device kind, one TunedChoice per call and phase
    measured (and per other implementation with `all_implementations`).

  Raises:
    ValueError: when `compile_workers` or `max_workers` is not a positive integer (or both are
      given and differ), or `timeout` is not None or a positive number.
    RuntimeError: when no candidate of a call could be measured, or a gradient's inputs (the
      residuals of the "xla" forward, else of the candidate's own) could not be made.
  """
  workers = _workers(compile_workers, max_workers)
  timeout = _timeout(timeout)
  device = device_lib.current_device()
  lowering = autotune_cache.using(enabled=False) if ignore_cache else contextlib.nullcontext()
  with lowering:
    calls = markers.unique_specs(find_kernel_calls(f, *args, **kwargs))
  todo = calls
  if not ignore_cache:
    todo = [(phase, requested, spec) for phase, requested, spec in calls
            if not _has_choice(op_lib.family(spec.op), phase, requested, spec, device,
                               "fwd+bwd" if ("bwd", requested, spec) in calls else "fwd")]
  progress = _Progress(len(todo), bool(progress_bar))
  choices: dict[tuple[str, str, str, str], TunedChoice] = {}
  for phase, requested, spec in todo:
    family = op_lib.family(spec.op)
    own = family.supported(spec, device) if requested == markers.AUTO else [requested]
    names = _serving(family, spec, device) if all_implementations else own
    if all_implementations:
      names += [n for n in own if n not in names]
    pairs = candidate_pairs(family, spec, names)
    progress.step(spec, phase, requested, len(pairs))
    candidates = measure_phase(family, spec, phase, pairs, device, iterations=iterations,
                               method=method, compile_workers=workers, timeout=timeout)
    mine = [c for c in candidates if c[0] in own]
    if not mine:
      raise RuntimeError(f"autotune: no candidate of {spec.op} ({phase}) could be measured on "
                         f"{device.describe()}")
    found = [_choice(spec, phase, requested, mine)]
    if all_implementations:
      for name in names:
        theirs = [c for c in candidates if c[0] == name]
        if name != requested and theirs:
          found.append(_choice(spec, phase, name, theirs))
    for choice in found:
      choices.setdefault(choice.key(), choice)
  progress.finish(len(calls) - len(todo))
  return AutotuningResult(device.kind, tuple(choices.values()))
