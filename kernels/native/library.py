"""Finds, loads and registers ``pjrtkit_kernels.so``, the native kernels' shared library.

The library is built by Bazel (``//kernels/native:pjrtkit_kernels.so``) and found, in order, at
``$PJRTKIT_KERNELS_LIBRARY``, next to this module (installed wheels; ``tools/setup.sh`` copies it
there in a checkout; Bazel runfiles), or in ``bazel-bin``. Its handlers are registered once per
process with ``jax.ffi.register_ffi_target(name, capsule, platform="pjrtkit")``, and only when
pjrtkit's device is the CPU device: the handlers read host memory and would be wrong on a GPU.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

import jax

LIBRARY_NAME = "pjrtkit_kernels.so"
ENV_VAR = "PJRTKIT_KERNELS_LIBRARY"
PLATFORM = "pjrtkit"

_SYMBOLS = {
    "pjrtkit_kernels_layer_norm_fwd": "PjrtkitKernelsLayerNormFwd",
    "pjrtkit_kernels_layer_norm_bwd": "PjrtkitKernelsLayerNormBwd",
    "pjrtkit_kernels_attention_fwd": "PjrtkitKernelsAttentionFwd",
    "pjrtkit_kernels_attention_bwd": "PjrtkitKernelsAttentionBwd",
    "pjrtkit_kernels_attention_fwd_key_mask": "PjrtkitKernelsAttentionFwdKeyMask",
    "pjrtkit_kernels_attention_bwd_key_mask": "PjrtkitKernelsAttentionBwdKeyMask",
    "pjrtkit_kernels_ragged_dot_rows": "PjrtkitKernelsRaggedDotRows",
    "pjrtkit_kernels_ragged_dot_groups": "PjrtkitKernelsRaggedDotGroups",
}
TARGETS: tuple[str, ...] = tuple(_SYMBOLS)
"""The custom-call targets the native kernels lower to."""


def candidates() -> list[Path]:
  """Where the library is looked for, in order."""
  here = Path(__file__).resolve().parent
  out = []
  if os.environ.get(ENV_VAR):
    out.append(Path(os.environ[ENV_VAR]))
  out.append(here / LIBRARY_NAME)
  out.append(here.parents[1] / "bazel-bin" / "kernels" / "native" / LIBRARY_NAME)
  return out


def library_path() -> Path | None:
  """The library file, or None when it is nowhere to be found."""
  for path in candidates():
    if path.is_file():
      return path
  return None


def unavailable_reason() -> str | None:
  """Why the native kernels cannot be used in this process; None when they can."""
  if library_path() is None:
    return (f"{LIBRARY_NAME} not found (looked at "
            f"{', '.join(str(p) for p in candidates())}; build //kernels/native:{LIBRARY_NAME} "
            f"or set {ENV_VAR})")
  return None


@functools.lru_cache(maxsize=None)
def _load() -> ctypes.CDLL:
  path = library_path()
  if path is None:
    raise FileNotFoundError(unavailable_reason())
  return ctypes.CDLL(str(path))


@functools.lru_cache(maxsize=None)
def amx_bf16() -> bool:
  """Whether the native kernels multiply two bfloat16 operands on AMX tiles in this process (a
  CPU with AMX-BF16, granted by Linux, ``PJRTKIT_KERNELS_AMX`` not "0"); False without the
  library or with one that predates them. Implementation rules use it: without AMX, XLA:CPU's
  bfloat16 GEMM is the faster. The first call asks Linux for the tile state (process-wide)."""
  if library_path() is None:
    return False
  probe = getattr(_load(), "PjrtkitKernelsAmxBf16", None)
  if probe is None:  # a library built before the AMX kernels
    return False
  probe.restype = ctypes.c_int
  probe.argtypes = []
  return bool(probe())


def declare_cpu_only() -> None:
  """Tells pjrtkit's program check that only its CPU device runs these targets, so a program
  calling them (say, exported on the CPU device) is refused on the GPU device with a clear error.
  Needs pjrtkit's JAX integration (``jax_plugins.pjrtkit``); without it there is nothing to do."""
  try:
    from jax_plugins.pjrtkit import _program_checks  # pylint: disable=g-import-not-at-top
  except ImportError:
    return
  _program_checks.register_device_only_targets(TARGETS, "xla_cpu", "pjrtkit's native C++ kernels")


declare_cpu_only()


@functools.lru_cache(maxsize=None)
def ensure_registered() -> None:
  """Loads the library and registers every handler for platform "pjrtkit" (once)."""
  lib = _load()
  for target, symbol in _SYMBOLS.items():
    address = ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
    jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(address), platform=PLATFORM)
