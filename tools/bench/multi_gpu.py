"""The 2-GPU benchmark (issue 34): pjrtkit against JAX's CUDA plugin used directly, in one run.

Two workloads on the first two devices (``multi_gpu_worker``): a 1 GiB float32 all-reduce
(``shard_map`` + ``psum``; algbw and busbw = algbw * 2(n-1)/n, GB/s) and a bf16 matmul
8192x16384 @ 16384x8192 with the contraction sharded over the 2 devices (each holds half of K;
``psum`` of the partial products; TFLOP/s). Each is checked for exact values on every device
before it is timed; a backend whose check fails is not timed and fails the run.

One child process per backend and round, rounds alternating which backend goes first; values are
medians over rounds. The ratio is pjrtkit's throughput / the baseline's (= the baseline's time /
pjrtkit's); the goal is >= 0.98.

Usage, on a machine with 2 GPUs, from the repository root (or a kit from tools/gpu/make_kit.sh,
with pjrtkit's Python packages on ``PYTHONPATH`` and ``PJRTKIT_PLUGIN_LIBRARY`` set):
  python3 -m tools.bench.multi_gpu [--rounds 3] [--quick] [--out DIR] [--baseline cuda]
Writes DIR/bench_multi_gpu.json and DIR/bench_multi_gpu.md and prints the table and one
``RESULT`` line per workload. ``--quick --baseline cpu`` runs small sizes against jaxlib's CPU
backend with 2 devices (pjrtkit then on its CPU device, ``PJRTKIT_DEVICE=xla_cpu``): the CPU test
of the checks and the report; its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from tools.bench import child
from tools.bench.config import DEFAULT_OUT
from tools.bench.multi_gpu_worker import bus_bandwidth

GOAL = 0.98
"""pjrtkit's throughput / the baseline's, at least."""
BASELINES = ("cuda", "cpu")


def run_child(backend: str, quick: bool, env: dict[str, str], timeout: float) -> dict[str, Any]:
  """One round of ``backend`` in a fresh interpreter; its record."""
  return child.run_worker("tools.bench.multi_gpu_worker", backend, ["--quick"] if quick else [],
                          env, timeout, what="multi-GPU benchmark")


def _throughput(key: str, entry: dict[str, Any], seconds: float) -> dict[str, float]:
  """The throughput figures of ``key`` at ``seconds`` per call."""
  if key.startswith("allreduce"):
    algbw = entry["bytes_per_device"] / seconds / 1e9
    return {"algbw_GBps": algbw, "busbw_GBps": bus_bandwidth(algbw, entry["devices"])}
  return {"TFLOPs": entry["flops"] / seconds / 1e12}


def combine(records: list[dict[str, Any]], baseline: str) -> dict[str, Any]:
  """Medians over rounds per backend and workload, checks, and pjrtkit's throughput ratio."""
  by_backend: dict[str, list[dict[str, Any]]] = {}
  for record in records:
    by_backend.setdefault(record["backend"], []).append(record["results"])
  keys = [k for k, v in by_backend[baseline][0].items() if isinstance(v, dict)]
  rows = []
  for key in keys:
    row: dict[str, Any] = {"key": key}
    for backend in (baseline, "pjrtkit"):
      results = [r[key] for r in by_backend[backend]]
      checks = [r["check"] for r in results]
      entry: dict[str, Any] = {"check_ok": all(c["ok"] for c in checks), "checks": checks}
      if entry["check_ok"]:
        seconds = [r["seconds"] for r in results]
        entry.update(seconds=statistics.median(seconds), rounds=len(seconds),
                     per_round=seconds)
        entry.update(_throughput(key, results[0], entry["seconds"]))
      row[backend] = entry
    row["checks_ok"] = row[baseline]["check_ok"] and row["pjrtkit"]["check_ok"]
    if row["checks_ok"]:
      row["ratio"] = row[baseline]["seconds"] / row["pjrtkit"]["seconds"]
      row["goal"] = GOAL
      row["meets_goal"] = row["ratio"] >= GOAL
    rows.append(row)
  meta = {b: {k: v for k, v in r[0].items() if not isinstance(v, dict)}
          for b, r in by_backend.items()}
  return {"baseline": baseline, "backends": meta, "rounds": len(by_backend[baseline]),
          "rows": rows}


def label(key: str) -> str:
  """The table label of workload ``key``."""
  parts = key.split("_")
  if parts[0] == "allreduce":
    return f"all-reduce f32 {parts[1]} per device, psum over 2 devices"
  m, k, n = parts[2].split("x")
  return f"matmul bf16 {m}x{k} @ {k}x{n}, K sharded over 2 devices + psum"


def _value(row: dict[str, Any], backend: str) -> str:
  entry = row[backend]
  if not entry["check_ok"]:
    return "WRONG VALUES (not timed)"
  text = f"{entry['seconds'] * 1e3:.3f} ms"
  if "busbw_GBps" in entry:
    return text + f" (algbw {entry['algbw_GBps']:.1f}, busbw {entry['busbw_GBps']:.1f} GB/s)"
  return text + f" ({entry['TFLOPs']:.1f} TFLOP/s)"


def _verdict(row: dict[str, Any]) -> str:
  if not row["checks_ok"]:
    return "check FAILED"
  return f">= {row['goal']:.2f} ({'met' if row['meets_goal'] else 'NOT met'})"


def format_table(report: dict[str, Any]) -> str:
  """The Markdown table of ``report``."""
  name = {"cuda": "CUDA plugin direct", "cpu": "jaxlib cpu"}[report["baseline"]]
  lines = [f"| workload | {name} | pjrtkit | pjrtkit / {report['baseline']} throughput | goal |",
           "| --- | --- | --- | --- | --- |"]
  for row in report["rows"]:
    ratio = f"{row['ratio']:.3f}" if row["checks_ok"] else "-"
    lines.append(f"| {label(row['key'])} | {_value(row, report['baseline'])} | "
                 f"{_value(row, 'pjrtkit')} | {ratio} | {_verdict(row)} |")
  return "\n".join(lines)


def result_lines(report: dict[str, Any]) -> list[str]:
  """One ``RESULT`` line per workload, for logs and summaries."""
  lines = []
  for row in report["rows"]:
    base = report["baseline"]
    if not row["checks_ok"]:
      wrong = [b for b in (base, "pjrtkit") if not row[b]["check_ok"]]
      lines.append(f"RESULT {row['key']}: wrong values on {', '.join(wrong)}: FAILED")
      continue
    unit = "busbw_GBps" if "busbw_GBps" in row[base] else "TFLOPs"
    shown = "GB/s busbw" if unit == "busbw_GBps" else "TFLOP/s"
    lines.append(f"RESULT {row['key']}: {base} {row[base][unit]:.1f} {shown}, pjrtkit "
                 f"{row['pjrtkit'][unit]:.1f} {shown}, ratio {row['ratio']:.3f} "
                 f"(goal >= {row['goal']:.2f}: {'met' if row['meets_goal'] else 'NOT met'})")
  return lines


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--quick", action="store_true", help="small sizes (numbers not reported)")
  parser.add_argument("--baseline", choices=BASELINES, default="cuda")
  parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
  parser.add_argument("--timeout", type=float, default=300, help="seconds per child")
  args = parser.parse_args(argv)
  if args.rounds < 1:
    parser.error(f"--rounds must be >= 1, got {args.rounds}")
  env = child.child_env()
  backends = (args.baseline, "pjrtkit")
  started = time.time()
  records = []
  for r in range(args.rounds):
    for i in range(len(backends)):
      backend = backends[(i + r) % len(backends)]
      t0 = time.time()
      records.append(run_child(backend, args.quick, env, args.timeout))
      print(f"[bench multi_gpu] round {r + 1}/{args.rounds} {backend}: {time.time() - t0:.0f} s",
            file=sys.stderr, flush=True)
  report = combine(records, args.baseline)
  stamp = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
  report.update({"date": stamp, "quick": args.quick, "wall_seconds": time.time() - started,
                 "ratio": f"pjrtkit throughput / {args.baseline} throughput (= {args.baseline} "
                          "time / pjrtkit time); above 1: pjrtkit is faster"})
  args.out.mkdir(parents=True, exist_ok=True)
  (args.out / "bench_multi_gpu.json").write_text(json.dumps(report, indent=1) + "\n")
  kind = report["backends"][args.baseline].get("device_kind", "?")
  quick = ", QUICK (numbers not for reporting)" if args.quick else ""
  title = (f"pjrtkit 2-device benchmark, {stamp[:10]}, 2x {kind}, medians of "
           f"{report['rounds']} rounds{quick}")
  table = format_table(report)
  (args.out / "bench_multi_gpu.md").write_text(f"{title}\n\n{table}\n")
  print(title)
  print(table)
  print("\n".join(result_lines(report)))
  return 0 if all(row["checks_ok"] for row in report["rows"]) else 1


if __name__ == "__main__":
  sys.exit(main())
