"""ctypes access to pjrtkit's own PJRT extension: executable bindings.

The plugin's extension chain holds, after the FFI extension, an extension of type
``PJRTKIT_EXTENSION_TYPE`` (ABI in ``xla_plugin/abi/pjrtkit_extension.h``) with one entry point,
``bind_executables``: while a thread's binding ``{FFI type id, data}`` is set, every executable
that thread compiles or deserializes passes that entry as FFI user data to each of its
executions. ``_host_callbacks`` sets one around JAX's compile so that its FFI handler knows which
executable (and so which Python functions) is running.
"""

from __future__ import annotations

import ctypes
import dataclasses
from typing import Any, NamedTuple

from jax_plugins.pjrtkit import _pjrt_ffi

PJRTKIT_EXTENSION_TYPE = 0x706A6B74
"""``abi::kPjrtkitExtensionType`` ("pjkt")."""

PJRTKIT_EXTENSION_SIZE = 32
BIND_EXECUTABLES_ARGS_SIZE = 56


class _PjrtkitExtension(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
              ("next", ctypes.c_void_p), ("bind_executables", ctypes.c_void_p)]


class _BindExecutablesArgs(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("type_id", ctypes.c_int64), ("data", ctypes.c_void_p),
              ("previous_type_id", ctypes.c_int64), ("previous_data", ctypes.c_void_p),
              ("previous_bound", ctypes.c_size_t)]


_ENTRY = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)


class Binding(NamedTuple):
  """A thread's binding and the executables loaded under it."""

  type_id: int  # 0: none.
  data: int
  bound: int


@dataclasses.dataclass(frozen=True)
class BindingExtension:
  """pjrtkit's extension of one loaded plugin.

  Attributes:
    api: address of the plugin's ``PJRT_Api``.
    extension: address of its pjrtkit extension.
  """

  api: int
  extension: int

  @classmethod
  def from_c_api(cls, c_api: Any) -> BindingExtension:
    """Finds the extension in the plugin whose ``PJRT_Api`` capsule (or address) is ``c_api``.

    Raises:
      LookupError: when the plugin has none (not pjrtkit, or an older build), or a smaller one.
    """
    api = _pjrt_ffi.capsule_pointer(c_api) if not isinstance(c_api, int) else c_api
    node = _pjrt_ffi.find_extension(api, PJRTKIT_EXTENSION_TYPE)
    if node is None:
      raise LookupError("the PJRT plugin has no pjrtkit extension (executable bindings); "
                        "rebuild it")
    size = _PjrtkitExtension.from_address(node).struct_size
    if size < PJRTKIT_EXTENSION_SIZE:
      raise LookupError(f"the plugin's pjrtkit extension is {size} bytes; this package needs "
                        f"{PJRTKIT_EXTENSION_SIZE}")
    return cls(api=api, extension=node)

  def bind(self, type_id: int, data: int) -> Binding:
    """Sets the calling thread's binding (``type_id`` 0 ends it); returns the one it replaced.

    Raises:
      _pjrt_ffi.PjrtError: when the plugin refuses the arguments.
    """
    args = _BindExecutablesArgs(BIND_EXECUTABLES_ARGS_SIZE, None, type_id, data or None, 0,
                                None, 0)
    entry = _PjrtkitExtension.from_address(self.extension).bind_executables
    _pjrt_ffi.check_error(self.api, _ENTRY(entry)(ctypes.addressof(args)))
    return Binding(int(args.previous_type_id), int(args.previous_data or 0),
                   int(args.previous_bound))
