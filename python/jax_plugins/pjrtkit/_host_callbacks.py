"""Host callbacks on platform ``pjrtkit``: the handler and the executable bindings it reads.

jax.pure_callback, io_callback, jax.debug.callback/print and checkify's checks lower on
``pjrtkit`` exactly as on jaxlib's ``cpu`` (``_callback_rules`` runs JAX's own cpu rules): a typed
FFI custom call ``xla_ffi_python_cpu_callback`` (``xla_ffi_partitioned_python_cpu_callback`` for
partitioned debug callbacks) whose one attribute ``index`` is the callback's position in the
module's host callbacks, which JAX hands to ``compile_or_get_cached`` and jaxlib keeps alive with
the executable and its in-flight executions. The program holds no callback identity, so two jits
with different Python functions of the same signature share one persistent-cache entry.

jaxlib runs those custom calls through ``FfiLoadedHostCallbacks`` user data that it attaches to an
execution only for its own cpu/cuda/rocm/sycl platform ids, never for a plugin. pjrtkit does the
equivalent itself:

* binding: ``compile_or_get_cached`` is wrapped (``bind_compiles``). Around JAX's call, for a
  pjrtkit backend and a module with host callbacks, the thread gets a binding (``_pjrt_binding``):
  every executable the call compiles or deserializes passes ``{BINDING_TYPE, tag}`` as FFI user data
  to each of its executions; ``BINDINGS`` maps the tag to weak references to the host callbacks
  JAX passed (jaxlib owns them, with the executable). A cache hit loaded with other callbacks gets
  its own tag, so each executable calls its own functions;
* handler: ``HANDLER`` (a ctypes function on the XLA FFI C ABI, ``_xla_ffi``) is registered for
  both target names on platform ``pjrtkit`` (XLA:CPU's FFI registry is its own, so jaxlib's
  registrations of the names do not reach it). It reads ``index`` and the tag of the running
  executable (``XLA_FFI_ExecutionContext_Get``), calls ``callbacks[index]`` with numpy arrays
  (None for tokens, sub-byte types unpacked) and writes the results back (tokens skipped, sub-byte
  types packed), as jaxlib's CPU handler does.

On the xla_gpu device the very same program runs (the cpu rules, the cpu target names, the same
bindings); the plugin hands registrations for ``pjrtkit`` to XLA:GPU under its ``CUDA`` platform,
where the cpu target names are free (jaxlib's GPU handlers are registered as
``xla_ffi_python_gpu_callback``). ``GPU_HANDLER`` is registered there instead of ``HANDLER``: its
buffers are device pointers, so it takes the call's ``CUstream`` (``XLA_FFI_Stream_Get``), copies
the operands to host arrays (``cudaMemcpyAsync`` device to host, then ``cudaStreamSynchronize``,
through ``_cuda_runtime``), calls the function, copies the results back (host to device, then
another synchronize, which also keeps the host arrays alive until the copies are done), as
jaxlib's GPU handler does. The handler declares no traits, so XLA:GPU never records the custom
call into a CUDA graph (command buffer): it runs on the host, in program order, every time, inside
loops too. Each callback costs two stream synchronizations plus the copies.

Re-entrancy: JAX's callbacks get cpu arrays and run under ``default_device(cpu)``, so what they
compute goes to jaxlib's ``cpu`` backend, not back into pjrtkit. A callback that explicitly runs
a pjrtkit computation works when XLA:CPU runs that computation inline (small programs) or on a
device with nothing in flight; it waits forever when the computation must queue behind the
calling program on the same device, or when every XLA:CPU worker is held by a callback: XLA:CPU
orders executions per device, and jaxlib's remedy on its own cpu backend (synchronous execution of
programs with callbacks, and running executions from inside a callback inline) is not reachable
through the PJRT C API. pjrtkit holds no lock of its own across an execution or a callback.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import threading
import traceback
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jax_plugins.pjrtkit import _cuda_runtime
from jax_plugins.pjrtkit import _pjrt_binding
from jax_plugins.pjrtkit import _xla_ffi

logger = logging.getLogger(__name__)

TARGET_NAMES = ("xla_ffi_python_cpu_callback", "xla_ffi_partitioned_python_cpu_callback")
"""The custom-call targets JAX's cpu lowering emits for host callbacks."""

INDEX_ATTRIBUTE = "index"
"""The custom call's one attribute: the callback's position in the module's host callbacks."""

BINDING_TYPE_NAME = "pjrtkit.host_callback_binding"
"""The FFI type of the execute-context user data that carries an executable's binding tag."""


class Bindings:
  """Tag -> the host callbacks of the executables loaded under the tag (weak references).

  jaxlib owns the callbacks (with the executable and its in-flight executions); an entry goes
  away when they do. Thread-safe.
  """

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._entries: dict[int, tuple[weakref.ref, ...]] = {}
    self._next = 1  # Tag 0 means "no binding".
    self._calls = 0
    self._loaded = 0

  def add(self, callbacks: Sequence[Callable[..., Any]]) -> int:
    """Records ``callbacks``; returns their tag (valid while they are alive)."""
    with self._lock:
      tag = self._next
      self._next += 1
      self._entries[tag] = tuple(weakref.ref(c) for c in callbacks)
    for callback in callbacks:
      weakref.finalize(callback, self.remove, tag)
    return tag

  def get(self, tag: int, index: int) -> Callable[..., Any] | None:
    """Callback ``index`` of ``tag``, or None when gone or out of range."""
    with self._lock:
      refs = self._entries.get(tag)
    if refs is None or not 0 <= index < len(refs):
      return None
    return refs[index]()

  def remove(self, tag: int) -> None:
    """Forgets ``tag`` (idempotent)."""
    with self._lock:
      self._entries.pop(tag, None)

  def __len__(self) -> int:
    with self._lock:
      return len(self._entries)

  def count_call(self) -> None:
    """Records that the handler ran a callback."""
    with self._lock:
      self._calls += 1

  def count_loaded(self, count: int) -> None:
    """Records ``count`` executables loaded under a binding."""
    with self._lock:
      self._loaded += count

  @property
  def calls(self) -> int:
    """How many callbacks the handler has run."""
    with self._lock:
      return self._calls

  @property
  def loaded(self) -> int:
    """How many executables were loaded under a binding."""
    with self._lock:
      return self._loaded


BINDINGS = Bindings()
"""The one table the handler reads (the handler has no other way to find Python functions)."""


class _Installed:
  """What ``install`` set up: the binding's FFI type id (None before install)."""

  type_id: int | None = None


def call_count() -> int:
  """How many times the handler has run a callback in this process (for tests and diagnostics)."""
  return BINDINGS.calls


_View = tuple
"""(``_xla_ffi.Buffer``, numpy dtype or None for a token, shape): ``_xla_ffi.buffer_view``'s."""


class _HostMemory:
  """Operands and results in host memory (the xla_cpu device): read and written in place."""

  def __init__(self, frame: _xla_ffi.CallFrame):
    del frame

  def read(self, views: Sequence[_View]) -> list[np.ndarray | None]:
    return [None if dtype is None else _xla_ffi.read_array(buf, dtype, shape)
            for buf, dtype, shape in views]

  def write(self, views: Sequence[_View], values: Sequence[np.ndarray | None]) -> None:
    for (buf, _, _), value in zip(views, values):
      if value is not None:
        _xla_ffi.write_array(buf, value)


class _DeviceMemory:
  """Operands and results in GPU memory (the xla_gpu device), copied on the call's stream.

  Operands: one device-to-host copy each into fresh host arrays, then one stream synchronize
  (which also waits for the kernels before the call that produce them). Results: one
  host-to-device copy each from host arrays kept alive here, then one synchronize, so the host
  memory outlives the copies and the results are in place before the call returns (XLA:GPU
  enqueues the consumers after it on the same stream).
  """

  def __init__(self, frame: _xla_ffi.CallFrame):
    self._cuda = _cuda_runtime.load()
    self._stream = _xla_ffi.stream(frame)

  def read(self, views: Sequence[_View]) -> list[np.ndarray | None]:
    staged: list[tuple[np.ndarray, _View] | None] = []
    for view in views:
      buf, dtype, shape = view
      if dtype is None:
        staged.append(None)
        continue
      raw = np.empty(_xla_ffi.buffer_nbytes(buf, dtype, shape), np.uint8)
      if raw.nbytes:
        self._cuda.copy_to_host(raw.ctypes.data, buf.data, raw.nbytes, self._stream)
      staged.append((raw, view))
    self._cuda.synchronize(self._stream)
    return [None if item is None else _xla_ffi.decode_array(item[0], *item[1])
            for item in staged]

  def write(self, views: Sequence[_View], values: Sequence[np.ndarray | None]) -> None:
    keep_alive = []
    try:
      for (buf, _, _), value in zip(views, values):
        if value is None:
          continue
        data = _xla_ffi.encode_array(buf, value)
        if data.nbytes:
          keep_alive.append(data)
          self._cuda.copy_to_device(buf.data, data.ctypes.data, data.nbytes, self._stream)
    finally:
      if keep_alive:  # Also after a failed copy: the ones enqueued still read these arrays.
        self._cuda.synchronize(self._stream)


def bound_callback(frame: _xla_ffi.CallFrame) -> Callable[..., Any] | int:
  """The function of the running executable that the custom call's ``index`` names, or an
  ``XLA_FFI_Error*`` (NOT_FOUND, saying why) to return from the handler."""
  index = _xla_ffi.uint64_attribute(frame, INDEX_ATTRIBUTE)
  tag = (_xla_ffi.user_data(frame, _Installed.type_id)
         if _Installed.type_id is not None else None)
  if tag is None or index is None:
    return _xla_ffi.make_error(
        frame, _xla_ffi.ERROR_NOT_FOUND,
        "pjrtkit: no host callbacks are bound to this executable (it was loaded outside "
        "jax's compile path, e.g. by jax.experimental.serialize_executable)")
  function = BINDINGS.get(tag, index)
  if function is None:
    return _xla_ffi.make_error(
        frame, _xla_ffi.ERROR_NOT_FOUND,
        f"pjrtkit: host callback {index} of this executable is gone")
  return function


def report_failure(frame: _xla_ffi.CallFrame, error: BaseException) -> int | None:
  """An INTERNAL ``XLA_FFI_Error*`` carrying ``error`` and its traceback (None when even that
  fails: nothing may unwind through C)."""
  detail = "".join(traceback.format_exception(error))
  try:
    return _xla_ffi.make_error(frame, _xla_ffi.ERROR_INTERNAL,
                               f"pjrtkit host callback failed: {error!r}\n{detail}")
  except BaseException:  # pylint: disable=broad-except  (no way left to report it)
    return None


def _handle(frame_pointer: Any, memory_type: type = _HostMemory) -> int | None:
  """The XLA FFI handler: runs callback ``index`` of the running executable.

  ``memory_type`` says where the buffers live: ``_HostMemory`` (xla_cpu) or ``_DeviceMemory``
  (xla_gpu).
  """
  frame = frame_pointer.contents
  try:
    if _xla_ffi.fill_metadata(frame) or frame.stage != _xla_ffi.STAGE_EXECUTE:
      return None
    function = bound_callback(frame)
    if not callable(function):
      return function
    memory = memory_type(frame)
    args = memory.read([_xla_ffi.buffer_view(frame.args.args[i])
                        for i in range(frame.args.size)])
    rets = [_xla_ffi.buffer_view(frame.rets.rets[i]) for i in range(frame.rets.size)]
    BINDINGS.count_call()
    outputs = function(*args)
    if len(outputs) != len(rets):
      raise RuntimeError(f"the callback returned {len(outputs)} values, expected {len(rets)}")
    values: list[np.ndarray | None] = []
    for i, (_, dtype, shape) in enumerate(rets):
      if dtype is None:
        values.append(None)  # A token (the callback passes back the None it was given).
        continue
      value = np.asarray(outputs[i])
      if value.shape != shape or value.dtype != dtype:
        raise RuntimeError(f"result {i} of the callback is {value.dtype}{list(value.shape)}, "
                           f"expected {dtype}{list(shape)}")
      values.append(value)
    memory.write(rets, values)
    return None
  except BaseException as e:  # pylint: disable=broad-except  (never unwind through C)
    return report_failure(frame, e)


HANDLER = _xla_ffi.HANDLER(_handle)
"""The ctypes function XLA:CPU calls (buffers in host memory); module-level so it lives as long
as the process."""

GPU_HANDLER = _xla_ffi.HANDLER(functools.partial(_handle, memory_type=_DeviceMemory))
"""The ctypes function XLA:GPU calls (buffers in GPU memory, copied on the call's stream)."""


def handler_capsule(device_memory: bool = False) -> Any:
  """``HANDLER`` (``GPU_HANDLER`` when ``device_memory``) as a PyCapsule, the form
  ``jax.ffi.register_ffi_target`` takes."""
  from jax import ffi  # pylint: disable=g-import-not-at-top

  handler = GPU_HANDLER if device_memory else HANDLER
  return ffi.pycapsule(ctypes.cast(handler, ctypes.c_void_p).value)


class _Nesting(threading.local):
  """Per thread: executables counted by bindings that a nested wrapper call replaced."""

  def __init__(self) -> None:
    super().__init__()
    self.stack: list[int] = []


_NESTING = _Nesting()


def bind_compiles(compile_or_get_cached: Callable[..., Any], platform: str,
                  extension: _pjrt_binding.BindingExtension,
                  type_id: int) -> Callable[..., Any]:
  """``jax._src.compiler.compile_or_get_cached`` binding pjrtkit executables to their callbacks.

  For a ``platform`` backend and a module with host callbacks, the executables the call loads
  (compiled, or deserialized from the persistent cache) get a new tag in ``BINDINGS``; anything
  else goes straight through. The thread's binding is restored on every path.
  """

  @functools.wraps(compile_or_get_cached)
  def wrapper(backend: Any, computation: Any, devices: Any, compile_options: Any,
              host_callbacks: Sequence[Any], *args: Any, **kwargs: Any) -> Any:
    if not host_callbacks or getattr(backend, "platform", None) != platform:
      return compile_or_get_cached(backend, computation, devices, compile_options,
                                   host_callbacks, *args, **kwargs)
    tag = BINDINGS.add(tuple(host_callbacks))
    previous = extension.bind(type_id, tag)
    if _NESTING.stack:  # Executables an enclosing call loaded before this one.
      _NESTING.stack[-1] += previous.bound
    _NESTING.stack.append(0)
    loaded = 0
    try:
      return compile_or_get_cached(backend, computation, devices, compile_options,
                                   host_callbacks, *args, **kwargs)
    finally:
      mine = extension.bind(previous.type_id, previous.data)
      loaded = mine.bound + _NESTING.stack.pop()
      BINDINGS.count_loaded(loaded)
      if loaded == 0:
        BINDINGS.remove(tag)  # Failed, or nothing new was loaded: no executable uses the tag.

  setattr(wrapper, "_pjrtkit_binds", platform)
  return wrapper


def install(c_api: Any, platform: str, ffi_extension: Any, device_memory: bool = False) -> None:
  """Registers the handlers (host callbacks and ``_buffer_callbacks``') and the binding type with
  the plugin and wraps JAX's compile.

  Args:
    c_api: the plugin's ``PJRT_Api`` capsule.
    platform: its platform name (``'pjrtkit'``).
    ffi_extension: its ``_pjrt_ffi.PjrtFfiExtension``.
    device_memory: the buffers are in GPU memory (the xla_gpu device): register ``GPU_HANDLER``.

  Raises:
    LookupError: when the plugin lacks pjrtkit's extension; PjrtError when it refuses a
      registration. Nothing of JAX is changed then.
  """
  from jax import ffi  # pylint: disable=g-import-not-at-top
  from jax._src import compiler  # pylint: disable=g-import-not-at-top

  from jax_plugins.pjrtkit import _buffer_callbacks  # pylint: disable=g-import-not-at-top

  binding = _pjrt_binding.BindingExtension.from_c_api(c_api)
  type_id = ffi_extension.register_type(BINDING_TYPE_NAME)
  for name in TARGET_NAMES:
    ffi.register_ffi_target(name, handler_capsule(device_memory), platform=platform,
                            api_version=1)
  ffi.register_ffi_target(_buffer_callbacks.TARGET_NAME,
                          _buffer_callbacks.handler_capsule(device_memory), platform=platform,
                          api_version=1)
  _Installed.type_id = type_id
  current = compiler.compile_or_get_cached
  if getattr(current, "_pjrtkit_binds", None) != platform:
    compiler.compile_or_get_cached = bind_compiles(current, platform, binding, type_id)
