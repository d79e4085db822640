"""The own-runtime benchmark (own_runtime.py): its report from given records, and a --quick run
on pjrtkit's sim and xla_cpu devices and numpy with every value check passing."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.testing.plugin_env import plugin_env, runfiles_root
from tools.bench import own_runtime, own_runtime_worker

_KEYS = ["mlp_step", "mlp_step_data_parallel", "chain_arithmetic", "chain_transcendental", "dot",
         "dispatch_blocking", "dispatch_async"]


def _record(backend: str, seconds: dict[str, float], wrong: str = "") -> dict:
  results = {k: {"check": {"name": k, "mismatches": 3 if k == wrong else 0, "elements": 8,
                           "rtol": 0, "atol": 0, "ok": k != wrong},
                 **({} if k == wrong else {"seconds": v})} for k, v in seconds.items()}
  return {"backend": backend, "platform": backend, "results": results}


def _records(wrong_sim: str = "") -> list[dict]:
  jax_keys = [k for k in _KEYS if k != "dot"] + ["dot"]
  sim = {k: 2.0 for k in jax_keys}
  sim["dot"] = 4.0
  cpu = {k: 1.0 for k in jax_keys}
  return [_record("sim", sim, wrong_sim), _record("xla_cpu", cpu),
          _record("numpy", {"dot": 5.0}), _record("sim", {**sim, "mlp_step": 4.0}),
          _record("xla_cpu", cpu), _record("numpy", {"dot": 3.0})]


def test_combine_takes_medians_and_each_rows_ratio_and_target():
  report = own_runtime.combine(_records())
  assert report["rounds"] == 2
  rows = {r["key"]: r for r in report["rows"]}
  assert list(rows) == _KEYS
  mlp = rows["mlp_step"]
  assert mlp["sim"]["per_round"] == [2.0, 4.0] and mlp["sim"]["seconds"] == 3.0
  assert mlp["ratio"] == 3.0 and mlp["target"] == 2.0 and mlp["met"] is False
  assert rows["dispatch_async"]["ratio"] == 2.0 and rows["dispatch_async"]["met"] is False
  dot = rows["dot"]
  # numpy's median (5, 3) = 4 s against sim's 4 s: throughput ratio 1.0 >= 0.8.
  assert (dot["base"]["seconds"], dot["sim"]["seconds"]) == (4.0, 4.0)
  assert dot["ratio"] == 1.0 and dot["met"] is True
  assert dot["ratio_is"] == "baseline time / sim time"
  table = own_runtime.format_table(report).splitlines()
  assert table[0] == "| workload | xla_cpu | numpy (1 thread) | sim | ratio | target | met |"
  assert table[2] == ("| MLP 784-1024-1024-10 SGD step, batch 256 | 1000.00 ms | - | 3000.00 ms "
                      "| 3.00 (sim time / baseline time) | <= 2.0 | no |")
  assert table[3] == ("| the same step, batch cut over 4 devices | 1000.00 ms | - | 2000.00 ms "
                      "| 2.00 (sim time / baseline time) | <= 2.0 | yes |")
  assert table[6] == ("| dot_general 1024x1024x1024 f32 vs numpy, 1 thread | 1000.00 ms | "
                      "4000.00 ms | 4000.00 ms | 1.00 (baseline time / sim time) | >= 0.8 | yes |")


def test_a_failed_check_is_not_timed_and_fails_the_row():
  report = own_runtime.combine(_records(wrong_sim="chain_arithmetic"))
  row = next(r for r in report["rows"] if r["key"] == "chain_arithmetic")
  assert row["checks_ok"] is False and "ratio" not in row
  assert row["sim"]["check_ok"] is False and "seconds" not in row["sim"]
  line = next(l for l in own_runtime.format_table(report).splitlines() if "arithmetic" in l)
  assert line == ("| 10 elementwise ops on 16M f32, arithmetic | 1000.00 ms | - | WRONG VALUES "
                  "(not timed) | - | - | check FAILED |")


def test_the_check_counts_mismatches():
  want = np.array([1.0, 2.0, 3.0], np.float32)
  assert own_runtime_worker._check("x", want, want, 0, 0)["ok"] is True
  bad = own_runtime_worker._check("x", want + np.float32([0, 1e-3, 0]), want, 1e-4, 0)
  assert (bad["mismatches"], bad["ok"]) == (1, False)


def test_the_chains_match_numpy_in_float64():
  x = np.linspace(-3, 3, 7)
  np.testing.assert_allclose(own_runtime_worker.arithmetic_chain(x, np),
                             (1 - np.minimum(np.abs(np.maximum(1.5 * x + 0.25, 0) - 0.5) * 0.75,
                                             2)) ** 2, rtol=1e-15)
  y = np.tanh(np.sqrt(0.5 * np.log1p(np.exp(2 * np.tanh(x)) + 1)) + 0.125) * 3
  np.testing.assert_allclose(own_runtime_worker.transcendental_chain(x, np), y, rtol=1e-15)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
  out = tmp_path_factory.mktemp("own_runtime")
  proc = subprocess.run(
      [sys.executable, "-m", "tools.bench.own_runtime", "--quick", "--rounds", "1", "--out",
       str(out)], cwd=runfiles_root(), env=plugin_env(), capture_output=True, text=True,
      timeout=600, check=False)
  assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
  return out, proc.stdout


def test_quick_run_checks_every_value_on_sim_xla_cpu_and_numpy(quick_run):
  out, stdout = quick_run
  report = json.loads((out / "own_runtime.json").read_text())
  assert report["quick"] is True and report["rounds"] == 1
  meta = report["backends"]
  assert (meta["sim"]["device_kind"], meta["xla_cpu"]["device_kind"]) == ("pjrtkit_sim",
                                                                          "pjrtkit_cpu")
  assert meta["sim"]["devices"] == meta["xla_cpu"]["devices"] == 4
  assert meta["numpy"]["blas_threads"] == "1"
  assert [r["key"] for r in report["rows"]] == _KEYS
  for row in report["rows"]:
    assert row["checks_ok"] is True, row
    sim, base = row["sim"]["seconds"], row["base"]["seconds"]
    want = base / sim if row["key"] == "dot" else sim / base
    assert row["ratio"] == want
  lines = (out / "own_runtime.md").read_text().splitlines()
  assert lines[0] == stdout.splitlines()[0] and lines[0].endswith(
      "QUICK (numbers not for reporting)")
  assert (out / "own_runtime.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
