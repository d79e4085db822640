"""The kernel comparison's outputs: ratios and the per-case best marker, the Markdown tables, the
JSON document and the PNG (drawn with tools.bench.png)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Sequence

from tools.bench import compare_cases
from tools.bench import compare_contenders as cc
from tools.bench import compare_measure as cm
from tools.bench.compare_cases import Case
from tools.bench.png import Canvas

NOTE_CHARS = 400
"""Skip reasons longer than this are cut in the Markdown table (the JSON has them whole)."""


def annotate(case: Case, results: Sequence[cm.Result]) -> list[dict[str, Any]]:
  """Each result as a dict plus ``ratio`` (time / baseline time), ``baseline`` and ``best`` (the
  fastest contender that ran and did not fail the correctness check)."""
  ran = {r.contender: r for r in results if r.status == cm.OK}
  baseline = next((n for n in cc.baselines(case.op) if n in ran), None)
  eligible = [r for r in ran.values() if r.check != "mismatch"]
  best = min(eligible, key=lambda r: r.ms).contender if eligible else None
  rows = []
  for r in results:
    row = dataclasses.asdict(r)
    row["ratio"] = (r.ms / ran[baseline].ms if baseline and r.status == cm.OK and
                    ran[baseline].ms > 0 else None)
    row["baseline"] = baseline
    row["best"] = r.contender == best
    rows.append(row)
  return rows


def case_info(case: Case) -> dict[str, Any]:
  """What the JSON records about a case (its fields, the label, the op's own fields such as
  attention's key/value shape, and the FLOPs or bytes counted: `OpBenchmark.record`)."""
  return compare_cases.benchmark_of(case.op).record(case)


def ops_of(doc: dict[str, Any]) -> list[str]:
  """The ops of a comparison document, in the order their cases first appear."""
  return list(dict.fromkeys(info["op"] for info in doc["cases"].values()))


HELD_OUT_MARK = " (held out)"
HELD_OUT_NOTE = "held out = a shape never tuned (no choice for it in kernels/tuned)"


def case_title(info: dict[str, Any]) -> str:
  """A case's label in the tables and the figure, `HELD_OUT_MARK` after a held-out one's
  (`info`: the JSON's case record; records without ``held_out`` are not held out)."""
  return info["label"] + (HELD_OUT_MARK if info.get("held_out") else "")


def _cell(text: str) -> str:
  return text.replace("|", "\\|").replace("\n", " ")


def _num(value: float) -> str:
  """Two decimals, or three significant digits below 1 (quick shapes give tiny throughputs)."""
  return f"{value:.2f}" if value >= 1 else f"{value:.3g}"


def _check_cell(row: dict[str, Any]) -> str:
  if row["check"] in ("reference", "unchecked") or not row["errors"]:
    return row["check"] if row["status"] == cm.OK else "-"
  worst = max(e for _, e in row["errors"])
  return f"{'ok' if row['check'] == 'ok' else '**MISMATCH**'} ({worst:.1e})"


def _note(row: dict[str, Any], primary: str) -> str:
  if row["status"] == cm.SKIP:
    reason = row["reason"] or ""
    return _cell(reason if len(reason) <= NOTE_CHARS else reason[:NOTE_CHARS] + " ...")
  notes = []
  if row["chosen"]:
    notes.append(f"chose {row['chosen']}")
  if row["baseline"] == row["contender"] and row["baseline"] != primary:
    notes.append(f"ratios of this case are to {row['baseline']} ({primary} did not run)")
  return _cell("; ".join(notes))


def markdown(doc: dict[str, Any]) -> str:
  """The Markdown report of a comparison document: one table per platform and op."""
  meta = doc["meta"]
  lines = [f"# Kernel comparison ({meta['date']})", "",
           f"jax {meta['jax']}, jaxlib {meta['jaxlib']}, tokamax {meta['tokamax']}, triton "
           f"{meta['triton']}; timing: {meta['method']} ({_timing(meta)}); "
           f"{'QUICK shapes (not for reporting); ' if meta['quick'] else ''}"
           f"check: max|out - ref| / max(1, max|ref|) <= {cm.TOLERANCE_FWD} (output), "
           f"{cm.TOLERANCE_GRAD} (gradients), bfloat16.", ""]
  for run in doc["runs"]:
    for op in sorted(ops_of(doc), key=_op_order):
      rows = [r for r in run["rows"] if doc["cases"][r["case"]]["op"] == op]
      if not rows:
        continue
      primary = cc.baselines(op)[0]
      unit = compare_cases.throughput_unit(op)
      held_out = any(doc["cases"][r["case"]].get("held_out") for r in rows)
      lines += [f"## {run['platform']}: {op} ({run['device']})", "",
                f"{compare_cases.convention(op)}; ratio = time / {primary} time (lower is "
                f"faster); best = fastest that passed the check"
                f"{'; ' + HELD_OUT_NOTE if held_out else ''}.", "",
                f"| case | contender | time (ms) | {unit} | / {primary} | check | best | note |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |"]
      for r in rows:
        ok = r["status"] == cm.OK
        lines.append("| " + " | ".join([
            case_title(doc["cases"][r["case"]]), r["contender"],
            f"{r['ms']:.4f}" if ok else "skip",
            _num(r["throughput"]) if ok else "-",
            f"{r['ratio']:.2f}" if r["ratio"] is not None else "-",
            _check_cell(r), "**best**" if r["best"] else "", _note(r, primary)]) + " |")
      lines.append("")
  return "\n".join(lines)


def _op_order(op: str) -> int:
  """Tables in the order of the op folders (`compare_cases.op_benchmarks`)."""
  names = [b.name for b in compare_cases.op_benchmarks()]
  return names.index(op) if op in names else len(names)


_COLORS = {cc.OURS: (60, 110, 190), cc.CUDNN: (90, 160, 90), cc.JAX: (226, 128, 44),
           cc.TOKAMAX: (160, 90, 170), cc.XLA_REF: (226, 128, 44)}
_LEFT, _BAR, _ROW = 150, 420, 12


def draw(doc: dict[str, Any], path: Path) -> None:
  """Throughput bars per case and platform, each case scaled to its fastest contender; skips
  and correctness mismatches written out."""
  groups = [(run, case_id, [r for r in run["rows"] if r["case"] == case_id])
            for run in doc["runs"] for case_id in doc["cases"]]
  groups = [g for g in groups if g[2]]
  height = 60 + sum(_ROW * len(rows) + 16 for _, _, rows in groups) + 10
  canvas = Canvas(_LEFT + _BAR + 260, height)
  canvas.text(10, 8, "kernel throughput (longer is faster)", scale=2)
  canvas.text(10, 30, f"{doc['meta']['method']} medians; attention TFLOP/s, layer norm TB/s; "
              f"bar = share of the case's fastest" + ("; QUICK" if doc["meta"]["quick"] else ""))
  y = 50
  for run, case_id, rows in groups:
    canvas.text(10, y, f"{case_title(doc['cases'][case_id])} on {run['platform']}")
    y += 12
    top = max((r["throughput"] for r in rows if r["status"] == cm.OK), default=0.0) or 1.0
    for r in rows:
      canvas.text(20, y + 1, r["contender"])
      if r["status"] != cm.OK:
        canvas.text(_LEFT, y + 1, "skip", (150, 0, 0))
      else:
        width = max(1, int(_BAR * r["throughput"] / top))
        bad = r["check"] == "mismatch"
        color = (200, 40, 40) if bad else _COLORS.get(r["group"], (120, 120, 120))
        canvas.fill_rect(_LEFT, y, width, 9, color)
        unit = compare_cases.throughput_unit(doc["cases"][case_id]["op"])
        label = (f"{_num(r['throughput'])} {unit}, {r['ms']:.3f} ms" +
                 (" MISMATCH" if bad else "") + (" BEST" if r["best"] else ""))
        canvas.text(_LEFT + width + 4, y + 1, label, (150, 0, 0) if bad else (0, 0, 0))
      y += _ROW
    y += 4
  canvas.save(path)


def write(doc: dict[str, Any], out: Path, stem: str, png: bool = True) -> list[Path]:
  """Writes ``<stem>.json``, ``<stem>.md`` and (unless `png` is False) ``<stem>.png``."""
  out.mkdir(parents=True, exist_ok=True)
  paths = [out / f"{stem}.json", out / f"{stem}.md"]
  paths[0].write_text(json.dumps(doc, indent=1))
  paths[1].write_text(markdown(doc))
  if png:
    paths.append(out / f"{stem}.png")
    draw(doc, paths[2])
  return paths


def _timing(meta: dict[str, Any]) -> str:
  """How the times were taken: rounds (absent in runs before rounds existed: one) of
  `iterations` calls."""
  rounds = meta.get("rounds", 1)
  if rounds == 1:
    return f"median of {meta['iterations']}"
  return (f"median of {rounds} interleaved rounds' medians, {meta['iterations']} calls each")
