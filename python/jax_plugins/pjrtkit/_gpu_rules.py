"""Lowering rules for platform ``pjrtkit`` on the xla_gpu device: JAX's own CUDA rules.

The xla_gpu device runs programs on XLA:GPU (OpenXLA's CUDA plugin), so ``pjrtkit`` lowers like
JAX's ``cuda`` platform:

* every rule JAX keeps for ``cuda`` (cuSOLVER / cuBLAS / cuFFT custom calls for linalg and FFT,
  threefry, cuDNN attention, collectives, ...) is registered for ``pjrtkit``;
* the generic rules of ``pallas_call`` and ``mpmd_map``, which choose by platform name, are
  registered for ``pjrtkit`` too, so Pallas kernels go to Triton or Mosaic GPU
  (``lax.platform_dependent`` takes its cuda branch through ``_platform_rules``);
* host callbacks (``pure_callback``, ``io_callback``, ``jax.debug.callback`` / ``print``,
  checkify) lower through JAX's own *cpu* rules, exactly as on the xla_cpu device
  (``_callback_rules``): the FFI custom call ``xla_ffi_python_cpu_callback`` with attribute
  ``index``, which pjrtkit's GPU handler (``_host_callbacks.GPU_HANDLER``, registered for
  ``pjrtkit``, i.e. XLA:GPU's ``CUDA`` platform) runs with the executable's binding, copying the
  data between the GPU and the host on the call's stream through libcudart (``_cuda_runtime``).
  JAX's cuda rules would emit ``xla_ffi_python_gpu_callback`` instead, whose XLA:GPU handler
  (jaxlib's, registered by JAX's CUDA plugin) finds the Python functions through execute-context
  data that jaxlib attaches to an execution only for its own platforms (cpu/cuda/rocm/sycl), never
  for a plugin: lowered that way (tried on an H200 with jax 0.11.2), the program crashed the
  process with a segmentation fault when the callback ran. The cpu target names are free on
  ``CUDA``, so pjrtkit's handler does not collide with jaxlib's. The handler declares no FFI
  traits, so XLA:GPU never captures the call into a command buffer (CUDA graph). Without a
  libcudart the callbacks are refused at lowering with ``GPU_CALLBACKS_ERROR``.

Each rule runs with a lowering context whose platforms (the rule context's and the module
context's) read ``("cuda",)`` and whose backend reports platform ``cuda`` (``as_cuda``): several
of them look the platform up there (Pallas's Triton registration, ``mpmd_map``, psend/precv). The module context is a shallow copy, so what the rules emit lands in
the real module.

``alias_gpu`` makes ``jax.devices("gpu")`` (and JAX code that asks for the ``gpu`` backend, such
as cuDNN attention's version checks) find pjrtkit when JAX's own CUDA backend is not there.

JAX internals used (``_jax_internals.INTERNALS``, features "cuda lowering", "pallas gpu", "host
callbacks" (the callback rules and the compile wrapper, shared with the xla_cpu device) and "gpu
alias"): the rule tables, ``ModuleContext.replace``, ``LoweringRuleContext.replace`` /
``tokens_out`` / ``set_tokens_out``, the generic rules of ``pallas_call_p`` and ``mpmd_map_p``,
and ``xla_bridge._alias_to_platforms``.
Rules registered for ``cuda`` after ``initialize()`` are followed, run as for cuda
(``_rule_table.follow``); the modules ``LATE_RULE_MODULES`` names are imported first all the same.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

from jax_plugins.pjrtkit import _callback_rules
from jax_plugins.pjrtkit import _cuda_runtime
from jax_plugins.pjrtkit import _platform_rules

logger = logging.getLogger(__name__)

CUDA = "cuda"
"""The platform JAX's rules are run for."""

CALLBACK_PRIMITIVES = frozenset(
    {"pure_callback", "io_callback", "debug_callback", "debug_print", "check"})
"""Primitives lowered by ``register_callbacks`` through JAX's cpu rules, not its cuda ones."""

GENERIC_PRIMITIVES = (
    ("jax._src.pallas.pallas_call", "pallas_call_p"),
    ("jax._src.pallas.mpmd", "mpmd_map_p"),
)
"""Primitives whose generic rule chooses by platform name: (module, attribute)."""

GPU_CALLBACKS_ERROR = (
    "{what} on pjrtkit's xla_gpu device needs the CUDA runtime (libcudart) to copy the "
    "callback's operands and results between the GPU and the host: {reason}")
"""The refusal of host callbacks at lowering when no libcudart is found; ``{what}`` names the
primitive, ``{reason}`` says where pjrtkit looked."""

LATE_RULE_MODULES = ("jax.experimental.mosaic.gpu",
                     "jax._src.pallas.mosaic_gpu.pallas_call_registration")
"""Modules that register rules when imported, imported (when they import) before the cuda rules
are copied: Mosaic GPU's ``mosaic_gpu_p`` cuda rule, and Pallas's Mosaic GPU lowering of
``mpmd_map`` (``plgpu.kernel``). (JAX 0.11.2 has no real-GPU lowering of ``pallas_call`` with
``plgpu.CompilerParams``, on its own cuda backend either: ``assert rule is not None``, seen on the
H200; Mosaic GPU kernels go through ``plgpu.kernel`` there.)"""


class _CudaNamedBackend:
  """A backend seen by JAX's cuda rules under the platform name ``cuda``.

  ``ModuleContext.get_backend`` checks that the backend's platform is the lowering platform.
  Every other attribute comes from the real backend (pjrtkit's, on the GPU).
  """

  platform = CUDA

  def __init__(self, backend: Any, pjrtkit_platform: str):
    self._backend = backend
    self.pjrtkit_platform = pjrtkit_platform  # What ``_callback_rules`` reads the cuda name as.

  def __getattr__(self, name: str) -> Any:
    return getattr(self._backend, name)


def as_cuda(ctx: Any, platform: str) -> Any:
  """``ctx`` with ``platform`` read as ``cuda`` in its (and its module context's) platforms."""
  from jax._src import xla_bridge as xb  # pylint: disable=g-import-not-at-top

  rename = lambda platforms: tuple(CUDA if p == platform else p for p in platforms)
  module_context = ctx.module_context
  if tuple(module_context.platforms) != rename(module_context.platforms):
    backend = module_context.backend
    if backend is None:
      try:
        backend = xb.get_backend(platform)
      except RuntimeError:  # A lowering for a topology: no pjrtkit backend in this process.
        backend = None
    module_context = module_context.replace(
        platforms=rename(module_context.platforms),
        backend=_CudaNamedBackend(backend, platform) if backend is not None else None)
  platforms = None if ctx.platforms is None else rename(ctx.platforms)
  return ctx.replace(module_context=module_context, platforms=platforms)


def cuda_lowering(rule: Callable[..., Any], platform: str,
                  before: Callable[[Any], None] | None = None) -> Callable[..., Any]:
  """``rule`` (JAX's, for cuda) run for ``platform`` as for cuda.

  Args:
    rule: the lowering rule.
    platform: pjrtkit's platform name.
    before: called with the original context first (refusals).

  Returns:
    The rule to register for ``platform``; tokens the rule sets are copied back.
  """

  def lowering(ctx: Any, *args: Any, **params: Any) -> Any:
    if before is not None:
      before(ctx)
    cuda_ctx = as_cuda(ctx, platform)
    results = rule(cuda_ctx, *args, **params)
    if cuda_ctx.tokens_out is not None:
      ctx.set_tokens_out(cuda_ctx.tokens_out)
    return results

  lowering.__name__ = f"pjrtkit_cuda_{getattr(rule, '__name__', 'lowering')}"
  lowering.__wrapped__ = rule  # type: ignore[attr-defined]
  return lowering


def import_late_rule_modules() -> list[str]:
  """Imports ``LATE_RULE_MODULES`` (those that import); returns their names."""
  imported = []
  for name in LATE_RULE_MODULES:
    try:
      importlib.import_module(name)
      imported.append(name)
    except Exception as exc:  # pylint: disable=broad-except  (optional: Mosaic GPU may be absent)
      logger.debug("pjrtkit: %s did not import (%s); rules it registers if imported later are "
                   "followed", name, exc)
  return imported


def cuda_rules() -> dict:
  """The primitive -> rule entries JAX keeps for platform ``cuda`` (a copy)."""
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  table = getattr(mlir, "_platform_specific_lowerings", None)
  if table is None or CUDA not in table:
    raise RuntimeError("pjrtkit: jax._src.interpreters.mlir._platform_specific_lowerings['cuda'] "
                       "is gone in this JAX version; the xla_gpu device cannot reuse JAX's cuda "
                       "lowering rules")
  return dict(table[CUDA])


def register_cuda_lowerings(platform: str = "pjrtkit",
                            skip: Iterable[str] = CALLBACK_PRIMITIVES) -> list[str]:
  """Registers every cuda-specific rule for ``platform``, run as for cuda; returns the names."""
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  skipped = set(skip)
  registered = []
  for primitive, entry in cuda_rules().items():
    if primitive.name in skipped:
      continue
    rule = getattr(entry, "rule", entry)
    mlir.register_lowering(primitive, cuda_lowering(rule, platform), platform=platform,
                           inline=getattr(entry, "inline", True))
    registered.append(primitive.name)
  return sorted(registered)


def register_generic_by_platform(platform: str = "pjrtkit") -> list[str]:
  """Registers the generic rules of ``GENERIC_PRIMITIVES`` for ``platform``, run as for cuda.

  Raises:
    LookupError: when one of them has no generic rule in this JAX.
  """
  return _platform_rules.register_generic(GENERIC_PRIMITIVES, platform,
                                          lambda rule: cuda_lowering(rule, platform))


_CALLBACK_NAMES = {"pure_callback": "jax.pure_callback",
                   "io_callback": "jax.experimental.io_callback",
                   "debug_callback": "jax.debug.callback", "debug_print": "jax.debug.print",
                   "check": "checkify's check"}


def require_cuda_runtime(name: str) -> None:
  """Raises NotImplementedError(``GPU_CALLBACKS_ERROR``) for primitive ``name`` when no
  libcudart can be loaded (``_cuda_runtime.load``); the lowering's ``before`` hook."""
  try:
    _cuda_runtime.load()
  except _cuda_runtime.CudaRuntimeNotFound as missing:
    raise NotImplementedError(GPU_CALLBACKS_ERROR.format(
        what=_CALLBACK_NAMES.get(name, name), reason=missing)) from missing


def register_callbacks(platform: str = "pjrtkit") -> list[str]:
  """Registers, for ``platform``, JAX's cpu rules for the host-callback primitives (as on the
  xla_cpu device), each refusing first when no libcudart is found; returns their names, sorted.

  ``_host_callbacks.install(..., device_memory=True)`` must have registered the GPU handler and
  wrapped JAX's compile (see the module docstring).
  """
  return _callback_rules.register(platform, before=require_cuda_runtime)


def alias_gpu(platform: str = "pjrtkit") -> Callable[[], None]:
  """Adds ``platform`` to JAX's ``gpu`` alias, after cuda/rocm/oneapi; returns the undo.

  ``jax.devices("gpu")`` then finds pjrtkit's devices when no JAX GPU backend is there; with
  JAX's CUDA backend present, ``gpu`` still means ``cuda``.
  """
  from jax._src import xla_bridge as xb  # pylint: disable=g-import-not-at-top

  platforms = xb._alias_to_platforms.setdefault("gpu", [])  # pylint: disable=protected-access
  before = list(platforms)
  if platform not in platforms:
    platforms.append(platform)

  def undo() -> None:
    platforms[:] = before

  return undo
