"""The CUDA runtime (``libcudart``) through ctypes: the copies the GPU host-callback handler needs.

On the xla_gpu device, pjrtkit's host-callback handler (``_host_callbacks``) receives device
pointers and the ``CUstream`` the custom call runs on (``XLA_FFI_Stream_Get``). It copies operands
device to host and results host to device with ``cudaMemcpyAsync`` on that stream and waits with
``cudaStreamSynchronize``, the way jaxlib's own GPU callback handler does. pjrtkit links no CUDA
library: ``load`` finds ``libcudart`` at the first callback (or lowering) and keeps it.

Where it looks, in order (``candidates``):

1. ``$PJRTKIT_CUDART``: an explicit path;
2. a ``libcudart.so*`` already mapped into the process (the one XLA:GPU or jaxlib loaded);
3. the NVIDIA CUDA runtime wheel (``nvidia-cuda-runtime``, a dependency of ``jax-cuda13-plugin``
   and ``jax-cuda12-plugin``): ``nvidia/cu13/lib``, ``nvidia/cuda_runtime/lib``, ``nvidia/cu12/lib``
   under every ``sys.path`` entry and beside the CUDA PJRT plugin, CUDA 13 first;
4. the system's loader: ``libcudart.so.13``, ``libcudart.so.12``, ``libcudart.so``.

The first that loads and has the four functions below wins. When none does, ``load`` raises
``CudaRuntimeNotFound`` naming every place tried; host callbacks on the xla_gpu device are then
refused at lowering with that message.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import sys
import threading
from collections.abc import Iterable

ENV = "PJRTKIT_CUDART"
"""Environment variable naming libcudart explicitly."""

MEMCPY_HOST_TO_DEVICE = 1
MEMCPY_DEVICE_TO_HOST = 2
"""``cudaMemcpyKind`` values."""

WHEEL_LIBRARY_DIRS = ("nvidia/cu13/lib", "nvidia/cuda_runtime/lib", "nvidia/cu12/lib")
"""Where the NVIDIA CUDA runtime wheels put libcudart, relative to site-packages."""

SYSTEM_NAMES = ("libcudart.so.13", "libcudart.so.12", "libcudart.so")
"""Names tried with the system's loader, last."""


class CudaRuntimeNotFound(RuntimeError):
  """No usable libcudart: host callbacks on the xla_gpu device cannot copy their data."""


class CudaError(RuntimeError):
  """A CUDA runtime call failed."""


class CudaRuntime:
  """The libcudart functions the handler calls; thread-safe (CUDA's own calls are)."""

  def __init__(self, library: ctypes.CDLL, path: str):
    self.path = path
    self._memcpy_async = library.cudaMemcpyAsync
    self._memcpy_async.restype = ctypes.c_int
    self._memcpy_async.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                   ctypes.c_int, ctypes.c_void_p]
    self._synchronize = library.cudaStreamSynchronize
    self._synchronize.restype = ctypes.c_int
    self._synchronize.argtypes = [ctypes.c_void_p]
    self._error_string = library.cudaGetErrorString
    self._error_string.restype = ctypes.c_char_p
    self._error_string.argtypes = [ctypes.c_int]
    self._version = library.cudaRuntimeGetVersion
    self._version.restype = ctypes.c_int
    self._version.argtypes = [ctypes.POINTER(ctypes.c_int)]

  def _check(self, code: int, what: str) -> None:
    if code != 0:
      message = self._error_string(code)
      raise CudaError(f"{what} failed with CUDA error {code}: "
                      f"{message.decode(errors='replace') if message else 'unknown'}")

  def version(self) -> int:
    """``cudaRuntimeGetVersion`` (e.g. 13000)."""
    value = ctypes.c_int(0)
    self._check(self._version(ctypes.byref(value)), "cudaRuntimeGetVersion")
    return value.value

  def copy_to_host(self, host: int, device: int, nbytes: int, stream: int) -> None:
    """Enqueues a device-to-host copy of ``nbytes`` on ``stream`` (wait with ``synchronize``)."""
    self._check(self._memcpy_async(host, device, nbytes, MEMCPY_DEVICE_TO_HOST, stream),
                "cudaMemcpyAsync(device to host)")

  def copy_to_device(self, device: int, host: int, nbytes: int, stream: int) -> None:
    """Enqueues a host-to-device copy; ``host`` must stay alive until ``synchronize`` returns."""
    self._check(self._memcpy_async(device, host, nbytes, MEMCPY_HOST_TO_DEVICE, stream),
                "cudaMemcpyAsync(host to device)")

  def synchronize(self, stream: int) -> None:
    """Waits until everything enqueued on ``stream`` is done."""
    self._check(self._synchronize(stream), "cudaStreamSynchronize")


def _mapped_libraries() -> list[str]:
  """The libcudart files mapped into this process (Linux ``/proc/self/maps``)."""
  found: list[str] = []
  try:
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
      for line in maps:
        path = line.rstrip("\n").split(" ", 5)[-1].strip()
        if os.path.basename(path).startswith("libcudart.so") and path not in found:
          found.append(path)
  except OSError:
    pass
  return found


def _site_dirs(plugin_path: str | None) -> list[str]:
  dirs = []
  if plugin_path:  # <site-packages>/jax_plugins/xla_cuda13/xla_cuda_plugin.so
    dirs.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(plugin_path)))))
  dirs.extend(p for p in sys.path if p and os.path.isdir(p))
  unique: list[str] = []
  for d in dirs:
    if d not in unique:
      unique.append(d)
  return unique


def _wheel_libraries(site_dirs: Iterable[str]) -> list[str]:
  found: list[str] = []
  for relative in WHEEL_LIBRARY_DIRS:
    for site in site_dirs:
      for path in sorted(glob.glob(os.path.join(site, relative, "libcudart.so*")), reverse=True):
        if path not in found:
          found.append(path)
  return found


def candidates(plugin_path: str | None = None) -> list[str]:
  """Every libcudart ``load`` would try, in order (paths, then bare names for the loader)."""
  ordered: list[str] = []
  explicit = os.environ.get(ENV, "")
  if explicit:
    ordered.append(explicit)
  ordered.extend(_mapped_libraries())
  ordered.extend(_wheel_libraries(_site_dirs(plugin_path)))
  system = ctypes.util.find_library("cudart")
  ordered.extend(n for n in (*SYSTEM_NAMES, system) if n)
  unique: list[str] = []
  for c in ordered:
    if c not in unique:
      unique.append(c)
  return unique


_LOCK = threading.Lock()
_LOADED: list[CudaRuntime] = []


def _plugin_path() -> str | None:
  try:
    from jax_plugins.pjrtkit import _device  # pylint: disable=g-import-not-at-top

    return _device.cuda_plugin_path()
  except Exception:  # pylint: disable=broad-except  (only a hint for the search)
    return None


def load() -> CudaRuntime:
  """The process's libcudart, found and loaded once (see the module docstring).

  Raises:
    CudaRuntimeNotFound: when no candidate loads, naming each and why.
  """
  with _LOCK:
    if _LOADED:
      return _LOADED[0]
    tried = []
    for candidate in candidates(_plugin_path()):
      try:
        runtime = CudaRuntime(ctypes.CDLL(candidate), candidate)
      except (OSError, AttributeError) as e:
        tried.append(f"{candidate} ({e})")
        continue
      _LOADED.append(runtime)
      return runtime
    raise CudaRuntimeNotFound(
        "pjrtkit's host callbacks on the xla_gpu device copy their data with the CUDA runtime "
        "(libcudart), and none was found: install the NVIDIA CUDA runtime wheel that "
        "jax-cuda13-plugin depends on (pip install nvidia-cuda-runtime, or "
        "'jax[cuda13]'), or set $PJRTKIT_CUDART to libcudart's path. Tried: "
        + ("; ".join(tried) or "nothing"))
