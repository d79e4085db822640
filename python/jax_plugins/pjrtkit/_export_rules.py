"""``jax.export`` on platform ``pjrtkit``: artefacts for the JAX platform the device lowers as.

pjrtkit's devices lower exactly as one of JAX's own platforms (the xla_cpu device as ``cpu``, the
xla_gpu device as ``cuda``), so what ``jax.export`` makes for that platform is what pjrtkit runs:

* ``Exported.call`` (the generic rule of ``call_exported``, which checks the lowering platforms
  against ``exported.platforms``) accepts on ``pjrtkit`` an artefact exported for the device's JAX
  platform, and one exported for ``pjrtkit`` as before. The rule then runs with the module
  context's platforms read as that JAX platform, so a multi-platform artefact (``('cpu',
  'cuda')``) is called with its branch for it. An artefact for any other platform (``tpu``, or
  ``cpu`` on the xla_gpu device) is refused with JAX's own ValueError naming both.
* on the xla_gpu device (``install(..., default=True)``), ``jax.export.default_export_platform()``
  (and so ``export(f)`` without ``platforms=``) answers ``cuda`` when pjrtkit is the default
  backend, the way it answers ``cuda`` for JAX's own GPU backend: an artefact exported on
  pjrtkit runs on JAX's CUDA backend, and the other way round. It does from the moment JAX has started its backends
  (``initialize()`` runs then): the one call that starts them, an ``export(f)`` that is a
  process's first JAX call, still answers ``pjrtkit``. The xla_cpu device keeps ``pjrtkit`` as
  its default: programs there may hold pjrtkit's own custom calls (``pjrtkit.kernels``' native
  kernels), which jaxlib's cpu cannot run, so an artefact made there by default says so.

JAX internals used (``_jax_internals.INTERNALS``, feature "export"): ``mlir._lowerings`` (the
generic rule), ``_export._call_exported_lowering``, ``_export.default_export_platform`` /
``default_lowering_platform`` and the public ``jax.export.default_export_platform`` (replaced; the
undo puts the originals back), ``ModuleContext.replace`` and ``LoweringRuleContext.replace``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

DEFAULT_PLATFORM_NAMES = ("default_export_platform", "default_lowering_platform")
"""The module-level names of ``jax._src.export._export`` that answer the default platform."""


def call_exported_rule(rule: Callable[..., Any], platform: str,
                       as_platform: str) -> Callable[..., Any]:
  """``call_exported``'s rule ``rule`` accepting, on ``platform``, artefacts for ``as_platform``."""

  def lowering(ctx: Any, *args: Any, exported: Any) -> Any:
    module_context = ctx.module_context
    if platform in module_context.platforms and platform not in exported.platforms \
        and as_platform in exported.platforms:
      rename = lambda platforms: tuple(as_platform if p == platform else p for p in platforms)
      named = ctx.replace(
          module_context=module_context.replace(platforms=rename(module_context.platforms)),
          platforms=None if ctx.platforms is None else rename(ctx.platforms))
      results = rule(named, *args, exported=exported)
      if named.tokens_out is not None:
        ctx.set_tokens_out(named.tokens_out)
      return results
    return rule(ctx, *args, exported=exported)

  lowering.__name__ = f"pjrtkit_{as_platform}_{getattr(rule, '__name__', 'lowering')}"
  lowering.__wrapped__ = rule  # type: ignore[attr-defined]
  return lowering


def default_platform(original: Callable[[], str], platform: str,
                     as_platform: str) -> Callable[[], str]:
  """``default_export_platform`` answering ``as_platform`` where ``original`` answers
  ``platform``."""

  def default_export_platform() -> str:
    name = original()
    return as_platform if name == platform else name

  default_export_platform.__doc__ = original.__doc__
  default_export_platform.__wrapped__ = original  # type: ignore[attr-defined]
  return default_export_platform


def install(platform: str, as_platform: str, default: bool) -> Callable[[], None]:
  """Registers the ``call_exported`` rule for ``platform``, which lowers as ``as_platform``, and,
  when ``default``, makes ``as_platform`` the default export platform while ``platform`` is the
  default backend; returns the undo of the default (the rule is undone with the platform's
  other lowering rules).

  Raises:
    LookupError: when ``call_exported`` has no generic rule in this JAX.
  """
  import jax.export  # pylint: disable=g-import-not-at-top
  from jax._src.export import _export  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  entry = mlir._lowerings.get(_export.call_exported_p)  # pylint: disable=protected-access
  if entry is None:
    raise LookupError("pjrtkit: jax._src.export._export.call_exported_p has no generic rule")
  before = {name: getattr(_export, name) for name in DEFAULT_PLATFORM_NAMES}
  public = jax.export.default_export_platform
  replacement = default_platform(before["default_export_platform"], platform, as_platform)
  mlir.register_lowering(_export.call_exported_p,
                         call_exported_rule(entry.rule, platform, as_platform),
                         platform=platform, inline=getattr(entry, "inline", True))
  if not default:
    return lambda: None
  for name in DEFAULT_PLATFORM_NAMES:
    setattr(_export, name, replacement)
  jax.export.default_export_platform = replacement

  def undo() -> None:
    for name, value in before.items():
      setattr(_export, name, value)
    jax.export.default_export_platform = public

  return undo
