"""Shardy out of programs for devices whose compiler reads plain StableHLO.

JAX (0.11 and 0.12) puts Shardy's dialect (``sdy``: ``sdy.mesh``, ``sdy.manual_computation``,
sharding attributes) on every multi-device program, and jaxlib hands the program to a PJRT plugin
as a portable artifact in which those ops keep Shardy's own bytecode encoding. A StableHLO reader
without the Shardy dialect cannot read such bytes (torch-mlir's library: "dialect 'sdy' does not
implement the bytecode interface"). For a device that compiles StableHLO itself
(``runs_like == "stablehlo"``), ``install`` wraps ``jax._src.compiler.compile_or_get_cached`` so
that its programs first go through Shardy's round-trip export, which jaxlib itself runs when it
serializes without mixed dialects: ``sdy.manual_computation`` becomes
``stablehlo.custom_call @xla.sdy.GlobalToLocalShape`` / ``@xla.sdy.LocalToGlobalShape`` around a
call of the body, shardings become string attributes (``mhlo.sharding``, ``xla.sdy.sharding``) and
the meshes a module attribute; the ``sdy.mesh`` ops that remain are then dropped (their meshes are
kept in ``mhlo.frontend_attributes``). Programs without Shardy pass unchanged.

Before the export, a program over more than one partition goes through Shardy's sharding
propagation (``propagate_shardings``), as in XLA before its SPMD partitioner: every op gets the
sharding its operands and users imply, which the export writes as ``mhlo.sharding`` on the op.
A device's compiler partitions the program from those (the sim device's: its compiler's
``partitioner.h``). A result of ``main`` that JAX left without a sharding but that is a result of
an ``sdy.manual_computation`` (a ``shard_map`` returned as is) gets that computation's out sharding
(``annotate_manual_results``), so that the device reports the result's sharding to jaxlib as the
pieces each device holds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

MESH_OP = "sdy.mesh"
"""The top-level Shardy op the export leaves in place."""

EXPORT_VERSION = "1.15.0"
"""The StableHLO version the export serializes at: the last before 1.16.0, whose replica groups
may name mesh axes (``#stablehlo.replica_group_mesh_axes<mesh = @mesh, ...>``) of the meshes the
export drops; at 1.15.0 collectives keep explicit device groups (checked with jax 0.11.2 and
0.12.0.1)."""


def has_shardy(module: Any) -> bool:
  """True when ``module`` (a jaxlib ``ir.Module``) holds Shardy: meshes at its top level (every
  multi-device program declares them there), or an ``sdy.*`` attribute on any op (JAX's cpu
  rules for linear algebra put ``sdy.sharding_rule`` on their LAPACK calls, single-device
  programs included)."""
  if any(op.operation.name == MESH_OP for op in module.body.operations):
    return True
  from jax._src.lib.mlir import ir  # pylint: disable=g-import-not-at-top

  found = []

  def visit(op: Any) -> Any:
    for attribute in op.attributes:
      name = attribute if isinstance(attribute, str) else attribute.name
      if name.startswith("sdy."):
        found.append(name)
        return ir.WalkResult.INTERRUPT
    return ir.WalkResult.ADVANCE

  module.operation.walk(visit)
  return bool(found)


SHARDING_ATTR = "sdy.sharding"
"""The argument/result attribute holding a Shardy sharding."""

MANUAL_COMPUTATION = "sdy.manual_computation"


def _main(module: Any) -> Any:
  """The public ``main`` function of ``module`` (an ``ir.Operation``), or None."""
  from jax._src.lib.mlir import ir  # pylint: disable=g-import-not-at-top
  for op in module.body.operations:
    if (op.operation.name == "func.func" and
        ir.StringAttr(op.operation.attributes["sym_name"]).value == "main"):
      return op.operation
  return None


def plan_manual_results(module: Any) -> dict[int, Any]:
  """What ``annotate_manual_results`` gives ``main``'s results: {result index: the out sharding of
  the ``sdy.manual_computation`` that returns it as is}, for results without ``sdy.sharding``.
  Reads ``module`` only."""
  from jax._src.lib.mlir import ir  # pylint: disable=g-import-not-at-top
  from jax._src.lib.mlir.dialects import sdy  # pylint: disable=g-import-not-at-top

  main = _main(module)
  if main is None or not main.regions[0].blocks:
    return {}
  block = main.regions[0].blocks[0]
  terminator = list(block.operations)[-1].operation
  res_attrs = (list(ir.ArrayAttr(main.attributes["res_attrs"]))
               if "res_attrs" in main.attributes else [])
  plan = {}
  for i, value in enumerate(terminator.operands):
    if not isinstance(value, ir.OpResult):
      continue
    owner = value.owner
    if owner.name != MANUAL_COMPUTATION or "out_shardings" not in owner.attributes:
      continue
    attrs = ir.DictAttr(res_attrs[i]) if i < len(res_attrs) else None
    if attrs is not None and SHARDING_ATTR in attrs:
      continue  # Asked for: the device's compiler moves the pieces there if they differ.
    plan[i] = sdy.TensorShardingPerValueAttr(owner.attributes["out_shardings"]).shardings[
        value.result_number]
  return plan


def annotate_manual_results(module: Any) -> int:
  """Gives each result of ``module``'s public ``main`` that has no ``sdy.sharding`` and is
  returned straight from an ``sdy.manual_computation`` that computation's out sharding for it
  (``plan_manual_results``). Changes ``module`` in place;
  returns how many results it annotated."""
  from jax._src.lib.mlir import ir  # pylint: disable=g-import-not-at-top

  plan = plan_manual_results(module)
  if not plan:
    return 0
  main = _main(module)
  count = len(list(main.regions[0].blocks[0].operations)[-1].operation.operands)
  with module.context:
    res_attrs = (list(ir.ArrayAttr(main.attributes["res_attrs"]))
                 if "res_attrs" in main.attributes else
                 [ir.DictAttr.get({}) for _ in range(count)])
    for i, sharding in plan.items():
      entries = {a.name: a.attr for a in ir.DictAttr(res_attrs[i])}
      entries[SHARDING_ATTR] = sharding
      res_attrs[i] = ir.DictAttr.get(entries)
    main.attributes["res_attrs"] = ir.ArrayAttr.get(res_attrs)
  return len(plan)


PROPAGATION_PIPELINE = "builtin.module(sdy-propagation-pipeline)"
"""Shardy's sharding propagation, as jaxlib registers it (jax 0.11 and 0.12)."""


RESHARD_OP = "sdy.reshard"
"""What the propagation inserts where a value must change sharding; the round-trip export has no
form for it."""


def _partitions(module: Any) -> int:
  """``mhlo.num_partitions`` of ``module`` (1 when absent)."""
  from jax._src.lib.mlir import ir  # pylint: disable=g-import-not-at-top
  attributes = module.operation.attributes
  if "mhlo.num_partitions" not in attributes:
    return 1
  return ir.IntegerAttr(attributes["mhlo.num_partitions"]).value


def propagate_shardings(module: Any) -> int:
  """Runs Shardy's propagation on ``module`` (in place): every op gets the sharding its operands
  and users imply (``sdy.sharding``, after the export ``mhlo.sharding``), as XLA does before its
  SPMD partitioner. The device's compiler reads those to partition the program; a value it holds
  otherwise than an op's sharding says is moved, so the annotations decide speed, not values.
  The ``sdy.reshard`` ops the propagation inserts are replaced by their operands (the compiler
  moves values where their users need them anyway); returns how many."""
  from jax._src.lib.mlir import ir, passmanager  # pylint: disable=g-import-not-at-top
  with module.context:
    passmanager.PassManager.parse(PROPAGATION_PIPELINE).run(module.operation)
    reshards = []

    def visit(op: Any) -> Any:
      if op.name == RESHARD_OP:
        reshards.append(op)
      return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in reshards:
      op.results[0].replace_all_uses_with(op.operands[0])
      op.erase()
  return len(reshards)


def export_shardy(module: Any) -> Any:
  """``module`` with Shardy exported to plain StableHLO (see the module docstring): a new
  ``ir.Module`` in a fresh JAX MLIR context, or ``module`` itself when it has no Shardy."""
  if not has_shardy(module):
    return module
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top
  from jax._src.lib import _jax  # pylint: disable=g-import-not-at-top

  bytecode = module.operation.get_asm(binary=True)
  meshes = _partitions(module) > 1 and any(
      op.operation.name == MESH_OP for op in module.body.operations)
  if meshes or plan_manual_results(module):
    with module.context:
      # Propagated and annotated in a copy, so that the caller's module (what Lowered.as_text
      # shows) stays as JAX built it.
      from jax._src.lib.mlir import ir  # pylint: disable=g-import-not-at-top
      copy = ir.Module.parse(bytecode)
      if meshes:
        propagate_shardings(copy)
      annotate_manual_results(copy)
      bytecode = copy.operation.get_asm(binary=True)
  # use_mixed_serialization=False: jaxlib runs Shardy's round-trip export while serializing.
  portable = _jax.mlir.serialize_portable_artifact(bytecode, EXPORT_VERSION, False)
  with mlir.make_ir_context():
    # A module in a fresh context, the export's ops upgraded back from VHLO.
    exported = _jax.mlir.deserialize_portable_artifact(portable)
    for op in list(exported.body.operations):
      if op.operation.name == MESH_OP:
        op.operation.erase()
  return exported


def exporting_compiles(compile_or_get_cached: Callable[..., Any],
                       platform: str) -> Callable[..., Any]:
  """``jax._src.compiler.compile_or_get_cached`` that exports Shardy from programs compiled for
  ``platform`` first (the persistent cache then keys on the exported program)."""

  @functools.wraps(compile_or_get_cached)
  def wrapper(backend: Any, computation: Any, *args: Any, **kwargs: Any) -> Any:
    if getattr(backend, "platform", None) == platform:
      computation = export_shardy(computation)
    return compile_or_get_cached(backend, computation, *args, **kwargs)

  setattr(wrapper, "_pjrtkit_shardy_export", platform)
  return wrapper
