"""Typed FFI targets registered for ``cpu`` run on the devices that run on the host.

JAX's FFI tutorial, and libraries written for jaxlib's cpu, register their handlers with
``jax.ffi.register_ffi_target(name, fn, platform="cpu")``; their custom calls then failed on
pjrtkit with "No FFI handler registered". ``CpuTargets`` keeps every typed (``api_version=1``)
target registered for ``cpu`` (those queued before ``initialize()``, and later ones through a
wrapper of ``xla_client.register_custom_call_target``) and registers one for ``pjrtkit`` when a
program compiled for ``pjrtkit`` calls it (``registering_compiles``), unless ``pjrtkit`` has a
target of that name already: a registration for ``pjrtkit`` itself, made at any time before that
compile, wins (XLA's FFI registry cannot forget a handler, so cpu's are not registered eagerly).
Untyped targets stay cpu-only (the PJRT FFI extension takes typed ones), FFI types too (one
``XLA_FFI_TypeId`` cannot hold two platforms' ids).

Used by the xla_cpu device and by a device that compiles StableHLO itself (both run typed FFI
custom calls with host handlers). JAX internals used (``_jax_internals.INTERNALS``, feature "FFI
registrations"): ``xla_client.register_custom_call_target`` (wrapped; ``jax.ffi`` calls it as a
module attribute), the queue of registrations waiting for a platform's handler,
``xla_client._custom_callback``, and ``compiler.compile_or_get_cached`` (wrapped, as for
``_program_checks``).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from jax_plugins.pjrtkit import _program_checks

logger = logging.getLogger(__name__)

HOST = "Host"
"""XLA's name of the ``cpu`` platform, under which ``xla_client`` keeps cpu registrations."""


def _text(name: str | bytes) -> str:
  return name.decode() if isinstance(name, bytes) else str(name)


class CpuTargets:
  """The typed targets registered for ``cpu`` that ``platform`` does not have yet.

  Args:
    platform: pjrtkit's platform name.
    registered: the names ``platform`` has (``_ffi.CustomCallHandler.names``, kept current).
  """

  def __init__(self, platform: str, registered: set[str]):
    self.platform = platform
    self._registered = registered
    self._pending: dict[str, tuple[Any, Any]] = {}
    self._lock = threading.Lock()

  def add(self, name: str | bytes, fn: Any, api_version: int, traits: Any) -> None:
    """Records a registration for ``cpu`` (untyped ones are left to cpu)."""
    if int(api_version) == 1:
      with self._lock:
        self._pending[_text(name)] = (fn, traits)

  def pending(self) -> list[str]:
    """The recorded names ``platform`` has no target for, sorted."""
    with self._lock:
      return sorted(n for n in self._pending if n not in self._registered)

  def register_called(self, text: str) -> list[str]:
    """Registers for ``platform`` each pending target that MLIR ``text`` calls; returns their
    names. One the plugin refuses is logged as a warning (the compile then names it)."""
    from jax._src.lib import xla_client  # pylint: disable=g-import-not-at-top

    done = []
    with self._lock:
      for name in sorted(self._pending):
        if name in self._registered or not _program_checks.calls_target(text, name):
          continue
        fn, traits = self._pending.pop(name)
        try:
          xla_client.register_custom_call_target(name, fn, self.platform, 1, traits)
          done.append(name)
        except Exception as exc:  # pylint: disable=broad-except  (cpu's registration stands)
          logger.warning("pjrtkit: the FFI target %r registered for cpu could not be registered "
                         "for %s: %s", name, self.platform, exc)
    return done

  def follow(self) -> Callable[[], None]:
    """Wraps ``xla_client.register_custom_call_target`` to record cpu registrations, then
    records those queued for cpu; returns the undo (JAX's function back)."""
    from jax._src.lib import xla_client  # pylint: disable=g-import-not-at-top

    original = xla_client.register_custom_call_target
    is_host = lambda name: xla_client.xla_platform_names.get(name, name) == HOST

    @functools.wraps(original)
    def register_custom_call_target(name: Any, fn: Any, platform: str = "cpu",
                                    api_version: int = 0,
                                    traits: Any = xla_client.CustomCallTargetTraits.DEFAULT
                                    ) -> None:
      original(name, fn, platform, api_version, traits)
      if is_host(platform):
        self.add(name, fn, api_version, traits)

    xla_client.register_custom_call_target = register_custom_call_target
    queued = xla_client._custom_callback.get(HOST, ())  # pylint: disable=protected-access
    for name, fn, api_version, traits in list(queued):
      self.add(name, fn, api_version, traits)

    def undo() -> None:
      xla_client.register_custom_call_target = original

    return undo

  def registering_compiles(self, compile_or_get_cached: Callable[..., Any]
                           ) -> Callable[..., Any]:
    """``compiler.compile_or_get_cached`` that first registers the pending targets a program for
    ``platform`` calls (reading its text only while some are pending)."""

    @functools.wraps(compile_or_get_cached)
    def wrapper(backend: Any, computation: Any, *args: Any, **kwargs: Any) -> Any:
      if getattr(backend, "platform", None) == self.platform and self.pending():
        self.register_called(
            computation.operation.get_asm(enable_debug_info=False, large_elements_limit=16))
      return compile_or_get_cached(backend, computation, *args, **kwargs)

    return wrapper
