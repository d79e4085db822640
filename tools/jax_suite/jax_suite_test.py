"""Tests of the JAX test-suite tool's own logic: junit and event-log parsing, the
pjrtkit-vs-cpu differences, the table and the child environment (no JAX), and the child's pytest
plugin run on a small test file with jaxlib's cpu (a child interpreter)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from tools.jax_suite import __main__ as cli
from tools.jax_suite import compare, config, results, runner, sources

_JUNIT_CPU = """<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="5">
<testcase classname="tests.api_test.APITest" name="testJit" time="0.5" />
<testcase classname="tests.api_test.APITest" name="testDonate" time="0.1" />
<testcase classname="tests.api_test.APITest" name="testMemoryStats" time="0.1" />
<testcase classname="tests.api_test.APITest" name="testTpuOnly" time="0.0">
  <skipped type="pytest.skip" message="Skipped unless running on devices with tags: tpu">tests/api_test.py:10: Skipped</skipped>
</testcase>
<testcase classname="tests.api_test.APITest" name="testBrokenEverywhere" time="0.2">
  <failure message="AssertionError: 1 != 2&#10;second line">trace</failure>
</testcase>
<testcase classname="tests.api_test.CallbackTest" name="test_print[x-y]" time="0.2" />
</testsuite></testsuites>
"""

_JUNIT_PJRTKIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuite name="pytest" errors="1" failures="2" skipped="1" tests="6">
<testcase classname="tests.api_test.APITest" name="testJit" time="0.6" />
<testcase classname="tests.api_test.APITest" name="testDonate" time="0.1">
  <failure message="jax.errors.JaxRuntimeError: INTERNAL: donation failed">long trace</failure>
</testcase>
<testcase classname="tests.api_test.APITest" name="testMemoryStats" time="0.1">
  <error message="failed on teardown with &quot;KeyError&quot;">def tearDown(self):
&gt;   x = stats["bytes_limit"]
E   KeyError: 'bytes_limit'
</error>
</testcase>
<testcase classname="tests.api_test.APITest" name="testTpuOnly" time="0.0">
  <skipped type="pytest.skip" message="Skipped unless running on devices with tags: tpu" />
</testcase>
<testcase classname="tests.api_test.APITest" name="testBrokenEverywhere" time="0.2">
  <failure message="AssertionError: 1 != 2">trace</failure>
</testcase>
<testcase classname="tests.api_test.CallbackTest" name="test_print[x-y]" time="0.2">
  <skipped type="pytest.skip" message="Skipped unless running on devices with tags: cpu" />
</testcase>
<testcase classname="" name="tests.api_test" time="0.0">
  <error message="collection failure">E   ImportError: cannot import name 'x'</error>
</testcase>
</testsuite>
"""


def _events(*records: dict) -> list[str]:
  return [json.dumps(r) for r in records]


def _report(nodeid: str, when: str, outcome: str, message: str = "") -> dict:
  return {"event": "report", "nodeid": nodeid, "when": when, "outcome": outcome,
          "message": message, "duration": 0.25}


class JunitTest(unittest.TestCase):

  def test_outcomes_messages_and_ids(self):
    got = results.parse_junit(_JUNIT_PJRTKIT, "api_test")
    self.assertEqual(
        {k: v.outcome for k, v in got.items()},
        {"APITest::testJit": "passed", "APITest::testDonate": "failed",
         "APITest::testMemoryStats": "error", "APITest::testTpuOnly": "skipped",
         "APITest::testBrokenEverywhere": "failed", "CallbackTest::test_print[x-y]": "skipped",
         "<collection>::tests.api_test": "error"})
    self.assertEqual(got["APITest::testDonate"].message,
                     "jax.errors.JaxRuntimeError: INTERNAL: donation failed")
    # A teardown error's generic message is replaced by the first `E` line of its text.
    self.assertEqual(got["APITest::testMemoryStats"].message, "KeyError: 'bytes_limit'")
    self.assertEqual(got["<collection>::tests.api_test"].message, "collection failure")
    self.assertAlmostEqual(got["APITest::testJit"].seconds, 0.6)
    self.assertEqual(results.count(got.values()),
                     {"passed": 1, "failed": 2, "skipped": 2, "error": 2})

  def test_first_line_of_a_multiline_message(self):
    got = results.parse_junit(_JUNIT_CPU, "api_test")
    self.assertEqual(got["APITest::testBrokenEverywhere"].message, "AssertionError: 1 != 2")

  def test_first_line_after_a_bare_exception_type(self):
    self.assertEqual(results.first_line("AssertionError: \nArrays are not equal\n\nMismatched: 3\nx"),
                     "AssertionError: | Arrays are not equal | Mismatched: 3")
    self.assertEqual(results.first_line("trace\nE   KeyError: 'a'\nE   more"), "KeyError: 'a'")
    self.assertEqual(results.first_line(""), "")

  def test_ids_agree_between_junit_and_node_ids(self):
    self.assertEqual(results.test_id_from_junit("tests.api_test.APITest", "testJit", "api_test"),
                     results.test_id_from_nodeid("tests/api_test.py::APITest::testJit"))
    self.assertEqual(results.test_id_from_junit("tests.api_test", "test_fn", "api_test"),
                     results.test_id_from_nodeid("tests/api_test.py::test_fn"))


class EventLogTest(unittest.TestCase):

  def test_crash_leaves_the_running_test_unfinished(self):
    a = "tests/api_test.py::APITest::testA"
    b = "tests/api_test.py::APITest::testB"
    c = "tests/api_test.py::APITest::testC"
    lines = _events(
        {"event": "start", "nodeid": a}, _report(a, "setup", "passed"),
        _report(a, "call", "failed", "ValueError: bad\nmore"), _report(a, "teardown", "passed"),
        {"event": "start", "nodeid": b}, _report(b, "setup", "skipped", "no tpu"),
        _report(b, "teardown", "passed"),
        {"event": "start", "nodeid": c}, _report(c, "setup", "passed"))
    lines.append('{"event": "report", "nodeid": "cut sho')  # the line a crash cut short
    log = results.parse_event_log(lines)
    self.assertEqual(log.unfinished, (c,))
    self.assertEqual(log.finished_nodeids, (a, b))
    self.assertEqual(log.results["APITest::testA"].outcome, "failed")
    self.assertEqual(log.results["APITest::testA"].message, "ValueError: bad")
    self.assertEqual(log.results["APITest::testB"].outcome, "skipped")
    self.assertEqual(log.results["APITest::testB"].message, "no tpu")
    self.assertEqual(log.results["APITest::testC"].outcome, "passed")

  def test_setup_or_teardown_failure_is_an_error(self):
    a = "tests/t.py::T::test"
    log = results.parse_event_log(_events(
        _report(a, "setup", "passed"), _report(a, "call", "passed"),
        _report(a, "teardown", "failed", "RuntimeError: leak")))
    self.assertEqual(log.results["T::test"].outcome, "error")


class CompareTest(unittest.TestCase):

  def _runs(self) -> tuple[compare.FileRun, compare.FileRun]:
    cpu = compare.FileRun("api_test.py", "cpu", compare.OK,
                          results.parse_junit(_JUNIT_CPU, "api_test"))
    pjrtkit = compare.FileRun("api_test.py", "pjrtkit", compare.OK,
                              results.parse_junit(_JUNIT_PJRTKIT, "api_test"))
    return cpu, pjrtkit

  def test_differences(self):
    cpu, pjrtkit = self._runs()
    diffs = compare.differences(pjrtkit, cpu)
    self.assertEqual([(d.test_id, d.outcome, d.baseline_outcome) for d in diffs["fail_only"]],
                     [("APITest::testDonate", "failed", "passed"),
                      ("APITest::testMemoryStats", "error", "passed")])
    self.assertEqual(diffs["fail_only"][0].message,
                     "jax.errors.JaxRuntimeError: INTERNAL: donation failed")
    self.assertEqual([d.test_id for d in diffs["fail_missing_on_baseline"]],
                     ["<collection>::tests.api_test"])
    self.assertEqual([d.test_id for d in diffs["skip_only"]], ["CallbackTest::test_print[x-y]"])
    self.assertEqual(diffs["fail_skipped_on_baseline"], [])
    # Failing on both backends is not pjrtkit's.
    self.assertNotIn("APITest::testBrokenEverywhere",
                     [d.test_id for kind in diffs.values() for d in kind])
    reverse = compare.differences(cpu, pjrtkit)
    self.assertEqual([d.test_id for d in reverse["baseline_fail_only"]],
                     ["APITest::testDonate", "APITest::testMemoryStats"])
    self.assertEqual(reverse["baseline_fail_only"][1].message, "KeyError: 'bytes_limit'")
    self.assertEqual(reverse["fail_only"], [])
    self.assertEqual(len(reverse["skip_only"]), 0)

  def test_table_and_json_round_trip(self):
    cpu, pjrtkit = self._runs()
    crashed = compare.FileRun("lax_test.py", "pjrtkit", compare.CRASH, {
        "T::a": results.TestResult("T::a", "error", "interpreter died (SIGSEGV) in this test")})
    text = compare.table([cpu, pjrtkit, crashed], ["pjrtkit", "cpu"],
                         ["api_test.py", "lax_test.py"])
    lines = text.splitlines()
    self.assertEqual(lines[0], "| file | pjrtkit pass/fail/skip/error | cpu pass/fail/skip/error |")
    self.assertEqual(lines[2], "| api_test.py | 1/2/2/2 | 4/1/1/0 |")
    self.assertEqual(lines[3], "| lax_test.py | 0/0/0/1 (crash) | - |")
    self.assertEqual(lines[4], "| **total** | 1/2/2/3 | 4/1/1/0 |")
    again = compare.FileRun.from_json(json.loads(json.dumps(pjrtkit.to_json())))
    self.assertEqual(again, pjrtkit)

  def test_report_and_load(self):
    cpu, pjrtkit = self._runs()
    with tempfile.TemporaryDirectory() as tmp:
      path = Path(tmp) / "results.json"
      path.write_text(json.dumps({"label": "x", "runs": [cpu.to_json(), pjrtkit.to_json()]}))
      runs, meta = cli.load([path])
    self.assertEqual(meta, {"label": "x"})
    text, data = cli.report(runs, ["pjrtkit", "cpu"], "cpu")
    self.assertIn("== fail on pjrtkit, pass on cpu: 2 ==", text)
    self.assertIn("api_test.py::APITest::testDonate [failed vs passed] "
                  "jax.errors.JaxRuntimeError: INTERNAL: donation failed", text)
    self.assertEqual(len(data["differences"]["pjrtkit"]["fail_only"]), 2)


  def test_reference_split_and_signatures(self):
    cpu, pjrtkit = self._runs()
    direct = compare.FileRun("api_test.py", "xla-cpu-direct", compare.OK, {
        "APITest::testDonate": results.TestResult(
            "APITest::testDonate", "failed", "jax.errors.JaxRuntimeError: INTERNAL: donation failed"),
        "APITest::testMemoryStats": results.TestResult(
            "APITest::testMemoryStats", "failed", "NOT_FOUND: something else")})
    diffs = compare.differences(pjrtkit, cpu)["fail_only"]
    same, other, own = compare.split_by_reference(diffs, [cpu, pjrtkit, direct], "xla-cpu-direct")
    self.assertEqual([d.test_id for d in same], ["APITest::testDonate"])
    self.assertEqual([d.test_id for d in other], ["APITest::testMemoryStats"])
    self.assertEqual(own, [])
    self.assertEqual(compare.signature("XLA FFI data type 26 is not 'x'"),
                     compare.signature("XLA FFI data type 21 is not 'y'"))
    groups = compare.group_by_signature(diffs)
    self.assertEqual(len(groups), 2)
    text, data = cli.report([cpu, pjrtkit, direct], ["cpu", "pjrtkit", "xla-cpu-direct"], "cpu",
                            reference="xla-cpu-direct")
    self.assertIn("xla-cpu-direct fails the same way: 1", text)
    self.assertEqual(len(data["differences"]["pjrtkit"]["fail_only_by_reference"]["other_error"]), 1)


class ConfigTest(unittest.TestCase):

  def test_child_environment(self):
    cfg = config.SuiteConfig(tests_dir=Path("/src/tests"), files=("lax_test.py",),
                             backends=(config.PJRTKIT,), python="/venv/bin/python",
                             out_dir=Path("/out"), num_generated_cases=5,
                             file_cases={"lax_test.py": 2}, env={"PYTHONPATH": "/repo/python"})
    paths = {"info": Path("/out/i.json"), "log": Path("/out/e.jsonl"),
             "deselect": Path("/out/d.txt")}
    env = runner.child_env(cfg, config.PJRTKIT, "lax_test.py", paths,
                           base={"JAX_PLATFORMS": "tpu", "XLA_FLAGS": "--junk", "HOME": "/root"})
    self.assertEqual(env["JAX_PLATFORMS"], "pjrtkit,cpu")
    self.assertEqual(env["XLA_FLAGS"], config.FORCE_4_CPU_DEVICES)
    self.assertEqual(env["JAX_NUM_GENERATED_CASES"], "2")
    self.assertEqual(env["PJRTKIT_JAX_TEST_DUT"], "cpu")
    self.assertEqual(env["PJRTKIT_JAX_SUITE_BACKEND"], "pjrtkit")
    self.assertEqual(env["PYTHONPATH"], f"{runner.CHILD_DIR}:/repo/python")
    self.assertEqual(env["HOME"], "/root")
    self.assertEqual(runner.expected_device_under_test(config.PJRTKIT), "cpu")
    self.assertEqual(runner.expected_device_under_test(config.PJRTKIT_PLATFORM_DUT), "pjrtkit")
    self.assertEqual(runner.expected_device_under_test(config.CPU), "cpu")
    cpu_env = runner.child_env(cfg, config.CPU, "api_test.py", paths, base={})
    self.assertNotIn("PJRTKIT_JAX_TEST_DUT", cpu_env)
    self.assertEqual(cpu_env["JAX_PLATFORMS"], "cpu")
    self.assertEqual(cpu_env["JAX_NUM_GENERATED_CASES"], "5")
    self.assertTrue((runner.CHILD_DIR / "pjrtkit_jax_suite_plugin.py").exists())
    # The GPU mode: JAX's CUDA backend against pjrtkit's xla_gpu device told it is a GPU, device
    # counts left to the machine.
    cuda_env = runner.child_env(cfg, config.CUDA, "api_test.py", paths, base={})
    self.assertEqual((cuda_env["JAX_PLATFORMS"], cuda_env["PJRTKIT_JAX_SUITE_BACKEND"],
                      cuda_env["PJRTKIT_JAX_SUITE_DEVICES"]), ("cuda,cpu", "gpu", ""))
    self.assertNotIn("PJRTKIT_JAX_TEST_DUT", cuda_env)
    gpu_env = runner.child_env(cfg, config.PJRTKIT_GPU, "api_test.py", paths, base={})
    self.assertEqual((gpu_env["JAX_PLATFORMS"], gpu_env["PJRTKIT_DEVICE"],
                      gpu_env["PJRTKIT_JAX_TEST_DUT"], gpu_env["PJRTKIT_JAX_SUITE_DEVICES"]),
                     ("pjrtkit,cpu", "xla_gpu", "gpu", ""))
    self.assertEqual(runner.expected_device_under_test(config.PJRTKIT_GPU), "gpu")
    cmd = runner.pytest_command(cfg, "lax_test.py", Path("/out/j.xml"))
    self.assertEqual(cmd[:6], ["nice", "-n", "10", "/venv/bin/python", "-m", "pytest"])
    self.assertEqual(cmd[-1], "/src/tests/lax_test.py")

  def test_fatal_lines_prefer_native_messages(self):
    with tempfile.TemporaryDirectory() as tmp:
      out = Path(tmp) / "output.txt"
      out.write_text("....F\nFatal Python error: Aborted\n\nCurrent thread ...\n")
      self.assertEqual(runner._fatal_lines(out), "Fatal Python error: Aborted")  # pylint: disable=protected-access
      self.assertEqual(runner._fatal_lines(out, native_only=True), "")  # pylint: disable=protected-access
      out.write_text("LLVM ERROR: F1130 x.cc:1] Check failed: a == b\nFatal Python error: Aborted\n")
      self.assertEqual(runner._fatal_lines(out),  # pylint: disable=protected-access
                       "LLVM ERROR: F1130 x.cc:1] Check failed: a == b")
    self.assertEqual(runner._exit_text(-6), "SIGABRT")  # pylint: disable=protected-access
    self.assertEqual(runner._exit_text(139), "SIGSEGV")  # pylint: disable=protected-access
    self.assertEqual(runner._exit_text(3), "exit 3")  # pylint: disable=protected-access

  def test_compat_patch_applies_once(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = Path(tmp) / "api_test.py"
      old = sources.COMPAT_PATCHES["api_test.py"][0][0]
      path.write_text("import x\n" + old + "y = 1\n")
      self.assertEqual(len(sources.apply_compat_patches(Path(tmp))), 1)
      self.assertEqual(sources.apply_compat_patches(Path(tmp)), [])
      compile(path.read_text(), "api_test.py", "exec")


# A test module that, like mesh_utils_test.py, never parses absl flags at import, and reads
# output through `jtu.capture_stdout` (bound to `sys.stdout` when test_util is imported).
_CHILD_TESTS = """
from jax._src import test_util as jtu

def test_device_under_test_is_the_flag():
  assert jtu.device_under_test() == "tpu"

def test_capture_stdout_sees_prints():
  with jtu.capture_stdout() as out:
    print("seen")
  assert out() == "seen\\n"
"""


class ChildPluginTest(unittest.TestCase):

  def test_dut_reaches_modules_that_parse_no_flags(self):
    with tempfile.TemporaryDirectory() as tmp:
      Path(tmp, "dut_test.py").write_text(_CHILD_TESTS)
      Path(tmp, "pytest.ini").write_text("[pytest]\n")  # No ini file of a folder above is read.
      cleared = runner._CLEARED  # pylint: disable=protected-access
      env = {k: v for k, v in os.environ.items()
             if not k.startswith("PJRTKIT_") and k not in cleared}
      env.update({"PYTHONPATH": str(runner.CHILD_DIR), "JAX_PLATFORMS": "cpu",
                  "PJRTKIT_JAX_TEST_DUT": "tpu",
                  "PJRTKIT_JAX_SUITE_INFO": str(Path(tmp, "info.json"))})
      done = subprocess.run(
          [sys.executable, "-m", "pytest", "-p", "pjrtkit_jax_suite_plugin", "-p",
           "no:cacheprovider", "-q", str(Path(tmp, "dut_test.py"))],
          cwd=tmp, env=env, capture_output=True, text=True, timeout=50, check=False)
      self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
      self.assertIn("2 passed", done.stdout)
      info = json.loads(Path(tmp, "info.json").read_text())
      self.assertEqual(info["device_under_test"], "tpu")


if __name__ == "__main__":
  unittest.main()
