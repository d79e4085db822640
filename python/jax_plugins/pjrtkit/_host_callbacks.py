"""Host callbacks on platform ``pjrtkit``: pure_callback, io_callback, debug.callback/print.

Why not jaxlib's CPU path: JAX lowers callbacks to the custom call ``xla_ffi_python_cpu_callback``
whose handler (inside jaxlib) finds the Python function through ``FfiLoadedHostCallbacks`` user
data that jaxlib attaches to the execute context only for its own cpu/cuda/rocm platform ids, and
``jax._src.callback.emit_python_callback`` rejects other platforms outright. So pjrtkit brings its
own, end to end, through supported routes only:

* lowering: rules registered for platform ``pjrtkit`` (``mlir.register_lowering``) for
  ``pure_callback``, ``io_callback``, ``debug_callback`` and ``debug_print``. Each emits a typed
  FFI custom call ``pjrtkit_python_callback`` (``api_version=4``) with one attribute,
  ``callback_id: u64``, plus a leading ``!stablehlo.token`` operand/result for ordered effects
  (threaded through ``ctx.tokens_in/out`` as JAX does for cpu);
* lifetime: the Python function is one of the executable's host callbacks
  (``module_context.add_host_callback``), which jaxlib keeps alive as long as the executable and
  its in-flight executions; the handler finds it through ``CallbackTable``, a process-wide
  id -> weak reference table (ids carry a random per-process salt, so an executable from another
  process, e.g. a persistent-cache hit, fails with "unknown host callback id" instead of calling
  the wrong function). jaxlib itself does not call them on a plugin platform (it hands them to
  its own FFI handler only for its cpu/gpu platform ids);
* runtime: the handler is a ctypes function implementing the XLA FFI C ABI (``_xla_ffi``),
  registered with ``jax.ffi.register_ffi_target(..., platform="pjrtkit")``, which reaches XLA:CPU
  through the plugin's PJRT FFI extension (``_ffi``). ctypes takes the GIL on XLA's thread; the
  arguments are copied into numpy arrays, the results copied back row-major.

JAX internals used (fenced by ``tests/jax/jax_internals_test.py``): ``jax._src.callback``
(``pure_callback_p``, ``io_callback_p``, ``_OrderedIOEffect``, ``_callback_op_sharding``),
``jax._src.debugging`` (``debug_callback_p``, ``debug_print_p``, the debug effects) and the
lowering-context API (``tokens_in``/``set_tokens_out``, ``add_host_callback``).
"""

from __future__ import annotations

import ctypes
import dataclasses
import secrets
import threading
import traceback
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jax_plugins.pjrtkit import _topology
from jax_plugins.pjrtkit import _xla_ffi

TARGET_NAME = "pjrtkit_python_callback"
"""Custom-call target of every pjrtkit host callback."""

ID_ATTRIBUTE = "callback_id"
"""The custom call's one attribute: the callback's id in ``CallbackTable``."""


class CallbackTable:
  """Process-wide id -> Python function table, holding weak references only.

  The function is owned by the executable that calls it (through the module's keepalives); when
  the executable is gone the entry disappears. Thread-safe.
  """

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._entries: dict[int, weakref.ref] = {}
    self._salt = secrets.randbits(31) << 32  # Distinguishes this process's ids.
    self._next = 0
    self._calls = 0

  def add(self, function: Callable[..., Any]) -> int:
    """Registers ``function``; returns its id (valid while ``function`` is alive)."""
    with self._lock:
      callback_id = self._salt | self._next
      self._next += 1
      self._entries[callback_id] = weakref.ref(function)
    weakref.finalize(function, self._remove, callback_id)
    return callback_id

  def get(self, callback_id: int) -> Callable[..., Any] | None:
    """The live function with ``callback_id``, or None."""
    with self._lock:
      ref = self._entries.get(callback_id)
    return ref() if ref is not None else None

  def __len__(self) -> int:
    with self._lock:
      return len(self._entries)

  def count_call(self) -> None:
    """Records that the handler ran a callback."""
    with self._lock:
      self._calls += 1

  @property
  def calls(self) -> int:
    """How many callbacks the handler has run."""
    with self._lock:
      return self._calls

  def _remove(self, callback_id: int) -> None:
    with self._lock:
      self._entries.pop(callback_id, None)


TABLE = CallbackTable()
"""The one table the handler reads (the handler has no other way to find Python functions)."""

def call_count() -> int:
  """How many times the handler has run a callback in this process (for tests and diagnostics)."""
  return TABLE.calls


def _handle(frame_pointer: Any) -> int | None:
  """The XLA FFI handler: runs the callback named by the call's ``callback_id``."""
  frame = frame_pointer.contents
  try:
    if _xla_ffi.fill_metadata(frame) or frame.stage != _xla_ffi.STAGE_EXECUTE:
      return None
    callback_id = _xla_ffi.uint64_attribute(frame, ID_ATTRIBUTE)
    function = TABLE.get(callback_id) if callback_id is not None else None
    if function is None:
      return _xla_ffi.make_error(
          frame, _xla_ffi.ERROR_NOT_FOUND,
          f"pjrtkit: unknown host callback id {callback_id} (its executable was destroyed, or "
          "the executable was compiled in another process)")
    args = []
    for i in range(frame.args.size):
      buf, dtype, shape = _xla_ffi.buffer_view(frame.args.args[i])
      if dtype is not None:
        args.append(_xla_ffi.read_array(buf, dtype, shape))
    rets = [_xla_ffi.buffer_view(frame.rets.rets[i]) for i in range(frame.rets.size)]
    rets = [r for r in rets if r[1] is not None]
    TABLE.count_call()
    outputs = function(*args)
    if len(outputs) != len(rets):
      raise RuntimeError(f"the callback returned {len(outputs)} values, expected {len(rets)}")
    for (buf, dtype, shape), value in zip(rets, outputs):
      _xla_ffi.write_array(buf, np.asarray(value, dtype=dtype).reshape(shape))
    return None
  except BaseException as e:  # pylint: disable=broad-except  (never unwind through C)
    detail = "".join(traceback.format_exception(e))
    try:
      return _xla_ffi.make_error(frame, _xla_ffi.ERROR_INTERNAL,
                                 f"pjrtkit host callback failed: {e!r}\n{detail}")
    except BaseException:  # pylint: disable=broad-except  (no way left to report it)
      return None


HANDLER = _xla_ffi.HANDLER(_handle)
"""The ctypes function XLA calls; module-level so it lives as long as the process."""


def handler_capsule() -> Any:
  """``HANDLER`` as a PyCapsule, the form ``jax.ffi.register_ffi_target`` takes."""
  from jax import ffi  # pylint: disable=g-import-not-at-top

  return ffi.pycapsule(ctypes.cast(HANDLER, ctypes.c_void_p).value)


def _checked(callback: Callable[..., Sequence[Any]],
             result_avals: Sequence[Any]) -> Callable[..., tuple[np.ndarray, ...]]:
  """``callback`` with its results checked against ``result_avals`` (as JAX does for cpu)."""
  from jax import dtypes  # pylint: disable=g-import-not-at-top

  def run(*args: np.ndarray) -> tuple[np.ndarray, ...]:
    outputs = callback(*args)
    if len(outputs) != len(result_avals):
      raise RuntimeError(
          f"Mismatched number of outputs from callback. Expected: {len(result_avals)}, "
          f"Actual: {len(outputs)}")
    checked = []
    for i, (value, aval) in enumerate(zip(outputs, result_avals)):
      array = np.asarray(value)
      array = array.astype(dtypes.canonicalize_dtype(array.dtype), copy=False)
      if array.shape != aval.shape:
        raise RuntimeError(f"Incorrect output shape for return value #{i}: Expected: "
                           f"{aval.shape}, Actual: {array.shape}")
      if array.dtype != aval.dtype:
        raise RuntimeError(f"Incorrect output dtype for return value #{i}: Expected: "
                           f"{aval.dtype}, Actual: {array.dtype}")
      checked.append(array)
    return tuple(checked)

  return run


def emit_callback(ctx: Any, callback: Callable[..., Sequence[Any]], token: Any,
                  operands: Sequence[Any], *, has_side_effect: bool,
                  sharding: Any = None) -> tuple[list[Any], Any]:
  """Emits the ``pjrtkit_python_callback`` custom call; returns (results, token out).

  Args:
    ctx: the lowering rule context (``ctx.avals_in`` / ``ctx.avals_out`` describe ``operands`` and
      the results).
    callback: called with numpy arrays (the non-token operands); returns the results.
    token: an input token to thread through (ordered effects), or None.
    operands: the operand values.
    has_side_effect: keeps XLA from removing or duplicating the call.
    sharding: an op sharding for SPMD programs (ignored when a token is threaded).
  """
  from jax._src import core  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  _topology.refuse_compile_only(ctx)  # No host callbacks in executables compiled for a topology.
  function = _checked(callback, ctx.avals_out)
  callback_id = TABLE.add(function)
  # The executable owns the function: jaxlib keeps an executable's host callbacks alive until its
  # in-flight executions finish (a weak table entry alone could vanish mid-execution).
  ctx.module_context.add_host_callback(function)
  operands = list(operands)
  if token is not None:
    operands = [token, *operands]
    ctx = dataclasses.replace(ctx, avals_in=[core.abstract_token, *ctx.avals_in],
                              avals_out=[core.abstract_token, *ctx.avals_out])
  op = _ffi_op_builder(has_side_effect)(ctx, *operands, callback_id=np.uint64(callback_id))
  if sharding is not None and token is None:
    mlir.set_sharding(ctx.module_context, op, sharding)
  results = list(op.results)
  if token is not None:
    token, *results = results
  return results, token


def _ffi_op_builder(has_side_effect: bool) -> Callable[..., Any]:
  """A function (ctx, *operands, **attributes) -> the custom-call op."""
  from jax._src import ffi  # pylint: disable=g-import-not-at-top

  return ffi.build_ffi_lowering_function(TARGET_NAME, has_side_effect=has_side_effect)
