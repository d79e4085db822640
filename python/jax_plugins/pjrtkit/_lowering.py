"""Lowering rules for platform ``pjrtkit``: lower like jaxlib's ``cpu`` backend.

The reference device runs programs on XLA:CPU, so every primitive whose lowering JAX registers
specially for ``cpu`` (LAPACK custom calls for linalg, the CPU variants of threefry, conv,
dot_general, ...) is registered with the same rule for ``pjrtkit`` through
``mlir.register_lowering(prim, rule, platform="pjrtkit")``. Without this, primitives with a
cpu-only rule (eigh, eig, schur, hessenberg, tridiagonal, geqp3) fail with "MLIR translation rule
for primitive ... not found for platform pjrtkit", and the others fall back to JAX's generic
(non-LAPACK) algorithms.

The custom calls those rules emit (``lapack_*_ffi``, ``cpu_csr_sparse_dense_ffi``) are jaxlib's
typed FFI handlers; ``register_cpu_ffi_targets`` registers them for ``pjrtkit`` too, which routes
them through the plugin's PJRT FFI extension into XLA:CPU (see ``_ffi``).

JAX internals used (fenced by ``tests/jax/jax_internals_test.py``): the read-only table
``jax._src.interpreters.mlir._platform_specific_lowerings`` (the only place the cpu rules are
kept). Rules registered for ``cpu`` after ``initialize()`` (modules imported later, e.g.
``jax.experimental.sparse``, a library's own primitives) are followed: ``_rule_table.follow``
makes ``pjrtkit``'s table fall back to ``cpu``'s.
"""

from __future__ import annotations

from collections.abc import Iterable

LINALG_PRIMITIVES = frozenset({
    "cholesky", "eig", "eigh", "geqp3", "geqrf", "hessenberg", "householder_product", "lu",
    "ormqr", "schur", "svd", "triangular_solve", "tridiagonal", "tridiagonal_solve"})
"""The linear-algebra primitives whose cpu rules call LAPACK through typed FFI custom calls
(``lapack_*_ffi``). A device that compiles StableHLO itself gets these rules only
(``register_cpu_lowerings(platform, only=LINALG_PRIMITIVES)``): it runs the custom calls with
jaxlib's LAPACK handlers, registered for it by ``register_cpu_ffi_targets``, on its own memory."""

CALLBACK_PRIMITIVES = frozenset({"debug_callback", "debug_print", "check"})
"""Primitives with cpu rules that pjrtkit does NOT copy as they are: JAX's callback lowering
refuses any platform but its own, so ``_callback_rules`` registers them (with pure_callback and
io_callback) run as for ``cpu``, when the JAX internals that needs are as expected."""


def cpu_rules() -> dict:
  """The primitive -> rule entries JAX keeps for platform ``cpu`` (a copy).

  Raises:
    RuntimeError: when this JAX version keeps them elsewhere (the fence test fails too).
  """
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  table = getattr(mlir, "_platform_specific_lowerings", None)
  if table is None or "cpu" not in table:
    raise RuntimeError(
        "pjrtkit: jax._src.interpreters.mlir._platform_specific_lowerings['cpu'] is gone in "
        "this JAX version; pjrtkit cannot reuse the cpu lowering rules")
  return dict(table["cpu"])


def register_cpu_lowerings(platform: str = "pjrtkit",
                           skip: Iterable[str] = CALLBACK_PRIMITIVES,
                           only: Iterable[str] | None = None) -> list[str]:
  """Registers every cpu-specific lowering rule for ``platform`` too (idempotent).

  Args:
    platform: the platform to register for (must be known to JAX: registered as a plugin).
    skip: names of primitives to leave alone.
    only: when given, the names of the only primitives to register (less ``skip``).

  Returns:
    The names of the primitives registered, sorted.
  """
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  skipped = set(skip)
  wanted = None if only is None else set(only)
  registered = []
  for primitive, entry in cpu_rules().items():
    if primitive.name in skipped or (wanted is not None and primitive.name not in wanted):
      continue
    rule = getattr(entry, "rule", entry)  # A LoweringRuleEntry (or a bare rule in older JAX).
    mlir.register_lowering(primitive, rule, platform=platform,
                           inline=getattr(entry, "inline", True))
    registered.append(primitive.name)
  return sorted(registered)


def cpu_ffi_targets() -> list[tuple[str, object, int]]:
  """jaxlib's CPU custom-call targets: (name, handler capsule, api_version) of LAPACK and sparse."""
  from jax._src.lib import lapack  # pylint: disable=g-import-not-at-top

  targets = list(lapack.registrations().get("cpu", []))
  try:
    from jax._src.lib import cpu_sparse  # pylint: disable=g-import-not-at-top
    targets += list(cpu_sparse.registrations().get("cpu", []))
  except ImportError:  # Older jaxlib without the CPU sparse kernels.
    pass
  return targets


def register_cpu_ffi_targets(platform: str = "pjrtkit") -> list[str]:
  """Registers jaxlib's typed CPU FFI targets for ``platform``; returns their names, sorted.

  Untyped (api_version 0) targets are skipped: the cpu rules JAX uses emit only typed ones.
  """
  from jax import ffi  # pylint: disable=g-import-not-at-top

  names = []
  for name, handler, api_version in cpu_ffi_targets():
    if api_version != 1:
      continue
    ffi.register_ffi_target(name, handler, platform=platform, api_version=1)
    names.append(name)
  return sorted(names)
