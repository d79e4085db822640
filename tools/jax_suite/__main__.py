"""Command line: run JAX test files on pjrtkit and on jaxlib's cpu, print the comparison.

  .venv/bin/python -m tools.jax_suite run --tests-dir SRC/tests --out OUT api_test.py ...
  .venv/bin/python -m tools.jax_suite report OUT/results.json [MORE.json ...]
  .venv/bin/python -m tools.jax_suite extract --git-dir MIRROR --rev REV --dest SRC
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools.jax_suite import sources
from tools.jax_suite.compare import (OK, FileRun, difference_report, format_differences,
                                     group_by_signature, split_by_reference, table)
from tools.jax_suite.config import BACKENDS, SuiteConfig
from tools.jax_suite.runner import run_file

DIFF_KINDS = {
    "fail_only": "fail on {run}, pass on {base}",
    "fail_skipped_on_baseline": "fail on {run}, skipped on {base}",
    "fail_missing_on_baseline": "fail on {run}, no result on {base}",
    "skip_only": "skipped on {run}, pass on {base}",
    "baseline_fail_only": "fail on {base}, pass on {run} (error shown is {base}'s)",
}


def _key_value(text: str) -> tuple[str, str]:
  key, sep, value = text.partition("=")
  if not sep:
    raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
  return key, value


def load(paths: Sequence[Path]) -> tuple[list[FileRun], dict[str, Any]]:
  """File runs of one or more results.json (later files win per file and backend), and the
  metadata of the first."""
  runs: dict[tuple[str, str], FileRun] = {}
  meta: dict[str, Any] = {}
  for path in paths:
    data = json.loads(path.read_text(encoding="utf-8"))
    meta = meta or {k: v for k, v in data.items() if k != "runs"}
    for item in data.get("runs", []):
      run = FileRun.from_json(item)
      runs[(run.file, run.backend)] = run
  return list(runs.values()), meta


def report(runs: Sequence[FileRun], backends: Sequence[str], baseline: str,
           files: Sequence[str] | None = None, limit: int = 200,
           reference: str = "") -> tuple[str, dict[str, Any]]:
  """The printed report (tables and difference lists) and its JSON form.

  With `reference` (a backend in `runs`, e.g. xla-cpu-direct), each backend's "fail_only" list is
  also split into failures the reference shares and failures of the backend alone, and grouped by
  message signature.
  """
  if files is None:
    files = list(dict.fromkeys(r.file for r in runs))
  lines = ["pass/fail/skip/error per file (status in parentheses when not ok)", "",
           table(runs, backends, files), ""]
  for run in runs:
    if run.status != OK or run.note:
      lines.append(f"note: {run.file} on {run.backend}: {run.status}: {run.note}")
  infos = {}
  for backend in backends:
    info = next((r.info for r in runs if r.backend == backend and r.info), {})
    infos[backend] = info
    keys = ("jax", "jaxlib", "jax_platforms", "default_backend", "device_count",
            "device_under_test")
    lines.append(f"{backend}: " + ", ".join(f"{k}={info.get(k)}" for k in keys))
  diffs_json: dict[str, Any] = {}
  for backend in backends:
    if backend == baseline:
      continue
    diffs = difference_report(runs, backend, baseline, files)
    diffs_json[backend] = {k: [d.to_json() for d in v] for k, v in diffs.items()}
    for kind, title in DIFF_KINDS.items():
      found = diffs.get(kind, [])
      lines += ["", f"== {title.format(run=backend, base=baseline)}: {len(found)} =="]
      if found:
        lines.append(format_differences(found, limit))
    if reference and reference not in (backend, baseline):
      same, other, own = split_by_reference(diffs.get("fail_only", []), runs, reference)
      diffs_json[backend]["fail_only_by_reference"] = {
          "same_error": [d.to_json() for d in same], "other_error": [d.to_json() for d in other],
          "passes_there": [d.to_json() for d in own]}
      for title, part in ((f"{reference} fails the same way", same),
                          (f"{reference} fails otherwise", other),
                          (f"{reference} passes (or has no result)", own)):
        lines += ["", f"== fail on {backend}, pass on {baseline}; {title}: {len(part)}, "
                  "by message =="]
        for sig, group in group_by_signature(part):
          files_of = sorted({d.file for d in group})
          lines.append(f"{len(group):4d}  {sig}  [{', '.join(files_of)}]")
  return "\n".join(lines), {"infos": infos, "differences": diffs_json}


def _write(out: Path, meta: dict[str, Any], runs: Sequence[FileRun], backends: Sequence[str],
           baseline: str, files: Sequence[str]) -> str:
  reference = "xla-cpu-direct" if "xla-cpu-direct" in backends else ""
  text, extra = report(runs, backends, baseline, files, reference=reference)
  data = {**meta, **extra, "runs": [r.to_json() for r in runs]}
  tmp = out / "results.json.tmp"
  tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
  tmp.replace(out / "results.json")
  (out / "report.txt").write_text(text + "\n", encoding="utf-8")
  return text


def cmd_run(args: argparse.Namespace) -> int:
  backends = tuple(BACKENDS[name] for name in args.backends.split(","))
  out = Path(args.out).resolve()
  out.mkdir(parents=True, exist_ok=True)
  tests_dir = Path(args.tests_dir).resolve()
  files = list(args.files)
  if args.files_from:
    files += [line.strip() for line in Path(args.files_from).read_text().splitlines()
              if line.strip() and not line.startswith("#")]
  # Children run in the tests directory's parent: a relative interpreter path must not move.
  python = str(Path(args.python).absolute()) if os.sep in args.python else args.python
  config = SuiteConfig(
      tests_dir=tests_dir, files=tuple(files), backends=backends, python=python,
      out_dir=out, timeout_s=args.timeout, num_generated_cases=args.cases,
      file_cases=dict(args.file_cases or []), crash_retries=args.crash_retries,
      env=dict(args.env or []), pytest_args=tuple(args.pytest_arg or []), nice=args.nice)
  commit_file = tests_dir.parent / "JAX_COMMIT"
  patches_file = tests_dir.parent / "PATCHES.txt"
  meta = {"label": args.label, "tests_dir": str(tests_dir),
          "jax_commit": commit_file.read_text().strip() if commit_file.exists() else "",
          "compat_patches": (patches_file.read_text().splitlines()
                             if patches_file.exists() else []),
          "python": python, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
          "config": {**{k: v for k, v in dataclasses.asdict(config).items()
                        if k not in ("backends", "tests_dir", "out_dir")},
                     "backends": [dataclasses.asdict(b) for b in backends]}}
  previous: dict[tuple[str, str], FileRun] = {}
  if args.resume and (out / "results.json").exists():
    previous = {(r.file, r.backend): r for r in load([out / "results.json"])[0]}
  runs: list[FileRun] = []
  names = [b.name for b in backends]
  for file in files:
    if not (tests_dir / file).exists():
      print(f"[jax_suite] {file}: not in {tests_dir}, left out", flush=True)
      continue
    for backend in backends:
      old = previous.get((file, backend.name))
      if old is not None and old.status == OK:
        runs.append(old)
        continue
      print(f"[jax_suite] {file} on {backend.name} ...", flush=True)
      run = run_file(config, backend, file)
      c = run.counts()
      print(f"[jax_suite] {file} on {backend.name}: {run.status}, {c} in {run.seconds:.0f} s"
            f"{' (' + run.note + ')' if run.note else ''}", flush=True)
      runs.append(run)
      _write(out, meta, runs, names, args.baseline, files)
  print(_write(out, meta, runs, names, args.baseline, files))
  print(f"\nresults: {out / 'results.json'}")
  return 0


def cmd_report(args: argparse.Namespace) -> int:
  runs, _ = load([Path(p) for p in args.results])
  backends = args.backends.split(",") if args.backends else list(
      dict.fromkeys(r.backend for r in runs))
  text, _ = report(runs, backends, args.baseline, limit=args.limit, reference=args.reference)
  print(text)
  return 0


def cmd_extract(args: argparse.Namespace) -> int:
  tests = sources.extract(Path(args.git_dir), args.rev, Path(args.dest), compat=args.compat)
  print(f"{tests} ({sources.resolve(Path(args.git_dir), args.rev)})")
  return 0


def main(argv: Sequence[str] | None = None) -> int:
  parser = argparse.ArgumentParser(prog="python -m tools.jax_suite", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  sub = parser.add_subparsers(dest="command", required=True)

  run = sub.add_parser("run", help="run test files on each backend, write results.json")
  run.add_argument("files", nargs="*", help="test files relative to --tests-dir")
  run.add_argument("--files-from", help="a file listing test files, one a line")
  run.add_argument("--tests-dir", required=True, help="JAX's tests/ directory")
  run.add_argument("--out", required=True, help="output directory")
  run.add_argument("--python", default=sys.executable, help="interpreter under test")
  run.add_argument("--backends", default="cpu,pjrtkit",
                   help=f"comma-separated, from {sorted(BACKENDS)}")
  run.add_argument("--baseline", default="cpu")
  run.add_argument("--timeout", type=float, default=1800.0, help="seconds per file and backend")
  run.add_argument("--cases", type=int, default=5, help="JAX_NUM_GENERATED_CASES")
  run.add_argument("--file-cases", type=_key_value, action="append", metavar="FILE=N",
                   help="JAX_NUM_GENERATED_CASES for one file")
  run.add_argument("--crash-retries", type=int, default=3)
  run.add_argument("--env", type=_key_value, action="append", metavar="KEY=VALUE",
                   help="environment for every child (PYTHONPATH is appended to the plugin's)")
  run.add_argument("--pytest-arg", action="append", help="one more pytest argument")
  run.add_argument("--nice", type=int, default=10)
  run.add_argument("--label", default="", help="a name for this run in the JSON")
  run.add_argument("--resume", action="store_true",
                   help="keep the ok runs of an earlier results.json in --out")
  run.set_defaults(func=cmd_run)

  rep = sub.add_parser("report", help="print the comparison of results.json files")
  rep.add_argument("results", nargs="+")
  rep.add_argument("--backends", default="")
  rep.add_argument("--baseline", default="cpu")
  rep.add_argument("--limit", type=int, default=200)
  rep.add_argument("--reference", default="",
                   help="a backend to split each fail-only list by (e.g. xla-cpu-direct)")
  rep.set_defaults(func=cmd_report)

  ext = sub.add_parser("extract", help="JAX's tests at a commit, from a git directory")
  ext.add_argument("--git-dir", required=True)
  ext.add_argument("--rev", required=True)
  ext.add_argument("--dest", required=True)
  ext.add_argument("--compat", action="store_true",
                   help="apply sources.COMPAT_PATCHES (imports a nearby release lacks)")
  ext.set_defaults(func=cmd_extract)

  args = parser.parse_args(argv)
  if args.command == "run":
    for item in (args.file_cases or []):
      int(item[1])
    args.file_cases = [(k, int(v)) for k, v in (args.file_cases or [])]
  return args.func(args)


if __name__ == "__main__":
  sys.exit(main())
