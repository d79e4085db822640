"""FFI targets and types for platform ``pjrtkit``: JAX's registrations reach the plugin.

``jax.ffi.register_ffi_target(name, fn, platform="pjrtkit")`` (and
``xla_client.register_custom_call_target``) queue registrations per platform until a handler for
that platform is installed; ``install`` installs one that forwards each registration to the
plugin's PJRT FFI extension (``_pjrt_ffi``), which keeps it process-wide and hands it to the
device (the reference device registers it with XLA:CPU, which runs the programs). FFI types
(``jax.ffi.register_ffi_type(..., platform="pjrtkit")``) go the same way.

Only typed FFI handlers (``api_version=1``) can be registered: the PJRT FFI extension has no
untyped custom-call path. A handler bundle (a dict of stages) may only name the ``execute`` stage.
"""

from __future__ import annotations

import ctypes
from typing import Any

from jax_plugins.pjrtkit import _pjrt_ffi

_TYPE_INFO_STRUCT_SIZE = 24
"""``XLA_FFI_TypeInfo_STRUCT_SIZE`` of the XLA FFI API 0.5 header (struct_size, ext, deleter)."""


def handler_address(fn: Any) -> int:
  """The ``XLA_FFI_Handler*`` of a registration's ``fn`` (a PyCapsule or a stage dict).

  Raises:
    ValueError: for a stage dict with stages other than ``execute``, or without it.
  """
  if isinstance(fn, dict):
    stages = set(fn)
    if stages != {"execute"}:
      raise ValueError(
          "pjrtkit registers FFI handlers through the PJRT FFI extension, which takes the "
          f"execute stage only; got stages {sorted(stages)}")
    fn = fn["execute"]
  return _pjrt_ffi.capsule_pointer(fn)


class CustomCallHandler:
  """What ``xla_client.register_custom_call_handler('pjrtkit', ...)`` calls per registration."""

  def __init__(self, extension: _pjrt_ffi.PjrtFfiExtension):
    self.extension = extension
    self.names: set[str] = set()  # The targets registered (``_cpu_targets`` defers to them).

  def __call__(self, name: str | bytes, fn: Any, xla_platform_name: str, api_version: int = 0,
               traits: Any = 0) -> None:
    """Registers ``fn`` for custom-call target ``name`` with the plugin (and records ``name``).

    Raises:
      ValueError: for an untyped (api_version 0) target.
      _pjrt_ffi.PjrtError: when the plugin refuses it.
    """
    target = name.decode() if isinstance(name, bytes) else str(name)
    if int(api_version) != 1:
      raise ValueError(
          f"pjrtkit can only register typed XLA FFI handlers (api_version=1); "
          f"'{target}' has api_version={api_version}")
    self.extension.register_handler(target, handler_address(fn), xla_platform_name,
                                    int(traits))
    self.names.add(target)


class CustomTypeHandler:
  """What ``xla_client.register_custom_type_handler('pjrtkit', ...)`` calls per FFI type."""

  def __init__(self, extension: _pjrt_ffi.PjrtFfiExtension):
    self._extension = extension

  def __call__(self, type_name: str | bytes, registration: Any) -> None:
    """Registers the type; writes the plugin's id into the caller's ``XLA_FFI_TypeId``.

    ``registration`` is a PyCapsule of an ``XLA_FFI_TypeId*`` or a dict with ``type_id`` (that
    capsule) and optionally ``type_info`` (a capsule of an ``XLA_FFI_TypeInfo*``).
    """
    name = type_name.decode() if isinstance(type_name, bytes) else str(type_name)
    info = None
    if isinstance(registration, dict):
      info = registration.get("type_info")
      registration = registration["type_id"]
    id_slot = ctypes.c_int64.from_address(_pjrt_ffi.capsule_pointer(registration))
    deleter = _type_info_deleter(_pjrt_ffi.capsule_pointer(info)) if info is not None else None
    id_slot.value = self._extension.register_type(name, id_slot.value, deleter)


def _type_info_deleter(address: int) -> int | None:
  """The deleter of an ``XLA_FFI_TypeInfo`` at ``address``.

  XLA FFI API 0.5 (jaxlib 0.12) lays it out as {struct_size, extension_start, deleter}; older
  headers as {deleter}. A struct size is never a valid function address, so the first word tells.
  """
  first = ctypes.c_size_t.from_address(address).value
  if first == _TYPE_INFO_STRUCT_SIZE:
    return ctypes.c_void_p.from_address(address + 16).value
  return ctypes.c_void_p.from_address(address).value


def install(c_api: Any, platform: str) -> CustomCallHandler:
  """Routes JAX's FFI registrations for ``platform`` to the plugin behind ``c_api``.

  Registrations already queued for ``platform`` are replayed by JAX at once.

  Returns:
    The handler JAX calls per registration: ``.extension`` is the plugin's FFI extension,
    ``.names`` the targets registered so far.
  """
  from jax._src.lib import xla_client  # pylint: disable=g-import-not-at-top

  extension = _pjrt_ffi.PjrtFfiExtension.from_c_api(c_api)
  handler = CustomCallHandler(extension)
  xla_client.register_custom_call_handler(platform, handler)
  if hasattr(xla_client, "register_custom_type_handler"):
    xla_client.register_custom_type_handler(platform, CustomTypeHandler(extension))
  return handler
