"""ctypes declarations of the XLA FFI C ABI that a Python-implemented FFI handler needs.

From ``xla/ffi/api/c_api.h`` (XLA FFI API 0.x, shipped with jaxlib under ``jaxlib/include``): the
call frame XLA passes to a handler, its buffers and attributes, the metadata extension XLA uses
to ask a handler for its API version, and ``XLA_FFI_Error_Create``. Only stable, append-only
structs are declared; every struct starts with ``struct_size``.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

EXTENSION_METADATA = 1
"""``XLA_FFI_Extension_Metadata``: the call is a metadata query, not an execution."""

STAGE_EXECUTE = 3
"""``XLA_FFI_ExecutionStage_EXECUTE``."""

ATTR_SCALAR = 3
"""``XLA_FFI_AttrType_SCALAR``."""

DTYPE_TOKEN = 17
"""``XLA_FFI_DataType_TOKEN``: a token operand/result (no data)."""

DTYPE_S64 = 5
DTYPE_U64 = 9
"""``XLA_FFI_DataType_S64`` / ``U64``: the widths of an ``index`` attribute."""

ERROR_INVALID_ARGUMENT = 3
ERROR_NOT_FOUND = 5
ERROR_INTERNAL = 13


def _numpy_dtypes() -> dict[int, np.dtype]:
  import ml_dtypes  # pylint: disable=g-import-not-at-top

  return {
      1: np.dtype(np.bool_), 2: np.dtype(np.int8), 3: np.dtype(np.int16),
      4: np.dtype(np.int32), 5: np.dtype(np.int64), 6: np.dtype(np.uint8),
      7: np.dtype(np.uint16), 8: np.dtype(np.uint32), 9: np.dtype(np.uint64),
      10: np.dtype(np.float16), 11: np.dtype(np.float32), 12: np.dtype(np.float64),
      16: np.dtype(ml_dtypes.bfloat16), 15: np.dtype(np.complex64),
      18: np.dtype(np.complex128),
      # 8-bit floats: one byte per element, as in numpy.
      19: np.dtype(ml_dtypes.float8_e5m2), 20: np.dtype(ml_dtypes.float8_e4m3fn),
      23: np.dtype(ml_dtypes.float8_e4m3b11fnuz), 24: np.dtype(ml_dtypes.float8_e5m2fnuz),
      25: np.dtype(ml_dtypes.float8_e4m3fnuz), 28: np.dtype(ml_dtypes.float8_e4m3),
      29: np.dtype(ml_dtypes.float8_e3m4), 33: np.dtype(ml_dtypes.float8_e8m0fnu),
      # Sub-byte types: packed in XLA's buffers (PACKED_BITS), one byte per element in numpy.
      21: np.dtype(ml_dtypes.int4), 22: np.dtype(ml_dtypes.uint4),
      26: np.dtype(ml_dtypes.int2), 27: np.dtype(ml_dtypes.uint2),
      32: np.dtype(ml_dtypes.float4_e2m1fn),
  }


NUMPY_DTYPES = _numpy_dtypes()
"""``XLA_FFI_DataType`` -> numpy dtype, for the types a Python callback can exchange."""

PACKED_BITS = {21: 4, 22: 4, 26: 2, 27: 2, 32: 4}
"""Bits per element of the sub-byte types (S4, U4, S2, U2, F4E2M1FN). XLA:CPU passes them packed
in FFI buffers: element ``i`` in bits ``[(i % k) * bits, (i % k + 1) * bits)`` of byte ``i // k``
(``k = 8 // bits``, first element in the low-order bits), ``ceil(n * bits / 8)`` bytes in all.
numpy (ml_dtypes) keeps one element per byte, in its low-order bits."""


class ApiVersion(ctypes.Structure):
  """``XLA_FFI_Api_Version``."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("major_version", ctypes.c_int), ("minor_version", ctypes.c_int)]


class Api(ctypes.Structure):
  """The head of ``XLA_FFI_Api`` (the function table continues after ``error_create``)."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("api_version", ApiVersion), ("internal_api", ctypes.c_void_p),
              ("error_create", ctypes.c_void_p)]


class ExecutionContextGetArgs(ctypes.Structure):
  """``XLA_FFI_ExecutionContext_Get_Args`` (``XLA_FFI_InvokeContext_Get_Args`` since API 0.4)."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("ctx", ctypes.c_void_p), ("type_id", ctypes.POINTER(ctypes.c_int64)),
              ("data", ctypes.c_void_p)]


EXECUTION_CONTEXT_GET_ARGS_SIZE = 40  # offsetof(data) + sizeof(data).


class ErrorDestroyArgs(ctypes.Structure):
  """``XLA_FFI_Error_Destroy_Args``."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("error", ctypes.c_void_p)]


class StreamGetArgs(ctypes.Structure):
  """``XLA_FFI_Stream_Get_Args``: the platform stream of the call (a ``CUstream`` on XLA:GPU)."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("ctx", ctypes.c_void_p), ("stream", ctypes.c_void_p)]


STREAM_GET_ARGS_SIZE = 32  # offsetof(stream) + sizeof(stream).

# Function slots of XLA_FFI_Api after ``error_create`` (XLA FFI API 0.2 has the first 18).
_SLOT_ERROR_DESTROY = 2
_SLOT_STREAM_GET = 4
_SLOT_EXECUTION_CONTEXT_GET = 6


class ErrorCreateArgs(ctypes.Structure):
  """``XLA_FFI_Error_Create_Args``."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("message", ctypes.c_char_p), ("errc", ctypes.c_int)]


ERROR_CREATE_ARGS_SIZE = 28  # offsetof(errc) + sizeof(errc).


class InternalExtension(ctypes.Structure):
  """``XLA_FFI_InternalExtension``."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
              ("next", ctypes.c_void_p)]


class Metadata(ctypes.Structure):
  """``XLA_FFI_Metadata``."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("api_version", ApiVersion),
              ("traits", ctypes.c_uint32), ("state_type_id", ctypes.c_int64)]


class MetadataExtension(ctypes.Structure):
  """``XLA_FFI_Metadata_Extension``."""
  _fields_ = [("extension_base", InternalExtension), ("metadata", ctypes.POINTER(Metadata))]


class Buffer(ctypes.Structure):
  """``XLA_FFI_Buffer``: a dense, row-major (default layout) array."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("dtype", ctypes.c_int), ("data", ctypes.c_void_p), ("rank", ctypes.c_int64),
              ("dims", ctypes.POINTER(ctypes.c_int64))]


class ByteSpan(ctypes.Structure):
  """``XLA_FFI_ByteSpan``."""
  _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class Scalar(ctypes.Structure):
  """``XLA_FFI_Scalar``."""
  _fields_ = [("dtype", ctypes.c_int), ("value", ctypes.c_void_p)]


class Args(ctypes.Structure):
  """``XLA_FFI_Args`` (every type is BUFFER today)."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("size", ctypes.c_int64), ("types", ctypes.POINTER(ctypes.c_int)),
              ("args", ctypes.POINTER(ctypes.c_void_p))]


class Rets(ctypes.Structure):
  """``XLA_FFI_Rets``."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("size", ctypes.c_int64), ("types", ctypes.POINTER(ctypes.c_int)),
              ("rets", ctypes.POINTER(ctypes.c_void_p))]


class Attrs(ctypes.Structure):
  """``XLA_FFI_Attrs``."""
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("size", ctypes.c_int64), ("types", ctypes.POINTER(ctypes.c_int)),
              ("names", ctypes.POINTER(ctypes.POINTER(ByteSpan))),
              ("attrs", ctypes.POINTER(ctypes.c_void_p))]


class CallFrame(ctypes.Structure):
  """``XLA_FFI_CallFrame``."""
  _fields_ = [("struct_size", ctypes.c_size_t),
              ("extension_start", ctypes.POINTER(InternalExtension)),
              ("api", ctypes.POINTER(Api)), ("ctx", ctypes.c_void_p), ("stage", ctypes.c_int),
              ("args", Args), ("rets", Rets), ("attrs", Attrs), ("future", ctypes.c_void_p)]


HANDLER = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(CallFrame))
"""``XLA_FFI_Handler``: ``XLA_FFI_Error* (*)(XLA_FFI_CallFrame*)``."""


def fill_metadata(frame: CallFrame) -> bool:
  """Answers XLA's metadata query if ``frame`` is one; returns whether it was.

  The handler declares the framework's own FFI API version (it uses only the stable ABI above)
  and no traits.
  """
  if not frame.extension_start or frame.extension_start.contents.type != EXTENSION_METADATA:
    return False
  ext = ctypes.cast(frame.extension_start, ctypes.POINTER(MetadataExtension)).contents
  version = frame.api.contents.api_version
  metadata = ext.metadata.contents
  metadata.api_version = ApiVersion(ctypes.sizeof(ApiVersion), None, version.major_version,
                                    version.minor_version)
  metadata.traits = 0
  return True


def make_error(frame: CallFrame, code: int, message: str) -> int:
  """An ``XLA_FFI_Error*`` made by the framework (``XLA_FFI_Error_Create``)."""
  create = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(ErrorCreateArgs))(
      frame.api.contents.error_create)
  args = ErrorCreateArgs(ERROR_CREATE_ARGS_SIZE, None, message.encode(errors="replace"), code)
  return create(ctypes.byref(args))


_ENTRY = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
"""An XLA FFI API function: ``XLA_FFI_Error* (*)(Args*)``."""

_API_FUNCTIONS: dict[tuple[int, int], Any] = {}
"""(API table address, slot) -> callable; the framework's table never changes."""


def _api_function(frame: CallFrame, slot: int) -> Any:
  """Function ``slot`` (0 is ``XLA_FFI_Error_Create``) of the frame's API table, callable.

  Raises:
    RuntimeError: when the framework's table is too short to have it.
  """
  address = ctypes.addressof(frame.api.contents)
  function = _API_FUNCTIONS.get((address, slot))
  if function is None:
    api = frame.api.contents
    offset = Api.error_create.offset + slot * ctypes.sizeof(ctypes.c_void_p)
    if api.struct_size < offset + ctypes.sizeof(ctypes.c_void_p):
      raise RuntimeError(f"the framework's XLA FFI API table ({api.struct_size} bytes) has no "
                         f"function slot {slot}")
    function = _ENTRY(ctypes.c_void_p.from_address(address + offset).value)
    _API_FUNCTIONS[(address, slot)] = function
  return function


def user_data(frame: CallFrame, type_id: int) -> int | None:
  """The data of execute-context user data of FFI type ``type_id`` (as an address), or None when
  the execution has none (``XLA_FFI_ExecutionContext_Get``; its error is destroyed)."""
  if not frame.ctx:
    return None
  key = ctypes.c_int64(type_id)
  args = ExecutionContextGetArgs(EXECUTION_CONTEXT_GET_ARGS_SIZE, None, frame.ctx,
                                 ctypes.pointer(key), None)
  error = _api_function(frame, _SLOT_EXECUTION_CONTEXT_GET)(ctypes.addressof(args))
  if error:
    _api_function(frame, _SLOT_ERROR_DESTROY)(
        ctypes.addressof(ErrorDestroyArgs(ctypes.sizeof(ErrorDestroyArgs), None, error)))
    return None
  return args.data or None


def stream(frame: CallFrame) -> int:
  """The platform stream the call runs on (``XLA_FFI_Stream_Get``; on XLA:GPU a ``CUstream``).

  Raises:
    RuntimeError: when the framework has none for this call (XLA:CPU), with its message.
  """
  if not frame.ctx:
    raise RuntimeError("the FFI call has no execution context, so no stream")
  args = StreamGetArgs(STREAM_GET_ARGS_SIZE, None, frame.ctx, None)
  error = _api_function(frame, _SLOT_STREAM_GET)(ctypes.addressof(args))
  if error:
    _api_function(frame, _SLOT_ERROR_DESTROY)(
        ctypes.addressof(ErrorDestroyArgs(ctypes.sizeof(ErrorDestroyArgs), None, error)))
    raise RuntimeError("XLA_FFI_Stream_Get failed: this call runs on no device stream")
  if not args.stream:
    raise RuntimeError("XLA_FFI_Stream_Get returned no stream")
  return args.stream


def uint64_attribute(frame: CallFrame, name: str) -> int | None:
  """The value of scalar attribute ``name`` as an unsigned 64-bit integer, or None."""
  attrs = frame.attrs
  for i in range(attrs.size):
    span = attrs.names[i].contents
    if ctypes.string_at(span.ptr, span.len).decode() != name:
      continue
    if attrs.types[i] != ATTR_SCALAR:
      return None
    scalar = ctypes.cast(attrs.attrs[i], ctypes.POINTER(Scalar)).contents
    if scalar.dtype not in (DTYPE_U64, DTYPE_S64):
      return None  # Another width: not an index this handler wrote.
    return ctypes.c_uint64.from_address(scalar.value).value
  return None


def buffer_view(address: int) -> tuple[Buffer, np.dtype | None, tuple[int, ...]]:
  """The ``XLA_FFI_Buffer`` at ``address``, its numpy dtype (None for tokens) and its shape.

  Raises:
    TypeError: for a data type a Python callback cannot exchange (S1/U1, ...).
  """
  buf = Buffer.from_address(address)
  shape = tuple(buf.dims[i] for i in range(buf.rank))
  if buf.dtype == DTYPE_TOKEN:
    return buf, None, shape
  dtype = NUMPY_DTYPES.get(buf.dtype)
  if dtype is None:
    raise TypeError(f"XLA FFI data type {buf.dtype} is not supported by pjrtkit host callbacks")
  return buf, dtype, shape


def _packing(bits: int) -> tuple[int, np.ndarray, int]:
  """(elements per byte, the bit shift of each element in its byte, the element mask)."""
  per_byte = 8 // bits
  return per_byte, np.arange(per_byte, dtype=np.uint8) * np.uint8(bits), (1 << bits) - 1


def buffer_nbytes(buf: Buffer, dtype: np.dtype, shape: tuple[int, ...]) -> int:
  """How many bytes the buffer's data takes (sub-byte types packed, ``PACKED_BITS``)."""
  count = int(np.prod(shape, dtype=np.int64))
  if buf.dtype in PACKED_BITS:
    return -(-count // (8 // PACKED_BITS[buf.dtype]))
  return count * dtype.itemsize


def decode_array(raw: Any, buf: Buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
  """A read-only numpy array of ``dtype``/``shape`` from ``raw``, the buffer's bytes as XLA
  stores them (``buffer_nbytes`` of them, anything numpy reads as bytes); a copy, so ``raw`` may
  be reused. Sub-byte types are unpacked to one element per byte."""
  count = int(np.prod(shape, dtype=np.int64))
  if count == 0:
    array = np.zeros(shape, dtype)
  elif buf.dtype in PACKED_BITS:
    per_byte, shifts, mask = _packing(PACKED_BITS[buf.dtype])
    codes = ((np.frombuffer(raw, dtype=np.uint8)[:, None] >> shifts)
             & np.uint8(mask)).reshape(-1)[:count]
    array = codes.view(dtype).reshape(shape)
  else:
    array = np.frombuffer(raw, dtype=dtype, count=count).reshape(shape).copy()
  array.flags.writeable = False
  return array


def encode_array(buf: Buffer, value: np.ndarray) -> np.ndarray:
  """``value`` (already of the buffer's dtype and shape) as the bytes XLA stores: a contiguous
  array of ``buffer_nbytes`` bytes, row-major, sub-byte types packed."""
  data = np.ascontiguousarray(value)
  if data.size and buf.dtype in PACKED_BITS:
    per_byte, shifts, mask = _packing(PACKED_BITS[buf.dtype])
    codes = data.reshape(-1).view(np.uint8) & np.uint8(mask)
    codes = np.pad(codes, (0, -codes.size % per_byte)).reshape(-1, per_byte)
    data = np.bitwise_or.reduce(codes << shifts, axis=1).astype(np.uint8)
  return data


def read_array(buf: Buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
  """A read-only numpy copy of the contents of a buffer in host memory (XLA reuses the buffer
  after the call); sub-byte types are unpacked to one element per byte."""
  nbytes = buffer_nbytes(buf, dtype, shape)
  if nbytes == 0:
    return decode_array(b"", buf, dtype, shape)
  return decode_array((ctypes.c_char * nbytes).from_address(buf.data), buf, dtype, shape)


def write_array(buf: Buffer, value: np.ndarray) -> None:
  """Copies ``value`` (already of the buffer's dtype and shape) into a buffer in host memory,
  row-major; sub-byte types are packed."""
  data = encode_array(buf, value)
  if data.nbytes:
    ctypes.memmove(buf.data, data.ctypes.data, data.nbytes)
