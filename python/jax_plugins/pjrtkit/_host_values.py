"""``np.asarray`` and ``jax.device_get`` of xla_gpu arrays through pinned host memory.

jaxlib turns a device array into numpy (``ArrayImpl._value``) by allocating a fresh numpy array
and having the plugin copy into it. On an H200 jaxlib spends ~40 ms of its own on a fresh 64 MiB
destination before the plugin is called at all, so ``np.asarray`` ran at 1.3-1.8 GB/s through
pjrtkit as through JAX's CUDA backend, while XLA:GPU copies the same bytes into its pinned_host
memory at 39-53 GB/s. An array in pinned_host memory becomes numpy without a copy: jaxlib hands
numpy a view of the buffer, as for any buffer on the host.

So for a single-device array of ``MIN_BYTES`` or more in the "device" memory of the xla_gpu
device, ``_value`` copies it into that device's pinned_host memory and keeps numpy's view of the
copy as the array's host value (read-only, as every ``_value``; the pinned copy lives as long as
the view, holding the bytes a pageable value would hold, page-locked). ``copy_to_host_async``
starts that copy and returns; ``_value`` then takes it. Everything else (other platforms, sharded
or small arrays, host memories, and every array while a device-to-host transfer guard is set, so
that the guard logs or refuses as JAX's path does) is JAX's own path, and so is an array whose
pinned copy fails (pinned memory exhausted): the error is not the user's.

JAX internals used (``_jax_internals.INTERNALS``, feature "host values"): ``ArrayImpl._value``
(a property, replaced) and ``ArrayImpl.copy_to_host_async`` (wrapped), ``ArrayImpl._npy_value``
(the cache both use), ``ArrayImpl._arrays``, ``config.transfer_guard_device_to_host``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

MIN_BYTES = 1 << 20
"""Smallest array converted through pinned memory (below it jaxlib's own path is as fast)."""

PINNED_HOST = "pinned_host"


class _Pending:
  """Array -> its pinned copy in flight (started by ``copy_to_host_async``). Thread-safe.

  Keyed by ``id``: jax arrays are unhashable. Each entry holds a weak reference to its array, so
  an entry never outlives it (the reference's callback drops it) and an id reused by a later
  array is never mistaken for the old one.
  """

  def __init__(self) -> None:
    self._lock = threading.Lock()
    self._copies: dict[int, tuple[weakref.ref, Any]] = {}

  def put(self, array: Any, copy: Any) -> None:
    key = id(array)

    def forget(ref: weakref.ref) -> None:
      with self._lock:
        if self._copies.get(key, (None,))[0] is ref:
          dropped = self._copies.pop(key)
        else:
          dropped = None
      del dropped  # The pinned copy goes after the lock is released.

    entry = (weakref.ref(array, forget), copy)
    with self._lock:
      previous = self._copies.get(key)
      self._copies[key] = entry
    del previous

  def pop(self, array: Any) -> Any:
    with self._lock:
      entry = self._copies.get(id(array))
      if entry is None or entry[0]() is not array:
        return None
      del self._copies[id(array)]
    return entry[1]

  def __len__(self) -> int:
    with self._lock:
      return len(self._copies)


PENDING = _Pending()
"""The pinned copies started by ``copy_to_host_async`` and not yet taken by ``_value``."""


def _guarded() -> bool:
  """True when a device-to-host transfer guard is set (JAX's own path then logs or refuses)."""
  from jax._src import config  # pylint: disable=g-import-not-at-top

  return config.transfer_guard_device_to_host.value not in (None, "allow")


def eligible(array: Any, platform: str) -> bool:
  """True when ``array`` converts through pinned memory (see the module docstring)."""
  try:
    # pylint: disable=protected-access
    return (array._npy_value is None and not _guarded() and array.platform() == platform and
            len(array._arrays) == 1 and array.nbytes >= MIN_BYTES and
            array.sharding.memory_kind == "device" and not array.is_deleted())
  except Exception:  # pylint: disable=broad-except  (anything unusual: JAX's own path)
    return False


def pinned_copy(array: Any) -> Any:
  """A copy of single-device ``array`` in its device's pinned_host memory (not waited for)."""
  import jax  # pylint: disable=g-import-not-at-top

  return jax.device_put(array, array.sharding.with_memory_kind(PINNED_HOST))


def host_value(array: Any, copy: Any | None) -> Any:
  """numpy's read-only view of ``copy`` (``pinned_copy(array)`` when None), cached as ``array``'s
  host value."""
  if copy is None:
    copy = pinned_copy(array)
  value = copy._value  # pylint: disable=protected-access  (a view: the buffer is on the host)
  value.flags.writeable = False
  array._npy_value = value  # pylint: disable=protected-access
  return value


def _wrap_value(original: property, platform: str) -> property:
  def _value(self: Any) -> Any:
    if eligible(self, platform):
      try:
        return host_value(self, PENDING.pop(self))
      except Exception:  # pylint: disable=broad-except  (pinned memory exhausted: JAX's path)
        pass
    return original.fget(self)

  _value.__wrapped__ = original.fget  # type: ignore[attr-defined]
  return property(_value, doc=original.__doc__)


def _wrap_copy_to_host_async(original: Callable[..., Any], platform: str) -> Callable[..., Any]:
  def copy_to_host_async(self: Any) -> Any:
    if eligible(self, platform):
      try:
        PENDING.put(self, pinned_copy(self))
        return None
      except Exception:  # pylint: disable=broad-except
        pass
    return original(self)

  copy_to_host_async.__wrapped__ = original  # type: ignore[attr-defined]
  return copy_to_host_async


def install(platform: str) -> Callable[[], None]:
  """Converts ``platform``'s xla_gpu arrays through pinned memory; returns the undo."""
  from jax._src import array as jax_array  # pylint: disable=g-import-not-at-top

  cls = jax_array.ArrayImpl
  before = {name: cls.__dict__[name] for name in ("_value", "copy_to_host_async")}
  cls._value = _wrap_value(before["_value"], platform)  # pylint: disable=protected-access
  cls.copy_to_host_async = _wrap_copy_to_host_async(before["copy_to_host_async"], platform)

  def undo() -> None:
    for name, value in before.items():
      setattr(cls, name, value)

  return undo
