"""DLPack on platform ``pjrtkit``: ``jax.Array``s of pjrtkit handed to NumPy, PyTorch, CuPy, ...
zero-copy, and their tensors taken back.

jaxlib decides DLPack by platform id in C++ (``cpu``, ``cuda``, ``rocm``, ``oneapi``): for any
other platform ``__dlpack_device__`` raises "only supported for CPU, GPU and TPU pinned host" and
``buffer_to_dlpack_managed_tensor`` "cannot be used as a DLPack device". pjrtkit does the export
itself and lets JAX's own import reach its devices:

* export (``__dlpack__`` / ``__dlpack_device__`` of a pjrtkit array, the two methods of
  ``ArrayImpl`` wrapped; other platforms go straight to JAX's): the device is ``kDLCPU`` on the
  xla_cpu device, ``kDLCUDA`` with the GPU's ordinal on the xla_gpu device (``kDLCUDAHost`` for
  ``pinned_host`` memory). ``__dlpack__`` waits until the array is ready (so every consumer
  stream sees its data), and returns a legacy ``"dltensor"`` capsule (DLPack 0.8, which every
  consumer takes, whatever ``max_version`` it asks) over the buffer's own memory
  (``unsafe_buffer_pointer``) with the layout's strides. The capsule holds a reference to the
  array until the consumer calls the deleter, so the memory outlives the ``jax.Array`` object.
  A capsule nobody consumed is let go at the next export (or ``held_count()``) after the last
  reference to it went: the capsule has no destructor of its own, because a Python destructor
  runs while a consumer's exception may be in flight (a consumer that rejects a capsule drops
  it in mid-raise), and ctypes cannot keep that exception intact. As for every DLPack producer,
  the consumer must not write to it, and ``.delete()`` or donation of the array while a consumer
  uses it frees memory under that consumer. ``copy=True`` exports a copy made on the device;
  ``dl_device=(kDLCPU, 0)`` for a GPU array exports a host copy (refused with ``copy=False``);
* import: JAX's ``jnp.from_dlpack`` / ``jax.dlpack.from_dlpack`` looks the backend up by the
  producer's device type; ``kDLCUDA`` and ``kDLCUDAHost`` tensors are looked up under ``gpu``
  instead of ``cuda``, which is JAX's CUDA backend when there is one and otherwise pjrtkit's
  xla_gpu device (the ``gpu`` alias, ``_gpu_rules.alias_gpu``). JAX's C++ then makes the array a
  view of the tensor's memory (``PJRT_Client_CreateViewOfDeviceBuffer``, the CUDA plugin's own).
  ``kDLCPU`` tensors go to jaxlib's ``cpu``, as JAX decides; ``device=`` a pjrtkit device puts
  them there.

On the xla_gpu device ``__cuda_array_interface__`` (version 3) of a pjrtkit array is its
buffer's device memory, waited for (jaxlib's own refuses every platform id but its CUDA one:
"only defined for GPU buffers"), so CuPy and Numba take pjrtkit arrays zero-copy through it too.

JAX internals used (``_jax_internals.INTERNALS``, feature "dlpack"): ``array.ArrayImpl``'s
``__dlpack__`` / ``__dlpack_device__`` (wrapped; the undo restores them), its
``__cuda_array_interface__`` property (wrapped on the xla_gpu device) and
``dlpack._DL_DEVICE_TO_PLATFORM`` (two entries changed on the xla_gpu device).
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST = 1, 2, 3
"""``DLDeviceType`` values."""

CAPSULE_NAME = b"dltensor"
"""The name of an unconsumed legacy capsule (a consumer renames it ``used_dltensor``)."""

_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
"""numpy kind -> ``DLDataTypeCode`` (bfloat16, kind ``V`` in numpy, is ``kDLBfloat`` = 4)."""

FLOAT8_CODES = {"float8_e3m4": 7, "float8_e4m3": 8, "float8_e4m3b11fnuz": 9,
                "float8_e4m3fn": 10, "float8_e4m3fnuz": 11, "float8_e5m2": 12,
                "float8_e5m2fnuz": 13, "float8_e8m0fnu": 14}
"""``ml_dtypes`` float8 name -> ``DLDataTypeCode`` (DLPack 1.1's ``kDLFloat8_*``, 8 bits).
DLPack's sub-byte codes (float6, float4) are not exported: XLA keeps those types packed on
devices, which a DLPack tensor of one element per byte would not describe."""


class DLDevice(ctypes.Structure):
  _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
  _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
  _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
              ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
              ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
  pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER)]

def _capsule_api() -> Any:
  """The CPython capsule functions, as this module's own ctypes functions (``ctypes.pythonapi``'s
  are shared, and other modules set their argument types)."""
  api = ctypes.PyDLL(None)
  api.PyCapsule_New.restype = ctypes.py_object
  api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
  api.PyCapsule_IsValid.restype = ctypes.c_int
  api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
  return api


_API = _capsule_api()


def dl_data_type(dtype: np.dtype) -> DLDataType:
  """The DLPack type of ``dtype``.

  Raises:
    BufferError: for a type DLPack has no code for (sub-byte integers and floats).
  """
  dtype = np.dtype(dtype)
  if dtype.name == "bfloat16":
    return DLDataType(4, 16, 1)
  if dtype.name in FLOAT8_CODES:
    return DLDataType(FLOAT8_CODES[dtype.name], 8, 1)
  code = _CODES.get(dtype.kind)
  if code is None or dtype.itemsize * 8 > 255 or dtype.name.startswith(("int2", "int4", "uint2",
                                                                          "uint4", "float8_",
                                                                          "float6_", "float4_")):
    raise BufferError(f"pjrtkit: dtype {dtype.name} has no DLPack type; DLPack takes bool, "
                      "(u)int8-64, float16/32/64, bfloat16, complex64/128 and "
                      f"{', '.join(FLOAT8_CODES)}")
  return DLDataType(code, dtype.itemsize * 8, 1)


class _Exports:
  """The arrays whose memory a capsule or a consumer holds: manager_ctx -> holder. Thread-safe
  (deleters run on whatever thread the consumer frees its tensor on)."""

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._held: dict[int, Any] = {}
    self._next = 1

  def hold(self, holder: Any) -> int:
    with self._lock:
      key = self._next
      self._next += 1
      self._held[key] = holder
    return key

  def release(self, key: int) -> None:
    with self._lock:
      holder = self._held.pop(key, None)
    # Dropped outside the lock: the array it held may be a view whose own release runs now.
    del holder

  def sweep(self) -> None:
    """Lets go of the arrays of capsules that were dropped without being consumed."""
    with self._lock:
      holders = list(self._held.items())
    for key, holder in holders:
      capsule = holder.capsule
      if capsule is None:
        continue
      if not _API.PyCapsule_IsValid(capsule, CAPSULE_NAME):
        holder.capsule = None  # Consumed (renamed): its consumer calls the deleter.
      elif sys.getrefcount(capsule) <= 3:  # holder.capsule, `capsule`, the argument: abandoned.
        holder.capsule = None
        self.release(key)
    del holders

  def __len__(self) -> int:
    with self._lock:
      return len(self._held)


EXPORTS = _Exports()
"""Every exported array still held (by an unconsumed capsule or a consumer)."""


def held_count() -> int:
  """How many exported arrays are still held (after letting go of abandoned capsules; for tests
  and diagnostics)."""
  EXPORTS.sweep()
  return len(EXPORTS)


class _Holder:
  """One export: the array, the ctypes structures its capsule points into."""

  def __init__(self, array: Any, device: DLDevice, strides: list[int]):
    shape = tuple(int(d) for d in array.shape)
    self.array = array
    self.capsule: Any = None  # Until consumed (see _Exports.sweep).
    self.shape = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    self.strides = (ctypes.c_int64 * max(len(shape), 1))(*strides)
    self.managed = DLManagedTensor()
    tensor = self.managed.dl_tensor
    tensor.data = array.addressable_data(0).unsafe_buffer_pointer() if array.size else None
    tensor.device = device
    tensor.ndim = len(shape)
    tensor.dtype = dl_data_type(array.dtype)
    tensor.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
    tensor.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
    tensor.byte_offset = 0


def _delete(managed: Any) -> None:
  """The capsule's ``deleter``: releases the array it holds."""
  try:
    EXPORTS.release(int(managed.contents.manager_ctx or 0))
  except BaseException:  # pylint: disable=broad-except  (never unwind into the consumer's C)
    pass


DELETE = DELETER(_delete)
"""The ctypes function every capsule's ``deleter`` points to (lives as long as the process)."""


def element_strides(array: Any) -> list[int]:
  """The strides (in elements) of ``array``'s buffer, from its layout's major-to-minor order.

  Raises:
    BufferError: for a tiled layout, which DLPack cannot describe.
  """
  shape = [int(d) for d in array.shape]
  order = list(range(len(shape) - 1, -1, -1))  # minor-to-major, row-major by default
  layout = getattr(getattr(array, "format", None), "layout", None)
  if layout is not None:
    if getattr(layout, "tiling", None) or getattr(layout, "_tiling", None):
      raise BufferError(f"pjrtkit: the array's layout {layout} is tiled; DLPack takes dense "
                        "strided arrays only")
    major_to_minor = getattr(layout, "major_to_minor", None)
    if major_to_minor is not None and len(major_to_minor) == len(shape):
      order = list(reversed(major_to_minor))
  strides = [0] * len(shape)
  step = 1
  for dim in order:
    strides[dim] = step
    step *= shape[dim]
  return strides


def device_of(array: Any, gpu: bool) -> tuple[int, int]:
  """``(device type, ordinal)`` of a single-device pjrtkit ``array`` (``__dlpack_device__``)."""
  if len(array.sharding.device_set) != 1:
    raise BufferError("__dlpack__ only supported for unsharded arrays.")
  if not gpu:
    return KDL_CPU, 0
  device, = array.sharding.device_set
  if array.sharding.memory_kind == "pinned_host":
    return KDL_CUDA_HOST, int(device.local_hardware_id)
  if array.sharding.memory_kind == "unpinned_host":
    return KDL_CPU, 0
  return KDL_CUDA, int(device.local_hardware_id)


def export_capsule(array: Any, gpu: bool, dl_device: tuple[int, int] | None = None,
                   copy: bool | None = None) -> Any:
  """A ``"dltensor"`` capsule over single-device pjrtkit ``array``'s memory (``__dlpack__``).

  Raises:
    BufferError: for a sharded array, a dtype or layout DLPack cannot describe, or a
      ``dl_device`` that needs a copy with ``copy=False`` or that is not this device or the host.
  """
  device = device_of(array, gpu)
  if dl_device is not None and tuple(int(v) for v in dl_device) != device:
    wanted = tuple(int(v) for v in dl_device)
    if wanted[0] != KDL_CPU:
      accepted = f"{device}" + (" or (1, 0), the host" if device[0] != KDL_CPU else "")
      raise BufferError(f"pjrtkit: __dlpack__ cannot export an array on DLPack device {device} "
                        f"to {wanted}; accepted: {accepted}")
    if copy is False:
      raise BufferError(f"pjrtkit: exporting an array on DLPack device {device} to the host "
                        "(1, 0) needs a copy, and copy=False was given")
    return np.array(array, copy=True).__dlpack__()
  if copy:
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

    array = jnp.array(array, copy=True)
    device = device_of(array, gpu)  # The copy's memory, which need not be the original's.
  array.block_until_ready()
  EXPORTS.sweep()
  holder = _Holder(array, DLDevice(*device), element_strides(array))
  key = EXPORTS.hold(holder)
  holder.managed.manager_ctx = key
  holder.managed.deleter = DELETE
  try:
    capsule = _API.PyCapsule_New(ctypes.addressof(holder.managed), CAPSULE_NAME, None)
  except BaseException:
    EXPORTS.release(key)
    raise
  holder.capsule = capsule
  return capsule


def _wrap_dlpack(original: Callable[..., Any], platform: str, gpu: bool) -> Callable[..., Any]:
  def __dlpack__(self: Any, *, stream: Any = None, max_version: Any = None,  # noqa: N807
                 dl_device: Any = None, copy: bool | None = None) -> Any:
    if self.platform() != platform:
      return original(self, stream=stream, max_version=max_version, dl_device=dl_device,
                      copy=copy)
    del stream, max_version  # Ready before the capsule exists; the legacy capsule for all.
    return export_capsule(self, gpu, dl_device, copy)

  __dlpack__.__wrapped__ = original  # type: ignore[attr-defined]
  return __dlpack__


def _wrap_dlpack_device(original: Callable[..., Any], platform: str,
                        gpu: bool) -> Callable[..., Any]:
  def __dlpack_device__(self: Any) -> Any:  # noqa: N807
    if self.platform() != platform:
      return original(self)
    return device_of(self, gpu)  # Plain ints: equal to (and hashed as) JAX's DLDeviceType.

  __dlpack_device__.__wrapped__ = original  # type: ignore[attr-defined]
  return __dlpack_device__


_TYPESTR_DTYPES = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
     "float32", "float64", "complex64", "complex128"])
"""The dtypes an array-interface typestr names (ml_dtypes' float8 types also report kind "f",
but a typestr "<f1" would describe no float8 layout)."""


def _xla_type_name(name: str) -> str:
  """XLA's name of a NumPy dtype name that has no array-interface typestr ("bfloat16" -> "BF16",
  "float8_e4m3fn" -> "F8E4M3FN", "int4" -> "S4"), as jaxlib's own refusal names it."""
  if name == "bfloat16":
    return "BF16"
  for prefix, short in (("float", "F"), ("uint", "U"), ("int", "S")):
    if name.startswith(prefix):
      return short + name[len(prefix):].replace("_", "").upper()
  return name.upper()


def cuda_array_interface(array: Any) -> dict[str, Any]:
  """CUDA Array Interface (version 3) of single-device pjrtkit ``array`` in GPU memory: its
  buffer's own memory, ready (waited for before this returns, so there is no ``stream`` to
  synchronise with), the strides of its layout (None when row-major).

  Raises:
    ValueError: for a sharded array (as JAX).
    AttributeError: for an array in host memory (as jaxlib for a buffer off the GPU) or of a
      dtype the interface's typestr cannot name (bfloat16 and the float8 types have no numpy type
      character; sub-byte types are packed): ``hasattr`` is False, so a consumer that probes the
      interface falls back to another protocol (DLPack takes them).
  """
  if len(array.sharding.device_set) != 1:
    raise ValueError("__cuda_array_interface__() is supported only for unsharded arrays.")
  if array.sharding.memory_kind in ("pinned_host", "unpinned_host"):
    raise AttributeError(f"__cuda_array_interface__ is only defined for GPU memory; this array "
                         f"is in {array.sharding.memory_kind} memory (use __dlpack__)")
  dtype = np.dtype(array.dtype)
  if dtype.name not in _TYPESTR_DTYPES:
    raise AttributeError(f"__cuda_array_interface__ is not supported for "
                         f"{_xla_type_name(dtype.name)} buffers: no typestr for dtype "
                         f"{dtype.name}; accepted: bool, (u)int8-64, float16/32/64, "
                         "complex64/128 (use __dlpack__ for bfloat16 and float8)")
  shape = tuple(int(d) for d in array.shape)
  strides = tuple(s * dtype.itemsize for s in element_strides(array))
  row_major = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) * dtype.itemsize
                    for i in range(len(shape)))
  array.block_until_ready()
  pointer = array.addressable_data(0).unsafe_buffer_pointer() if array.size else 0
  return {"shape": shape, "typestr": dtype.str, "data": (pointer, False),
          "strides": None if strides == row_major else strides, "version": 3}


def _wrap_cuda_array_interface(original: property, platform: str) -> property:
  def get(self: Any) -> Any:
    if self.platform() != platform:
      return original.__get__(self)
    return cuda_array_interface(self)

  get.__wrapped__ = original  # type: ignore[attr-defined]
  return property(get, doc=original.__doc__)


def install(platform: str, gpu: bool) -> Callable[[], None]:
  """Wraps ``ArrayImpl.__dlpack__`` / ``__dlpack_device__`` for ``platform``'s arrays (on the
  GPU when ``gpu``) and, on the GPU, ``__cuda_array_interface__`` too and looks CUDA tensors up
  under ``gpu``; returns the undo."""
  from jax._src import array as jax_array  # pylint: disable=g-import-not-at-top
  from jax._src import dlpack  # pylint: disable=g-import-not-at-top

  cls = jax_array.ArrayImpl
  names = ("__dlpack__", "__dlpack_device__") + (("__cuda_array_interface__",) if gpu else ())
  before = {name: cls.__dict__[name] for name in names}
  table = dlpack._DL_DEVICE_TO_PLATFORM  # pylint: disable=protected-access
  entries = {k: table.get(k) for k in (KDL_CUDA, KDL_CUDA_HOST)}
  cls.__dlpack__ = _wrap_dlpack(before["__dlpack__"], platform, gpu)
  cls.__dlpack_device__ = _wrap_dlpack_device(before["__dlpack_device__"], platform, gpu)
  if gpu:
    cls.__cuda_array_interface__ = _wrap_cuda_array_interface(
        before["__cuda_array_interface__"], platform)
    for key in entries:
      table[key] = "gpu"

  def undo() -> None:
    for name, value in before.items():
      setattr(cls, name, value)
    for key, value in entries.items():
      if value is None:
        table.pop(key, None)
      else:
        table[key] = value

  return undo
