"""Lowering rules for JAX's host-callback primitives on platform ``pjrtkit``.

Each rule mirrors what JAX does for ``cpu`` (effects, token threading, op sharding) but emits
pjrtkit's callback custom call through ``_host_callbacks.emit_callback``. The Python function
each call runs is the same one JAX's cpu rules run (``pure_callback_impl``, ``io_callback_impl``,
the debug primitives' impls), so the callback sees the same values (JAX arrays on the ``cpu``
backend) as on cpu. Like on GPU and TPU, that needs the ``cpu`` backend: with
``JAX_PLATFORMS=pjrtkit`` alone, JAX's impls raise "Make sure "cpu" is listed in --jax_platforms".
"""

from __future__ import annotations

from typing import Any

from jax_plugins.pjrtkit import _host_callbacks


def _op_sharding(ctx: Any, sharding: Any) -> Any:
  """The op sharding JAX gives a pure/io callback in this lowering context (None outside SPMD)."""
  from jax._src import callback as cb  # pylint: disable=g-import-not-at-top

  return cb._callback_op_sharding(  # pylint: disable=protected-access
      ctx.module_context.axis_context, sharding, ctx.avals_out)


def _pure_callback_rule(ctx: Any, *args: Any, callback: Any, sharding: Any, **params: Any):
  from jax._src import callback as cb  # pylint: disable=g-import-not-at-top

  def run(*flat: Any) -> tuple[Any, ...]:
    return tuple(cb.pure_callback_impl(*flat, callback=callback, sharding=None, **params))

  op_sharding = _op_sharding(ctx, sharding)
  results, _ = _host_callbacks.emit_callback(ctx, run, None, args, has_side_effect=False,
                                             sharding=op_sharding)
  return results


def _io_callback_rule(ctx: Any, *args: Any, callback: Any, sharding: Any, ordered: bool,
                      **params: Any):
  from jax._src import callback as cb  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  def run(*flat: Any) -> tuple[Any, ...]:
    return tuple(cb.io_callback_impl(*flat, callback=callback, sharding=None, ordered=ordered,
                                     **params))

  op_sharding = _op_sharding(ctx, sharding)
  if not ordered:
    results, _ = _host_callbacks.emit_callback(ctx, run, None, args, has_side_effect=True,
                                               sharding=op_sharding)
    return results
  effect = cb._OrderedIOEffect  # pylint: disable=protected-access
  results, token = _host_callbacks.emit_callback(ctx, run, ctx.tokens_in.get(effect), args,
                                                 has_side_effect=True)
  ctx.set_tokens_out(ctx.tokens_in.update_tokens(mlir.TokenSet({effect: token})))
  return results


def _debug_sharding(ctx: Any) -> Any:
  """The op sharding JAX gives a debug callback: none outside SPMD, one device (0) for automatic
  SPMD, every device for fully manual shard_map.

  Raises:
    NotImplementedError: for partially manual shard_map (JAX gathers there; not ported).
  """
  from jax._src import config  # pylint: disable=g-import-not-at-top
  from jax._src import sharding_impls  # pylint: disable=g-import-not-at-top
  from jax._src.lib import xla_client as xc  # pylint: disable=g-import-not-at-top

  axis_context = ctx.module_context.axis_context
  if isinstance(axis_context, sharding_impls.SPMDAxisContext):
    if set(axis_context.mesh.axis_names) - set(axis_context.manual_axes):
      raise NotImplementedError(
          "pjrtkit: jax.debug callbacks inside a partially manual shard_map")
    if config.use_shardy_partitioner.value:
      from jax._src import callback as cb  # pylint: disable=g-import-not-at-top
      return cb._get_sdy_array_list_for_callbacks(ctx.avals_out)  # pylint: disable=protected-access
    sharding = xc.OpSharding()
    sharding.type = xc.OpSharding.Type.MANUAL
    return sharding
  if isinstance(axis_context, sharding_impls.ShardingContext):
    if config.use_shardy_partitioner.value:
      return sharding_impls.SdyArrayList((sharding_impls.SdyArray(
          mesh_shape=(), dim_shardings=(), logical_device_ids=(0,)),))
    sharding = xc.OpSharding()
    sharding.type = xc.OpSharding.Type.MAXIMAL
    sharding.tile_assignment_dimensions = [1]
    sharding.tile_assignment_devices = [0]
    return sharding
  return None


def _emit_debug(ctx: Any, args: Any, run: Any, effect: Any) -> list[Any]:
  """Emits a debug callback with `effect` (ordered effects thread a token)."""
  from jax._src import effects  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  if effects.ordered_effects.contains(effect):
    results, token = _host_callbacks.emit_callback(ctx, run, ctx.tokens_in.get(effect), args,
                                                   has_side_effect=True)
    ctx.set_tokens_out(ctx.tokens_in.update_tokens(mlir.TokenSet({effect: token})))
    return results
  results, _ = _host_callbacks.emit_callback(ctx, run, None, args, has_side_effect=True,
                                             sharding=_debug_sharding(ctx))
  return results


def _debug_callback_rule(ctx: Any, *args: Any, effect: Any, **params: Any):
  from jax._src import debugging  # pylint: disable=g-import-not-at-top

  def run(*flat: Any) -> tuple[()]:
    debugging.debug_callback_p.impl(*flat, effect=effect, **params)
    return ()

  return _emit_debug(ctx, args, run, effect)


def _debug_print_rule(ctx: Any, *args: Any, **params: Any):
  from jax._src import debugging  # pylint: disable=g-import-not-at-top

  def run(*flat: Any) -> tuple[()]:
    debugging.debug_print_p.impl(*flat, **params)
    return ()

  effect = debugging.ordered_debug_effect if params["ordered"] else debugging.debug_effect
  return _emit_debug(ctx, args, run, effect)


def register(platform: str = "pjrtkit") -> list[str]:
  """Registers the callback rules for ``platform``; returns the primitive names, sorted."""
  from jax._src import callback as cb  # pylint: disable=g-import-not-at-top
  from jax._src import debugging  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  rules = [(cb.pure_callback_p, _pure_callback_rule), (cb.io_callback_p, _io_callback_rule),
           (debugging.debug_callback_p, _debug_callback_rule)]
  if hasattr(debugging, "debug_print_p"):  # jax >= 0.12 has a primitive for jax.debug.print.
    rules.append((debugging.debug_print_p, _debug_print_rule))
  for primitive, rule in rules:
    mlir.register_lowering(primitive, rule, platform=platform, cacheable=False)
  return sorted(p.name for p, _ in rules)
