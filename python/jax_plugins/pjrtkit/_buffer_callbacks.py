"""``jax.experimental.buffer_callback`` on platform ``pjrtkit``: the handler and its buffers.

JAX lowers ``buffer_callback`` through one rule that picks its custom-call target by platform
name (``cpu``: ``xla_buffer_python_cpu_callback``; the GPU names: ``..._gpu_callback``) and refuses
any other name. ``_callback_rules`` runs that rule for ``pjrtkit`` with the platforms read as
``cpu``, so the module holds ``xla_buffer_python_cpu_callback`` with the attribute ``index`` of
the wrapped callback among the module's host callbacks, exactly as on jaxlib's cpu backend, and
the executable is bound to its callbacks as for the other host callbacks (``_host_callbacks``).

jaxlib's own handler for that target is registered in jaxlib's registry only and reads callbacks
jaxlib attaches to executions of its own platforms, so pjrtkit registers ``HANDLER`` for the
target on ``pjrtkit``. It calls the function with what jaxlib's handler passes: an execution
context (``stage`` is ``ExecutionStage.EXECUTE``; ``stream``) and one buffer per operand (read
only) and per result (written in place by the function), with ``shape``, ``dtype``, ``ndim`` and
``writeable``:

* xla_cpu device (``HostBuffer``): XLA's host memory itself, through ``numpy.asarray`` /
  ``__array__`` and DLPack (``__dlpack__``, device ``kDLCPU``); ``stream`` raises jaxlib's
  "XLA FFI GPU context is not available".
* xla_gpu device (``DeviceBuffer``, ``GPU_HANDLER``): the device pointers, through
  ``__cuda_array_interface__`` (version 3); ``stream`` is the call's ``CUstream`` as an int, on
  which the function enqueues its work. XLA:GPU never records the call into a CUDA graph (the
  handler declares no traits).

A buffer is valid only while the function runs (as jaxlib's). 4- and 2-bit element types are
packed in XLA's buffers, which numpy cannot view in place: their buffers refuse ``__array__`` and
``__cuda_array_interface__``.
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any

import numpy as np

from jax_plugins.pjrtkit import _host_callbacks
from jax_plugins.pjrtkit import _xla_ffi

TARGET_NAME = "xla_buffer_python_cpu_callback"
"""The custom-call target JAX's cpu rule for ``buffer_callback`` emits."""

KDL_CPU = 1
"""DLPack's ``kDLCPU`` device type."""


class ExecutionContext:
  """What the function gets as ``ctx``: the stage, and the call's stream on the GPU device."""

  def __init__(self, stream: int | None):
    self._stream = stream

  @property
  def stage(self) -> Any:
    """``jax.experimental.buffer_callback.ExecutionStage.EXECUTE``: the handler runs only then."""
    from jax.experimental import buffer_callback  # pylint: disable=g-import-not-at-top

    return buffer_callback.ExecutionStage.EXECUTE

  @property
  def stream(self) -> int:
    """The ``CUstream`` (an int) of the call on the xla_gpu device.

    Raises:
      JaxRuntimeError: on the xla_cpu device, with jaxlib's words.
    """
    if self._stream is None:
      import jax  # pylint: disable=g-import-not-at-top

      raise jax.errors.JaxRuntimeError("XLA FFI GPU context is not available")
    return self._stream


class _Buffer:
  """An operand or result of the call: XLA's buffer as it is (shape, dtype, address)."""

  def __init__(self, buf: _xla_ffi.Buffer, dtype: np.dtype, shape: tuple[int, ...],
               writeable: bool):
    self._address = buf.data or 0
    self._dtype = dtype
    self._shape = shape
    self._writeable = writeable
    self._packed = _xla_ffi.PACKED_BITS.get(buf.dtype)

  @property
  def shape(self) -> tuple[int, ...]:
    """The buffer's dimensions."""
    return self._shape

  @property
  def dtype(self) -> np.dtype:
    """The buffer's numpy element type."""
    return self._dtype

  @property
  def ndim(self) -> int:
    """The number of dimensions."""
    return len(self._shape)

  def _check_unpacked(self) -> None:
    """Raises TypeError for 4- and 2-bit element types: XLA packs them, no view fits."""
    if self._packed is not None:
      raise TypeError(f"a {self._dtype} buffer holds {self._packed}-bit elements packed, which "
                      "numpy cannot view in place; pass it to buffer_callback as a wider type")

  @property
  def writeable(self) -> bool:
    """True for results (the function writes them), False for operands."""
    return self._writeable

  def __repr__(self) -> str:
    kind = "result" if self._writeable else "operand"
    return f"{type(self).__name__}({kind} {self._dtype}{list(self._shape)})"


class HostBuffer(_Buffer):
  """A buffer in host memory (the xla_cpu device), viewed in place by numpy and DLPack."""

  def _view(self) -> np.ndarray:
    self._check_unpacked()
    count = math.prod(self._shape)
    if count == 0:
      view = np.empty(self._shape, self._dtype)
    elif not self._address:
      raise RuntimeError(f"XLA passed no memory for {self!r}")
    else:
      memory = (ctypes.c_char * (count * self._dtype.itemsize)).from_address(self._address)
      view = np.frombuffer(memory, self._dtype).reshape(self._shape)
    view.flags.writeable = self._writeable
    return view

  def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    view = self._view()
    if dtype is not None and np.dtype(dtype) != view.dtype:
      if copy is False:
        raise ValueError(f"cannot view a {view.dtype} buffer as {np.dtype(dtype)} without a copy")
      return view.astype(dtype)
    return view.copy() if copy else view

  def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                 copy: bool | None = None) -> Any:
    del stream  # Host memory: nothing to order against.
    kwargs: dict[str, Any] = {}
    if max_version is not None:
      kwargs["max_version"] = max_version
    if dl_device is not None:
      kwargs["dl_device"] = dl_device
    if copy is not None:
      kwargs["copy"] = copy
    return self._view().__dlpack__(**kwargs)

  def __dlpack_device__(self) -> tuple[int, int]:
    return (KDL_CPU, 0)


class DeviceBuffer(_Buffer):
  """A buffer in GPU memory (the xla_gpu device), reachable through its device pointer."""

  @property
  def __cuda_array_interface__(self) -> dict[str, Any]:
    """CUDA Array Interface version 3 of the device memory (packed sub-byte types refused)."""
    self._check_unpacked()
    return {"shape": self._shape, "typestr": self._dtype.str,
            "data": (self._address, not self._writeable), "strides": None, "version": 3}

  def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    raise TypeError("a buffer_callback buffer of the xla_gpu device is in GPU memory: use its "
                    "__cuda_array_interface__ (with ctx.stream), not numpy")


def _buffers(frame: _xla_ffi.CallFrame, kind: type[_Buffer]) -> list[_Buffer]:
  """The call's operands (read only) then results (writeable), as ``kind``."""
  buffers: list[_Buffer] = []
  for pointers, size, writeable in ((frame.args.args, frame.args.size, False),
                                    (frame.rets.rets, frame.rets.size, True)):
    for i in range(size):
      buf, dtype, shape = _xla_ffi.buffer_view(pointers[i])
      if dtype is None:
        raise TypeError("buffer_callback takes no tokens")
      buffers.append(kind(buf, dtype, shape, writeable))
  return buffers


def _handle(frame_pointer: Any, device_memory: bool = False) -> int | None:
  """The XLA FFI handler: runs the bound function with the context and the call's buffers."""
  frame = frame_pointer.contents
  try:
    if _xla_ffi.fill_metadata(frame) or frame.stage != _xla_ffi.STAGE_EXECUTE:
      return None
    function = _host_callbacks.bound_callback(frame)
    if not callable(function):
      return function
    context = ExecutionContext(_xla_ffi.stream(frame) if device_memory else None)
    buffers = _buffers(frame, DeviceBuffer if device_memory else HostBuffer)
    _host_callbacks.BINDINGS.count_call()
    function(context, *buffers)  # JAX's wrapper returns () and checks the function returned None.
    return None
  except BaseException as e:  # pylint: disable=broad-except  (never unwind through C)
    return _host_callbacks.report_failure(frame, e)


HANDLER = _xla_ffi.HANDLER(_handle)
"""The ctypes function XLA:CPU calls; module-level so it lives as long as the process."""

GPU_HANDLER = _xla_ffi.HANDLER(functools.partial(_handle, device_memory=True))
"""The ctypes function XLA:GPU calls (device pointers, the call's stream)."""


def handler_capsule(device_memory: bool = False) -> Any:
  """``HANDLER`` (``GPU_HANDLER`` when ``device_memory``) as a PyCapsule for
  ``jax.ffi.register_ffi_target``."""
  from jax import ffi  # pylint: disable=g-import-not-at-top

  handler = GPU_HANDLER if device_memory else HANDLER
  return ffi.pycapsule(ctypes.cast(handler, ctypes.c_void_p).value)
