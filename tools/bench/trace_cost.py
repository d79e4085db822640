"""What PJRTKIT_TRACE costs on the jit dispatch workload: pjrtkit with tracing off and with
tracing on to a file, in one run.

  .venv/bin/python -m tools.bench.trace_cost [--rounds N] [--quick]

Each round runs the `dispatch` workload of worker.py (jax.jit(lambda x: x + 1.0) on f32[8], async
and blocking) in two fresh children on the pjrtkit backend, PJRTKIT_TRACE unset and
PJRTKIT_TRACE=<a temporary file>, alternating which goes first. It prints the medians over
rounds and the ratio traced / off, and the number of trace lines one traced child wrote.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from tools.bench.__main__ import run_child

_KEYS = ("dispatch_async", "dispatch_blocking")


def _seconds(record: dict) -> dict[str, float]:
  return {m["key"]: m["seconds"] for m in record["measurements"] if m["key"] in _KEYS}


def main(argv: list[str] | None = None) -> int:
  """Command-line entry point."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--rounds", type=int, default=3, help="child pairs; medians are reported")
  parser.add_argument("--quick", action="store_true", help="smoke-test repeats")
  args = parser.parse_args(argv)
  if args.rounds < 1:
    parser.error("--rounds must be at least 1")
  off_env = dict(os.environ)
  off_env.pop("PJRTKIT_TRACE", None)
  results: dict[str, dict[str, list[float]]] = {"off": {k: [] for k in _KEYS},
                                                "traced": {k: [] for k in _KEYS}}
  lines = 0
  with tempfile.TemporaryDirectory(prefix="pjrtkit_trace_cost_") as tmp:
    for r in range(args.rounds):
      order = ("off", "traced") if r % 2 == 0 else ("traced", "off")
      for mode in order:
        env = dict(off_env)
        trace = Path(tmp) / f"trace_{r}.txt"
        if mode == "traced":
          env["PJRTKIT_TRACE"] = str(trace)
        record = run_child("pjrtkit", args.quick, "dispatch", env, timeout=600)
        for key, seconds in _seconds(record).items():
          results[mode][key].append(seconds)
        if mode == "traced":
          lines = len(trace.read_text().splitlines())
          trace.unlink()
  print(f"| workload | tracing off | PJRTKIT_TRACE=<file> | traced / off |")
  print("| --- | --- | --- | --- |")
  for key in _KEYS:
    off = statistics.median(results["off"][key])
    on = statistics.median(results["traced"][key])
    print(f"| {key} | {off * 1e6:.2f} us | {on * 1e6:.2f} us | {on / off:.2f} |")
  print(f"({args.rounds} rounds; one traced child wrote {lines} lines)")
  return 0


if __name__ == "__main__":
  sys.exit(main())
