"""What the Pallas implementations ("triton", "mosaic") share: when they can run, and padding."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.interpret import interpret_enabled


def gpu_unsupported_reason(device: DeviceInfo, backend: str, min_capability: tuple[int, int]
                           ) -> str | None:
  """Why a Pallas `backend` kernel cannot run on `device` (None under `pallas_interpret`)."""
  if interpret_enabled():
    return None
  if not device.is_gpu:
    return (f"Pallas {backend} kernels need an NVIDIA GPU; this is {device.describe()} (no GPU). "
            f"Use implementation=None, 'xla' or 'native' here")
  if device.compute_capability < min_capability:
    return (f"Pallas {backend} kernels need compute capability "
            f"{min_capability[0]}.{min_capability[1]}+, this GPU ({device.kind}) has "
            f"{device.compute_capability[0]}.{device.compute_capability[1]}")
  return None


def next_pow2(n: int, minimum: int = 16) -> int:
  """Smallest power of two >= max(n, minimum)."""
  p = minimum
  while p < n:
    p *= 2
  return p


def round_up(n: int, m: int) -> int:
  """n rounded up to a multiple of m."""
  return -(-n // m) * m


def pad_axis(x: Any, axis: int, size: int) -> Any:
  """x zero-padded along `axis` to `size` (unchanged when already that long)."""
  if x.shape[axis] == size:
    return x
  widths = [(0, 0)] * x.ndim
  widths[axis] = (0, size - x.shape[axis])
  return jnp.pad(x, widths)
