"""The own-runtime benchmark (issue 49 item 5): pjrtkit's ``sim`` device (its own compiler,
runtime and kernels) against its ``xla_cpu`` device (OpenXLA's XLA:CPU) on the same machine, and
sim's matmul against numpy's with the same number of threads, all in one run.

| row | ratio | target |
| --- | --- | --- |
| SGD step of a 784-1024-1024-10 ReLU MLP, batch 256, f32 | sim time / xla_cpu time | <= 2.0 |
| the same step with the batch cut over 4 devices (NamedSharding) | sim time / xla_cpu time | <= 2.0 |
| 10 elementwise ops on 16M f32, arithmetic only (fusion) | sim time / xla_cpu time | <= 1.5 |
| 10 elementwise ops on 16M f32, five transcendental | sim time / xla_cpu time | <= 1.5 |
| dot_general 1024x1024x1024 f32 | sim throughput / numpy's, 1 thread each | >= 0.8 |
| jit round trip (f32[8] x+1, waited for) | sim time / xla_cpu time | <= 1.5 |
| jit dispatch, asynchronous | sim time / xla_cpu time | <= 1.5 |

sim runs each device's part of a program on that device's one queue thread, so numpy's BLAS is
given one thread (``OPENBLAS_NUM_THREADS=1``) for the matmul row; xla_cpu uses its own thread
pool over every core, as users run it. One child process per backend and round
(``own_runtime_worker``), rounds rotating which backend goes first; every workload's values are
checked against numpy before it is timed; values are medians over rounds.

Usage, from the repository root (plugin installed by tools/setup.sh, or ``PJRTKIT_PLUGIN_LIBRARY``
set):
  .venv/bin/python -m tools.bench.own_runtime [--rounds 3] [--quick] [--out docs/results]
Writes DIR/own_runtime.json, .md and .png and prints the table. ``--quick``: tiny sizes, for the
test of the checks and the report; its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from tools.bench import child
from tools.bench.png import Canvas

_ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ("sim", "xla_cpu", "numpy")


@dataclasses.dataclass(frozen=True)
class Row:
  """One row: sim's workload ``key`` against ``baseline``'s, and the target on the ratio.

  ``throughput``: the ratio is baseline time / sim time (higher is better, target a minimum);
  otherwise sim time / baseline time (lower is better, target a maximum).
  """

  key: str
  label: str
  baseline: str
  target: float
  throughput: bool = False


ROWS = (
    Row("mlp_step", "MLP 784-1024-1024-10 SGD step, batch 256", "xla_cpu", 2.0),
    Row("mlp_step_data_parallel", "the same step, batch cut over 4 devices", "xla_cpu", 2.0),
    Row("chain_arithmetic", "10 elementwise ops on 16M f32, arithmetic", "xla_cpu", 1.5),
    Row("chain_transcendental", "10 elementwise ops on 16M f32, 5 transcendental", "xla_cpu",
        1.5),
    Row("dot", "dot_general 1024x1024x1024 f32 vs numpy, 1 thread", "numpy", 0.8, throughput=True),
    Row("dispatch_blocking", "jit round trip, f32[8] x+1", "xla_cpu", 1.5),
    Row("dispatch_async", "jit dispatch, asynchronous", "xla_cpu", 1.5),
)


def combine(records: list[dict[str, Any]]) -> dict[str, Any]:
  """Medians over rounds per backend and workload, the checks, and each row's ratio."""
  by_backend: dict[str, list[dict[str, Any]]] = {}
  for record in records:
    by_backend.setdefault(record["backend"], []).append(record)
  out_rows = []
  for row in ROWS:
    entry: dict[str, Any] = {"key": row.key, "label": row.label, "baseline": row.baseline,
                             "target": row.target,
                             "ratio_is": ("baseline time / sim time" if row.throughput
                                          else "sim time / baseline time")}
    for role, backend in (("sim", "sim"), ("base", row.baseline), ("xla_cpu", "xla_cpu")):
      results = [r["results"][row.key] for r in by_backend.get(backend, [])
                 if row.key in r["results"]]
      if not results:
        continue
      checks = [r["check"] for r in results]
      side: dict[str, Any] = {"backend": backend, "check_ok": all(c["ok"] for c in checks),
                              "checks": checks}
      if side["check_ok"]:
        side["per_round"] = [r["seconds"] for r in results]
        side["seconds"] = statistics.median(side["per_round"])
      entry[role] = side
    sim, base = entry.get("sim"), entry.get("base")
    entry["checks_ok"] = bool(sim and base and sim["check_ok"] and base["check_ok"])
    if entry["checks_ok"]:
      if row.throughput:
        entry["ratio"] = base["seconds"] / sim["seconds"]
        entry["met"] = entry["ratio"] >= row.target
      else:
        entry["ratio"] = sim["seconds"] / base["seconds"]
        entry["met"] = entry["ratio"] <= row.target
    out_rows.append(entry)
  meta = {b: {k: v for k, v in rs[0].items() if k != "results"} for b, rs in by_backend.items()}
  return {"backends": meta, "rounds": len(by_backend.get("sim", [])), "rows": out_rows}


def _time(seconds: float) -> str:
  if seconds < 1e-3:
    return f"{seconds * 1e6:.2f} us"
  return f"{seconds * 1e3:.2f} ms"


def _cell(row: dict[str, Any], role: str) -> str:
  side = row.get(role)
  if side is None:
    return "-"
  if not side["check_ok"]:
    return "WRONG VALUES (not timed)"
  return _time(side["seconds"])


def format_table(report: dict[str, Any]) -> str:
  """The Markdown table of ``report``."""
  lines = ["| workload | xla_cpu | numpy (1 thread) | sim | ratio | target | met |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
  for row in report["rows"]:
    numpy_cell = _cell(row, "base") if row["baseline"] == "numpy" else "-"
    if row["checks_ok"]:
      ratio = f"{row['ratio']:.2f} ({row['ratio_is']})"
      sign = ">=" if row["baseline"] == "numpy" else "<="
      target, met = f"{sign} {row['target']}", "yes" if row["met"] else "no"
    else:
      ratio, target, met = "-", "-", "check FAILED"
    lines.append(f"| {row['label']} | {_cell(row, 'xla_cpu')} | {numpy_cell} | "
                 f"{_cell(row, 'sim')} | {ratio} | {target} | {met} |")
  return "\n".join(lines)


def draw(report: dict[str, Any], path: Path, subtitle: str) -> None:
  """A bar per row: sim's ratio, with the target drawn as a red tick (0 to 4 on the axis)."""
  left, width, row_height, top, axis_max = 330, 480, 24, 60, 4.0
  canvas = Canvas(left + width + 80, top + row_height * len(report["rows"]) + 40)
  canvas.text(10, 10, "sim vs xla_cpu (time ratio) and vs numpy (throughput)", scale=2)
  canvas.text(10, 34, subtitle)

  def x_of(value: float) -> int:
    return left + int(width * min(value, axis_max) / axis_max)

  for tick in (0.0, 1.0, 2.0, 3.0, 4.0):
    canvas.fill_rect(x_of(tick), top - 4, 1, row_height * len(report["rows"]) + 4,
                     (0, 0, 0) if tick == 1.0 else (215, 215, 215))
    canvas.text(x_of(tick) - 8, top + row_height * len(report["rows"]) + 6, f"{tick:.1f}")
  for i, row in enumerate(report["rows"]):
    y = top + i * row_height
    canvas.text(10, y + 8, row["label"][:52])
    if not row["checks_ok"]:
      canvas.text(left + 4, y + 8, "check failed", (150, 0, 0))
      continue
    color = (60, 150, 80) if row["met"] else (200, 80, 60)
    canvas.fill_rect(left, y + 5, x_of(row["ratio"]) - left, 12, color)
    canvas.fill_rect(x_of(row["target"]), y + 2, 2, 18, (200, 0, 0))
    canvas.text(x_of(row["ratio"]) + 4, y + 8, f"{row['ratio']:.2f}")
  canvas.save(path)


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--quick", action="store_true", help="tiny sizes (numbers not reported)")
  parser.add_argument("--out", type=Path, default=_ROOT / "docs" / "results")
  parser.add_argument("--timeout", type=float, default=900, help="seconds per child")
  args = parser.parse_args(argv)
  if args.rounds < 1:
    parser.error(f"--rounds must be >= 1, got {args.rounds}")
  env = child.child_env()
  env["OPENBLAS_NUM_THREADS"] = "1"  # numpy's matmul row: sim's thread count (see the docstring).
  started = time.time()
  records = []
  for r in range(args.rounds):
    for i in range(len(BACKENDS)):
      backend = BACKENDS[(i + r) % len(BACKENDS)]
      t0 = time.time()
      records.append(child.run_worker("tools.bench.own_runtime_worker", backend,
                                      ["--quick"] if args.quick else [], env, args.timeout,
                                      what="own-runtime benchmark"))
      print(f"[own_runtime] round {r + 1}/{args.rounds} {backend}: {time.time() - t0:.0f} s",
            file=sys.stderr, flush=True)
  report = combine(records)
  stamp = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
  model = "unknown CPU"
  for line in Path("/proc/cpuinfo").read_text().splitlines():
    if line.startswith("model name"):
      model = line.split(":", 1)[1].strip()
      break
  report.update({"date": stamp, "quick": args.quick, "wall_seconds": time.time() - started,
                 "machine": {"cpu": model, "cores": os.cpu_count()}})
  quick = ", QUICK (numbers not for reporting)" if args.quick else ""
  title = (f"pjrtkit own-runtime benchmark, {stamp[:10]}, {model}, {os.cpu_count()} cores, "
           f"medians of {report['rounds']} rounds{quick}")
  table = format_table(report)
  args.out.mkdir(parents=True, exist_ok=True)
  (args.out / "own_runtime.json").write_text(json.dumps(report, indent=1) + "\n")
  (args.out / "own_runtime.md").write_text(f"{title}\n\n{table}\n")
  draw(report, args.out / "own_runtime.png", title[len("pjrtkit own-runtime benchmark, "):])
  print(title)
  print(table)
  return 0 if all(row["checks_ok"] for row in report["rows"]) else 1


if __name__ == "__main__":
  sys.exit(main())
