"""Per-test results: junit XML from pytest, the child plugin's JSON lines, and their outcomes."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

PASSED = "passed"
FAILED = "failed"
ERROR = "error"
SKIPPED = "skipped"
OUTCOMES = (PASSED, FAILED, SKIPPED, ERROR)
"""Every outcome a test can have, in the order tables print them."""

BAD = frozenset({FAILED, ERROR})
"""Outcomes that count as a failure of the backend."""


@dataclasses.dataclass(frozen=True)
class TestResult:
  """One test's outcome on one backend.

  Attributes:
    test_id: `Class::method` (the part of pytest's node id after `file.py::`); the same on every
      backend, so results of two backends line up by it.
    outcome: one of OUTCOMES.
    message: the first line of the failure, error or skip reason ("" when passed).
    seconds: time the test took (0 when unknown).
  """

  __test__ = False  # not a pytest test class

  test_id: str
  outcome: str
  message: str = ""
  seconds: float = 0.0

  def to_json(self) -> dict[str, Any]:
    return dataclasses.asdict(self)

  @staticmethod
  def from_json(data: Mapping[str, Any]) -> "TestResult":
    return TestResult(str(data["test_id"]), str(data["outcome"]), str(data.get("message", "")),
                      float(data.get("seconds", 0.0)))


def first_line(text: str | None) -> str:
  """The first informative line of a failure text (pytest's `E ` lines if any, else all lines).

  When that line is only an exception type (`AssertionError:`), the next two non-empty lines are
  appended after ` | `, so `AssertionError: | Arrays are not equal | Mismatched elements: ...`.
  """
  if not text:
    return ""
  lines = [line.strip() for line in text.splitlines()]
  e_lines = [line[1:].strip() for line in lines if line.startswith("E ")]
  candidates = [line for line in (e_lines or lines) if line]
  if not candidates:
    return ""
  if candidates[0].endswith(":") and len(candidates) > 1:
    return " | ".join(candidates[:3])
  return candidates[0]


def test_id_from_junit(classname: str, name: str, module: str) -> str:
  """`Class::method` from junit's `classname` (`tests.api_test.APITest`) and `name`.

  Args:
    classname: the testcase's classname attribute.
    name: the testcase's name attribute.
    module: the test file's module name (`api_test`); everything up to it is dropped.
  """
  parts = classname.split(".")
  if module in parts:
    parts = parts[len(parts) - parts[::-1].index(module):]
  return "::".join([*parts, name])


def test_id_from_nodeid(nodeid: str) -> str:
  """`Class::method` from a pytest node id (`tests/api_test.py::APITest::testFoo`)."""
  _, sep, rest = nodeid.partition(".py::")
  return rest if sep else nodeid


def parse_junit(xml_text: str, module: str) -> dict[str, TestResult]:
  """Every testcase of a pytest junit XML report, by test id.

  A testcase with a <failure> failed; one with an <error> (a setup or teardown error, or a
  collection error) is an error unless it also failed; one with <skipped> was skipped (pytest
  writes xfail that way too); anything else passed. Collection errors have no class; they get the
  id `<collection>::<name>`.

  Args:
    xml_text: the report.
    module: the test file's module name (`api_test`).
  """
  root = ET.fromstring(xml_text)
  results: dict[str, TestResult] = {}
  for case in root.iter("testcase"):
    classname = case.get("classname", "")
    name = case.get("name", "")
    test_id = test_id_from_junit(classname, name, module) if classname else f"<collection>::{name}"
    outcome, message = PASSED, ""
    for tag in (FAILED, ERROR, SKIPPED):
      node = case.find("failure" if tag == FAILED else tag)
      if node is not None:
        outcome = tag
        message = first_line(node.get("message")) or first_line(node.text)
        if (tag == ERROR and message.startswith("failed on")) or message.endswith(":"):
          message = first_line(node.text) or message
        break
    results[test_id] = TestResult(test_id, outcome, message[:500], float(case.get("time", 0) or 0))
  return results


@dataclasses.dataclass(frozen=True)
class EventLog:
  """What the child plugin's JSON lines say.

  Attributes:
    results: every test with at least one finished phase, by test id.
    unfinished: node ids of tests that started and never reported their teardown (the test the
      interpreter died or timed out in), in start order.
    finished_nodeids: node ids of the tests that reported their teardown.
  """

  results: dict[str, TestResult]
  unfinished: tuple[str, ...]
  finished_nodeids: tuple[str, ...]


def parse_event_log(lines: Iterable[str]) -> EventLog:
  """Folds the plugin's per-phase reports into one outcome per test.

  A failed phase wins over everything (call failure: failed; setup or teardown failure: error),
  then skipped, then passed.
  """
  order: list[str] = []
  phases: dict[str, dict[str, dict[str, Any]]] = {}
  for line in lines:
    line = line.strip()
    if not line:
      continue
    try:
      record = json.loads(line)
    except json.JSONDecodeError:
      continue  # a line cut short by a crash
    nodeid = record.get("nodeid", "")
    if nodeid not in phases:
      phases[nodeid] = {}
      order.append(nodeid)
    if record.get("event") == "report":
      phases[nodeid][record["when"]] = record
  results: dict[str, TestResult] = {}
  unfinished: list[str] = []
  finished: list[str] = []
  for nodeid in order:
    reports = phases[nodeid]
    if "teardown" in reports:
      finished.append(nodeid)
    else:
      unfinished.append(nodeid)
    if not reports:
      continue
    outcome, message = PASSED, ""
    seconds = sum(float(r.get("duration", 0.0)) for r in reports.values())
    failed = [(when, r) for when, r in reports.items() if r["outcome"] == "failed"]
    skipped = [r for r in reports.values() if r["outcome"] == "skipped"]
    if failed:
      when, record = failed[0]
      outcome = FAILED if when == "call" else ERROR
      message = first_line(record.get("message", ""))[:500]
    elif skipped:
      outcome, message = SKIPPED, skipped[0].get("message", "")
    test_id = test_id_from_nodeid(nodeid)
    results[test_id] = TestResult(test_id, outcome, message, seconds)
  return EventLog(results, tuple(unfinished), tuple(finished))


def read_event_log(path: Path) -> EventLog:
  """parse_event_log of a file; an empty log when the file does not exist."""
  if not path.exists():
    return EventLog({}, (), ())
  with path.open(encoding="utf-8", errors="replace") as f:
    return parse_event_log(f)


def count(results: Iterable[TestResult]) -> dict[str, int]:
  """Number of tests per outcome, every outcome present."""
  counts = {outcome: 0 for outcome in OUTCOMES}
  for result in results:
    counts[result.outcome] = counts.get(result.outcome, 0) + 1
  return counts
