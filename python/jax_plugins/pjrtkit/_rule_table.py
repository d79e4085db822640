"""``pjrtkit``'s lowering-rule table follows another platform's: rules registered later count too.

pjrtkit lowers like the platform its device runs (``cpu`` on the xla_cpu device, ``cuda`` on the
xla_gpu device) by registering that platform's rules for ``pjrtkit`` at ``initialize()``. Rules
registered for that platform afterwards (a module imported later, such as
``jax.experimental.sparse``, or a library's own primitive with
``mlir.register_lowering(p, rule, platform="cpu")``) were missing, and lowering failed with "MLIR
translation rule for primitive ... not found for platform pjrtkit".

``follow(platform, source, skip, wrap)`` replaces ``platform``'s table in
``mlir._platform_specific_lowerings`` with a ``FollowingRules``: its own entries first (those
registered for ``platform``: they win), then the source platform's current entries, except the
primitives named in ``skip``, each rule passed through ``wrap`` (the xla_gpu device runs cuda
rules with the platforms read as cuda). Copies of the source's rules made before (``initialize()``
registers them for ``platform``) are dropped, so a rule registered again for the source replaces
them; an own entry holding the source's current rule itself (JAX writes a rule registered for
``gpu`` into every platform of the alias, pjrtkit's included) reads as the source's, wrapped.
JAX reads the table with ``primitive in table[p]`` and ``table[p][primitive]``
(``mlir._get_lowering_rules``); both follow.

JAX internals used (``_jax_internals.INTERNALS``, feature "cpu lowering"):
``mlir._platform_specific_lowerings`` (replaced for ``platform``, read for ``source``) and its
``LoweringRuleEntry`` (``rule``, ``inline``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

Rule = Callable[..., Any]


class FollowingRules(dict):
  """A platform's lowering rules: its own entries, then those of a source table not skipped.

  The dict's own items are the platform's own registrations; lookups (``in``, ``[]``, ``get``)
  fall back to the source table, whose entries are wrapped once per entry object (a rule
  registered again for the source is wrapped again).
  """

  def __init__(self, own: dict, source: dict, skip: Iterable[str], wrap: Callable[[Rule], Rule]):
    super().__init__(own)
    self.source = source
    self.skip = frozenset(skip)
    self._wrap = wrap
    self._wrapped: dict[Any, tuple[Any, Any]] = {}

  def followed(self, primitive: Any) -> Any:
    """The source's entry for ``primitive``, wrapped; None when it has none or it is skipped."""
    entry = self.source.get(primitive)
    if entry is None or getattr(primitive, "name", None) in self.skip:
      return None
    cached = self._wrapped.get(primitive)
    if cached is None or cached[0] is not entry:
      rule = getattr(entry, "rule", entry)
      wrapped = (type(entry)(self._wrap(rule), entry.inline) if hasattr(entry, "rule")
                 else self._wrap(rule))  # A LoweringRuleEntry, or a bare rule in older JAX.
      cached = (entry, wrapped)
      self._wrapped[primitive] = cached
    return cached[1]

  def __contains__(self, primitive: object) -> bool:
    return dict.__contains__(self, primitive) or self.followed(primitive) is not None

  def __getitem__(self, primitive: Any) -> Any:
    if dict.__contains__(self, primitive):
      own = dict.__getitem__(self, primitive)
      source = self.source.get(primitive)
      if (source is None or _rule(own) is not _rule(source)
          or getattr(primitive, "name", None) in self.skip):
        return own
    entry = self.followed(primitive)
    if entry is None:
      raise KeyError(primitive)
    return entry

  def get(self, primitive: Any, default: Any = None) -> Any:
    return self[primitive] if primitive in self else default


def _rule(entry: Any) -> Any:
  return getattr(entry, "rule", entry)


def inherited(entry: Any, source_entry: Any) -> bool:
  """Whether ``entry`` is a copy of ``source_entry``'s rule (itself or a wrapper of it)."""
  if source_entry is None:
    return False
  rule, source_rule = _rule(entry), _rule(source_entry)
  return rule is source_rule or getattr(rule, "__wrapped__", None) is source_rule


def follow(platform: str, source: str, skip: Iterable[str] = (),
           wrap: Callable[[Rule], Rule] = lambda rule: rule) -> Callable[[], None]:
  """Makes ``platform``'s rule table follow ``source``'s (see the module docstring).

  Returns:
    The undo: puts the table ``platform`` had back (without what was registered since).

  Raises:
    RuntimeError: when this JAX keeps the rule tables elsewhere.
  """
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  table = getattr(mlir, "_platform_specific_lowerings", None)
  if not isinstance(table, dict):
    raise RuntimeError("pjrtkit: jax._src.interpreters.mlir._platform_specific_lowerings is "
                       "gone in this JAX version; rules registered later cannot be followed")
  before = table.get(platform)
  followed = table[source]
  skipped = frozenset(skip)
  own = {primitive: entry for primitive, entry in (before or {}).items()
         if getattr(primitive, "name", None) in skipped
         or not inherited(entry, followed.get(primitive))}
  table[platform] = FollowingRules(own, followed, skipped, wrap)

  def undo() -> None:
    if before is None:
      table.pop(platform, None)
    else:
      table[platform] = before

  return undo
