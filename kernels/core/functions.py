"""Names for the non-array parameters of kernel calls: activation functions and matmul
precisions.

A `Spec` holds only JSON scalars, so an activation is recorded by name: JAX's own functions by
their short name (``"silu"``, ``"gelu"``, ...), any other callable as ``"custom:<module>.<name>"``
(remembered in this process so a spec rebuilt from a marker, as `autotune` does, finds it
again). A precision is recorded as ``jax.lax.Precision`` or ``jax.lax.DotAlgorithmPreset``
names.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

import jax
import jax.numpy as jnp

KNOWN: dict[str, Callable[[jax.Array], jax.Array]] = {
    "relu": jax.nn.relu,
    "sigmoid": jax.nn.sigmoid,
    "silu": jax.nn.silu,
    "gelu": jax.nn.gelu,
    "tanh": jnp.tanh,
    "softplus": jax.nn.softplus,
    "elu": jax.nn.elu,
    "relu6": jax.nn.relu6,
    "hard_silu": jax.nn.hard_silu,
    "log_sigmoid": jax.nn.log_sigmoid,
}
"""Activations known by name (``jax.nn.swish`` is ``jax.nn.silu``)."""

_CUSTOM: "weakref.WeakValueDictionary[str, Callable[[jax.Array], jax.Array]]" = (
    weakref.WeakValueDictionary())
"""Custom functions by recorded name, held weakly: an entry lives as long as the function (a
Spec holding the name holds the function too, in `Spec.functions`), so a process that makes a
new lambda per call does not accumulate them, and a name's ``id`` is not reused while its entry
lives."""
_CUSTOM_STRONG: dict[str, Callable[[jax.Array], jax.Array]] = {}
"""Custom functions that take no weak reference (rare: classes with ``__slots__``)."""
CUSTOM_PREFIX = "custom:"


def name_of(fn: Callable[[jax.Array], jax.Array] | None, parameter: str = "activation"
            ) -> str | None:
  """The recorded name of `fn` (None for None).

  Raises:
    TypeError: `fn` is neither None nor callable (naming `parameter`).
  """
  if fn is None:
    return None
  if not callable(fn):
    raise TypeError(f"{parameter} must be a callable (e.g. jax.nn.silu) or None, got "
                    f"{type(fn).__name__}")
  for name, known in KNOWN.items():
    if fn is known:
      return name
  label = f"{getattr(fn, '__module__', None) or '?'}.{getattr(fn, '__qualname__', type(fn).__name__)}"
  name = f"{CUSTOM_PREFIX}{label}@{id(fn):x}"
  try:
    _CUSTOM[name] = fn
  except TypeError:
    _CUSTOM_STRONG[name] = fn
  return name


def resolve(name: str | None) -> Callable[[jax.Array], jax.Array] | None:
  """The function `name` stands for (None for None).

  Raises:
    ValueError: a custom function not seen in this process, or an unknown name.
  """
  if name is None:
    return None
  if name in KNOWN:
    return KNOWN[name]
  fn = _CUSTOM.get(name) or _CUSTOM_STRONG.get(name)
  if fn is not None:
    return fn
  raise ValueError(f"activation {name!r} is not a function this process knows: a custom "
                   f"activation is known only in the process that made the call; known names: "
                   f"{sorted(KNOWN)}")


_PRESETS = {p.name: p for p in jax.lax.DotAlgorithmPreset}
_PRECISIONS = {p.name: p for p in jax.lax.Precision}


def precision_name(precision: Any) -> str | None:
  """A JSON name for a `precision` argument of ``jax.lax.dot`` (None, a ``Precision``, its
  string name, a pair of them, or a ``DotAlgorithmPreset``).

  Raises:
    ValueError: for anything else, naming the accepted values.
  """
  if precision is None:
    return None
  if isinstance(precision, jax.lax.DotAlgorithmPreset):
    return f"preset:{precision.name}"
  if isinstance(precision, (tuple, list)) and len(precision) == 2:
    names = [precision_name(p) for p in precision]
    if any(n is None or n.startswith("preset:") or "," in n for n in names):
      raise ValueError(f"precision: a pair must hold two jax.lax.Precision values, got "
                       f"{precision!r}")
    return ",".join(names)  # type: ignore[arg-type]
  if isinstance(precision, jax.lax.Precision):
    return precision.name
  if isinstance(precision, str):
    upper = precision.upper()
    aliases = {"BFLOAT16": "DEFAULT", "FASTEST": "DEFAULT", "TENSORFLOAT32": "HIGH",
               "FLOAT32": "HIGHEST"}
    upper = aliases.get(upper, upper)
    if upper in _PRECISIONS:
      return upper
  raise ValueError(f"precision must be None, a jax.lax.Precision (DEFAULT, HIGH, HIGHEST), a "
                   f"pair of them or a jax.lax.DotAlgorithmPreset, got {precision!r}")


def precision_of(name: str | None) -> Any:
  """The ``jax.lax`` precision `name` stands for (inverse of `precision_name`)."""
  if name is None:
    return None
  if name.startswith("preset:"):
    return _PRESETS[name[len("preset:"):]]
  if "," in name:
    a, b = name.split(",")
    return (_PRECISIONS[a], _PRECISIONS[b])
  return _PRECISIONS[name]
