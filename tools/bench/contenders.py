"""What the CPU-device kernel benchmarks (`ragged_dot_native`, `attention_options_native`,
`glu_native`, `ce_native`, `triangle_native`) share: their common options and ``--shapes``
syntax, the alternating rounds and the Markdown table they print (JAX is imported by
`print_table` only, so the rest is tested without it)."""

from __future__ import annotations

import argparse
import statistics
from typing import Any, Callable, Iterable, Sequence


def parse_shapes(text: str) -> list[tuple[tuple[int, ...], str]]:
  """``"8x2048x1024:float32,..."`` -> ``[((8, 2048, 1024), "float32"), ...]``.

  Raises:
    ValueError: an item that is not ``AxBx...:dtype``, naming it.
  """
  shapes = []
  for item in text.split(","):
    dims, sep, dtype = item.partition(":")
    try:
      shape = tuple(int(d) for d in dims.split("x"))
    except ValueError:
      shape = ()
    if not sep or not dtype or not shape:
      raise ValueError(f"--shapes: {item!r} is not AxBx...:dtype")
    shapes.append((shape, dtype))
  return shapes


def arguments(doc: str, default_shapes: str, shape_syntax: str) -> argparse.ArgumentParser:
  """The options every CPU-device kernel benchmark takes: ``--shapes`` (`default_shapes`, items
  written as `shape_syntax`), ``--iterations`` (calls per median, 3) and ``--rounds`` (2)."""
  p = argparse.ArgumentParser(description=doc)
  p.add_argument("--shapes", default=default_shapes, help=f"{shape_syntax},...")
  p.add_argument("--iterations", type=int, default=3)
  p.add_argument("--rounds", type=int, default=2)
  return p


def medians(runs: dict[str, Callable[..., Any]], args: list[Any], rounds: int,
            iterations: int) -> dict[str, float]:
  """Each contender's median over `rounds` of its median time (ms) of `iterations` calls,
  the contenders' order reversed every other round."""
  names = tuple(runs)
  times: dict[str, list[float]] = {c: [] for c in names}
  for r in range(rounds):
    for c in (names if r % 2 == 0 else tuple(reversed(names))):
      times[c].append(runs[c](args, iterations=iterations).median_evaluation_time_ms)
  return {c: statistics.median(t) for c, t in times.items()}


def print_table(title: str, contenders: Sequence[str],
                rows: Iterable[tuple[str, dict[str, float]]],
                cell: Callable[[dict[str, float], str], str]) -> None:
  """Prints the device and `title`, then one Markdown row per (label, times) as they come."""
  from pjrtkit import kernels as pk  # pylint: disable=g-import-not-at-top  (JAX: only here)
  print(f"device: {pk.current_device().describe()}; {title}", flush=True)
  print("| row | " + " | ".join(contenders) + " |")
  print("| --- |" + " --- |" * len(contenders), flush=True)
  for label, ms in rows:
    print(f"| {label} | " + " | ".join(cell(ms, c) for c in contenders) + " |", flush=True)


def native_against_xla(argv: Sequence[str] | None, doc: str, default_shapes: str,
                       shape_syntax: str, contenders: Sequence[str],
                       rows: Callable[[list[tuple[tuple[int, ...], str]], int, int],
                                      Iterable[tuple[str, dict[str, float]]]],
                       digits: int = 2) -> int:
  """The main of a benchmark of an op's "native" against its "xla": parses `argv`
  (`arguments`), prints whether the native products run on AMX tiles and a row per
  ``rows(shapes, iterations, rounds)`` item; a cell is ms (ratio to "xla"), native's also its
  GFLOP/s from the row's ``"flops"``."""
  from pjrtkit.kernels.native import library  # pylint: disable=g-import-not-at-top

  def cell(ms: dict[str, float], c: str) -> str:
    text = f"{ms[c]:.{digits}f} ({ms[c] / ms['xla']:.2f})"
    if c == "native":
      text += f" {ms['flops'] / ms[c] / 1e6:.0f} GFLOP/s"
    return text

  a = arguments(doc, default_shapes, shape_syntax).parse_args(argv)
  print_table(f"native's bfloat16 products on AMX tiles: {library.amx_bf16()}; "
              f"ms (ratio to xla), medians of {a.rounds} rounds of {a.iterations} calls",
              contenders, rows(parse_shapes(a.shapes), a.iterations, a.rounds), cell)
  return 0
