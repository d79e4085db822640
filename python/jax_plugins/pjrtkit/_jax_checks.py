"""The check builders of ``_jax_internals``: each returns a check that one private JAX object
still has the shape pjrtkit relies on (exists, takes these parameters, its source still holds
these lines, JAX still keeps it as this lowering rule, ...), for ``Internal.check``.

A check returns None when the object is as expected, else the problem in words. Objects are
looked up by dotted name at check time (``load_module``), so importing this module touches no
JAX internal.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any


def load_module(name: str) -> Any:
  """The module ``name``; also a module JAX re-exports as an attribute (``jax._src.lib._jax``)."""
  try:
    return importlib.import_module(name)
  except ModuleNotFoundError:
    parent, _, attr = name.rpartition(".")
    module = getattr(importlib.import_module(parent), attr, None)
    if module is None:
      raise
    return module


def param_names(fn: Callable[..., Any]) -> list[str]:
  """The parameter names of ``fn``, in order."""
  return list(inspect.signature(fn).parameters)


def source_text(obj: Any) -> str:
  """The source of ``obj``, or of the function it wraps (``__wrapped__``)."""
  return inspect.getsource(getattr(obj, "__wrapped__", obj))


def has_params(module: str, attr: str, params: Sequence[str]) -> Callable[[], str | None]:
  """A check that ``module.attr`` exists and takes (at least) ``params``."""

  def check() -> str | None:
    fn = getattr(load_module(module), attr, None)
    if fn is None or not callable(fn):
      return "is gone"
    original = getattr(fn, "__wrapped__", fn)
    missing = [p for p in params if p not in param_names(original)]
    return f"no longer takes {missing} ({inspect.signature(original)})" if missing else None

  return check


def source_has(module: str, attr: str | None, fragments: Sequence[str]) -> Callable[[], str | None]:
  """A check that the source of ``module.attr`` (or the module) still contains ``fragments``."""

  def check() -> str | None:
    obj = load_module(module)
    if attr is not None:
      obj = getattr(obj, attr, None)
      if obj is None:
        return "is gone"
    try:
      source = source_text(obj)
    except (OSError, TypeError) as exc:
      return f"cannot be read: {exc}"
    missing = [f for f in fragments if f not in source]
    return f"no longer contains {missing}" if missing else None

  return check


def is_dict(module: str, attr: str) -> Callable[[], str | None]:
  """A check that ``module.attr`` is a dict."""

  def check() -> str | None:
    return None if isinstance(getattr(load_module(module), attr, None), dict) else "is not a dict"

  return check


def rules_table_check(platform: str) -> str | None:
  """A problem with JAX's rule table of ``platform`` (present, every entry has a callable rule)."""
  table = getattr(load_module("jax._src.interpreters.mlir"), "_platform_specific_lowerings", None)
  if not isinstance(table, dict) or platform not in table:
    return f"has no '{platform}' table"
  if not all(callable(getattr(e, "rule", e)) for e in table[platform].values()):
    return "holds entries without a callable rule"
  return None


LOOKUP_CHECK = source_has("jax._src.interpreters.mlir", "_get_lowering_rules",
                          ["in _platform_specific_lowerings[p]",
                           "_platform_specific_lowerings[p][primitive]"])
"""``_rule_table.FollowingRules`` serves JAX's only reads of a platform's rule table."""


def exists(module: str, attr: str) -> Callable[[], str | None]:
  """A check that ``module.attr`` exists (is not None)."""

  def check() -> str | None:
    return None if getattr(load_module(module), attr, None) is not None else "is gone"

  return check


def gpu_registrations_check(module: str) -> Callable[[], str | None]:
  """A check that ``module.registrations()`` still maps 'CUDA' to (name, capsule, version)."""

  def check() -> str | None:
    fn = getattr(load_module(module), "registrations", None)
    if fn is None or not callable(fn):
      return "is gone"
    registrations = fn()
    if not isinstance(registrations, dict) or not isinstance(registrations.get("CUDA", []), list):
      return "registrations() no longer maps 'CUDA' to a list"
    if not all(isinstance(t, tuple) and len(t) == 3 for t in registrations.get("CUDA", [])):
      return "registrations()['CUDA'] no longer holds (name, capsule, api_version) triples"
    return None

  return check


def generic_rule_check(module: str, primitive: str, rule: str,
                       fragments: Sequence[str]) -> Callable[[], str | None]:
  """A check that the generic rule of ``module.primitive`` is still the function ``rule`` and
  still chooses by the platform names it reads (its source has ``fragments``). The rule is read
  from the table: some are registered by a decorator that leaves None under their name."""

  def check() -> str | None:
    mlir = load_module("jax._src.interpreters.mlir")
    prim = getattr(load_module(module), primitive, None)
    entry = mlir._lowerings.get(prim) if prim is not None else None  # pylint: disable=protected-access
    fn = getattr(entry, "rule", None)
    if fn is None or getattr(fn, "__name__", None) != rule:
      return f"is no longer the generic lowering rule of {primitive}"
    try:
      source = source_text(fn)
    except (OSError, TypeError) as exc:
      return f"cannot be read: {exc}"
    missing = [f for f in fragments if f not in source]
    return f"no longer contains {missing}" if missing else None

  return check


def importable_or_absent(module: str) -> Callable[[], str | None]:
  """A check that ``module`` imports, or is absent only for want of jaxlib's CUDA plugin."""

  def check() -> str | None:
    try:
      importlib.import_module(module)
    except ImportError as exc:
      try:
        importlib.import_module("jax_cuda13_plugin")
      except ImportError:
        try:
          importlib.import_module("jax_cuda12_plugin")
        except ImportError:
          return None  # No CUDA plugin: Mosaic GPU cannot import here, nothing to register.
      return f"does not import with jaxlib's CUDA plugin installed: {exc}"
    return None

  return check


def registrations_check(module: str) -> Callable[[], str | None]:
  """A check that ``module.registrations()`` still maps 'cpu' to (name, capsule, version)
  triples; None when an older jaxlib lacks ``module``."""

  def check() -> str | None:
    try:
      registrations = load_module(module).registrations()
    except ImportError:
      return None  # An older jaxlib without that module: nothing to register.
    if not isinstance(registrations, dict):
      return f"registrations() returns {type(registrations).__name__}, expected a dict"
    targets = registrations.get("cpu", [])
    if not all(isinstance(t, tuple) and len(t) == 3 for t in targets):
      return "registrations()['cpu'] no longer holds (name, capsule, api_version) triples"
    return None

  return check


def rule_check(table: str, module: str, primitive: str, rule: str) -> Callable[[], str | None]:
  """A check that JAX keeps ``module.rule`` for ``module.primitive`` in ``table``."""

  def check() -> str | None:
    mlir = load_module("jax._src.interpreters.mlir")
    rules = (mlir._lowerings if table == "generic"  # pylint: disable=protected-access
             else getattr(mlir, "_platform_specific_lowerings", {}).get(table, {}))
    owner = load_module(module)
    prim, fn = getattr(owner, primitive, None), getattr(owner, rule, None)
    entry = rules.get(prim) if prim is not None else None
    if entry is None or fn is None or getattr(entry, "rule", None) is not fn:
      return f"is no longer the {table} lowering rule of {primitive}"
    return None

  return check


def dataclass_fields(cls_path: str, fields: Sequence[str], methods: Sequence[str]
                     ) -> Callable[[], str | None]:
  """A check that ``cls_path`` is still a dataclass with ``fields`` and callable ``methods``."""

  def check() -> str | None:
    module, _, name = cls_path.rpartition(".")
    cls = getattr(load_module(module), name, None)
    if cls is None or not dataclasses.is_dataclass(cls):
      return "is no longer a dataclass"
    have = {f.name for f in dataclasses.fields(cls)}
    missing = [f for f in fields if f not in have] + [
        m for m in methods if not callable(getattr(cls, m, None))]
    return f"no longer has {missing}" if missing else None

  return check


def impl_check(module: str, path: str, params: Sequence[str]) -> Callable[[], str | None]:
  """A check that ``module.path`` (dotted) exists and takes exactly ``params`` (in any order)."""

  def check() -> str | None:
    obj: Any = load_module(module)
    for part in path.split("."):
      obj = getattr(obj, part, None)
      if obj is None:
        return "is gone"
    return None if sorted(param_names(obj)) == sorted(params) else (
        f"no longer takes {list(params)} ({inspect.signature(obj)})")

  return check
