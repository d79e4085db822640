"""Opts pjrtkit into the two JAX features JAX gates by platform name: donation, persistent cache.

JAX decides both by comparing the backend's platform name with a fixed set of names and offers
no public way for a PJRT plugin to join either set (checked for jax 0.11.2 and 0.12.0.1):

* buffer donation: ``jax._src.interpreters.mlir._platforms_with_donation``, a module-level
  list; for any other platform ``jit(donate_argnums=...)`` keeps the input alive and warns
  "Donation is not implemented for ('pjrtkit',)";
* the persistent compilation cache: ``jax._src.compilation_cache.is_cache_used`` compares
  ``backend.platform`` with a list local to the function (``["tpu", "gpu", "cpu", "neuron"]``);
  for any other platform nothing is read from or written to ``jax_compilation_cache_dir``.

pjrtkit supports both (XLA:CPU underneath aliases donated inputs to outputs; executables
serialize), so ``install()`` opts the platform in, only on the JAX releases it was checked
on (``TESTED_JAX_RANGE``) and only after checking that the private objects still have the
shape it relies on. Otherwise it changes nothing and logs a warning naming what is off and
why. ``//tests/jax:jax_compat_test`` fails when those internals change shape.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import re
from types import ModuleType
from typing import Any, Callable

logger = logging.getLogger(__name__)

def _tested_range() -> tuple[tuple[int, ...], tuple[int, ...]]:
  """``(oldest, newest)`` jax releases the plugin was built and tested for, from build_info.json.

  The range is written in one place, the jaxlib pins of ``requirements-jax-oldest.lock`` and
  ``requirements.lock``; the Bazel build records it in build_info.json next to the library.
  Without that record (an unbuilt checkout) the range is empty, so nothing is installed.
  """
  import json  # pylint: disable=g-import-not-at-top

  from jax_plugins.pjrtkit import _paths  # pylint: disable=g-import-not-at-top

  try:
    with open(_paths.build_info_path(), encoding="utf-8") as f:
      oldest, newest = json.load(f)["jax_tested"]
    return parse_version(oldest), parse_version(newest)
  except (OSError, KeyError, ValueError, TypeError) as exc:
    logger.warning("pjrtkit: cannot read the tested jax range from %s: %s",
                   _paths.build_info_path(), exc)
    return (1,), (0,)


CACHE_PLATFORMS_SOURCE = 'supported_platforms = ["tpu", "gpu", "cpu", "neuron"]'
"""The line of ``is_cache_used`` that gates the persistent cache by platform name."""

_WRAPPED_MARKER = "_pjrtkit_platforms"


@dataclasses.dataclass(frozen=True)
class CompatStatus:
  """What ``install()`` did.

  Attributes:
    jax_version: ``jax.__version__``.
    donation: whether ``jit(donate_argnums=...)`` donates on the platform.
    persistent_cache: whether the persistent compilation cache serves the platform.
    problems: why a feature is off (empty when both are on).
  """

  jax_version: str
  donation: bool
  persistent_cache: bool
  problems: tuple[str, ...] = ()


def parse_version(version: str) -> tuple[int, ...]:
  """The leading numeric components of a version (``'0.12.0.1'`` -> ``(0, 12, 0, 1)``).

  Raises:
    ValueError: when ``version`` does not start with ``major.minor.patch``.
  """
  match = re.match(r"\d+\.\d+\.\d+(?:\.\d+)*", version)
  if not match:
    raise ValueError(f"unrecognised JAX version {version!r}")
  return tuple(int(part) for part in match.group(0).split("."))


def format_version(version: tuple[int, ...]) -> str:
  """``(0, 12, 0, 1)`` -> ``'0.12.0.1'``."""
  return ".".join(map(str, version))


TESTED_JAX_RANGE: tuple[tuple[int, ...], tuple[int, ...]] = _tested_range()
"""JAX releases whose internals pjrtkit was checked against: [oldest, newest], both included."""


def is_tested_version(version: str) -> bool:
  """Whether ``version`` lies in ``TESTED_JAX_RANGE`` (both ends included)."""
  oldest, newest = TESTED_JAX_RANGE
  return oldest <= parse_version(version) <= newest


def tested_range_text() -> str:
  """``TESTED_JAX_RANGE`` for messages: ``'0.11.2 <= jax <= 0.12.0.1'``."""
  oldest, newest = TESTED_JAX_RANGE
  return f"{format_version(oldest)} <= jax <= {format_version(newest)}"


def donation_problem(mlir: ModuleType) -> str | None:
  """Why the donation list of this JAX cannot be extended, or None when it can."""
  platforms = getattr(mlir, "_platforms_with_donation", None)
  if not isinstance(platforms, list):
    return ("jax._src.interpreters.mlir._platforms_with_donation is "
            f"{type(platforms).__name__}, expected a list")
  if not all(isinstance(p, str) for p in platforms) or "cpu" not in platforms:
    return ("jax._src.interpreters.mlir._platforms_with_donation no longer lists platform "
            f"names: {platforms!r}")
  return None


def cache_problem(compilation_cache: ModuleType, compiler: ModuleType) -> str | None:
  """Why the persistent-cache gate of this JAX cannot be widened, or None when it can."""
  gate = getattr(compilation_cache, "is_cache_used", None)
  if gate is None or not callable(gate):
    return "jax._src.compilation_cache.is_cache_used is missing"
  original = getattr(gate, "__wrapped__", gate)
  if list(inspect.signature(original).parameters) != ["backend"]:
    return (f"jax._src.compilation_cache.is_cache_used{inspect.signature(original)} no longer "
            "takes (backend)")
  try:
    source = inspect.getsource(original)
  except (OSError, TypeError) as exc:
    return f"cannot read jax._src.compilation_cache.is_cache_used: {exc}"
  if CACHE_PLATFORMS_SOURCE not in source or "backend.platform in supported_platforms" not in source:
    return ("jax._src.compilation_cache.is_cache_used no longer gates on "
            f"'{CACHE_PLATFORMS_SOURCE}' / 'backend.platform in supported_platforms'")
  # compiler.py must look the gate up through the module at call time, or a wrapper is unseen.
  get_key = getattr(compiler, "_get_cache_key", None)
  if get_key is None or "is_cache_used" not in get_key.__code__.co_names:
    return "jax._src.compiler._get_cache_key no longer calls compilation_cache.is_cache_used"
  return None


class _CacheGateView:
  """A backend seen by JAX's cache gate under the platform name of an equivalent backend.

  ``is_cache_used`` reads ``backend.platform`` (compared with its list) and
  ``backend.supports_executable_serialization``; every other attribute comes from the real
  backend. pjrtkit's executables serialize like XLA:CPU's, so it passes the gate as ``cpu``.
  Only the gate sees this view: cache keys and (de)serialization use the real backend.
  """

  platform = "cpu"

  def __init__(self, backend: Any):
    self._backend = backend

  def __getattr__(self, name: str) -> Any:
    return getattr(self._backend, name)


def _wrap_cache_gate(gate: Callable[[Any], bool], platforms: frozenset[str]) -> Callable[[Any], bool]:
  """``is_cache_used`` that also lets the backends named in ``platforms`` through."""

  @functools.wraps(gate)
  def is_cache_used(backend: Any) -> bool:
    if getattr(backend, "platform", None) in platforms:
      return gate(_CacheGateView(backend))
    return gate(backend)

  setattr(is_cache_used, _WRAPPED_MARKER, platforms)
  return is_cache_used


def enable_donation(platform: str, mlir: ModuleType) -> None:
  """Adds ``platform`` to JAX's donation list (idempotent)."""
  if platform not in mlir._platforms_with_donation:  # pylint: disable=protected-access
    mlir._platforms_with_donation.append(platform)  # pylint: disable=protected-access


def enable_persistent_cache(platform: str, compilation_cache: ModuleType) -> None:
  """Lets ``platform`` through JAX's persistent-cache gate (idempotent)."""
  gate = compilation_cache.is_cache_used
  platforms = getattr(gate, _WRAPPED_MARKER, frozenset())
  if platform in platforms:
    return
  original = getattr(gate, "__wrapped__", gate)
  compilation_cache.is_cache_used = _wrap_cache_gate(original, platforms | {platform})


def install(platform: str) -> CompatStatus:
  """Opts ``platform`` into donation and the persistent compilation cache where safe.

  Never raises for a JAX it does not know: it logs a warning naming each feature left off.

  Args:
    platform: the PJRT plugin's platform name (``'pjrtkit'``).

  Returns:
    What was enabled, and why anything was not.
  """
  import jax  # pylint: disable=g-import-not-at-top
  from jax._src import compilation_cache  # pylint: disable=g-import-not-at-top
  from jax._src import compiler  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  version = jax.__version__
  if not is_tested_version(version):
    problem = (f"jax {version} is outside the range pjrtkit checked its JAX internals on "
               f"({tested_range_text()})")
    logger.warning("pjrtkit: buffer donation and the persistent compilation cache are off "
                   "for platform %r: %s", platform, problem)
    return CompatStatus(version, donation=False, persistent_cache=False, problems=(problem,))

  problems = []
  donation = donation_problem(mlir)
  if donation is None:
    enable_donation(platform, mlir)
  else:
    problems.append(donation)
    logger.warning("pjrtkit: buffer donation is off for platform %r: %s", platform, donation)
  cache = cache_problem(compilation_cache, compiler)
  if cache is None:
    enable_persistent_cache(platform, compilation_cache)
  else:
    problems.append(cache)
    logger.warning("pjrtkit: the persistent compilation cache is off for platform %r: %s",
                   platform, cache)
  return CompatStatus(version, donation=donation is None, persistent_cache=cache is None,
                      problems=tuple(problems))


# ---- Host callbacks (``_callback_rules``, ``_host_callbacks``) --------------------------------
#
# pjrtkit runs JAX's own cpu callback rules for its platform and binds each executable to the
# host callbacks JAX compiles it with. The private objects that relies on, each checked by
# ``callback_problems`` (and by //tests/jax:jax_internals_test):

CALLBACK_INTERNALS = (
    "jax._src.compiler.compile_or_get_cached(backend, computation, devices, compile_options, "
    "host_callbacks, ...): JAX's one compile entry point, called as a module attribute by "
    "jax._src.interpreters.pxla (pjrtkit wraps it to bind executables to their callbacks)",
    "jax._src.callback.emit_python_callback: reads the platform from "
    "ctx.module_context.platforms, emits xla_ffi{partition}_python_{device}_callback with the "
    "attribute `index` and adds the callable with module_context.add_host_callback",
    "the callback rules: mlir._lowerings[pure_callback_p / io_callback_p] and "
    "mlir._platform_specific_lowerings['cpu'][debug_callback_p / debug_print_p / check_p]",
    "ModuleContext.replace(platforms=, backend=) and LoweringRuleContext.replace(module_context=, "
    "platforms=) / tokens_out / set_tokens_out",
    "the callback impls (pure_callback_impl, io_callback_impl, debug_callback_p.impl) and their "
    "parameters: pjrtkit calls them to raise JAX's own \"cpu is not listed\" error",
    "jax._src.xla_bridge.local_devices(backend=) (is the cpu backend there?) and "
    "get_backend(platform) (the backend a lowering without one runs on)",
)
"""What pjrtkit's host callbacks read or extend in JAX, in words (see ``callback_problems``)."""

EMIT_PYTHON_CALLBACK_SOURCE = (
    "platform = ctx.module_context.platforms[0]",
    'call_target_name = f"xla_ffi{partition}_python_{device}_callback"',
    "ctx.module_context.add_host_callback(",
    "index = np.uint64(len(ctx.module_context.host_callbacks) - 1)",
    "(ctx, *operands, index=np.uint64(index))",
)
"""Lines of ``emit_python_callback`` that make its module what pjrtkit's handler runs."""


def _params(fn: Callable[..., Any]) -> list[str]:
  return list(inspect.signature(fn).parameters)


def callback_problems() -> list[str]:
  """Why pjrtkit's host callbacks cannot be installed on this JAX (empty when they can).

  Checks every object in ``CALLBACK_INTERNALS``; never raises.
  """
  try:
    return _callback_problems()
  except Exception as exc:  # pylint: disable=broad-except  (a fence must not break initialize)
    return [f"checking JAX's callback internals failed: {type(exc).__name__}: {exc}"]


def _callback_problems() -> list[str]:
  import jax  # pylint: disable=g-import-not-at-top
  from jax._src import callback as cb  # pylint: disable=g-import-not-at-top
  from jax._src import checkify  # pylint: disable=g-import-not-at-top
  from jax._src import compiler  # pylint: disable=g-import-not-at-top
  from jax._src import debugging  # pylint: disable=g-import-not-at-top
  from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import pxla  # pylint: disable=g-import-not-at-top

  problems = []
  if not is_tested_version(jax.__version__):
    first, end = TESTED_JAX_RANGE
    problems.append(f"jax {jax.__version__} is outside the range pjrtkit checked its callback "
                    f"internals on ({'.'.join(map(str, first))} <= jax < "
                    f"{'.'.join(map(str, end))})")

  compile_fn = getattr(compiler, "compile_or_get_cached", None)
  if compile_fn is None:
    problems.append("jax._src.compiler.compile_or_get_cached is gone")
  else:
    original = getattr(compile_fn, "__wrapped__", compile_fn)
    if _params(original)[:5] != ["backend", "computation", "devices", "compile_options",
                                 "host_callbacks"]:
      problems.append(f"jax._src.compiler.compile_or_get_cached{inspect.signature(original)} no "
                      "longer starts with (backend, computation, devices, compile_options, "
                      "host_callbacks)")
    if getattr(pxla, "compiler", None) is not compiler or "compiler.compile_or_get_cached(" \
        not in inspect.getsource(pxla):
      problems.append("jax._src.interpreters.pxla no longer calls "
                      "compiler.compile_or_get_cached through the module")

  emit = getattr(cb, "emit_python_callback", None)
  if emit is None:
    problems.append("jax._src.callback.emit_python_callback is gone")
  else:
    try:
      source = inspect.getsource(emit)
    except (OSError, TypeError) as exc:
      source = ""
      problems.append(f"cannot read jax._src.callback.emit_python_callback: {exc}")
    missing = [line for line in EMIT_PYTHON_CALLBACK_SOURCE if line not in source]
    if source and missing:
      problems.append(f"jax._src.callback.emit_python_callback no longer has {missing}")

  expected_rules = [
      ("pure_callback", mlir._lowerings, getattr(cb, "pure_callback_p", None),  # pylint: disable=protected-access
       getattr(cb, "pure_callback_lowering", None)),
      ("io_callback", mlir._lowerings, getattr(cb, "io_callback_p", None),  # pylint: disable=protected-access
       getattr(cb, "io_callback_lowering", None)),
  ]
  cpu_rules = getattr(mlir, "_platform_specific_lowerings", {}).get("cpu", {})
  expected_rules += [
      ("debug_callback", cpu_rules, getattr(debugging, "debug_callback_p", None),
       getattr(debugging, "debug_callback_lowering", None)),
      ("debug_print", cpu_rules, getattr(debugging, "debug_print_p", None),
       getattr(debugging, "debug_print_lowering_rule", None)),
      ("check", cpu_rules, getattr(checkify, "check_p", None),
       getattr(checkify, "check_lowering_rule", None)),
  ]
  for name, table, primitive, rule in expected_rules:
    entry = table.get(primitive) if primitive is not None else None
    if entry is None or rule is None or getattr(entry, "rule", None) is not rule:
      problems.append(f"JAX's lowering rule for {name} is no longer where pjrtkit reads it")

  module_fields = {f.name for f in dataclasses.fields(mlir.ModuleContext)}
  if not {"platforms", "backend", "host_callbacks"} <= module_fields or \
      not callable(getattr(mlir.ModuleContext, "replace", None)):
    problems.append("jax._src.interpreters.mlir.ModuleContext no longer has replace() and the "
                    "fields platforms / backend / host_callbacks")
  rule_fields = {f.name for f in dataclasses.fields(mlir.LoweringRuleContext)}
  if not {"module_context", "platforms", "tokens_out"} <= rule_fields or not callable(
      getattr(mlir.LoweringRuleContext, "set_tokens_out", None)):
    problems.append("jax._src.interpreters.mlir.LoweringRuleContext no longer has the fields "
                    "module_context / platforms / tokens_out and set_tokens_out()")

  impls = [("pure_callback_impl", getattr(cb, "pure_callback_impl", None),
            ["args", "result_avals", "callback", "sharding", "vmap_method"]),
           ("io_callback_impl", getattr(cb, "io_callback_impl", None),
            ["args", "result_avals", "callback", "sharding", "ordered"]),
           ("debug_callback_p.impl", getattr(getattr(debugging, "debug_callback_p", None),
                                             "impl", None),
            ["args", "callback", "effect", "partitioned"])]
  for name, impl, params in impls:
    if impl is None or sorted(_params(impl)) != sorted(params):
      problems.append(f"JAX's {name} no longer takes {params}")
  if getattr(debugging, "debug_effect", None) is None:
    problems.append("jax._src.debugging.debug_effect is gone")
  local_devices = getattr(xla_bridge, "local_devices", None)
  if local_devices is None or "backend" not in _params(local_devices) or not callable(
      getattr(xla_bridge, "get_backend", None)):
    problems.append("jax._src.xla_bridge no longer has local_devices(backend=) and "
                    "get_backend()")
  return problems
