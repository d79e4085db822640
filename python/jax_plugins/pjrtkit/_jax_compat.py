"""The supported JAX range, and the two JAX features pjrtkit joins by name: donation, the cache.

``TESTED_JAX_RANGE`` is the jax/jaxlib range pjrtkit is built and tested for, read from
build_info.json (written from the jaxlib pins of requirements-jax-oldest.lock and
requirements.lock, the one place the range is written). Outside it ``_integration`` installs
nothing.

JAX decides buffer donation and the persistent compilation cache by comparing the backend's
platform name with fixed sets of names and offers no public way for a PJRT plugin to join either
(checked for jax 0.11.2 and 0.12.0.1):

* donation: ``jax._src.interpreters.mlir._platforms_with_donation``, a module-level list; for any
  other platform ``jit(donate_argnums=...)`` keeps the input alive and warns "Donation is not
  implemented for ('pjrtkit',)";
* the persistent compilation cache: ``jax._src.compilation_cache.is_cache_used`` compares
  ``backend.platform`` with a list local to the function (``["tpu", "gpu", "cpu", "neuron"]``).

pjrtkit supports both (XLA:CPU underneath aliases donated inputs to outputs; executables
serialize), so ``_integration`` opts the platform in with ``enable_donation`` and
``enable_persistent_cache`` once ``_jax_internals`` found both objects in the expected shape.
"""

from __future__ import annotations

import functools
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


_WRAPPED_MARKER = "_pjrtkit_platforms"


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
