"""ctypes access to a PJRT plugin's FFI extension (``PJRT_Extension_Type_FFI``).

JAX hands ``initialize()`` the plugin's ``PJRT_Api`` as a PyCapsule (``"pjrt_c_api"``). This module
walks that table's extension chain to the FFI extension and calls its entry points, so Python
reaches the plugin only through the PJRT C API (no compiled extension module). The struct layouts
are PJRT C API 0.81's, unchanged through 0.117, the same ones ``xla_plugin/abi/ffi_extension.h``
declares for C++.
"""

from __future__ import annotations

import ctypes
import dataclasses
from typing import Any

PJRT_EXTENSION_TYPE_FFI = 5
"""``PJRT_Extension_Type_FFI`` in pjrt_c_api.h's ``PJRT_Extension_Type`` enum."""

_PJRT_API_CAPSULE_NAME = b"pjrt_c_api"

# Offsets in PJRT_Api: struct_size, extension_start, pjrt_api_version (24 bytes), then the slots.
_API_EXTENSION_START = 8
_API_ERROR_DESTROY = 40
_API_ERROR_MESSAGE = 48
_API_ERROR_GETCODE = 56


class _ExtensionBase(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
              ("next", ctypes.c_void_p)]


class _FfiExtension(ctypes.Structure):
  _fields_ = [("base", _ExtensionBase), ("type_register", ctypes.c_void_p),
              ("user_data_add", ctypes.c_void_p), ("register_handler", ctypes.c_void_p)]


class _TypeInfo(ctypes.Structure):
  _fields_ = [("deleter", ctypes.c_void_p), ("serialize", ctypes.c_void_p),
              ("deserialize", ctypes.c_void_p)]


class _TypeRegisterArgs(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("type_name", ctypes.c_char_p), ("type_name_size", ctypes.c_size_t),
              ("type_id", ctypes.c_int64), ("type_info", ctypes.POINTER(_TypeInfo))]


class _RegisterHandlerArgs(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("target_name", ctypes.c_char_p),
              ("target_name_size", ctypes.c_size_t), ("handler", ctypes.c_void_p),
              ("platform_name", ctypes.c_char_p), ("platform_name_size", ctypes.c_size_t),
              ("traits", ctypes.c_uint32)]


class _ErrorMessageArgs(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("error", ctypes.c_void_p), ("message", ctypes.c_void_p),
              ("message_size", ctypes.c_size_t)]


class _ErrorGetCodeArgs(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("error", ctypes.c_void_p), ("code", ctypes.c_int)]


class _ErrorDestroyArgs(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("error", ctypes.c_void_p)]


# Struct sizes as PJRT computes them (offset of the last field + its size; no tail padding).
TYPE_REGISTER_ARGS_SIZE = 48
REGISTER_HANDLER_ARGS_SIZE = 52
FFI_EXTENSION_SIZE = 48

_ENTRY = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
_VOID_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class PjrtError(RuntimeError):
  """An error returned by a PJRT entry point.

  Attributes:
    code: the ``PJRT_Error_Code`` (3 is INVALID_ARGUMENT, 6 ALREADY_EXISTS, 12 UNIMPLEMENTED).
  """

  def __init__(self, code: int, message: str):
    super().__init__(message)
    self.code = code


def capsule_pointer(capsule: Any) -> int:
  """Returns the pointer held by a PyCapsule (whatever its name).

  Raises:
    TypeError: when ``capsule`` is not a PyCapsule.
  """
  get_name = ctypes.pythonapi.PyCapsule_GetName
  get_name.restype = ctypes.c_char_p
  get_name.argtypes = [ctypes.py_object]
  get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
  get_pointer.restype = ctypes.c_void_p
  get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
  if type(capsule).__name__ != "PyCapsule":
    raise TypeError(f"expected a PyCapsule, got {type(capsule).__name__}")
  return get_pointer(capsule, get_name(capsule))


@dataclasses.dataclass(frozen=True)
class PjrtFfiExtension:
  """The FFI extension of one loaded PJRT plugin.

  Attributes:
    api: address of the plugin's ``PJRT_Api``.
    extension: address of its ``PJRT_FFI_Extension``.
  """

  api: int
  extension: int

  @classmethod
  def from_c_api(cls, c_api: Any) -> PjrtFfiExtension:
    """Finds the FFI extension of the plugin whose ``PJRT_Api`` capsule is ``c_api``.

    Raises:
      LookupError: when the plugin has no FFI extension of PJRT C API 0.81's size or more.
    """
    api = capsule_pointer(c_api) if not isinstance(c_api, int) else c_api
    node = find_extension(api, PJRT_EXTENSION_TYPE_FFI)
    if node is None:
      raise LookupError("the PJRT plugin has no FFI extension (PJRT_Extension_Type_FFI)")
    size = _ExtensionBase.from_address(node).struct_size
    if size < FFI_EXTENSION_SIZE:
      raise LookupError(f"the plugin's FFI extension is {size} bytes; pjrtkit needs "
                        f"{FFI_EXTENSION_SIZE} (PJRT C API 0.81)")
    return cls(api=api, extension=node)

  def register_handler(self, target_name: str, handler: int, platform_name: str,
                       traits: int = 0) -> None:
    """Registers the typed XLA FFI handler at address ``handler`` for ``target_name``.

    Raises:
      PjrtError: with the plugin's code and message when it refuses the registration.
    """
    name = target_name.encode()
    platform = platform_name.encode()
    args = _RegisterHandlerArgs(REGISTER_HANDLER_ARGS_SIZE, name, len(name), handler, platform,
                                len(platform), traits)
    ext = _FfiExtension.from_address(self.extension)
    self._check(_ENTRY(ext.register_handler)(ctypes.addressof(args)))

  def register_type(self, type_name: str, type_id: int = 0,
                    deleter: int | None = None) -> int:
    """Registers an FFI type; returns its id (assigned by the plugin when ``type_id`` is 0).

    Raises:
      PjrtError: with the plugin's code and message when it refuses the registration.
    """
    name = type_name.encode()
    info = _TypeInfo(deleter, None, None)
    args = _TypeRegisterArgs(TYPE_REGISTER_ARGS_SIZE, None, name, len(name), type_id,
                             ctypes.pointer(info))
    ext = _FfiExtension.from_address(self.extension)
    self._check(_ENTRY(ext.type_register)(ctypes.addressof(args)))
    return int(args.type_id)

  def _check(self, error: int | None) -> None:
    """Raises PjrtError for a non-null ``PJRT_Error*`` (and destroys it)."""
    check_error(self.api, error)


def find_extension(api: int, extension_type: int) -> int | None:
  """The address of the first extension of ``extension_type`` in the chain of ``PJRT_Api`` at
  ``api``, or None."""
  node = ctypes.c_void_p.from_address(api + _API_EXTENSION_START).value
  while node:
    base = _ExtensionBase.from_address(node)
    if base.type == extension_type:
      return node
    node = base.next
  return None


def check_error(api: int, error: int | None) -> None:
  """Raises PjrtError for a non-null ``PJRT_Error*`` of the plugin at ``api`` (and destroys it)."""
  if not error:
    return
  slot = lambda offset: ctypes.c_void_p.from_address(api + offset).value
  message = _ErrorMessageArgs(ctypes.sizeof(_ErrorMessageArgs), None, error, None, 0)
  _VOID_ENTRY(slot(_API_ERROR_MESSAGE))(ctypes.addressof(message))
  text = ctypes.string_at(message.message, message.message_size).decode(errors="replace")
  code = _ErrorGetCodeArgs(ctypes.sizeof(_ErrorGetCodeArgs), None, error, 0)
  _ENTRY(slot(_API_ERROR_GETCODE))(ctypes.addressof(code))
  _VOID_ENTRY(slot(_API_ERROR_DESTROY))(
      ctypes.addressof(_ErrorDestroyArgs(ctypes.sizeof(_ErrorDestroyArgs), None, error)))
  raise PjrtError(code.code, text)
