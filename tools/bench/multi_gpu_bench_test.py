"""The 2-device benchmark (multi_gpu.py) on the CPU: its arithmetic and report, a whole --quick
run with pjrtkit's CPU device against jaxlib's CPU backend (2 devices each), and its exact-value
checks catching wrong results. Timings on the CPU mean nothing and are not checked."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python, runfiles_root
from tools.bench import multi_gpu
from tools.bench import multi_gpu_worker as worker

_GIB = 1 << 30


def _record(backend: str, allreduce_s: float, matmul_s: float, ok: bool = True) -> dict:
  check = {"ok": ok, "mismatches": [0, 0] if ok else [0, 7]}
  allreduce = {"bytes_per_device": _GIB, "devices": 2, "check": check}
  matmul = {"m": 8192, "k": 16384, "n": 8192, "flops": 2.0 * 8192 * 8192 * 16384,
            "check": check}
  if ok:
    allreduce["seconds"] = allreduce_s
    matmul["seconds"] = matmul_s
  return {"backend": backend, "results": {"device_kind": "NVIDIA H200",
                                          "allreduce_1024MiB": allreduce,
                                          "matmul_bf16_8192x16384x8192": matmul}}


def test_bus_bandwidth_is_nccls_convention():
  assert worker.bus_bandwidth(100.0, 2) == 100.0
  assert worker.bus_bandwidth(100.0, 4) == 150.0
  assert worker.bus_bandwidth(100.0, 8) == 175.0


def test_sizes_of_the_full_and_quick_runs():
  assert worker.allreduce_key(worker.FULL) == "allreduce_1024MiB"
  assert worker.matmul_key(worker.FULL) == "matmul_bf16_8192x16384x8192"
  assert worker.FULL.allreduce_bytes == _GIB
  assert worker.allreduce_key(worker.QUICK) == "allreduce_8MiB"
  assert worker.matmul_key(worker.QUICK) == "matmul_bf16_256x512x256"
  # The matmul check's values: r (3 + j % 2) on the diagonal classes, r = K / 2 / 128.
  assert worker.matmul_expected_value(worker.FULL, 0, 0) == 192.0
  assert worker.matmul_expected_value(worker.FULL, 129, 1) == 256.0
  assert worker.matmul_expected_value(worker.FULL, 0, 1) == 0.0
  assert worker.matmul_expected_value(worker.QUICK, 1, 1) == 8.0


def test_medians_ratios_goals_and_report():
  records = [_record("cuda", 3.0e-3, 2.0e-3), _record("pjrtkit", 3.5e-3, 2.1e-3),
             _record("pjrtkit", 3.6e-3, 2.2e-3), _record("cuda", 4.0e-3, 2.0e-3),
             _record("cuda", 3.5e-3, 2.0e-3), _record("pjrtkit", 3.4e-3, 2.0e-3)]
  report = multi_gpu.combine(records, "cuda")
  assert report["rounds"] == 3 and report["baseline"] == "cuda"
  allreduce, matmul = report["rows"]
  assert allreduce["key"] == "allreduce_1024MiB"
  assert allreduce["cuda"]["per_round"] == [3.0e-3, 4.0e-3, 3.5e-3]
  assert allreduce["cuda"]["seconds"] == 3.5e-3 and allreduce["pjrtkit"]["seconds"] == 3.5e-3
  assert allreduce["cuda"]["algbw_GBps"] == _GIB / 3.5e-3 / 1e9
  assert allreduce["cuda"]["busbw_GBps"] == allreduce["cuda"]["algbw_GBps"]  # n = 2: 2(n-1)/n = 1
  assert allreduce["ratio"] == 1.0 and allreduce["meets_goal"] is True
  assert matmul["pjrtkit"]["seconds"] == 2.1e-3
  assert matmul["cuda"]["TFLOPs"] == 2.0 * 8192 * 8192 * 16384 / 2.0e-3 / 1e12
  assert matmul["ratio"] == 2.0e-3 / 2.1e-3 and matmul["meets_goal"] is False
  table = multi_gpu.format_table(report).splitlines()
  assert table[0] == ("| workload | CUDA plugin direct | pjrtkit | pjrtkit / cuda throughput | "
                      "goal |")
  assert table[2] == ("| all-reduce f32 1024MiB per device, psum over 2 devices | 3.500 ms "
                      "(algbw 306.8, busbw 306.8 GB/s) | 3.500 ms (algbw 306.8, busbw 306.8 GB/s) "
                      "| 1.000 | >= 0.98 (met) |")
  assert table[3] == ("| matmul bf16 8192x16384 @ 16384x8192, K sharded over 2 devices + psum | "
                      "2.000 ms (1099.5 TFLOP/s) | 2.100 ms (1047.2 TFLOP/s) | 0.952 | "
                      ">= 0.98 (NOT met) |")
  assert multi_gpu.result_lines(report) == [
      "RESULT allreduce_1024MiB: cuda 306.8 GB/s busbw, pjrtkit 306.8 GB/s busbw, ratio 1.000 "
      "(goal >= 0.98: met)",
      "RESULT matmul_bf16_8192x16384x8192: cuda 1099.5 TFLOP/s, pjrtkit 1047.2 TFLOP/s, ratio "
      "0.952 (goal >= 0.98: NOT met)"]


def test_a_failed_check_is_not_timed_and_fails_the_row():
  report = multi_gpu.combine([_record("cuda", 3e-3, 2e-3),
                              _record("pjrtkit", 0, 0, ok=False)], "cuda")
  row = report["rows"][0]
  assert row["checks_ok"] is False and "ratio" not in row
  assert row["cuda"]["check_ok"] is True and row["pjrtkit"]["check_ok"] is False
  assert "seconds" not in row["pjrtkit"]
  assert row["pjrtkit"]["checks"] == [{"ok": False, "mismatches": [0, 7]}]
  assert multi_gpu.format_table(report).splitlines()[2].endswith(
      "| WRONG VALUES (not timed) | - | check FAILED |")
  assert multi_gpu.result_lines(report)[0] == \
      "RESULT allreduce_1024MiB: wrong values on pjrtkit: FAILED"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory) -> tuple[dict, str, int]:
  out = tmp_path_factory.mktemp("multi_gpu")
  proc = subprocess.run(
      [sys.executable, "-m", "tools.bench.multi_gpu", "--quick", "--rounds", "1", "--baseline",
       "cpu", "--out", str(out)], cwd=runfiles_root(), env=plugin_env(PJRTKIT_DEVICE="xla_cpu"),
      capture_output=True, text=True, timeout=240, check=False)
  assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
  assert (out / "bench_multi_gpu.md").read_text().splitlines()[0] == proc.stdout.splitlines()[0]
  return json.loads((out / "bench_multi_gpu.json").read_text()), proc.stdout, proc.returncode


def test_quick_run_structure_on_two_cpu_devices(quick_run):
  report, stdout, _ = quick_run
  assert report["baseline"] == "cpu" and report["quick"] is True and report["rounds"] == 1
  assert [r["key"] for r in report["rows"]] == ["allreduce_8MiB", "matmul_bf16_256x512x256"]
  meta = report["backends"]
  assert meta["pjrtkit"]["devices"] == [
      "PjrtkitDevice(id=0, process_index=0, kind=pjrtkit_cpu)",
      "PjrtkitDevice(id=1, process_index=0, kind=pjrtkit_cpu)"]
  assert meta["cpu"]["devices"] == ["CpuDevice(id=0)", "CpuDevice(id=1)"]
  assert (meta["pjrtkit"]["platform"], meta["cpu"]["platform"]) == ("pjrtkit", "cpu")
  allreduce, matmul = report["rows"]
  for backend in ("cpu", "pjrtkit"):
    (check,) = allreduce[backend]["checks"]
    assert check == {"mismatches": [0, 0], "first": [[1000.0, 1002.0, 1004.0, 1006.0]] * 2,
                     "expected_first": [1000.0, 1002.0, 1004.0, 1006.0],
                     "elements": 2097152, "ok": True}
    entry = allreduce[backend]
    assert entry["algbw_GBps"] == (8 << 20) / entry["seconds"] / 1e9
    assert entry["busbw_GBps"] == entry["algbw_GBps"]
    (check,) = matmul[backend]["checks"]
    assert check == {"mismatches": [0, 0], "corner": [[[6.0, 0.0], [0.0, 8.0]]] * 2,
                     "expected_corner": [[6.0, 0.0], [0.0, 8.0]], "ok": True}
    assert matmul[backend]["TFLOPs"] == 2.0 * 256 * 256 * 512 / matmul[backend]["seconds"] / 1e12
  for row in report["rows"]:
    assert row["checks_ok"] is True
    assert row["ratio"] == row["cpu"]["seconds"] / row["pjrtkit"]["seconds"]
    assert row["meets_goal"] is (row["ratio"] >= 0.98)
  results = [l for l in stdout.splitlines() if l.startswith("RESULT ")]
  assert [l.split(":")[0] for l in results] == ["RESULT allreduce_8MiB",
                                                "RESULT matmul_bf16_256x512x256"]


def test_the_checks_catch_wrong_values():
  # The checks on pjrtkit's CPU device (2 devices), given results that are not the right ones.
  got = run_python("""
      import json, numpy as np, jax, jax.numpy as jnp
      from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
      from tools.bench import multi_gpu_worker as w
      devices = w.devices_of("pjrtkit")
      mesh = Mesh(np.array(devices), ("i",))
      n = w.QUICK.allreduce_bytes // 4
      x = w.allreduce_input(mesh, n)
      out = {"right": w.check_allreduce(w.allreduce_program(mesh)(x), devices, n)["mismatches"]}
      # The input itself, not reduced: row 0 is j % 1000 (always wrong), row 1 (j % 1000) + 1000
      # (right where j % 1000 == 0).
      unreduced = w.check_allreduce(x, devices, n)
      out["unreduced"] = [unreduced["mismatches"], unreduced["ok"]]
      s = w.QUICK
      want = np.array([[w.matmul_expected_value(s, i, j) for j in range(s.n)]
                       for i in range(s.m)], np.float32)
      replicated = NamedSharding(mesh, P())
      product = w.matmul_program(mesh)(*w.matmul_check_inputs(mesh, s))
      out["matmul_right"] = w.check_matmul(product, devices, s)["mismatches"]
      one_off = want.copy(); one_off[5, 133] += 1
      zeros = w.check_matmul(jax.device_put(jnp.zeros((s.m, s.n), jnp.bfloat16), replicated),
                             devices, s)
      out["matmul_wrong"] = [
          w.check_matmul(jax.device_put(one_off.astype(jnp.bfloat16), replicated), devices,
                         s)["mismatches"], zeros["mismatches"], zeros["ok"]]
      print(json.dumps(out))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit", PJRTKIT_DEVICE="xla_cpu"))
  n = 2097152
  assert got["right"] == [0, 0]
  assert got["unreduced"] == [[n, n - (n + 999) // 1000], False]
  assert got["matmul_right"] == [0, 0]
  # One element off on both copies; all zeros: every nonzero element (i = j mod 128) is wrong.
  assert got["matmul_wrong"] == [[1, 1], [256 * 256 // 128] * 2, False]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
