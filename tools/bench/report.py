"""Combines the children's records into one report: medians per backend, ratios against the
baselines, the targets of issue #5, a text table and the JSON written next to the plot."""

from __future__ import annotations

import dataclasses
import statistics
from typing import Any, Optional

from tools.bench.backends import BASELINES, DIRECT_PLATFORM
from tools.bench.records import Measurement

PJRTKIT = "pjrtkit"


@dataclasses.dataclass(frozen=True)
class Target:
  """A goal for one measurement of pjrtkit.

  Attributes:
    max_ratio_vs_direct: pjrtkit time / direct XLA:CPU time must be at most this.
    min_memcpy_fraction: pjrtkit GB/s / memcpy GB/s (same size, same run) must be at least this.
  """

  max_ratio_vs_direct: Optional[float] = None
  min_memcpy_fraction: Optional[float] = None

  def describe(self) -> str:
    """Short text for the table, e.g. "<=1.05x direct"."""
    parts = []
    if self.max_ratio_vs_direct is not None:
      parts.append(f"<={self.max_ratio_vs_direct:g}x direct")
    if self.min_memcpy_fraction is not None:
      parts.append(f">={self.min_memcpy_fraction:.0%} memcpy")
    return ", ".join(parts)


def target_for(key: str, nbytes: int) -> Optional[Target]:
  """The issue #5 target of measurement `key` (None: reported, no target)."""
  if key.startswith("dispatch_"):
    return Target(max_ratio_vs_direct=1.05)
  if (key.startswith(("h2d_", "d2h_")) and not key.endswith("aligned64") and "_kept" not in key
      and nbytes >= 64 << 20):
    return Target(max_ratio_vs_direct=0.5, min_memcpy_fraction=0.8)
  if key.startswith(("matmul_", "mlp_")):
    return Target(max_ratio_vs_direct=1.02)
  return None


def _median(values: list[float]) -> float:
  return float(statistics.median(values))


def combine(records: list[dict[str, Any]]) -> dict[str, Any]:
  """Merges per-round child records into one report (medians over rounds).

  Args:
    records: the JSON records the children wrote (several rounds per backend).

  Returns:
    {"backends": {name: metadata}, "rounds": n, "rows": [row, ...]} where each row has the
    measurement's key, label, group, bytes, per-backend median seconds (None when n/a) and the
    per-round values they are the median of, GB/s,
    ratios of pjrtkit to each baseline, the memcpy fraction, the target and whether it is met.
  """
  backends: dict[str, dict[str, Any]] = {}
  samples: dict[str, dict[str, list[float]]] = {}
  reasons: dict[str, dict[str, str]] = {}
  notes: dict[str, dict[str, str]] = {}
  order: list[Measurement] = []
  seen: set[str] = set()
  for record in records:
    name = record["backend"]
    backends[name] = {k: v for k, v in record.items() if k not in ("backend", "measurements")}
    for data in record["measurements"]:
      m = Measurement.from_json(data)
      if m.key not in seen:
        seen.add(m.key)
        order.append(m)
      if m.seconds is not None:
        samples.setdefault(m.key, {}).setdefault(name, []).append(m.seconds)
      elif m.na_reason:
        reasons.setdefault(m.key, {})[name] = m.na_reason
      if m.note:
        notes.setdefault(m.key, {})[name] = m.note
  rounds = max((sum(1 for r in records if r["backend"] == b) for b in backends), default=0)

  rows = []
  for m in order:
    seconds = {b: (_median(samples[m.key][b]) if b in samples.get(m.key, {}) else None)
               for b in backends}
    gbps = {b: (m.nbytes / s / 1e9 if s and m.nbytes else None) for b, s in seconds.items()}
    ratios = {}
    for base in BASELINES:
      ours, theirs = seconds.get(PJRTKIT), seconds.get(base)
      ratios[base] = ours / theirs if ours and theirs else None
    memcpy_fraction = None
    if m.group == "transfer" and m.nbytes:
      size = m.key.split("_", 1)[1].replace("_aligned64", "")
      memcpy = samples.get(f"memcpy_{size}", {}).get(PJRTKIT)
      if memcpy and seconds.get(PJRTKIT):
        memcpy_fraction = _median(memcpy) / seconds[PJRTKIT]
    target = target_for(m.key, m.nbytes)
    met = None
    if target is not None:
      checks = []
      if target.max_ratio_vs_direct is not None:
        ratio = ratios.get(DIRECT_PLATFORM)
        checks.append(ratio is not None and ratio <= target.max_ratio_vs_direct)
      if target.min_memcpy_fraction is not None:
        checks.append(memcpy_fraction is not None and
                      memcpy_fraction >= target.min_memcpy_fraction)
      met = all(checks)
    rows.append({
        "key": m.key, "label": m.label, "group": m.group, "nbytes": m.nbytes,
        "seconds": seconds, "per_round_seconds": samples.get(m.key, {}), "gbps": gbps,
        "ratios": ratios, "memcpy_fraction": memcpy_fraction,
        "target": target.describe() if target else None, "met": met,
        "na_reasons": reasons.get(m.key, {}), "notes": notes.get(m.key, {}),
    })
  return {"backends": backends, "rounds": rounds, "rows": rows}


def format_value(seconds: Optional[float], gbps: Optional[float]) -> str:
  """"12.3 us", "45.6 ms (3.21 GB/s)", or "n/a"."""
  if seconds is None:
    return "n/a"
  if seconds < 1e-3:
    text = f"{seconds * 1e6:.2f} us"
  elif seconds < 1.0:
    text = f"{seconds * 1e3:.2f} ms"
  else:
    text = f"{seconds:.2f} s"
  if gbps is not None:
    text += f" ({gbps:.3g} GB/s)"
  return text


def format_table(report: dict[str, Any]) -> str:
  """The report as a fixed-width text table (one row per measurement)."""
  names = ["cpu", DIRECT_PLATFORM, PJRTKIT]
  header = (["workload"] + names + ["pjrtkit/cpu", "pjrtkit/direct", "vs memcpy", "target",
                                    "met"])
  lines = [header]
  for row in report["rows"]:
    ratio = lambda b: (f"{row['ratios'][b]:.3f}" if row["ratios"].get(b) is not None else "-")
    fraction = row["memcpy_fraction"]
    lines.append([row["label"]] +
                 [format_value(row["seconds"].get(n), row["gbps"].get(n)) for n in names] +
                 [ratio("cpu"), ratio(DIRECT_PLATFORM),
                  f"{fraction:.2f}" if fraction is not None else "-",
                  row["target"] or "-",
                  "-" if row["met"] is None else ("yes" if row["met"] else "NO")])
  widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
  out = []
  for n, line in enumerate(lines):
    out.append("  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(line)).rstrip())
    if n == 0:
      out.append("  ".join("-" * w for w in widths))
  for row in report["rows"]:
    for backend, reason in row["na_reasons"].items():
      out.append(f"n/a: {row['label']} on {backend}: {reason}")
  return "\n".join(out)
