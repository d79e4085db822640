"""tools/gpu/run_multi_gpu.sh on a machine without 2 GPUs: its syntax, the refusal on fewer than
2 GPUs (a stand-in nvidia-smi on PATH), the files it needs from a kit, and the steps of a dry
run. The steps themselves need 2 GPUs; nothing here runs them."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import unittest
from pathlib import Path

_SCRIPT = Path(__file__).with_name("run_multi_gpu.sh")
_KIT_FILES = (
    "pjrtkit_plugin.so", "runner", "python/jax_plugins/pjrtkit/__init__.py",
    "tests/jax/multi_gpu_test.py", "tests/jax/gpu_device_test.py",
    "tests/jax/gpu_extensions_test.py", "tests/testing/plugin_env.py",
    "tests/distributed/multi_process_test.py", "tests/distributed/worker.py",
    "tools/bench/multi_gpu.py", "tools/bench/multi_gpu_worker.py")
"""What the script checks for in a kit before running anything."""
_STEPS = [
    "=== 1 machine",
    "=== 2a the conformance cases that need 2 GPUs, on pjrtkit (none may skip)",
    "=== 2b the whole conformance suite on 2 GPUs",
    "=== 3a tests/jax/multi_gpu_test.py on pjrtkit's xla_gpu device",
    "=== 3b tests/jax/multi_gpu_test.py on JAX's CUDA backend",
    "=== 4a the 2-GPU tests of gpu_device_test.py and gpu_extensions_test.py on pjrtkit",
    "=== 4b the same on JAX's CUDA backend",
    "=== 5 two processes, one GPU each (tests/distributed/multi_process_test.py)",
    "=== 6 the 2-GPU benchmark (3 rounds)",
]


class RunMultiGpuTest(unittest.TestCase):

  def setUp(self):
    self.tmp = Path(os.environ.get("TEST_TMPDIR", "/tmp")) / f"run_multi_gpu_{self.id()}"
    self.bin = self.tmp / "bin"
    self.bin.mkdir(parents=True, exist_ok=True)

  def _gpus(self, lines: list[str], exit_code: int = 0) -> None:
    """A stand-in nvidia-smi whose -L prints `lines`."""
    fake = self.bin / "nvidia-smi"
    body = "".join(f"echo '{line}'\n" for line in lines)
    fake.write_text(f"#!/bin/sh\nif [ \"$1\" = -L ]; then\n{body}fi\nexit {exit_code}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)

  def _kit(self, leave_out: str = "") -> Path:
    kit = self.tmp / "kit"
    for name in _KIT_FILES:
      if name != leave_out:
        (kit / name).parent.mkdir(parents=True, exist_ok=True)
        (kit / name).write_text("")
    return kit

  def _run(self, *args: str, **env: str) -> subprocess.CompletedProcess:
    environ = dict(os.environ, PATH=f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                   PYTHON=sys.executable, **env)
    environ.pop("CUDA_VISIBLE_DEVICES", None)
    environ.update(env)
    return subprocess.run(["bash", str(_SCRIPT), "--out", str(self.tmp / "out"), *args],
                          env=environ, capture_output=True, text=True, timeout=60, check=False)

  def test_syntax(self):
    proc = subprocess.run(["bash", "-n", str(_SCRIPT)], capture_output=True, text=True,
                          check=False)
    self.assertEqual((proc.returncode, proc.stderr), (0, ""))

  def test_one_gpu_is_refused_and_nothing_runs(self):
    self._gpus(["GPU 0: NVIDIA H200 (UUID: GPU-0)"])
    proc = self._run("--kit", str(self._kit()))
    self.assertEqual(proc.returncode, 1)
    self.assertEqual(proc.stderr, "run_multi_gpu.sh: needs 2 GPUs, this machine has 1 "
                                  "(nvidia-smi -L); nothing was run\n")
    self.assertEqual(proc.stdout, "")
    self.assertFalse((self.tmp / "out").exists())

  def test_no_working_nvidia_smi_is_no_gpu(self):
    self._gpus([], exit_code=9)
    proc = self._run()
    self.assertEqual(proc.returncode, 1)
    self.assertEqual(proc.stderr, "run_multi_gpu.sh: needs 2 GPUs, this machine has 0 "
                                  "(nvidia-smi -L); nothing was run\n")

  def test_cuda_visible_devices_leaving_one_gpu_is_refused(self):
    self._gpus([f"GPU {i}: NVIDIA H200 (UUID: GPU-{i})" for i in range(2)])
    proc = self._run("--kit", str(self._kit()), CUDA_VISIBLE_DEVICES="1")
    self.assertEqual(proc.returncode, 1)
    self.assertEqual(proc.stderr, "run_multi_gpu.sh: needs 2 GPUs, CUDA_VISIBLE_DEVICES=1 "
                                  "leaves 1; nothing was run\n")

  def test_a_kit_missing_a_file_is_refused_naming_it(self):
    self._gpus([f"GPU {i}: NVIDIA H200 (UUID: GPU-{i})" for i in range(2)])
    kit = self._kit(leave_out="tests/distributed/worker.py")
    proc = self._run("--kit", str(kit), "--dry-run")
    self.assertEqual(proc.returncode, 2)
    self.assertEqual(proc.stderr, "run_multi_gpu.sh: missing (make the kit with "
                                  f"tools/gpu/make_kit.sh): {kit}/tests/distributed/worker.py\n")

  def test_without_the_cuda_plugin_nothing_runs(self):
    self._gpus([f"GPU {i}: NVIDIA H200 (UUID: GPU-{i})" for i in range(2)])
    proc = self._run("--kit", str(self._kit()))
    self.assertEqual(proc.returncode, 1)
    self.assertEqual(proc.stderr, "run_multi_gpu.sh: OpenXLA's CUDA PJRT plugin is not "
                                  "installed (pip install jax-cuda13-pjrt); nothing was run\n")

  def test_dry_run_on_two_gpus_lists_every_step(self):
    self._gpus([f"GPU {i}: NVIDIA H200 (UUID: GPU-{i})" for i in range(8)])
    kit = self._kit()
    proc = self._run("--kit", str(kit), "--dry-run")
    self.assertEqual((proc.returncode, proc.stderr), (0, ""))
    lines = proc.stdout.splitlines()
    self.assertEqual([l for l in lines if l.startswith("===")], _STEPS)
    # 8 GPUs: the first two are used (the "2b" step's name says 2).
    self.assertEqual(lines[-1], "dry run: 8 GPUs, CUDA plugin: none; nothing was run")
    commands = "".join(l + "\n" for l in lines if l.startswith("    "))
    # The three cases that skip on one GPU, none allowed to skip here.
    self.assertIn("    conformance conformance_2gpu_cases.log --gtest_filter="
                  "BufferTest.CopyToAnotherDeviceKeepsTheData:"
                  "ExecutableTest.ReplicatedProgramHasTwoReplicasOnTwoDevices:"
                  "ExecuteTest.ReplicatedOnTwoDevicesSeesReplicaIds --expect_skips=\n", commands)
    self.assertIn("    conformance conformance_2gpu.log --expect_skips="
                  "BufferTest.ExternalReferenceKeepsTheDataAfterDelete,"
                  "LifetimeTest.TopologyAndItsExecutableDestroyedAfterTheClient\n", commands)
    self.assertIn("pytest_all_ran MULTI_GPU_TEST_BACKEND=pjrtkit_gpu "
                  f"{kit}/tests/jax/multi_gpu_test.py", commands)
    self.assertIn("pytest_all_ran PJRTKIT_MP_DEVICE=gpu "
                  f"{kit}/tests/distributed/multi_process_test.py", commands)
    self.assertIn("-m tools.bench.multi_gpu --rounds 3", commands)
    no_bench = self._run("--kit", str(kit), "--dry-run", "--no-bench")
    self.assertEqual([l for l in no_bench.stdout.splitlines() if l.startswith("===")],
                     _STEPS[:-1])


if __name__ == "__main__":
  unittest.main()
