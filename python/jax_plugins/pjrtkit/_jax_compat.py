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
