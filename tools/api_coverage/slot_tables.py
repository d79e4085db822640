"""Writes the slot tables of docs/reference/slots.md from api_coverage reports, or checks them.

  bazel build //tools/api_coverage:api_coverage //tools/api_coverage:testdata/fake_plugin.so \\
      //xla_plugin:pjrtkit_plugin.so
  XLA=$(.venv/bin/python -c 'import tools.bench.backends as b; print(b.xla_cpu_plugin_path())')
  python3 tools/api_coverage/slot_tables.py --api-coverage bazel-bin/tools/api_coverage/api_coverage \\
      --pjrtkit bazel-bin/xla_plugin/pjrtkit_plugin.so --xla-cpu $XLA \\
      --fake bazel-bin/tools/api_coverage/testdata/fake_plugin.so --write

It runs api_coverage on pjrtkit's plugin (4 devices on XLA:CPU, the inner plugin's extensions
beside its own), on the XLA:CPU plugin alone (4 devices) and on the fake-device plugin, and
rewrites two generated sections of the docs file: `slot-coverage` (pjrtkit and XLA:CPU merged,
then the extension chains) and `fake-coverage` (the fake device). `--check` exits 1 when they
differ from what it would write (//tools/api_coverage:slot_tables_test runs it).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

if __package__ in (None, ""):  # Run as a script: make `tools` importable.
  sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tools.pjrt_headers import docs_section  # pylint: disable=g-import-not-at-top

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join("docs", "reference", "slots.md")
COVERAGE_SECTION = "slot-coverage"
FAKE_SECTION = "fake-coverage"
DEVICE_COUNT = 4

_ROW = re.compile(r"^\| (\d+) \| (PJRT_\w+) \| ([^|]+) \| ([^|]+) \|$")


def slot_rows(report: str) -> dict[int, tuple[str, str, str]]:
  """{index: (slot, probe status, functional status)} of an api_coverage report."""
  rows = {}
  for line in report.splitlines():
    match = _ROW.match(line)
    if match:
      rows[int(match.group(1))] = (match.group(2), match.group(3).strip(), match.group(4).strip())
  return rows


def summary_lines(report: str) -> list[str]:
  """The report's "Summary: ..." and "Functional (...): ..." lines."""
  return [line for line in report.splitlines()
          if line.startswith("Summary: ") or line.startswith("Functional (valid arguments")]


def extensions_text(report: str) -> str:
  """What the report prints under "## Extensions"."""
  _, found, rest = report.partition("\n## Extensions\n\n")
  if not found:
    raise ValueError("the report has no extension section")
  return rest.strip() + "\n"


def coverage_table(ours: str, theirs: str) -> str:
  """The merged markdown table of pjrtkit's report and XLA:CPU's."""
  a, b = slot_rows(ours), slot_rows(theirs)
  if sorted(a) != sorted(b) or not a:
    raise ValueError("the two reports list different slots")
  lines = ["| # | PJRT_Api slot | pjrtkit: probe | pjrtkit: functional | "
           "OpenXLA XLA:CPU: probe | OpenXLA XLA:CPU: functional |",
           "| --- | --- | --- | --- | --- | --- |"]
  for index in sorted(a):
    slot, probe, used = a[index]
    their_slot, their_probe, their_used = b[index]
    if slot != their_slot:
      raise ValueError(f"row {index}: {slot} vs {their_slot}")
    lines.append(f"| {index} | `{slot}` | {probe} | {used} | {their_probe} | {their_used} |")
  return "\n".join(lines) + "\n"


def render_coverage(ours: str, theirs: str) -> str:
  """The slot-coverage section: both summaries, the merged table, the extension chains."""
  out = ["pjrtkit: " + " ".join(summary_lines(ours)), "",
         "XLA:CPU: " + " ".join(summary_lines(theirs)), "", coverage_table(ours, theirs),
         "### Extension chains", "", extensions_text(ours)]
  return "\n".join(out)


def render_fake(report: str) -> str:
  """The fake-coverage section: the fake plugin's slot table and its summaries."""
  lines = ["| # | slot | status | functional |", "| --- | --- | --- | --- |"]
  for index, (slot, probe, used) in sorted(slot_rows(report).items()):
    lines.append(f"| {index} | {slot} | {probe} | {used} |")
  return "\n".join(lines + [""] + summary_lines(report)) + "\n"


def run_reports(tool: str, pjrtkit: str, xla_cpu: str, fake: str) -> tuple[str, str, str]:
  """api_coverage's reports of pjrtkit (with XLA:CPU inside), XLA:CPU and the fake plugin."""
  def run(*args: str) -> str:
    done = subprocess.run([tool, *args], capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
      raise RuntimeError(f"{tool} {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done.stdout

  xla_cpu = os.path.abspath(xla_cpu)
  # pjrtkit finds its inner plugin from the environment when it loads (it forwards its
  # extensions from then on); create options come later.
  env = dict(os.environ, PJRTKIT_DEVICE="xla_cpu", PJRTKIT_XLA_CPU_PLUGIN=xla_cpu)
  ours = run(os.path.abspath(pjrtkit), f"--option=xla_cpu_plugin_path=path:{xla_cpu}",
             f"--option=device_count=int:{DEVICE_COUNT}", f"--inner={xla_cpu}")
  theirs = run(xla_cpu, f"--option=cpu_device_count=int:{DEVICE_COUNT}")
  return ours, theirs, run(os.path.abspath(fake))


def main(argv: list[str]) -> int:
  """Command-line entry point."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--api-coverage", required=True, help="the api_coverage binary")
  parser.add_argument("--pjrtkit", required=True, help="//xla_plugin:pjrtkit_plugin.so")
  parser.add_argument("--xla-cpu", required=True, help="xla_cpu_pjrt.so (xla-cpu-pjrt)")
  parser.add_argument("--fake", required=True, help="//tools/api_coverage:testdata/fake_plugin.so")
  parser.add_argument("--docs", default=os.path.join(REPO, DOCS), help="the file to update")
  mode = parser.add_mutually_exclusive_group(required=True)
  mode.add_argument("--write", action="store_true", help="rewrite the sections")
  mode.add_argument("--check", action="store_true", help="exit 1 when a section is stale")
  args = parser.parse_args(argv)
  ours, theirs, fake = run_reports(args.api_coverage, args.pjrtkit, args.xla_cpu, args.fake)
  with open(args.docs, encoding="utf-8") as f:
    text = f.read()
  sections = {COVERAGE_SECTION: render_coverage(ours, theirs), FAKE_SECTION: render_fake(fake)}
  if args.write:
    for name, body in sections.items():
      text = docs_section.replace(text, name, body)
    with open(args.docs, "w", encoding="utf-8") as f:
      f.write(text)
    return 0
  stale = 0
  for name, body in sections.items():
    current = docs_section.extract(text, name)
    if current != body:
      stale += 1
      old, new = current.splitlines(), body.splitlines()
      first = next((i for i in range(max(len(old), len(new)))
                    if i >= len(old) or i >= len(new) or old[i] != new[i]), 0)
      print(f"slot_tables --check: {DOCS} section {name} is stale; first difference, line "
            f"{first + 1}:\n  now:      {new[first] if first < len(new) else '(end)'}\n"
            f"  in docs:  {old[first] if first < len(old) else '(end)'}", file=sys.stderr)
  if stale:
    print("slot_tables --check: regenerate with `python3 tools/api_coverage/slot_tables.py ... "
          "--write` (see its docstring) and commit", file=sys.stderr)
    return 1
  print(f"slot_tables --check: {DOCS} is current")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
