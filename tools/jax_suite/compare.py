"""Side-by-side comparison of file runs: counts per file and backend, tests only pjrtkit fails."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tools.jax_suite.results import BAD, OUTCOMES, PASSED, SKIPPED, TestResult, count

OK = "ok"
TIMEOUT = "timeout"
CRASH = "crash"
MISCONFIGURED = "misconfigured"
NOT_RUN = "not-run"


@dataclasses.dataclass(frozen=True)
class FileRun:
  """One test file run on one backend (all attempts merged).

  Attributes:
    file: the test file, relative to the tests directory (`api_test.py`).
    backend: the backend's label (`pjrtkit`, `cpu`, ...).
    status: OK (pytest ran to the end, whatever the test outcomes), TIMEOUT, CRASH (the
      interpreter died; the test it died in is an error), MISCONFIGURED (the run did not get the
      backend it asked for) or NOT_RUN (left out, e.g. too slow).
    results: per-test results by test id.
    seconds: wall time of all attempts.
    info: what the child reported about its JAX (versions, default backend, device count,
      `jtu.device_under_test()`).
    note: why the status is not OK, or other remarks ("" when none).
  """

  file: str
  backend: str
  status: str
  results: Mapping[str, TestResult]
  seconds: float = 0.0
  info: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  note: str = ""

  def counts(self) -> dict[str, int]:
    return count(self.results.values())

  def to_json(self) -> dict[str, Any]:
    return {"file": self.file, "backend": self.backend, "status": self.status,
            "seconds": round(self.seconds, 1), "info": dict(self.info), "note": self.note,
            "counts": self.counts(),
            "results": [r.to_json() for r in sorted(self.results.values(), key=lambda r: r.test_id)]}

  @staticmethod
  def from_json(data: Mapping[str, Any]) -> "FileRun":
    results = {r["test_id"]: TestResult.from_json(r) for r in data.get("results", [])}
    return FileRun(data["file"], data["backend"], data["status"], results,
                   float(data.get("seconds", 0.0)), dict(data.get("info", {})),
                   str(data.get("note", "")))


@dataclasses.dataclass(frozen=True)
class Difference:
  """A test whose outcome differs between the backend under test and the baseline.

  Attributes:
    file: the test file.
    test_id: `Class::method`.
    outcome: the outcome on the backend under test.
    baseline_outcome: the outcome on the baseline ("missing" when the baseline has no result).
    message: first line of the error on the backend under test (or its skip reason).
  """

  file: str
  test_id: str
  outcome: str
  baseline_outcome: str
  message: str

  def to_json(self) -> dict[str, Any]:
    return dataclasses.asdict(self)


def differences(run: FileRun, baseline: FileRun) -> dict[str, list[Difference]]:
  """Tests of one file whose outcome on `run` is worse than on `baseline`.

  Returns:
    "fail_only": failed or error on `run`, passed on the baseline: the list to explain.
    "fail_skipped_on_baseline": failed or error on `run`, skipped on the baseline.
    "fail_missing_on_baseline": failed or error on `run`, no result on the baseline (it timed out
      or crashed there, or the test does not exist there).
    "skip_only": skipped on `run`, passed on the baseline (coverage the backend loses).
    "baseline_fail_only": failed or error on the baseline, passed on `run` (for information).
  """
  out: dict[str, list[Difference]] = {
      "fail_only": [], "fail_skipped_on_baseline": [], "fail_missing_on_baseline": [],
      "skip_only": [], "baseline_fail_only": []}
  for test_id in sorted(set(run.results) | set(baseline.results)):
    mine = run.results.get(test_id)
    theirs = baseline.results.get(test_id)
    if mine is None:
      continue
    base = theirs.outcome if theirs is not None else "missing"
    diff = Difference(run.file, test_id, mine.outcome, base, mine.message)
    if mine.outcome in BAD:
      if base == PASSED:
        out["fail_only"].append(diff)
      elif base == SKIPPED:
        out["fail_skipped_on_baseline"].append(diff)
      elif base == "missing":
        out["fail_missing_on_baseline"].append(diff)
    elif mine.outcome == SKIPPED and base == PASSED:
      out["skip_only"].append(diff)
    elif mine.outcome == PASSED and base in BAD and theirs is not None:
      out["baseline_fail_only"].append(
          Difference(run.file, test_id, mine.outcome, base, theirs.message))
  return out


def _cell(run: FileRun | None) -> str:
  if run is None:
    return "-"
  c = run.counts()
  cell = "/".join(str(c[o]) for o in OUTCOMES)
  if run.status != OK:
    cell += f" ({run.status})"
  return cell


def table(runs: Sequence[FileRun], backends: Sequence[str], files: Sequence[str]) -> str:
  """A Markdown table: one row per file, pass/fail/skip/error per backend, then totals."""
  by_key = {(r.file, r.backend): r for r in runs}
  header = "| file | " + " | ".join(f"{b} pass/fail/skip/error" for b in backends) + " |"
  lines = [header, "| --- |" + " --- |" * len(backends)]
  totals = {b: {o: 0 for o in OUTCOMES} for b in backends}
  for file in files:
    cells = []
    for backend in backends:
      run = by_key.get((file, backend))
      cells.append(_cell(run))
      if run is not None:
        for outcome, n in run.counts().items():
          totals[backend][outcome] += n
    lines.append(f"| {file} | " + " | ".join(cells) + " |")
  lines.append("| **total** | " + " | ".join(
      "/".join(str(totals[b][o]) for o in OUTCOMES) for b in backends) + " |")
  return "\n".join(lines)


def difference_report(runs: Sequence[FileRun], backend: str, baseline: str,
                      files: Sequence[str]) -> dict[str, list[Difference]]:
  """differences() of every file run on both `backend` and `baseline`, concatenated."""
  by_key = {(r.file, r.backend): r for r in runs}
  out: dict[str, list[Difference]] = {}
  for file in files:
    run, base = by_key.get((file, backend)), by_key.get((file, baseline))
    if run is None or base is None:
      continue
    for kind, diffs in differences(run, base).items():
      out.setdefault(kind, []).extend(diffs)
  return out


def format_differences(diffs: Sequence[Difference], limit: int = 200) -> str:
  """One line per test: `file::test_id [outcome vs baseline_outcome] first error line`."""
  lines = [f"{d.file}::{d.test_id} [{d.outcome} vs {d.baseline_outcome}] {d.message}"
           for d in diffs[:limit]]
  if len(diffs) > limit:
    lines.append(f"... and {len(diffs) - limit} more (see the JSON)")
  return "\n".join(lines)


_PJRTKIT_PREFIX = re.compile(r"XLA:CPU PJRT_\w+: ")


def same_cause(a: str, b: str, width: int = 60) -> bool:
  """Whether two first error lines name the same failure: equal signatures over `width`
  characters once pjrtkit's `XLA:CPU PJRT_<entry>: ` prefix (errors passed up from its inner
  plugin) is dropped."""
  a, b = _PJRTKIT_PREFIX.sub("", a), _PJRTKIT_PREFIX.sub("", b)
  return signature(a, width) == signature(b, width)


def split_by_reference(diffs: Sequence[Difference], runs: Sequence[FileRun],
                       reference: str) -> tuple[list[Difference], list[Difference],
                                                list[Difference]]:
  """Splits differences by the outcome of the same test on `reference`.

  Returns:
    (same: the reference fails with the same first error line; other: the reference fails with
    another error; own: the reference passes, skips or has no result). With `reference` = XLA:CPU
    loaded directly, `same` is what pjrtkit inherits from its inner plugin, `own` what pjrtkit adds,
    and `other` needs a look (both fail, for different reasons).
  """
  by_key = {(r.file, r.backend): r for r in runs}
  same, other, own = [], [], []
  for d in diffs:
    run = by_key.get((d.file, reference))
    result = run.results.get(d.test_id) if run is not None else None
    if result is None or result.outcome not in BAD:
      own.append(d)
    elif same_cause(d.message, result.message):
      same.append(d)
    else:
      other.append(d)
  return same, other, own


_VOLATILE = re.compile(r"0x[0-9a-f]+|\d+|%[\w.]+|'[^']*'|\"[^\"]*\"")


def signature(message: str, width: int = 90) -> str:
  """A message with numbers, addresses, HLO names and quoted text blanked, cut to `width`: equal
  for failures of one cause that differ only in a dtype code, a shape or a name."""
  return _VOLATILE.sub("_", message)[:width]


def group_by_signature(diffs: Sequence[Difference]) -> list[tuple[str, list[Difference]]]:
  """Differences grouped by signature() of their message, largest group first."""
  groups: dict[str, list[Difference]] = {}
  for d in diffs:
    groups.setdefault(signature(d.message), []).append(d)
  return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
