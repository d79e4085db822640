"""Programs pjrtkit refuses at compile time instead of letting its inner plugin compute them wrongly.

JAX's own test suite (``tools/jax_suite``) found constructs the inner plugin of a device gets
wrong. Such a program is refused before it reaches the plugin, with an error that names the
construct and the reason. The limits belong to the inner plugin, so they are keyed by the
reference device the running device runs like: the ``backend`` attribute of the device (its
registered name: ``xla_cpu`` for the reference device) through ``_device.runs_like``, so a
device over XLA:CPU made with ``tools/new_device.py`` gets XLA:CPU's limits too.

* ``xla_cpu`` (the XLA:CPU of ``xla-cpu-pjrt`` 0.0.1): Shardy reduced/unreduced axes (a sharding
  with ``unreduced={...}`` or ``reduced={...}``: ``PartitionSpec(unreduced=...)``,
  ``all_gather(..., to='reduced')`` and their gradients). That XLA predates them: it returns wrong
  values (gradients doubled), rejects some programs ("unknown attribute code: 17") and aborts the
  process on a Shardy CHECK for others. JAX sends programs as bytecode, where the plugin cannot
  see these attributes, so the check reads the MLIR module here (about 1.5 ms for a 50 KB module,
  next to hundreds of milliseconds of compilation). JAX's own tests show that many such programs
  still come out right (79 of 122 in shard_map/pjit/array/export tests on jax 0.12.0.1) and that
  there is no textual sign of which: ``PJRTKIT_ALLOW_UNSUPPORTED_PROGRAMS=1`` compiles them anyway,
  at the user's risk.
"""


from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Sequence
from typing import Any

from jax_plugins.pjrtkit import _device

ALLOW_ENV = "PJRTKIT_ALLOW_UNSUPPORTED_PROGRAMS"
"""Set to ``1`` to compile refused programs anyway (their results may be wrong)."""


@dataclasses.dataclass(frozen=True)
class Limit:
  """A construct an inner plugin gets wrong.

  Attributes:
    marker: text that appears in the program's MLIR exactly when it uses the construct.
    what: the construct, for the error.
    why: what the inner plugin does with it.
  """

  marker: str
  what: str
  why: str


_UNREDUCED_WHY = ("which the XLA:CPU of xla-cpu-pjrt 0.0.1 that pjrtkit's reference device runs "
                  "on partitions incorrectly (wrong values, or a process abort)")

LIMITS: dict[str, tuple[Limit, ...]] = {
    "xla_cpu": (
        Limit("unreduced={", "Shardy unreduced axes (a sharding with `unreduced={...}`, e.g. "
              "from PartitionSpec(unreduced=...))", _UNREDUCED_WHY),
        Limit("reduced={", "Shardy reduced axes (a sharding with `reduced={...}`, e.g. from "
              "all_gather(..., to='reduced'))", _UNREDUCED_WHY),
    ),
}
"""Per reference device (``_device.runs_like`` of the ``backend`` device attribute), the
constructs refused."""


def _inner_backend(backend: Any) -> str | None:
  """The ``backend`` attribute of ``backend``'s devices (``'xla_cpu'``), or None."""
  try:
    devices = backend.local_devices()
  except Exception:  # pylint: disable=broad-except  (a compile-only client, say)
    return None
  return getattr(devices[0], "backend", None) if devices else None


@dataclasses.dataclass(frozen=True)
class DeviceOnlyTarget:
  """A custom-call target that only one of pjrtkit's devices can run.

  Attributes:
    target: the custom-call target name.
    backend: the reference device whose devices run it (``xla_gpu``: every device that runs
      like xla_gpu).
    what: what emits it, for the error (``Pallas Triton kernels``).
  """

  target: str
  backend: str
  what: str


_GPU_KERNELS = {"__gpu$xla.gpu.triton": "Pallas Triton kernels", "triton_kernel_call":
                "Triton kernels (jax-triton)", "mosaic_gpu": "Mosaic GPU kernels",
                "mosaic_gpu_v2": "Mosaic GPU kernels"}
DEVICE_ONLY_TARGETS: dict[str, DeviceOnlyTarget] = {
    name: DeviceOnlyTarget(name, "xla_gpu", what) for name, what in _GPU_KERNELS.items()}
"""Custom-call targets only one device runs, by name: XLA:GPU's Triton and Mosaic GPU kernels,
plus what ``register_device_only_targets`` adds (pjrtkit's native CPU kernels)."""


def register_device_only_targets(targets: Sequence[str], backend: str, what: str) -> None:
  """Declares that only the device whose ``backend`` attribute is ``backend`` runs ``targets``.

  A program calling one of them is then refused on pjrtkit's other devices with an error naming
  ``what`` and both devices, instead of failing inside the inner plugin's compiler on a missing
  handler (the typical case: a function exported with ``jax.export`` on one pjrtkit device and
  called on another; both are platform ``pjrtkit``, so JAX's own platform check lets it through).
  """
  for target in targets:
    DEVICE_ONLY_TARGETS[target] = DeviceOnlyTarget(target, backend, what)


def _device_words(backend: Any, inner: str) -> str:
  try:
    kind = backend.local_devices()[0].device_kind
  except Exception:  # pylint: disable=broad-except
    kind = "unknown"
  return f"pjrtkit's {inner or 'unknown'} device (device kind {kind!r})"


def calls_target(text: str, target: str) -> bool:
  """Whether MLIR text ``text`` has a custom call to ``target`` (bare or quoted symbol)."""
  return f"@{target}(" in text or f'@"{target}"' in text or f'call_target_name = "{target}"' in text


def check(backend: Any, computation: Any) -> None:
  """Raises when ``computation`` cannot run on ``backend``'s device.

  ValueError: it calls a custom-call target only another pjrtkit device runs
  (``DEVICE_ONLY_TARGETS``). NotImplementedError: it uses a construct the device's inner plugin
  gets wrong (``LIMITS``; ``PJRTKIT_ALLOW_UNSUPPORTED_PROGRAMS=1`` skips these).
  """
  inner = _inner_backend(backend) or ""
  family = _device.runs_like(inner) if inner else ""
  foreign = [t for t in DEVICE_ONLY_TARGETS.values() if t.backend != family]
  limits = () if os.environ.get(ALLOW_ENV) == "1" else LIMITS.get(family, ())
  if not foreign and not limits:
    return
  text = computation.operation.get_asm(enable_debug_info=False, large_elements_limit=16)
  for target in foreign:
    if calls_target(text, target.target):
      raise ValueError(
          f"pjrtkit: the program calls {target.what} (custom call {target.target!r}), which only "
          f"pjrtkit's {target.backend} device runs; this is {_device_words(backend, inner)}. A "
          "program exported (jax.export) on one pjrtkit device runs only on that device kind: "
          "export it again on this one, or choose an implementation this device has")
  for limit in limits:
    if limit.marker in text:
      raise NotImplementedError(f"pjrtkit: the program uses {limit.what}, {limit.why}; pjrtkit "
                                f"refuses to compile it (set {ALLOW_ENV}=1 to compile it anyway, "
                                "at your own risk)")


def checked_compiles(compile_or_get_cached: Callable[..., Any],
                     platform: str) -> Callable[..., Any]:
  """``jax._src.compiler.compile_or_get_cached`` that first runs ``check`` for ``platform``."""

  @functools.wraps(compile_or_get_cached)
  def wrapper(backend: Any, computation: Any, *args: Any, **kwargs: Any) -> Any:
    if getattr(backend, "platform", None) == platform:
      check(backend, computation)
    return compile_or_get_cached(backend, computation, *args, **kwargs)

  setattr(wrapper, "_pjrtkit_checks", platform)
  return wrapper
