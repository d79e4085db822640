"""Backends and run settings of a JAX test-suite run."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

FORCE_4_CPU_DEVICES = "--xla_force_host_platform_device_count=4"


@dataclasses.dataclass(frozen=True)
class Backend:
  """How one backend is selected in the child interpreter.

  Attributes:
    name: the label in tables and JSON.
    jax_platforms: the JAX_PLATFORMS value.
    default_backend: what `jax.default_backend()` must return (the run stops otherwise).
    device_count: what `jax.device_count()` must return (0: not checked).
    test_dut: value of JAX's `jax_test_dut` flag, i.e. what `jtu.device_under_test()` returns and
      every `@jtu.skip_on_devices` / `run_on_devices` / `test_device_matches` sees; "" keeps JAX's
      default, the default backend's platform name.
    env: more environment variables for the child.
  """

  name: str
  jax_platforms: str
  default_backend: str
  device_count: int = 4
  test_dut: str = ""
  env: Mapping[str, str] = dataclasses.field(default_factory=dict)


CPU = Backend("cpu", "cpu", "cpu", env={"XLA_FLAGS": FORCE_4_CPU_DEVICES})
"""jaxlib's own CPU backend with 4 devices: the baseline."""

PJRTKIT = Backend("pjrtkit", "pjrtkit,cpu", "pjrtkit", test_dut="cpu",
                  env={"XLA_FLAGS": FORCE_4_CPU_DEVICES})
"""pjrtkit as the default backend (priority 500) with jaxlib's cpu beside it (host callbacks and
`jax.devices('cpu')` need it), tests told the device under test is a CPU, which it is."""

PJRTKIT_PLATFORM_DUT = dataclasses.replace(PJRTKIT, name="pjrtkit-dut-pjrtkit", test_dut="")
"""As PJRTKIT, but `jtu.device_under_test()` left at the platform name, 'pjrtkit': tests keyed on
'cpu' skip or take their non-CPU branch."""

XLA_CPU_DIRECT = Backend("xla-cpu-direct", "xla_cpu_direct,cpu", "xla_cpu_direct", test_dut="cpu",
                         env={"XLA_FLAGS": FORCE_4_CPU_DEVICES,
                              "PJRTKIT_JAX_SUITE_DIRECT": "xla_cpu_direct"})
"""OpenXLA's XLA:CPU plugin (xla-cpu-pjrt), the one pjrtkit's reference device wraps, registered
directly (no pjrtkit, no JAX integration for its platform name): a failure shared by pjrtkit and
this backend but not by cpu comes from the inner plugin or from JAX deciding by platform name."""

GPU_MEMORY_FRACTION = {"XLA_PYTHON_CLIENT_MEM_FRACTION": "0.08"}
"""Each child's share of the GPU memory on the GPU backends, so that up to 10 children (pytest-xdist
workers: `--pytest-arg=-n --pytest-arg=8`) fit on one GPU."""

CUDA = Backend("cuda", "cuda,cpu", "gpu", device_count=0, env=GPU_MEMORY_FRACTION)
"""JAX's own CUDA backend (jax-cuda13-plugin / -pjrt): the baseline on a GPU machine, with as
many devices as the machine has (device_count 0: not checked)."""

PJRTKIT_GPU = Backend("pjrtkit-gpu", "pjrtkit,cpu", "pjrtkit", device_count=0, test_dut="gpu",
                      env={"PJRTKIT_DEVICE": "xla_gpu", **GPU_MEMORY_FRACTION})
"""pjrtkit's xla_gpu device (over the same CUDA plugin), tests told the device under test is a
GPU, which it is: compared with CUDA, like with like."""

PJRTKIT_SIM = Backend("pjrtkit-sim", "pjrtkit,cpu", "pjrtkit", test_dut="cpu",
                      env={"XLA_FLAGS": FORCE_4_CPU_DEVICES, "PJRTKIT_DEVICE": "sim"})
"""pjrtkit's sim device (its own compiler, runtime and kernels, 4 devices), tests told the device
under test is a CPU (the dtype lists and cases of the cpu baseline, so test names line up):
every difference from cpu is the sim device's."""

BACKENDS: Mapping[str, Backend] = {
    b.name: b
    for b in (CPU, PJRTKIT, PJRTKIT_PLATFORM_DUT, XLA_CPU_DIRECT, CUDA, PJRTKIT_GPU, PJRTKIT_SIM)}


@dataclasses.dataclass(frozen=True)
class SuiteConfig:
  """One run of a list of test files on a list of backends.

  Attributes:
    tests_dir: JAX's `tests/` directory (its parent should hold JAX's conftest.py and
      pyproject.toml, whose pytest settings apply, as in JAX's CI).
    files: test files relative to tests_dir.
    backends: the backends, each file runs on each in a fresh interpreter.
    python: the interpreter (of a venv with jax, jaxlib, pytest, absl-py and pjrtkit).
    out_dir: where junit XML, logs and results.json go.
    timeout_s: wall-clock limit per file and backend (all attempts together).
    num_generated_cases: JAX_NUM_GENERATED_CASES (cases per parameterised test).
    file_cases: per-file override of num_generated_cases.
    crash_retries: after the interpreter dies in a test, run the file again that many times
      without the tests already run and the one it died in.
    env: more environment variables for every child (e.g. PYTHONPATH to register pjrtkit).
    pytest_args: more pytest arguments (e.g. `-k`).
    nice: the niceness of the children.
  """

  tests_dir: Path
  files: tuple[str, ...]
  backends: tuple[Backend, ...]
  python: str
  out_dir: Path
  timeout_s: float = 1800.0
  num_generated_cases: int = 5
  file_cases: Mapping[str, int] = dataclasses.field(default_factory=dict)
  crash_retries: int = 3
  env: Mapping[str, str] = dataclasses.field(default_factory=dict)
  pytest_args: tuple[str, ...] = ()
  nice: int = 10
