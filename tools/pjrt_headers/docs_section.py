"""Generated sections of a markdown file, between marker lines:

  <!-- BEGIN GENERATED NAME by COMMAND; do not edit -->
  ...
  <!-- END GENERATED -->

Tools rewrite their own section (`replace`) and their tests compare it with what they would
write now (`extract`), so a stale table fails a test instead of misleading a reader.
"""

from __future__ import annotations

import re

_END = "<!-- END GENERATED -->"


class SectionError(ValueError):
  """The file lacks the section's markers, or has them more than once."""


def begin_marker(name: str, command: str) -> str:
  """The line that opens section `name`, naming the command that writes it."""
  return f"<!-- BEGIN GENERATED {name} by {command}; do not edit -->"


def _span(text: str, name: str) -> tuple[int, int]:
  """(start of the body, start of the END marker) of section `name` in `text`."""
  begins = list(re.finditer(rf"^<!-- BEGIN GENERATED {re.escape(name)} .*-->\n", text, re.M))
  if len(begins) != 1:
    raise SectionError(f"expected one '<!-- BEGIN GENERATED {name} ...' line, found {len(begins)}")
  start = begins[0].end()
  end = text.find(_END, start)
  if end < 0:
    raise SectionError(f"section {name} has no '{_END}' line")
  return start, end


def extract(text: str, name: str) -> str:
  """The body of section `name` (without the markers)."""
  start, end = _span(text, name)
  return text[start:end]


def replace(text: str, name: str, body: str) -> str:
  """`text` with the body of section `name` replaced by `body` (a newline is added if missing)."""
  start, end = _span(text, name)
  if body and not body.endswith("\n"):
    body += "\n"
  return text[:start] + body + text[end:]
