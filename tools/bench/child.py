"""One benchmark round in a fresh interpreter: a worker module run as a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

_ROOT = Path(__file__).resolve().parents[2]


def child_env(drop_jax_platforms: bool = False) -> dict[str, str]:
  """The environment a benchmark child runs in: this one, with the repository root first on
  ``PYTHONPATH`` (the workers are modules of ``tools.bench``), TensorFlow-style logging quiet
  unless asked for, and ``JAX_PLATFORMS`` removed when ``drop_jax_platforms`` (the child picks
  its backend itself)."""
  env = dict(os.environ)
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  if drop_jax_platforms:
    env.pop("JAX_PLATFORMS", None)
  env["PYTHONPATH"] = os.pathsep.join([str(_ROOT)] + [p for p in env.get("PYTHONPATH", "")
                                                      .split(os.pathsep) if p])
  return env


def run_worker(module: str, backend: str, extra: Sequence[str], env: dict[str, str],
               timeout: float, what: str = "benchmark") -> dict[str, Any]:
  """Runs ``python -m module --backend backend --out FILE *extra`` from the repository root and
  returns the JSON record it wrote.

  Raises:
    RuntimeError: the child failed or wrote no record (its exit code and output's tails named).
    subprocess.TimeoutExpired: it ran past `timeout` seconds.
  """
  with tempfile.TemporaryDirectory(prefix="pjrtkit_bench_child_") as tmp:
    out = Path(tmp) / "record.json"
    cmd = [sys.executable, "-m", module, "--backend", backend, "--out", str(out), *extra]
    proc = subprocess.run(cmd, cwd=_ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    if proc.returncode != 0 or not out.exists():
      raise RuntimeError(f"{what} child for {backend} failed (exit {proc.returncode}):\n"
                         f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return json.loads(out.read_text())
