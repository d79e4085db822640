"""pjrtkit vs JAX's CUDA backend: per (case, our implementation), pjrtkit's time / cuda's time,
from kernel_compare JSON files (one file per platform, or one file of a two-platform process).

  python -m tools.bench.kernel_compare merge OUT/kernel_compare_cuda.json \\
      OUT/kernel_compare_pjrtkit.json --out OUT

Writes ``kernel_compare_platforms.{md,json}`` and prints the table. Goal: within 2 % (ratio in
[0.98, 1.02]).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

from tools.bench import compare_contenders as cc
from tools.bench import compare_measure as cm
from tools.bench import compare_report

GOAL = 0.02
"""|pjrtkit / cuda - 1| allowed."""


def _runs(docs: Sequence[dict[str, Any]]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
  """platform -> (run, its document); a later file's run of a platform replaces an earlier."""
  out = {}
  for doc in docs:
    for run in doc["runs"]:
      out[run["platform"]] = (run, doc)
  return out


def merge(docs: Sequence[dict[str, Any]], numerator: str = "pjrtkit",
          denominator: str = "cuda") -> dict[str, Any]:
  """The ratio table of our implementations between two platforms' runs.

  Raises:
    ValueError: when either platform has no run in `docs`.
  """
  runs = _runs(docs)
  missing = [p for p in (numerator, denominator) if p not in runs]
  if missing:
    raise ValueError(f"no run of platform(s) {missing}; runs found: {sorted(runs)}")
  (num, num_doc), (den, den_doc) = runs[numerator], runs[denominator]
  den_rows = {(r["case"], r["contender"]): r for r in den["rows"]}
  rows = []
  for r in num["rows"]:
    other = den_rows.get((r["case"], r["contender"]))
    if r["group"] != cc.OURS or other is None:
      continue
    both = r["status"] == cm.OK and other["status"] == cm.OK and other["ms"] > 0
    ratio = r["ms"] / other["ms"] if both else None
    info = num_doc["cases"][r["case"]]
    rows.append({
        "case": r["case"], "label": info["label"], "held_out": bool(info.get("held_out")),
        "contender": r["contender"], f"{numerator}_ms": r["ms"], f"{denominator}_ms": other["ms"],
        "ratio": ratio, "within_goal": None if ratio is None else abs(ratio - 1) <= GOAL,
        "chosen": [r["chosen"], other["chosen"]],
        "skipped": [x["reason"] for x in (r, other) if x["status"] != cm.OK],
    })
  return {"numerator": numerator, "denominator": denominator, "goal": GOAL,
          "devices": {numerator: num["device"], denominator: den["device"]},
          "same_process": num_doc is den_doc, "rows": rows}


def markdown(merged: dict[str, Any]) -> str:
  """The merged ratios as a Markdown table."""
  n, d = merged["numerator"], merged["denominator"]
  met = [r["within_goal"] for r in merged["rows"] if r["within_goal"] is not None]
  held_out = any(r.get("held_out") for r in merged["rows"])
  lines = [f"## {n} time / {d} time, our implementations "
           f"({'one process' if merged['same_process'] else 'two processes'}; goal within "
           f"{merged['goal']:.0%}: {sum(met)} of {len(met)} measured pairs"
           f"{'; ' + compare_report.HELD_OUT_NOTE if held_out else ''})", "",
           f"| case | contender | {n} (ms) | {d} (ms) | {n} / {d} | within {merged['goal']:.0%} |",
           "| --- | --- | --- | --- | --- | --- |"]
  for r in merged["rows"]:
    fmt = lambda v: "skip" if v is None else f"{v:.4f}"  # noqa: E731
    lines.append(f"| {compare_report.case_title(r)} | {r['contender']} | {fmt(r[f'{n}_ms'])} | "
                 f"{fmt(r[f'{d}_ms'])} | "
                 f"{'-' if r['ratio'] is None else format(r['ratio'], '.3f')} | "
                 f"{'-' if r['within_goal'] is None else ('yes' if r['within_goal'] else 'no')} |")
  return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
  """``merge FILE.json [FILE.json] --out DIR [--numerator P] [--denominator P]``."""
  p = argparse.ArgumentParser(prog="kernel_compare merge", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("files", nargs="+", type=Path)
  p.add_argument("--out", type=Path, required=True)
  p.add_argument("--numerator", default="pjrtkit")
  p.add_argument("--denominator", default="cuda")
  a = p.parse_args(argv)
  missing = [str(f) for f in a.files if not f.exists()]
  if missing:
    print(f"merge: missing {', '.join(missing)} (that run wrote nothing)", flush=True)
    return 2
  merged = merge([json.loads(f.read_text()) for f in a.files], a.numerator, a.denominator)
  a.out.mkdir(parents=True, exist_ok=True)
  (a.out / "kernel_compare_platforms.json").write_text(json.dumps(merged, indent=1))
  text = markdown(merged)
  (a.out / "kernel_compare_platforms.md").write_text(text)
  print(text, flush=True)
  return 0
