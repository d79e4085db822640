"""The command line the kernel variant benches share (``fwd_variant_bench``,
``bwd_variant_bench``): copies of a kernel module named by their files, the cases, the rounds and
``--set FIELD=INT`` geometry fields, each checked with a message naming the bad value."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import sys
from typing import Any, Collection, Sequence


def load_copy(path: str, name: str) -> Any:
  """The module in file `path`, imported as `name` (registered in ``sys.modules``, where
  dataclasses look their module up)."""
  spec = importlib.util.spec_from_file_location(name, path)
  module = importlib.util.module_from_spec(spec)
  sys.modules[spec.name] = module
  spec.loader.exec_module(module)
  return module


def parse_fields(text: str) -> dict[str, int]:
  """``FIELD=INT[,FIELD=INT]`` -> dict.

  Raises:
    ValueError: naming the item that is not FIELD=INT.
  """
  fields = {}
  for item in filter(None, text.split(",")):
    name, sep, value = item.partition("=")
    try:
      if not sep or not name:
        raise ValueError
      fields[name] = int(value)
    except ValueError:
      raise ValueError(f"--set: {item!r} is not FIELD=INT") from None
  return fields


def check_cases(parser: argparse.ArgumentParser, text: str, known: Collection[str],
                rounds: int) -> list[str]:
  """The comma-separated cases of `text` (each one of `known`), with `rounds` at least 1; a bad
  one ends the program through `parser.error`."""
  cases = text.split(",")
  unknown = [c for c in cases if c not in known]
  if unknown:
    parser.error(f"cases: unknown {unknown}; accepted: {list(known)}")
  if rounds < 1:
    parser.error(f"--rounds must be >= 1, got {rounds}")
  return cases


def copy_names(parser: argparse.ArgumentParser, paths: Sequence[str], text: str,
               reserved: Collection[str]) -> list[str]:
  """The copies' names, their file stems: none empty, all different, none of the `reserved`
  contenders' names (`text`: the paths as given, for the message)."""
  if not all(paths):
    parser.error(f"paths: an empty path in {text!r} (comma-separated files, none empty)")
  names = [os.path.splitext(os.path.basename(p))[0] for p in paths]
  if len(set(names)) != len(names):
    parser.error(f"paths: the file stems must differ, got {names}")
  taken = [n for n in names if n in reserved]
  if taken:
    parser.error(f"paths: file stems {taken} name other contenders; rename the copies "
                 f"(reserved: {sorted(reserved)})")
  return names


def check_fields(parser: argparse.ArgumentParser, copies: dict[str, Any], fields: dict[str, int],
                 geometry: str) -> None:
  """Every copy's `geometry` dataclass has each of `fields`."""
  for name, module in copies.items():
    known = {f.name for f in dataclasses.fields(getattr(module, geometry))}
    if set(fields) - known:
      parser.error(f"--set: {name}'s {geometry} has no field {sorted(set(fields) - known)}")
