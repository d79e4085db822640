"""Writes the slot table of the top-level README from two api_coverage reports.

  bazel build //tools/api_coverage:api_coverage //xla_plugin:pjrtkit_plugin.so
  XLA=$(.venv/bin/python -c 'import tools.bench.backends as b; print(b.xla_cpu_plugin_path())')
  bazel-bin/tools/api_coverage/api_coverage bazel-bin/xla_plugin/pjrtkit_plugin.so \\
      --option=xla_cpu_plugin_path=path:$XLA --option=device_count=int:4 > /tmp/pjrtkit.md
  bazel-bin/tools/api_coverage/api_coverage $XLA --option=cpu_device_count=int:4 > /tmp/xla.md
  python3 tools/api_coverage/readme_table.py /tmp/pjrtkit.md /tmp/xla.md README.md

The table goes between the README's ``<!-- slot-table:start -->`` and ``<!-- slot-table:end -->``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_ROW = re.compile(r"^\| (\d+) \| (PJRT_\w+) \| ([^|]+) \| ([^|]+) \|$")


def slot_rows(report: str) -> dict[int, tuple[str, str, str]]:
  """{index: (slot, probe status, functional status)} of an api_coverage report."""
  rows = {}
  for line in report.splitlines():
    match = _ROW.match(line)
    if match:
      rows[int(match.group(1))] = (match.group(2), match.group(3).strip(), match.group(4).strip())
  return rows


def table(ours: str, theirs: str) -> str:
  """The merged markdown table."""
  a, b = slot_rows(ours), slot_rows(theirs)
  if sorted(a) != sorted(b) or not a:
    raise ValueError("the two reports list different slots")
  lines = ["| # | PJRT_Api slot | pjrtkit: probe | pjrtkit: functional | "
           "OpenXLA XLA:CPU: probe | OpenXLA XLA:CPU: functional |",
           "| --- | --- | --- | --- | --- | --- |"]
  for index in sorted(a):
    slot, probe, used = a[index]
    _, their_probe, their_used = b[index]
    lines.append(f"| {index} | `{slot}` | {probe} | {used} | {their_probe} | {their_used} |")
  return "\n".join(lines)


def main(argv: list[str]) -> int:
  """Command-line entry point."""
  if len(argv) != 4:
    print(__doc__, file=sys.stderr)
    return 2
  ours, theirs, readme = Path(argv[1]).read_text(), Path(argv[2]).read_text(), Path(argv[3])
  text = readme.read_text()
  start, end = "<!-- slot-table:start -->\n", "<!-- slot-table:end -->"
  head, rest = text.split(start, 1)
  _, tail = rest.split(end, 1)
  readme.write_text(head + start + table(ours, theirs) + "\n" + end + tail)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv))
