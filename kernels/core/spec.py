"""`Spec`: the static description of one kernel call (shapes, dtypes, parameters).

A Spec is hashable and turns into stable JSON: it is the key of tuned results, what the markers
in a lowered program carry, and all the autotuner needs to rebuild the call.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True)
class ArgSpec:
  """Shape and dtype of one array argument."""

  shape: tuple[int, ...]
  dtype: str

  @classmethod
  def of(cls, x: Any) -> "ArgSpec":
    """The ArgSpec of an array, tracer or ShapeDtypeStruct; a symbolic dimension of
    `jax.export` (shape polymorphism) is kept as it is (`symbolic`)."""
    return cls(tuple(d if jax.export.is_symbolic_dim(d) else int(d) for d in x.shape),
               jnp.dtype(x.dtype).name)

  @property
  def symbolic(self) -> bool:
    """Whether a dimension is symbolic (only `Op.symbolic_shapes` implementations serve it)."""
    return not all(isinstance(d, int) for d in self.shape)

  def to_json(self) -> list[Any]:
    """``[shape, dtype]`` (a symbolic dimension as its text, e.g. ``"2*b"``)."""
    return [[d if isinstance(d, int) else str(d) for d in self.shape], self.dtype]

  def struct(self) -> jax.ShapeDtypeStruct:
    """A ShapeDtypeStruct with this shape and dtype."""
    return jax.ShapeDtypeStruct(self.shape, jnp.dtype(self.dtype))


_JSON_SCALARS = (bool, int, float, str, type(None))


@dataclasses.dataclass(frozen=True)
class Spec:
  """One kernel call: the op family, its array arguments (None for an absent optional one) and its
  static parameters (JSON scalars), sorted by name."""

  op: str
  arg_names: tuple[str, ...]
  args: tuple[ArgSpec | None, ...]
  params: tuple[tuple[str, Any], ...]
  functions: tuple[tuple[str, Any], ...] = dataclasses.field(default=(), compare=False,
                                                             hash=False, repr=False)
  """Python functions of the call (an activation), by parameter name. The parameter itself
  holds the function's name (`pjrtkit.kernels.core.functions`), which is what keys, markers
  and JSON carry; these are not compared or hashed."""

  @classmethod
  def make(cls, op: str, args: Mapping[str, Any], params: Mapping[str, Any],
           functions: Mapping[str, Any] | None = None) -> "Spec":
    """A Spec from named array arguments (arrays, tracers or None), static parameters and the
    call's Python functions (each also named in `params`).

    Raises:
      TypeError: for a parameter that is not a JSON scalar.
    """
    for name, value in params.items():
      if not isinstance(value, _JSON_SCALARS):
        raise TypeError(f"{op}: parameter {name!r} must be a bool, int, float, str or None, "
                        f"got {type(value).__name__}")
    return cls(op, tuple(args), tuple(None if a is None else ArgSpec.of(a) for a in args.values()),
               tuple(sorted(params.items())), tuple(sorted((functions or {}).items())))

  def function(self, name: str) -> Any:
    """The Python function of parameter `name`: the one the call passed, else the one its name
    stands for (`pjrtkit.kernels.core.functions.resolve`; a Spec rebuilt from JSON).

    Raises:
      ValueError: when the name stands for no function this process knows.
    """
    found = dict(self.functions)
    if name in found:
      return found[name]
    from pjrtkit.kernels.core import functions  # pylint: disable=import-outside-toplevel
    return functions.resolve(self.param(name))

  @property
  def symbolic(self) -> bool:
    """Whether an argument has a symbolic dimension (`ArgSpec.symbolic`)."""
    return any(a is not None and a.symbolic for a in self.args)

  def arg(self, name: str) -> ArgSpec | None:
    """The ArgSpec of argument `name`."""
    return self.args[self.arg_names.index(name)]

  def param(self, name: str) -> Any:
    """The value of static parameter `name`."""
    return dict(self.params)[name]

  def to_json(self) -> dict[str, Any]:
    """A JSON-ready dict; arguments as an ordered list of [name, [shape, dtype] or None]."""
    return {"op": self.op,
            "args": [[n, None if a is None else a.to_json()]
                     for n, a in zip(self.arg_names, self.args)],
            "params": dict(self.params)}

  def key(self) -> str:
    """Stable JSON text of this spec: the key of tuned results."""
    return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))

  @classmethod
  def from_json(cls, data: Mapping[str, Any]) -> "Spec":
    """Inverse of `to_json` (argument order as in the JSON object)."""
    names = tuple(n for n, _ in data["args"])
    args = tuple(None if v is None else ArgSpec(tuple(v[0]), v[1]) for _, v in data["args"])
    return cls(data["op"], names, args, tuple(sorted(data["params"].items())))

  def example_args(self, seed: int = 0) -> tuple[Any, ...]:
    """Random arrays of this spec's shapes and dtypes (normal floats, False booleans, zero ints)."""
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    for a in self.args:
      if a is None:
        out.append(None)
        continue
      dtype = jnp.dtype(a.dtype)
      if jnp.issubdtype(dtype, jnp.floating):
        out.append(jnp.asarray(rng.standard_normal(a.shape, np.float32), dtype))
      elif dtype == jnp.bool_:
        out.append(jnp.asarray(rng.random(a.shape) < 0.9))
      else:
        out.append(jnp.zeros(a.shape, dtype))
    return tuple(out)


def arg_specs(args: Sequence[Any]) -> tuple[ArgSpec | None, ...]:
  """ArgSpecs of `args` (None stays None)."""
  return tuple(None if a is None else ArgSpec.of(a) for a in args)
