"""Runs one JAX test file on one backend in fresh interpreters and collects per-test results."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tools.jax_suite.compare import CRASH, MISCONFIGURED, OK, TIMEOUT, FileRun
from tools.jax_suite.config import Backend, SuiteConfig
from tools.jax_suite.results import ERROR, TestResult, parse_junit, read_event_log, test_id_from_nodeid

CHILD_DIR = Path(__file__).resolve().parent / "child"
"""Holds the pytest plugin every child loads (`-p pjrtkit_jax_suite_plugin`)."""

_CLEARED = ("JAX_PLATFORMS", "JAX_PLATFORM_NAME", "XLA_FLAGS", "JAX_NUM_GENERATED_CASES",
            "JAX_ENABLE_X64", "PJRTKIT_JAX_TEST_DUT", "PYTEST_ADDOPTS")
"""Inherited variables that would change what a child tests; each backend sets its own."""

# pytest exit codes that mean "pytest ran to its end": ok, tests failed, interrupted (collection
# errors), no tests collected.
_PYTEST_FINISHED = (0, 1, 2, 5)
_PYTEST_USAGE_ERROR = 4


def child_env(config: SuiteConfig, backend: Backend, file: str, paths: Mapping[str, Path],
              base: Mapping[str, str] | None = None) -> dict[str, str]:
  """The environment of a child run of `file` on `backend`.

  Args:
    config: the suite settings.
    backend: the backend.
    file: the test file (for its number of generated cases).
    paths: "info", "log", "deselect": the files the child plugin writes and reads.
    base: the environment to start from (default: this process's).
  """
  env = {k: v for k, v in (os.environ if base is None else base).items() if k not in _CLEARED}
  extra = dict(config.env)
  pythonpath = [str(CHILD_DIR)]
  inherited = extra.pop("PYTHONPATH", None) or env.get("PYTHONPATH")
  if inherited:
    pythonpath.append(inherited)
  env.update(extra)
  env.update(backend.env)
  env.update({
      "PYTHONPATH": os.pathsep.join(pythonpath),
      "JAX_PLATFORMS": backend.jax_platforms,
      "JAX_NUM_GENERATED_CASES": str(config.file_cases.get(file, config.num_generated_cases)),
      "PJRTKIT_JAX_SUITE_BACKEND": backend.default_backend,
      "PJRTKIT_JAX_SUITE_DEVICES": str(backend.device_count) if backend.device_count else "",
      "PJRTKIT_JAX_SUITE_INFO": str(paths["info"]),
      "PJRTKIT_JAX_SUITE_LOG": str(paths["log"]),
      "PJRTKIT_JAX_SUITE_DESELECT": str(paths["deselect"]),
  })
  if backend.test_dut:
    env["PJRTKIT_JAX_TEST_DUT"] = backend.test_dut
  return env


def expected_device_under_test(backend: Backend) -> str:
  """What `jtu.device_under_test()` must return on `backend`: its `jax_test_dut` value, else the
  platform of its default backend."""
  return backend.test_dut or backend.default_backend


def pytest_command(config: SuiteConfig, file: str, junit: Path) -> list[str]:
  """The child's command line (niced), run from the tests directory's parent."""
  return ["nice", "-n", str(config.nice), config.python, "-m", "pytest",
          "-p", "pjrtkit_jax_suite_plugin", "-p", "no:cacheprovider",
          "-q", "-rN", "--tb=short", f"--junitxml={junit}",
          *config.pytest_args, str(config.tests_dir / file)]


def _run(cmd: list[str], env: Mapping[str, str], cwd: Path, output: Path,
         timeout_s: float) -> tuple[int, bool]:
  """Runs `cmd` in its own session; returns (exit code, timed out). Kills the session on timeout."""
  with output.open("wb") as out:
    proc = subprocess.Popen(cmd, env=dict(env), cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
      return proc.wait(timeout=max(timeout_s, 1.0)), False
    except subprocess.TimeoutExpired:
      for sig, wait_s in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 30.0)):
        try:
          os.killpg(proc.pid, sig)
        except ProcessLookupError:
          break
        try:
          proc.wait(timeout=wait_s)
          break
        except subprocess.TimeoutExpired:
          continue
      return proc.returncode if proc.returncode is not None else -9, True


def _exit_text(rc: int) -> str:
  """`SIGSEGV` for a negative exit code (a signal; `nice` passes it on as 128+n), else `exit N`."""
  signum = -rc if rc < 0 else (rc - 128 if rc > 128 else 0)
  if signum:
    try:
      return signal.Signals(signum).name
    except ValueError:
      return f"signal {signum}"
  return f"exit {rc}"


def _fatal_lines(output: Path, limit: int = 3, native_only: bool = False) -> str:
  """The first lines of a fatal error in the child output: native ones (a CHECK failure, an LLVM
  error, an abort, a heap error), then, unless `native_only`, Python's "Fatal Python error"."""
  if not output.exists():
    return ""
  native = ("Check failed", "LLVM ERROR", "F0000", "terminate called", "Segmentation fault",
            "double free", "free():", "malloc()", "RET_CHECK")
  text = output.read_text(encoding="utf-8", errors="replace").splitlines()
  found = [line.strip() for line in text if any(k in line for k in native)]
  if not found and not native_only:
    found = [line.strip() for line in text if "Fatal Python error" in line]
  return " | ".join(found[:limit])


def _tail(output: Path, lines: int = 5) -> str:
  if not output.exists():
    return ""
  text = output.read_text(encoding="utf-8", errors="replace").strip().splitlines()
  return " | ".join(line.strip() for line in text[-lines:])


def _diagnose(config: SuiteConfig, backend: Backend, file: str, nodeid: str, output: Path,
              paths: Mapping[str, Path]) -> str:
  """Runs the one test `nodeid` again with pytest's capture off (`-s`), so that a native fatal
  message (a CHECK failure, an abort) reaches `output` instead of dying with pytest's captured
  file descriptors; returns its first fatal lines ("" when none)."""
  single = dataclasses.replace(config, pytest_args=(*config.pytest_args, "-s"))
  cmd = pytest_command(single, file, output.with_suffix(".xml"))
  cmd[-1] = str(config.tests_dir.parent / nodeid)
  diag_paths = {"info": output.with_suffix(".info.json"), "log": output.with_suffix(".jsonl"),
                "deselect": output.with_suffix(".deselect")}
  _run(cmd, child_env(config, backend, file, diag_paths), config.tests_dir.parent, output,
       min(config.timeout_s, 300.0))
  return _fatal_lines(output, native_only=True)


def run_file(config: SuiteConfig, backend: Backend, file: str) -> FileRun:
  """Runs `file` on `backend`: pytest in a fresh interpreter, again after each crash.

  Results come from pytest's junit XML; when the interpreter dies or times out before writing it,
  from the child plugin's JSON lines, where the test it died in is recorded as an error. After a
  crash the file runs again without the tests already run and the crashing one, up to
  `config.crash_retries` times, all within `config.timeout_s`.
  """
  module = Path(file).stem
  work = config.out_dir / backend.name / module
  work.mkdir(parents=True, exist_ok=True)
  deselect = work / "deselect.txt"
  deselect.write_text("", encoding="utf-8")
  start = time.monotonic()
  merged: dict[str, TestResult] = {}
  info: dict[str, Any] = {}
  status, notes = OK, []
  for attempt in range(config.crash_retries + 1):
    paths = {"info": work / f"info{attempt}.json", "log": work / f"events{attempt}.jsonl",
             "deselect": deselect}
    junit = work / f"junit{attempt}.xml"
    output = work / f"output{attempt}.txt"
    for path in (paths["info"], paths["log"], junit):
      path.unlink(missing_ok=True)
    remaining = config.timeout_s - (time.monotonic() - start)
    if remaining <= 0:
      status = TIMEOUT
      notes.append("no time left for another attempt")
      break
    env = child_env(config, backend, file, paths)
    rc, timed_out = _run(pytest_command(config, file, junit), env, config.tests_dir.parent,
                         output, remaining)
    if paths["info"].exists():
      info = json.loads(paths["info"].read_text(encoding="utf-8"))
    events = read_event_log(paths["log"])
    if junit.exists() and not timed_out:
      results = parse_junit(junit.read_text(encoding="utf-8", errors="replace"), module)
    else:
      results = dict(events.results)
    merged.update(results)
    if timed_out:
      status = TIMEOUT
      for nodeid in events.unfinished:
        test_id = test_id_from_nodeid(nodeid)
        merged[test_id] = TestResult(test_id, ERROR, f"timed out in this test ({config.timeout_s:.0f} s per file)")
      notes.append(f"timed out after {time.monotonic() - start:.0f} s")
      break
    if rc == _PYTEST_USAGE_ERROR:
      status = MISCONFIGURED
      notes.append(_tail(output))
      break
    if rc in _PYTEST_FINISHED:
      break
    if not paths["info"].exists():
      # The child never got to start JAX (no interpreter, no pytest, a broken environment).
      status = MISCONFIGURED
      notes.append(f"the child ended with {_exit_text(rc)} before starting JAX: {_tail(output)}")
      break
    status = CRASH
    fatal = _fatal_lines(output)
    if not events.unfinished:
      notes.append(f"interpreter ended with {_exit_text(rc)} outside any test (after "
                   f"{len(events.finished_nodeids)} tests){': ' + fatal if fatal else ''}")
      break
    crashed = events.unfinished[-1]
    test_id = test_id_from_nodeid(crashed)
    if not _fatal_lines(output, native_only=True):
      fatal = _diagnose(config, backend, file, crashed, work / f"crash{attempt}.txt", paths)
    message = f"interpreter died ({_exit_text(rc)}) in this test{': ' + fatal if fatal else ''}"
    merged[test_id] = TestResult(test_id, ERROR, message[:500])
    notes.append(f"{_exit_text(rc)} in {test_id}")
    with deselect.open("a", encoding="utf-8") as f:
      for nodeid in (*events.finished_nodeids, *events.unfinished):
        f.write(nodeid + "\n")
  dut = info.get("device_under_test")
  if status == OK and dut is not None and dut != expected_device_under_test(backend):
    status = MISCONFIGURED
    notes.append(f"jtu.device_under_test() was {dut!r}, expected "
                 f"{expected_device_under_test(backend)!r}")
  return FileRun(file, backend.name, status, merged, time.monotonic() - start, info,
                 "; ".join(n for n in notes if n))
