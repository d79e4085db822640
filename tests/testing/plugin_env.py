"""Test helpers: point JAX at the Bazel-built pjrtkit plugin and run snippets in fresh processes.

Choosing a JAX platform is per process, so most JAX-level checks run a small script in a child
interpreter (the venv's, ``sys.executable``) and read back one JSON line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any


def runfiles_root() -> Path:
  """The workspace root inside this test's runfiles (or the source tree outside Bazel)."""
  srcdir = os.environ.get("TEST_SRCDIR")
  if srcdir:
    return Path(srcdir) / os.environ.get("TEST_WORKSPACE", "pjrtkit")
  return Path(__file__).resolve().parents[2]


def plugin_library() -> Path:
  """The pjrtkit plugin .so under test."""
  root = runfiles_root()
  for candidate in (root / "xla_plugin" / "pjrtkit_plugin.so",
                    root / "bazel-bin" / "xla_plugin" / "pjrtkit_plugin.so"):
    if candidate.exists():
      return candidate
  raise FileNotFoundError(f"pjrtkit_plugin.so not found under {root}")


def plugin_env(**extra: str) -> dict[str, str]:
  """An environment in which JAX registers the plugin under test from the runfiles tree."""
  env = dict(os.environ)
  env["PJRTKIT_PLUGIN_LIBRARY"] = str(plugin_library())
  env["PYTHONPATH"] = os.pathsep.join(
      [str(runfiles_root() / "python")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
  env.pop("JAX_PLATFORMS", None)
  env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  env.update(extra)
  return env


def run_python(code: str, *, env: dict[str, str] | None = None, timeout: float = 240) -> Any:
  """Runs `code` in a fresh interpreter; returns the JSON of its last stdout line.

  The snippet reports results by printing ``json.dumps(...)`` as its last line.

  Raises:
    AssertionError: with the child's output when it exits non-zero.
  """
  proc = subprocess.run(
      [sys.executable, "-c", textwrap.dedent(code)],
      env=env if env is not None else plugin_env(),
      capture_output=True, text=True, timeout=timeout, check=False)
  if proc.returncode != 0:
    raise AssertionError(
        f"child failed with exit code {proc.returncode}\n--- stdout\n{proc.stdout}\n"
        f"--- stderr\n{proc.stderr}")
  lines = [l for l in proc.stdout.splitlines() if l.strip()]
  return json.loads(lines[-1])


def run_python_with_stderr(code: str, *, env: dict[str, str] | None = None,
                           timeout: float = 240) -> tuple[Any, str]:
  """Runs `code` like `run_python`; returns the JSON of its last stdout line and its stderr."""
  proc = subprocess.run(
      [sys.executable, "-c", textwrap.dedent(code)],
      env=env if env is not None else plugin_env(),
      capture_output=True, text=True, timeout=timeout, check=False)
  if proc.returncode != 0:
    raise AssertionError(
        f"child failed with exit code {proc.returncode}\n--- stdout\n{proc.stdout}\n"
        f"--- stderr\n{proc.stderr}")
  lines = [l for l in proc.stdout.splitlines() if l.strip()]
  return json.loads(lines[-1]), proc.stderr


def run_python_failing(code: str, *, env: dict[str, str] | None = None,
                       timeout: float = 240) -> str:
  """Runs `code` expecting a non-zero exit; returns stdout + stderr."""
  proc = subprocess.run(
      [sys.executable, "-c", textwrap.dedent(code)],
      env=env if env is not None else plugin_env(),
      capture_output=True, text=True, timeout=timeout, check=False)
  assert proc.returncode != 0, f"child unexpectedly succeeded:\n{proc.stdout}\n{proc.stderr}"
  return proc.stdout + proc.stderr
