"""jaxlib's CUDA FFI handlers and types, registered for ``pjrtkit`` on the xla_gpu device.

JAX's cuda rules (``_gpu_rules``) emit custom calls to jaxlib's CUDA kernels: cuSOLVER
(``cusolver_*_ffi``), the linalg helpers (``cu_lu_pivots_to_permutation``, ...), threefry
(``cu_threefry2x32_ffi``), cuSPARSE, and the host-callback handlers of jaxlib's CUDA plugin
extension (``xla_ffi_python_gpu_callback``, ...). ``register`` registers each of them for
``pjrtkit``: the plugin's FFI extension hands them to XLA:GPU under its ``CUDA`` platform (the
xla_gpu device's FFI platform), which is also where JAX's own CUDA plugin puts them when it is
initialized in the same process; the same handler registered twice is accepted.

Only typed handlers (``api_version=1``) with an ``execute`` stage alone are registered: the PJRT
FFI extension has no untyped custom-call path and takes one handler per target. The
others (bundles with an ``instantiate`` stage, e.g. jaxlib 0.11's GPU callback handlers) reach
XLA:GPU through JAX's own CUDA plugin (``jax_plugins.xla_cuda13``), which JAX initializes in every
process where the xla_gpu device is chosen (it is how pjrtkit finds the CUDA plugin) and which
registers every ``CUDA`` target with the same XLA:GPU library, since both load the same file.
The plugin forwards the CUDA plugin's ``PJRT_Extension_Type_Gpu_Custom_Call`` too (untyped targets
and stage bundles), for callers that register through pjrtkit's table itself.

JAX internals used (``_jax_internals.INTERNALS``, feature "cuda lowering"):
``jax._src.lib.{gpu_solver,gpu_linalg,gpu_prng,gpu_sparse}.registrations`` and jaxlib's
``plugin_support.import_from_plugin`` for the CUDA plugin extension's ``ffi_handlers`` /
``ffi_types``.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

CUDA = "CUDA"
"""The XLA platform name jaxlib's CUDA registrations are keyed by."""

def registration_modules() -> tuple[Any, ...]:
  """jaxlib's modules whose ``registrations()['CUDA']`` JAX's cuda rules emit."""
  from jax._src.lib import gpu_linalg  # pylint: disable=g-import-not-at-top
  from jax._src.lib import gpu_prng  # pylint: disable=g-import-not-at-top
  from jax._src.lib import gpu_solver  # pylint: disable=g-import-not-at-top
  from jax._src.lib import gpu_sparse  # pylint: disable=g-import-not-at-top

  return (gpu_solver, gpu_linalg, gpu_prng, gpu_sparse)


def jaxlib_cuda_targets() -> list[tuple[str, Any, int]]:
  """(name, handler capsule, api_version) of jaxlib's CUDA kernels; [] without the CUDA plugin."""
  targets: list[tuple[str, Any, int]] = []
  for module in registration_modules():
    registrations = getattr(module, "registrations", None)
    if registrations is not None:
      targets.extend(registrations().get(CUDA, []))
  extension = cuda_plugin_extension()
  if extension is not None:
    targets.extend((name, value, 1) for name, value in extension.ffi_handlers().items())
  return targets


def cuda_plugin_extension() -> Any:
  """jaxlib's ``cuda_plugin_extension`` module (from jax-cuda13/12-plugin), or None."""
  try:
    from jaxlib import plugin_support  # pylint: disable=g-import-not-at-top
  except ImportError:
    return None
  try:
    return plugin_support.import_from_plugin("cuda", "cuda_plugin_extension")
  except Exception:  # pylint: disable=broad-except  (no CUDA plugin: nothing to register)
    return None


def execute_only(handler: Any) -> bool:
  """True for a handler the PJRT FFI extension can take: a capsule or {"execute": capsule}."""
  return not isinstance(handler, dict) or set(handler) == {"execute"}


def register(platform: str = "pjrtkit") -> tuple[list[str], list[str]]:
  """Registers jaxlib's CUDA FFI handlers (execute-only ones) and types for ``platform``.

  Returns:
    The handler names and the type names registered, sorted.
  """
  from jax import ffi  # pylint: disable=g-import-not-at-top
  from jax._src.lib import xla_client  # pylint: disable=g-import-not-at-top

  names = []
  for name, handler, api_version in jaxlib_cuda_targets():
    if api_version != 1:
      continue
    if not execute_only(handler):
      logger.debug("pjrtkit: %s has stages %s; JAX's CUDA plugin registers it with XLA:GPU",
                   name, sorted(handler))
      continue
    ffi.register_ffi_target(name, handler, platform=platform, api_version=1)
    names.append(name)
  types = []
  extension = cuda_plugin_extension()
  if extension is not None and hasattr(extension, "ffi_types"):
    for type_name, value in extension.ffi_types().items():
      try:
        xla_client.register_custom_type(type_name, value, platform=platform)
        types.append(type_name)
      except Exception as exc:  # pylint: disable=broad-except
        # JAX's own CUDA plugin may have registered it in the same XLA:GPU already.
        logger.debug("pjrtkit: FFI type %s not registered again: %s", type_name, exc)
  return sorted(names), sorted(types)
