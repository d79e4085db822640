"""`CallSpec`: one named call of an op's public function, the shapes an op is tested and
benchmarked on.

Every op folder has an ``arg_specs.py`` with ``CALL_SPECS: tuple[CallSpec, ...]``. A CallSpec
builds the positional and keyword arguments of the op's public function for a seed, so the
op's tests, its benchmark (``benchmark.py`` beside it) and the kernel comparison run the same
calls. Tags say where a call is used:

* ``"ci"``: small enough for the CPU tests (run in every CI);
* ``"primary"``: a row of the op's benchmark;
* ``"held_out"``: a shape no tuned file has choices for (what ``implementation=None`` does on
  shapes nobody tuned).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Mapping

TAGS = ("ci", "primary", "held_out")
"""The tags a CallSpec may carry."""


@dataclasses.dataclass(frozen=True)
class CallSpec:
  """One named call of an op's public function.

  Attributes:
    name: short unique name within the op (``"mixtral_8x7b"``).
    build: ``seed -> (args, kwargs)`` for the public function (arrays made on the default
      device; keyword arguments such as ``activation`` or ``reduction`` included).
    tags: a subset of `TAGS`.
    doc: one line on what the call stands for (the model or the case it covers).

  Raises:
    ValueError: for an unknown tag or an empty name.
  """

  name: str
  build: Callable[[int], tuple[tuple[Any, ...], Mapping[str, Any]]]
  tags: tuple[str, ...] = ()
  doc: str = ""

  def __post_init__(self) -> None:
    if not self.name:
      raise ValueError("CallSpec: name must not be empty")
    unknown = [t for t in self.tags if t not in TAGS]
    if unknown:
      raise ValueError(f"CallSpec {self.name}: unknown tags {unknown}; accepted: {list(TAGS)}")

  def arguments(self, seed: int = 0) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``(args, kwargs)`` for `seed`."""
    args, kwargs = self.build(seed)
    return tuple(args), dict(kwargs)


def tagged(specs: Iterable[CallSpec], tag: str) -> tuple[CallSpec, ...]:
  """The specs carrying `tag`.

  Raises:
    ValueError: for an unknown tag.
  """
  if tag not in TAGS:
    raise ValueError(f"unknown tag {tag!r}; accepted: {list(TAGS)}")
  return tuple(s for s in specs if tag in s.tags)


def by_name(specs: Iterable[CallSpec], name: str) -> CallSpec:
  """The spec called `name`.

  Raises:
    KeyError: naming the known specs.
  """
  specs = tuple(specs)
  for s in specs:
    if s.name == name:
      return s
  raise KeyError(f"no call spec {name!r}; known: {[s.name for s in specs]}")
