"""Lowering rules for JAX's host-callback primitives on platform ``pjrtkit``: JAX's own cpu rules.

pure_callback, io_callback, debug_callback, debug_print, checkify's check and
``jax.experimental.buffer_callback`` lower on ``pjrtkit`` through the very rules JAX uses for
``cpu``, called with a lowering context whose
module platforms read ``("cpu",)`` (``jax._src.callback.emit_python_callback`` refuses any other
platform name). So the module is exactly what jaxlib's cpu backend compiles: the FFI custom call
``xla_ffi_python_cpu_callback`` with the one attribute ``index``, the callable added with
``module_context.add_host_callback``, and JAX's Shardy/GSPMD shardings (the token case included).
``_host_callbacks`` runs the custom call.

The Python functions the rules emit are JAX's (``pure_callback_impl``, ...): they place the
arguments on the ``cpu`` backend, as on GPU and TPU. With ``JAX_PLATFORMS=pjrtkit`` alone they
could only fail when the program runs, so the rules refuse at lowering instead, with JAX's own
"Make sure "cpu" is listed in --jax_platforms" error (checkify's checks need no cpu backend).

Rules of other primitives call ``emit_python_callback`` themselves (a library's own primitive,
``jax.experimental.sparse.linalg.spsolve``'s cpu rule): ``follow_emit_python_callback`` wraps it
(in ``jax._src.callback`` and its re-export ``jax.interpreters.mlir``) so that, lowering for
``pjrtkit``, it runs with the context ``as_cpu`` makes, as JAX's own callback rules do here.

JAX internals used (listed in ``_jax_internals.INTERNALS`` under "host callbacks" and fenced by
``tests/jax/jax_internals_test.py``): the rule tables (``mlir._lowerings``,
``mlir._platform_specific_lowerings['cpu']``), ``ModuleContext.replace`` /
``LoweringRuleContext.replace`` / ``tokens_out`` / ``set_tokens_out``, the impls' error, and
``callback.emit_python_callback`` (wrapped).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable
from typing import Any

from jax_plugins.pjrtkit import _topology

CPU = "cpu"
"""The platform JAX's callback rules are run for."""

EMIT_MODULES = ("jax._src.callback", "jax.interpreters.mlir")
"""The modules whose ``emit_python_callback`` ``follow_emit_python_callback`` wraps."""


@dataclasses.dataclass(frozen=True)
class CallbackRule:
  """One callback primitive's rule as ``register`` installs it.

  Attributes:
    primitive: the JAX primitive.
    rule: JAX's cpu lowering rule for it.
    cpu_check: raises JAX's "cpu is not listed" error when the cpu backend is missing (None:
      the callback needs no cpu backend).
  """

  primitive: Any
  rule: Callable[..., Any]
  cpu_check: Callable[[], None] | None


class _CpuNamedBackend:
  """A backend seen by JAX's callback lowering under the platform name ``cpu``.

  ``emit_python_callback`` calls ``module_context.get_backend()``, which checks that the
  backend's platform is the lowering platform; the backend is used only on TPU. Every other
  attribute comes from the real backend.
  """

  platform = CPU

  def __init__(self, backend: Any):
    self._backend = backend

  def __getattr__(self, name: str) -> Any:
    return getattr(self._backend, name)


def as_cpu(ctx: Any, platform: str) -> Any:
  """``ctx`` with ``platform`` read as ``cpu`` in its (and its module context's) platforms.

  The module context is a shallow copy: the module, insertion point, host callbacks and caches
  are shared with ``ctx``'s, so what the rule emits and registers lands in the real module.
  """
  from jax._src import xla_bridge as xb  # pylint: disable=g-import-not-at-top

  rename = lambda platforms: tuple(CPU if p == platform else p for p in platforms)
  module_context = ctx.module_context
  backend = module_context.backend
  module_context = module_context.replace(
      platforms=rename(module_context.platforms),
      backend=_CpuNamedBackend(backend if backend is not None else xb.get_backend(platform)))
  platforms = None if ctx.platforms is None else rename(ctx.platforms)
  return ctx.replace(module_context=module_context, platforms=platforms)


def _cpu_lowering(entry: CallbackRule, platform: str,
                  before: Callable[[str], None] | None = None) -> Callable[..., Any]:
  """``entry.rule`` run for ``platform`` as for cpu (tokens it sets are copied back);
  ``before``, when given, is called first with the primitive's name (a device's refusal)."""

  def lowering(ctx: Any, *args: Any, **params: Any) -> Any:
    _topology.refuse_compile_only(ctx)  # No host callbacks in executables for a topology.
    if before is not None:
      before(entry.primitive.name)
    if entry.cpu_check is not None:
      entry.cpu_check()
    cpu_ctx = as_cpu(ctx, platform)
    results = entry.rule(cpu_ctx, *args, **params)
    if cpu_ctx.tokens_out is not None:
      ctx.set_tokens_out(cpu_ctx.tokens_out)
    return results

  lowering.__name__ = f"pjrtkit_{getattr(entry.rule, '__name__', 'callback_lowering')}"
  return lowering


def _jax_cpu_error(impl: Callable[[], Any], what: str) -> Callable[[], None]:
  """A check raising JAX's own error when the cpu backend is missing.

  JAX's callback impls look the cpu device up before touching their arguments and raise
  RuntimeError("... Make sure "cpu" is listed in --jax_platforms ..."); ``impl`` calls one with no
  arguments, and is called only after the cpu backend was found missing.
  """

  def check() -> None:
    from jax._src import xla_bridge as xb  # pylint: disable=g-import-not-at-top

    try:
      xb.local_devices(backend=CPU)
      return
    except RuntimeError as missing:
      cause = missing
    try:
      impl()
    except RuntimeError as jax_error:
      raise RuntimeError(str(jax_error)) from cause
    raise RuntimeError(f"{what} needs the cpu backend: make sure \"cpu\" is listed in "
                       "--jax_platforms or the JAX_PLATFORMS environment variable") from cause

  return check


def _never(*_: Any) -> Any:
  raise AssertionError("pjrtkit: a callback impl ran its callback while probing the cpu backend")


def callback_rules() -> list[CallbackRule]:
  """JAX's rules for the callback primitives, as ``register`` installs them.

  Raises:
    KeyError: when JAX keeps one of them elsewhere (``_jax_internals.problems`` says so
      first).
  """
  from jax._src import buffer_callback as bcb  # pylint: disable=g-import-not-at-top
  from jax._src import callback as cb  # pylint: disable=g-import-not-at-top
  from jax._src import checkify  # pylint: disable=g-import-not-at-top
  from jax._src import debugging  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  generic = mlir._lowerings  # pylint: disable=protected-access
  cpu = mlir._platform_specific_lowerings[CPU]  # pylint: disable=protected-access
  pure_check = _jax_cpu_error(lambda: cb.pure_callback_impl(
      result_avals=(), callback=_never, sharding=None, vmap_method=None), "jax.pure_callback")
  io_check = _jax_cpu_error(lambda: cb.io_callback_impl(
      result_avals=(), callback=_never, sharding=None, ordered=False), "jax.io_callback")
  debug_check = _jax_cpu_error(lambda: debugging.debug_callback_p.impl(
      callback=_never, effect=debugging.debug_effect, partitioned=False), "jax.debug.callback")
  return [
      CallbackRule(cb.pure_callback_p, generic[cb.pure_callback_p].rule, pure_check),
      CallbackRule(cb.io_callback_p, generic[cb.io_callback_p].rule, io_check),
      CallbackRule(debugging.debug_callback_p, cpu[debugging.debug_callback_p].rule,
                   debug_check),
      CallbackRule(debugging.debug_print_p, cpu[debugging.debug_print_p].rule, debug_check),
      CallbackRule(checkify.check_p, cpu[checkify.check_p].rule, None),
      # The function gets XLA's buffers (_buffer_callbacks), not cpu arrays: no cpu backend.
      CallbackRule(bcb.buffer_callback_p, generic[bcb.buffer_callback_p].rule, None),
  ]


def register(platform: str = "pjrtkit",
             before: Callable[[str], None] | None = None) -> list[str]:
  """Registers the callback rules for ``platform``; returns the primitive names, sorted.

  ``before(primitive_name)`` runs first at each lowering (the xla_gpu device checks there that
  it can copy the callback's data, ``_gpu_rules.register_callbacks``).
  """
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  rules = callback_rules()
  for entry in rules:
    mlir.register_lowering(entry.primitive, _cpu_lowering(entry, platform, before),
                           platform=platform, cacheable=False)
  return sorted(entry.primitive.name for entry in rules)


def follow_emit_python_callback(platform: str = "pjrtkit",
                                before: Callable[[str], None] | None = None
                                ) -> Callable[[], None]:
  """Wraps JAX's ``emit_python_callback`` so that any rule calling it lowers for ``platform`` as
  for cpu (``as_cpu``); ``before``, when given, runs first (the xla_gpu device's refusal without
  libcudart). Calls lowering for other platforms pass through unchanged.

  Returns:
    The undo: puts the original function back in every module of ``EMIT_MODULES``.
  """
  from jax._src import callback as cb  # pylint: disable=g-import-not-at-top

  original = cb.emit_python_callback

  @functools.wraps(original)
  def emit_python_callback(ctx: Any, *args: Any, **kwargs: Any) -> Any:
    module_context = ctx.module_context
    # A cuda rule pjrtkit runs on the xla_gpu device sees platform "cuda" (``_gpu_rules.as_cuda``,
    # whose backend says so): JAX's cuda callback would crash there, so it is cpu's too.
    named = ("cuda" if getattr(module_context.backend, "pjrtkit_platform", None) == platform
             else platform)
    if named not in (module_context.platforms or ()):
      return original(ctx, *args, **kwargs)
    _topology.refuse_compile_only(ctx)  # No host callbacks in executables for a topology.
    if before is not None:
      before("a host callback")
    return original(as_cpu(ctx, named), *args, **kwargs)

  replaced = []
  for name in EMIT_MODULES:
    module = importlib.import_module(name)
    if getattr(module, "emit_python_callback", None) is original:
      replaced.append(module)
      module.emit_python_callback = emit_python_callback

  def undo() -> None:
    for module in replaced:
      module.emit_python_callback = original

  return undo
