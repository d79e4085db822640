"""Pallas interpret mode for the GPU implementations, for tests on a machine without a GPU.

Under ``with pallas_interpret():`` the "triton" implementations run their ``pallas_call`` with
``interpret=True`` (Pallas's HLO interpreter) and the "mosaic" implementations with
``jax.experimental.pallas.mosaic_gpu.InterpretGPUParams()`` (Pallas's Mosaic GPU interpreter,
which runs the kernel through host callbacks: on pjrtkit it needs JAX's ``cpu`` backend beside
it, ``JAX_PLATFORMS=pjrtkit,cpu``). The context is part of JAX's jit cache key.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import jax

_INTERPRET = jax.make_user_context(False)


@contextlib.contextmanager
def pallas_interpret(enabled: bool = True) -> Iterator[None]:
  """Runs "triton" and "mosaic" kernels in Pallas interpret mode on any device (tests only)."""
  with _INTERPRET(bool(enabled)):
    yield


def interpret_enabled() -> bool:
  """Whether `pallas_interpret` is active."""
  return bool(_INTERPRET.value)
