"""The benchmark's GPU mode: pjrtkit's xla_gpu device against JAX's CUDA plugin used directly.

Both backends run OpenXLA's CUDA PJRT plugin (``xla_cuda_plugin.so`` of jax-cuda13-pjrt); the
difference is pjrtkit's layers (its C API adapter, client layer and shared wrapper). One child
process per backend and round, rounds alternating which backend goes first; reported values are
medians over rounds, and the ratio is pjrtkit's time / the direct plugin's time (below 1:
pjrtkit is faster; for transfers, the inverse ratio of bandwidths).

Usage, on a GPU machine, from the repository root (or a copy with ``tools/`` and pjrtkit's
Python packages on ``PYTHONPATH`` and ``PJRTKIT_PLUGIN_LIBRARY`` set):
  python3 -m tools.bench.gpu [--rounds 3] [--quick] [--out DIR]
Writes DIR/bench_gpu.json and DIR/bench_gpu.png and prints the table.
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
from tools.bench.png import GLYPH_HEIGHT, Canvas

BACKENDS = ("cuda", "pjrtkit")
TARGETS = {"dispatch": ("<=", 1.05), "matmul": ("<=", 1.0 / 0.98), "h2d": ("<=", 1.0 / 0.95),
           "d2h": ("<=", 1.0 / 0.95)}
"""Goals as maximum time ratios: dispatch <= 1.05x, matmul >= 0.98x the direct throughput,
transfers at 64 MiB and 1 GiB >= 0.95x the direct bandwidth."""

MIN_GBPS = {"d2h_64MiB": 10.0, "d2h_1024MiB": 10.0}
"""Absolute goals on pjrtkit's bandwidth (GB/s): reads into numpy at 10 GB/s or more, where
XLA:GPU's own read into pageable memory (the direct plugin's) runs at 1.3-1.8 GB/s."""

_LABELS = {
    "dispatch_async": "jit dispatch, async (f32[8] x+1)",
    "dispatch_blocking": "jit round trip, blocking",
}


def label(key: str) -> str:
  """The table label of measurement ``key``."""
  if key in _LABELS:
    return _LABELS[key]
  parts = key.split("_")
  if parts[0] == "matmul":
    return f"matmul {parts[1]} {parts[2]}^3"
  direction = {"h2d": "host to device", "d2h": "device to host"}[parts[0]]
  rest = " ".join(parts[2:]).replace("misaligned", "numpy, 16 B off 64-aligned").replace(
      "from pinned host", "from pinned_host").replace("to pinned host", "to pinned_host")
  return f"{direction} {parts[1]}" + (f" ({rest})" if rest else " (numpy)")


def run_child(backend: str, quick: bool, env: dict[str, str], timeout: float) -> dict[str, Any]:
  """One round of ``backend`` in a fresh interpreter; its record."""
  return child.run_worker("tools.bench.gpu_worker", backend, ["--quick"] if quick else [], env,
                          timeout, what="GPU benchmark")


def combine(records: list[dict[str, Any]]) -> dict[str, Any]:
  """Medians over rounds per backend and measurement, and pjrtkit's time ratio to cuda."""
  by_backend: dict[str, list[dict[str, Any]]] = {}
  for record in records:
    by_backend.setdefault(record["backend"], []).append(record["results"])
  keys = [k for k, v in by_backend["cuda"][0].items() if isinstance(v, dict)]
  rows = []
  for key in keys:
    row: dict[str, Any] = {"key": key, "label": label(key)}
    for backend, results in by_backend.items():
      seconds = [r[key]["seconds"] for r in results if key in r]
      entry = {"seconds": statistics.median(seconds), "rounds": len(seconds),
               "per_round": seconds}
      for unit in ("GBps", "TFLOPs"):
        if unit in results[0][key]:
          entry[unit] = statistics.median(r[key][unit] for r in results if key in r)
      row[backend] = entry
    row["ratio"] = row["pjrtkit"]["seconds"] / row["cuda"]["seconds"]
    goal = TARGETS.get(key.split("_")[0])
    if goal is not None and (key.startswith(("dispatch", "matmul")) or "pinned" not in key):
      row["target"] = goal[1]
      row["meets_target"] = row["ratio"] <= goal[1]
    if key in MIN_GBPS:
      row["min_gbps"] = MIN_GBPS[key]
      row["meets_target"] = (row.get("meets_target", True) and
                             row["pjrtkit"].get("GBps", 0.0) >= MIN_GBPS[key])
    rows.append(row)
  meta = {b: {k: v for k, v in r[0].items() if not isinstance(v, dict)}
          for b, r in by_backend.items()}
  return {"backends": meta, "rounds": len(by_backend["cuda"]), "rows": rows}


def _value(entry: dict[str, Any]) -> str:
  seconds = entry["seconds"]
  text = f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"
  if "GBps" in entry:
    text += f" ({entry['GBps']:.1f} GB/s)"
  if "TFLOPs" in entry:
    text += f" ({entry['TFLOPs']:.0f} TFLOP/s)"
  return text


def format_table(report: dict[str, Any]) -> str:
  """The Markdown table of ``report``."""
  lines = ["| workload | CUDA plugin direct | pjrtkit xla_gpu | pjrtkit / direct | goal |",
           "| --- | --- | --- | --- | --- |"]
  for row in report["rows"]:
    goal = ""
    if "target" in row:
      goal = f"<= {row['target']:.2f}"
      if "min_gbps" in row:
        goal += f", pjrtkit >= {row['min_gbps']:.0f} GB/s"
      goal += f" ({'met' if row['meets_target'] else 'NOT met'})"
    lines.append(f"| {row['label']} | {_value(row['cuda'])} | {_value(row['pjrtkit'])} | "
                 f"{row['ratio']:.3f} | {goal} |")
  return "\n".join(lines)


def draw(report: dict[str, Any], path: Path, subtitle: str) -> None:
  """Bars of pjrtkit's time ratio to the direct CUDA plugin, one per measurement."""
  rows = report["rows"]
  left, width, row_height, top, axis_max = 360, 520, 22, 60, 2.0
  canvas = Canvas(left + width + 90, top + row_height * len(rows) + 40)
  canvas.text(10, 10, "pjrtkit xla_gpu time / CUDA plugin direct time (1 = same)", scale=2)
  canvas.text(10, 34, subtitle)
  x_of = lambda ratio: left + int(width * min(ratio, axis_max) / axis_max)
  for tick in (0.0, 0.5, 1.0, 1.5, 2.0):
    canvas.fill_rect(x_of(tick), top - 4, 1, row_height * len(rows) + 4,
                     (0, 0, 0) if tick == 1.0 else (215, 215, 215))
    canvas.text(x_of(tick) - 8, top + row_height * len(rows) + 6, f"{tick:.1f}")
  for i, row in enumerate(rows):
    y = top + i * row_height
    canvas.text(10, y + 6, row["label"][:56])
    color = (60, 140, 60) if row.get("meets_target", True) else (200, 60, 40)
    canvas.fill_rect(left, y + 4, x_of(row["ratio"]) - left, 12, color)
    canvas.text(x_of(row["ratio"]) + 4, y + 4 + (12 - GLYPH_HEIGHT) // 2 + 1,
                f"{row['ratio']:.3f}")
  canvas.save(path)


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--quick", action="store_true", help="small sizes (numbers not reported)")
  parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
  parser.add_argument("--timeout", type=float, default=300, help="seconds per child")
  args = parser.parse_args(argv)
  env = child.child_env()
  started = time.time()
  records = []
  for r in range(args.rounds):
    for i in range(len(BACKENDS)):
      backend = BACKENDS[(i + r) % len(BACKENDS)]
      t0 = time.time()
      records.append(run_child(backend, args.quick, env, args.timeout))
      print(f"[bench gpu] round {r + 1}/{args.rounds} {backend}: {time.time() - t0:.0f} s",
            file=sys.stderr, flush=True)
  report = combine(records)
  stamp = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
  report.update({"date": stamp, "quick": args.quick, "wall_seconds": time.time() - started,
                 "ratio": "pjrtkit time / CUDA plugin direct time; below 1: pjrtkit is faster"})
  args.out.mkdir(parents=True, exist_ok=True)
  (args.out / "bench_gpu.json").write_text(json.dumps(report, indent=1) + "\n")
  kind = report["backends"]["cuda"].get("device_kind", "GPU")
  subtitle = (f"{stamp[:10]}, {kind}, medians of {report['rounds']} rounds"
              f"{', QUICK' if args.quick else ''}")
  draw(report, args.out / "bench_gpu.png", subtitle)
  print(f"pjrtkit GPU benchmark, {subtitle}")
  print(format_table(report))
  return 0


if __name__ == "__main__":
  sys.exit(main())
