"""The instruction-count benchmark (instructions.py): its parsing and report from given counts,
its argument checks, and each workload's child run (without valgrind) on pjrtkit and jaxlib's
cpu, result values checked."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.testing.plugin_env import plugin_env, runfiles_root
from tools.bench import instructions

_CALLGRIND_OUT = """\
# callgrind format
version: 1
creator: callgrind-3.19.0
events: Ir
fn=(1) builtin_sorted
0 12
summary: 90536683
totals: 90536683
"""


def test_parse_summary_reads_the_event_total():
  assert instructions.parse_summary(_CALLGRIND_OUT) == 90536683
  with pytest.raises(ValueError, match="no 'summary:' line"):
    instructions.parse_summary("events: Ir\ntotals: 5\n")


def test_report_gives_ratios_targets_and_the_table():
  counts = {"cpu": {"dispatch_async": 43000.0, "device_put_1KiB": 200000.0},
            "xla_cpu_direct": {"dispatch_async": 44000.0, "device_put_1KiB": 250000.0},
            "pjrtkit": {"dispatch_async": 47300.0, "device_put_1KiB": 255000.0}}
  rows, table = instructions.report(counts)
  by_name = {r["workload"]: r for r in rows}
  assert list(by_name) == ["dispatch_async", "device_put_1KiB"]
  dispatch = by_name["dispatch_async"]
  assert dispatch["ratios"] == {"cpu": 47300.0 / 43000.0, "xla_cpu_direct": 47300.0 / 44000.0}
  assert dispatch["target"] == "<=1.05x direct in instructions"
  assert dispatch["met"] is False  # 1.075x.
  put = by_name["device_put_1KiB"]
  assert put["target"] is None and put["met"] is None
  lines = table.splitlines()
  assert lines[0] == ("| workload | cpu (instructions/call) | xla_cpu_direct (instructions/call) "
                      "| pjrtkit (instructions/call) | pjrtkit / direct | pjrtkit / cpu | target "
                      "| met |")
  assert lines[2] == ("| dispatch_async | 43,000 | 44,000 | 47,300 | 1.075 | 1.100 | "
                      "<=1.05x direct | no |")
  assert lines[3] == "| device_put_1KiB | 200,000 | 250,000 | 255,000 | 1.020 | 1.275 | - | - |"


def test_report_meets_the_target_at_or_below_it():
  rows, _ = instructions.report({"xla_cpu_direct": {"dispatch_blocking": 1000.0},
                                 "pjrtkit": {"dispatch_blocking": 1050.0}})
  assert rows[0]["met"] is True


# A stand-in for valgrind: writes a callgrind file whose count is 5000 per call plus 777000 for
# everything else, or exits with `status` and counts nothing when `zero`.
_FAKE_VALGRIND = """#!{python}
import sys
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--callgrind-out-file="))
calls = int(sys.argv[sys.argv.index("--calls") + 1])
total = 0 if {zero} else 777000 + 5000 * calls
open(out, "w").write("events: Ir\\nsummary: %d\\n" % total)
sys.exit({status})
"""


def _fake_valgrind(tmp_path, zero=False, status=0) -> str:
  path = tmp_path / "valgrind"
  path.write_text(_FAKE_VALGRIND.format(python=sys.executable, zero=zero, status=status))
  path.chmod(0o755)
  return str(path)


def test_count_takes_the_difference_of_two_runs_per_call(tmp_path):
  per_call = instructions.count("pjrtkit", "dispatch_async", 1000, {}, _fake_valgrind(tmp_path),
                                timeout=60)
  assert per_call == 5000.0


def test_count_refuses_an_empty_count_and_a_failed_child(tmp_path):
  with pytest.raises(RuntimeError, match="callgrind counted nothing"):
    instructions.count("cpu", "dispatch_async", 10, {}, _fake_valgrind(tmp_path, zero=True),
                       timeout=60)
  with pytest.raises(RuntimeError, match="callgrind child failed \\(exit 3\\)"):
    instructions.count("cpu", "dispatch_async", 10, {}, _fake_valgrind(tmp_path, status=3),
                       timeout=60)


def _run(*args: str, **env: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-m", "tools.bench.instructions", *args],
                        cwd=runfiles_root(), env=plugin_env(**env), capture_output=True,
                        text=True, timeout=600, check=False)


def test_without_valgrind_it_says_what_to_install():
  proc = _run("--backends", "cpu", PATH="/nonexistent")
  assert proc.returncode == 2
  assert "needs valgrind (Debian: apt-get install valgrind)" in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--calls", "0"], "--calls must be at least 1, got 0"),
    (["--timeout", "0"], "--timeout must be a positive number of seconds, got 0.0"),
    (["--backends", "tpu"], "--backends must name some of ['cpu', 'xla_cpu_direct', 'pjrtkit']"),
    (["--only", "matmul"], "--only must name some of ['dispatch_async', 'dispatch_blocking', "
                           "'device_put_1KiB'], got 'matmul'"),
])
def test_bad_arguments_are_refused_by_name(args, message):
  proc = _run(*args)
  assert proc.returncode == 2
  assert message in proc.stderr


def test_each_workload_computes_its_expected_value():
  import jax  # pylint: disable=g-import-not-at-top
  jax.config.update("jax_platforms", "cpu")
  for workload, expected in [("dispatch_async", 42.0), ("dispatch_blocking", 42.0),
                             ("device_put_1KiB", 7.0)]:
    step, first, want = instructions.make_step(workload)
    assert want == expected
    for i in range(3):
      assert step(i) == 0
    assert first() == expected
  with pytest.raises(ValueError, match="workload must be one of"):
    instructions.make_step("matmul")


@pytest.mark.parametrize("backend", ["pjrtkit", "cpu"])
@pytest.mark.parametrize("workload", list(instructions.WORKLOADS))
def test_child_runs_each_workload_and_checks_its_value(backend, workload):
  proc = _run("--child", backend, workload, "--calls", "50")
  assert proc.returncode == 0, proc.stderr[-3000:]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
