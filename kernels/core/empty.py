"""Calls whose result the shapes alone decide: a dimension of size zero.

A call with a zero-size dimension (no rows, no channels, no keys, no hidden units) has a result
that does not depend on the values of any argument: an empty array, or one filled with what an
empty sum gives (zeros; ``activation(0) * 0`` for the gated linear unit, ``log(v)`` per row for
cross-entropy without hidden units). Each op's public function answers such a call through
`answer`, before any implementation runs, so every implementation name gives the same result on
every device, and the gradient of every argument is zero (the result depends on none of them).
The `implementation` argument is still checked as `Family.call` checks it (an unknown name is a
ValueError naming the accepted ones); no implementation is asked whether it serves the call,
since none runs.

A symbolic dimension (``jax.export`` shape polymorphism) is never taken for zero: JAX assumes
dimension variables are at least 1.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from pjrtkit.kernels.core.op import Family

T = TypeVar("T")


def is_zero(dim: Any) -> bool:
  """Whether the dimension `dim` is the integer 0 (never a symbolic dimension)."""
  return isinstance(dim, (int, np.integer)) and not isinstance(dim, bool) and int(dim) == 0


def any_zero(dims: Sequence[Any]) -> bool:
  """Whether one of `dims` is 0 (`is_zero`)."""
  return any(is_zero(d) for d in dims)


def check_implementation(family: Family, requested: Any) -> None:
  """Checks an `implementation` argument as `Family.call` does, without choosing one.

  Raises:
    ValueError: `requested` is not None, a name or a non-empty sequence of names, or names an
      implementation `family` does not have (the message lists the accepted ones).
  """
  if requested is None:
    return
  if isinstance(requested, str):
    names = [requested]
  else:
    try:
      names = list(requested)
    except TypeError:
      names = []
    if not names or not all(isinstance(n, str) for n in names):
      raise ValueError(f"{family.name}: implementation must be None, a name or a non-empty "
                       f"sequence of names ({family.accepted()}), got {requested!r}")
  for name in names:
    if name not in family.implementations:
      raise ValueError(f"{family.name}: unknown implementation={name!r}; accepted: "
                       f"{family.accepted()}")


def answer(family: Family, requested: Any, result: Callable[[], T]) -> T:
  """`result()` for a call whose shapes decide its result (module docstring), after checking
  `requested` (`check_implementation`). `result` must build its value from shapes and dtypes
  alone, so that JAX gives every argument a zero gradient.

  Raises:
    ValueError: from `check_implementation`.
  """
  check_implementation(family, requested)
  return result()
