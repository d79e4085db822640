"""`autotune(f, *args)`: find every kernel call in f's lowered program, measure each call's
candidate (implementation, config) pairs on the current device, keep the fastest.

Calls are found through the markers in the StableHLO of ``jax.jit(f).lower(*args)`` (see
`markers`), not by running f's Python again, so calls inside ``jax.grad``, ``vmap``-free
``scan`` bodies or nested jits are found as lowered. Each phase is tuned on its own: the forward
with the call's arguments, the gradient with residuals made by the "xla" forward and a random
output cotangent. A call that asked for an implementation is tuned over that implementation's
configs; a call with ``implementation=None`` over every implementation that serves it.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

import jax
import numpy as np

from pjrtkit.kernels import benchmarking
from pjrtkit.kernels.core import device as device_lib
from pjrtkit.kernels.core import markers
from pjrtkit.kernels.core import op as op_lib
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.core.tuned import AutotuningResult, TunedChoice

_LOG = logging.getLogger("pjrtkit.kernels")


def find_kernel_calls(f: Callable[..., Any], *args: Any, **kwargs: Any
                      ) -> tuple[markers.KernelCall, ...]:
  """Every kernel call (phase, requested implementation, spec) in ``jax.jit(f)``'s lowering."""
  jitted = f if hasattr(f, "lower") else jax.jit(f)
  text = jitted.lower(*args, **kwargs).as_text(debug_info=True)
  return markers.find_calls(text)


def _phase_function(impl: op_lib.Op, phase: str, spec: Spec, config: Any,
                    family: op_lib.Family) -> tuple[Callable[..., Any], list[Any]]:
  """A function of arrays timing one phase of `impl`, and its arguments."""
  args = spec.example_args(seed=0)
  if phase == "fwd":
    return (lambda *a: impl.forward(a, spec, config)[0]), list(args)
  maker = family.implementations.get("xla", impl)
  out, residuals = jax.jit(lambda *a: maker.forward(a, spec, maker.default_config(spec)))(*args)
  rng = np.random.default_rng(1)
  dout = jax.numpy.asarray(rng.standard_normal(out.shape), out.dtype)
  leaves, tree = jax.tree.flatten(residuals)

  def bwd(*arrays: Any) -> Any:
    res = jax.tree.unflatten(tree, arrays[:-1])
    return impl.backward(res, arrays[-1], spec, config)

  return bwd, leaves + [dout]


def _measure(fn: Callable[..., Any], args: list[Any], iterations: int,
             method: str | None) -> float:
  runner = benchmarking.compile_benchmark(jax.jit(fn), args)
  return runner(args, method=method, iterations=iterations).median_evaluation_time_ms


def autotune(f: Callable[..., Any], *args: Any, iterations: int = 5, method: str | None = None,
             **kwargs: Any) -> AutotuningResult:
  """Autotunes every kernel call in ``f(*args, **kwargs)`` on the current device.

  Args:
    f: a function or a jitted function (e.g. ``jax.jit(jax.grad(loss))``).
    *args: its arguments (arrays or ``jax.ShapeDtypeStruct``).
    iterations: timed calls per candidate (median taken).
    method: the `benchmarking` method; None picks the best for the device.
    **kwargs: keyword arguments of f.

  Returns:
    An AutotuningResult for the current device kind, one TunedChoice per call and phase.

  Raises:
    RuntimeError: when no candidate of a call could be measured.
  """
  device = device_lib.current_device()
  choices = []
  for phase, requested, spec in markers.unique_specs(find_kernel_calls(f, *args, **kwargs)):
    family = op_lib.family(spec.op)
    names = family.supported(spec, device) if requested == markers.AUTO else [requested]
    candidates = []
    for name in names:
      impl = family.implementations[name]
      for config in impl.autotuning_configs(spec):
        try:
          fn, fn_args = _phase_function(impl, phase, spec, config, family)
          t = _measure(fn, fn_args, iterations, method)
        except Exception as e:  # pylint: disable=broad-except
          _LOG.warning("autotune: %s %s %s %s failed: %s", spec.op, phase, name, config, e)
          continue
        candidates.append((name, op_lib.config_to_json(config), t))
    if not candidates:
      raise RuntimeError(f"autotune: no candidate of {spec.op} ({phase}) could be measured on "
                         f"{device.describe()}")
    candidates.sort(key=lambda c: (c[2], c[0], c[1]))
    best = candidates[0]
    choices.append(TunedChoice(spec.op, phase, requested, spec, best[0], best[1],
                               round(best[2], 6), tuple(candidates)))
  return AutotuningResult(device.kind, tuple(choices))
