"""What the kernels need to know about the device a call is traced for."""

from __future__ import annotations

import dataclasses
import re

import jax

PJRTKIT_PLATFORM = "pjrtkit"
_HOPPER_KINDS = re.compile(r"\b(H100|H200|H800|H20|GH200)\b")


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
  """The device a kernel call is traced for.

  Attributes:
    platform: JAX's platform name (``pjrtkit``, ``cpu``, ``cuda``, ...).
    kind: the device kind (``pjrtkit_cpu``, ``NVIDIA H200``, ``cpu``, ...): the key of tuned
      results.
    compute_capability: ``(major, minor)`` of an NVIDIA GPU, else None.
  """

  platform: str
  kind: str
  compute_capability: tuple[int, int] | None

  @property
  def is_gpu(self) -> bool:
    """Whether this is an NVIDIA GPU (JAX's cuda backend or pjrtkit's GPU device)."""
    return self.compute_capability is not None

  @property
  def is_pjrtkit_cpu(self) -> bool:
    """Whether this is pjrtkit's reference CPU device (where the native kernels run)."""
    return self.platform == PJRTKIT_PLATFORM and not self.is_gpu

  @property
  def lowering_platforms(self) -> tuple[str, ...]:
    """The names ``lax.platform_dependent`` knows this device's programs by: JAX's CUDA devices
    say ``gpu`` and lower as ``cuda``; pjrtkit's GPU device lowers as ``pjrtkit`` and exports
    for ``cuda`` (the plugin's `jax.export` default there). Empty for another GPU (ROCm)."""
    if self.platform == "gpu":
      return ("cuda",) if self.kind.startswith("NVIDIA") else ()
    if self.platform == PJRTKIT_PLATFORM and self.is_gpu:
      return (PJRTKIT_PLATFORM, "cuda")
    return (self.platform,)

  def describe(self) -> str:
    """``platform 'pjrtkit', device kind 'pjrtkit_cpu'``."""
    return f"platform {self.platform!r}, device kind {self.kind!r}"


def _compute_capability(device: jax.Device) -> tuple[int, int] | None:
  """(major, minor) for NVIDIA GPUs, read from the device; None for anything else."""
  cc = getattr(device, "compute_capability", None)
  if cc:
    try:
      major, minor = str(cc).split(".")[:2]
      return int(major), int(minor)
    except ValueError:
      pass
  kind = device.device_kind or ""
  if device.platform in ("cuda", "gpu") or kind.startswith("NVIDIA"):
    if _HOPPER_KINDS.search(kind):
      return (9, 0)
    if re.search(r"\b(B200|B100|GB200)\b", kind):
      return (10, 0)
    if re.search(r"\b(A100|A10|A30|A40)\b", kind):
      return (8, 0)
    return (0, 0)  # An NVIDIA GPU of unknown generation.
  return None


def describe_device(device: jax.Device) -> DeviceInfo:
  """The DeviceInfo of `device`."""
  return DeviceInfo(platform=device.platform, kind=device.device_kind,
                    compute_capability=_compute_capability(device))


def current_device() -> DeviceInfo:
  """The device calls traced now run on: ``jax_default_device`` if set, else JAX's first device.

  Kernel choice happens at trace time, where arrays are abstract; like Tokamax, pjrtkit.kernels
  takes the default device of the process.
  """
  default = jax.config.jax_default_device
  if isinstance(default, str):
    return describe_device(jax.devices(default)[0])
  if default is not None:
    return describe_device(default)
  return describe_device(jax.devices()[0])
