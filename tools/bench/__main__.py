"""Runs the benchmark: every workload on jaxlib's `cpu`, OpenXLA's XLA:CPU plugin loaded
directly and `pjrtkit`, one child process per backend and round (rounds rotate the backend
order), then prints the table and writes bench.json and bench.png into --out (default:
$TMPDIR/pjrtkit_bench; the committed figures are docs/results/bench.json and bench.png).

Usage, from the repository root:
  .venv/bin/python -m tools.bench [--rounds 3] [--quick] [--out docs/results]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from tools.bench import child, plot, report
from tools.bench.backends import BACKENDS, DEVICE_COUNT
from tools.bench.config import DEFAULT_OUT


def machine() -> dict[str, Any]:
  """What ran the benchmark."""
  model = "unknown"
  try:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
      if line.startswith("model name"):
        model = line.split(":", 1)[1].strip()
        break
  except OSError:
    pass
  return {"cpu": model, "cores": os.cpu_count(), "system": platform.platform(),
          "python": platform.python_version(), "loadavg_start": list(os.getloadavg())}


def run_child(backend: str, quick: bool, only: str, env: dict[str, str],
              timeout: float) -> dict[str, Any]:
  """Runs tools.bench.worker for `backend` in a fresh interpreter; returns its record."""
  extra = (["--quick"] if quick else []) + (["--only", only] if only else [])
  return child.run_worker("tools.bench.worker", backend, extra, env, timeout)


def main(argv: list[str] | None = None) -> int:
  """Command-line entry point."""
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--rounds", type=int, default=3,
                      help="child runs per backend; reported values are medians over rounds")
  parser.add_argument("--quick", action="store_true",
                      help="smoke test: small sizes, few repeats (numbers not for reporting)")
  parser.add_argument("--only", default="", help="comma-separated workload names (worker.py)")
  parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                      help="folder for bench.json and bench.png")
  parser.add_argument("--timeout", type=float, default=900, help="seconds per child")
  parser.add_argument("--backends", default=",".join(b.name for b in BACKENDS),
                      help="comma-separated backends to run (default: all three)")
  args = parser.parse_args(argv)

  env = child.child_env(drop_jax_platforms=True)
  names = [b.name for b in BACKENDS if b.name in args.backends.split(",")]
  info = machine()
  started = time.time()
  records = []
  for r in range(args.rounds):
    for i in range(len(names)):
      name = names[(i + r) % len(names)]  # Rotate so no backend always runs first.
      t0 = time.time()
      print(f"[bench] round {r + 1}/{args.rounds}: {name}", file=sys.stderr, flush=True)
      records.append(run_child(name, args.quick, args.only, env, args.timeout))
      print(f"[bench]   {time.time() - t0:.0f} s", file=sys.stderr, flush=True)

  combined = report.combine(records)
  info["loadavg_end"] = list(os.getloadavg())
  stamp = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
  combined.update({
      "date": stamp, "machine": info, "quick": args.quick, "device_count": DEVICE_COUNT,
      "wall_seconds": round(time.time() - started, 1),
      "plugin_library": os.environ.get("PJRTKIT_PLUGIN_LIBRARY", "(installed package)"),
      "ratio": "pjrtkit time / baseline time; below 1 means pjrtkit is faster",
  })
  args.out.mkdir(parents=True, exist_ok=True)
  (args.out / "bench.json").write_text(json.dumps(combined, indent=1) + "\n")
  subtitle = (f"{stamp[:10]}, {info['cpu']}, {info['cores']} cores (shared), medians of "
              f"{combined['rounds']} rounds{', QUICK' if args.quick else ''}")
  plot.draw(combined, args.out / "bench.png", subtitle)
  print(f"pjrtkit benchmark, {subtitle}")
  print(f"ratio = {combined['ratio']}")
  print(report.format_table(combined))
  print(f"wrote {args.out / 'bench.json'} and {args.out / 'bench.png'} "
        f"({combined['wall_seconds']:.0f} s)")
  return 0


if __name__ == "__main__":
  sys.exit(main())
