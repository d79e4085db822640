"""``lax.platform_dependent`` on platform ``pjrtkit``: the branch of the platform the device runs.

JAX chooses the branch of ``lax.platform_dependent`` (and of the JAX code built on it, such as
``jnp.linalg`` and the PRNG) by lowering-platform name, in two generic rules: ``platform_index``'s
(``mlir.lower_per_platform``) and ``cond``'s (it keeps the branches whose platforms hold the
equation's platforms). Neither knows the name ``pjrtkit``, so without this module the ``default=``
branch is taken on both devices. A ``pjrtkit=`` branch, where one is given, is taken on both.

``register(platform, as_platform)`` registers both generic rules for ``platform``, run with the
*rule context's* platforms renamed (``pjrtkit`` -> ``cpu`` on the xla_cpu device, ``cuda`` on the
xla_gpu device). The module context is left as it is: ``cond``'s rule lowers its branches with
``mlir.jaxpr_subcomp(ctx.module_context, ...)``, so what the branches hold is lowered with
``pjrtkit``'s own rules, exactly as at top level. (Renaming the module context too, as the cuda
rules need, made a host callback inside any ``lax.cond`` / ``lax.switch`` lower through JAX's
cuda callback rule, whose handler finds no callbacks in a plugin's execute context.)

JAX internals used (``_jax_internals.INTERNALS``, feature "platform_dependent"): ``mlir._lowerings``
(the generic rules), the two rules themselves, ``LoweringRuleContext.replace`` / ``platforms`` /
``tokens_out`` / ``set_tokens_out``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any

PRIMITIVES = (
    ("jax._src.lax.control_flow.conditionals", "platform_index_p"),
    ("jax._src.lax.control_flow.conditionals", "cond_p"),
)
"""The primitives whose generic rule chooses by platform name: (module, attribute)."""


def named_platforms(params: dict[str, Any]) -> set[str]:
  """The platform names the branches of a ``platform_index`` / ``cond`` equation name (its
  ``platforms`` / ``branches_platforms`` parameter; a None entry is the default branch)."""
  lists = params.get("platforms", params.get("branches_platforms")) or ()
  return {p for names in lists if names is not None for p in names}


def renamed(rule: Callable[..., Any], platform: str, as_platform: str) -> Callable[..., Any]:
  """``rule`` run with ``platform`` read as ``as_platform`` in the rule context's platforms only,
  unless a branch names ``platform`` itself (``lax.platform_dependent(..., pjrtkit=f)``: code
  written for this plugin, such as ``pjrtkit.kernels``' choice of a kernel), which then runs.

  Tokens the rule sets on the renamed context are copied back to the original one.
  """

  def lowering(ctx: Any, *args: Any, **params: Any) -> Any:
    if platform in named_platforms(params):  # A branch for ``platform`` itself: no renaming.
      return rule(ctx, *args, **params)
    platforms = ctx.platforms or ctx.module_context.platforms
    named = ctx.replace(platforms=tuple(as_platform if p == platform else p for p in platforms))
    results = rule(named, *args, **params)
    if named.tokens_out is not None:
      ctx.set_tokens_out(named.tokens_out)
    return results

  lowering.__name__ = f"pjrtkit_{as_platform}_{getattr(rule, '__name__', 'lowering')}"
  lowering.__wrapped__ = rule  # type: ignore[attr-defined]
  return lowering


def register_generic(primitives: Iterable[tuple[str, str]], platform: str,
                     wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> list[str]:
  """Registers, for ``platform``, ``wrap`` of the generic rule of each (module, attribute)
  primitive of ``primitives``; returns their names, sorted.

  Raises:
    LookupError: when one of them has no generic rule in this JAX.
  """
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  generic = mlir._lowerings  # pylint: disable=protected-access
  registered = []
  for module, attribute in primitives:
    primitive = getattr(importlib.import_module(module), attribute)
    entry = generic.get(primitive)
    if entry is None:
      raise LookupError(f"pjrtkit: {module}.{attribute} has no generic lowering rule")
    mlir.register_lowering(primitive, wrap(entry.rule), platform=platform,
                           inline=getattr(entry, "inline", True))
    registered.append(primitive.name)
  return sorted(registered)


def register(platform: str, as_platform: str) -> list[str]:
  """Registers the generic rules of ``PRIMITIVES`` for ``platform``, choosing as ``as_platform``
  does; returns the primitives' names, sorted (``LookupError`` as ``register_generic``)."""
  return register_generic(PRIMITIVES, platform,
                          lambda rule: renamed(rule, platform, as_platform))
