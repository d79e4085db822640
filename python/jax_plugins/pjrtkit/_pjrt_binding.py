"""ctypes access to pjrtkit's own PJRT extension: executable bindings, host buffer pool.

The plugin's extension chain holds, after the FFI extension, an extension of type
``PJRTKIT_EXTENSION_TYPE`` (ABI in ``xla_plugin/abi/pjrtkit_extension.h``) with one entry point,
``bind_executables``: while a thread's binding ``{FFI type id, data}`` is set, every executable
that thread compiles or deserializes passes that entry as FFI user data to each of its
executions. ``_host_callbacks`` sets one around JAX's compile so that its FFI handler knows which
executable (and so which Python functions) is running. Its second entry point,
``host_buffer_pool``, reports (and trims) the host buffer pools of the plugin's live clients
(``pjrtkit.host_buffer_pool_stats``, ``pjrtkit.trim_host_buffer_pool``).
"""

from __future__ import annotations

import ctypes
import dataclasses
from typing import Any, NamedTuple

from jax_plugins.pjrtkit import _pjrt_ffi

PJRTKIT_EXTENSION_TYPE = 0x706A6B74
"""``abi::kPjrtkitExtensionType`` ("pjkt")."""

PJRTKIT_EXTENSION_SIZE = 32
"""The extension's size with ``bind_executables`` only (older plugins)."""
PJRTKIT_EXTENSION_HOST_POOL_SIZE = 40
"""The extension's size with ``host_buffer_pool`` too."""
BIND_EXECUTABLES_ARGS_SIZE = 56
HOST_BUFFER_POOL_ARGS_SIZE = 88


class _PjrtkitExtension(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
              ("next", ctypes.c_void_p), ("bind_executables", ctypes.c_void_p),
              ("host_buffer_pool", ctypes.c_void_p)]


class HostBufferPoolArgs(ctypes.Structure):
  """``abi::HostBufferPoolArgs``: the in and out fields of one ``host_buffer_pool`` call."""

  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("client", ctypes.c_void_p), ("trim", ctypes.c_int64),
              ("trimmed_bytes", ctypes.c_size_t), ("held_bytes", ctypes.c_size_t),
              ("held_blocks", ctypes.c_size_t), ("in_use_bytes", ctypes.c_size_t),
              ("in_use_blocks", ctypes.c_size_t), ("limit_bytes", ctypes.c_size_t),
              ("clients", ctypes.c_size_t)]


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

  def host_buffer_pool(self, trim: bool) -> HostBufferPoolArgs:
    """Calls ``host_buffer_pool`` for every live client of the plugin (``trim``: free first).

    Raises:
      LookupError: when the plugin's extension predates ``host_buffer_pool``.
      _pjrt_ffi.PjrtError: when the plugin refuses the call.
    """
    extension = _PjrtkitExtension.from_address(self.extension)
    if extension.struct_size < PJRTKIT_EXTENSION_HOST_POOL_SIZE:
      raise LookupError(f"the plugin's pjrtkit extension is {extension.struct_size} bytes, "
                        f"without host_buffer_pool ({PJRTKIT_EXTENSION_HOST_POOL_SIZE} needed); "
                        "rebuild it")
    args = HostBufferPoolArgs(struct_size=HOST_BUFFER_POOL_ARGS_SIZE, trim=int(trim))
    _pjrt_ffi.check_error(self.api, _ENTRY(extension.host_buffer_pool)(ctypes.addressof(args)))
    return args
