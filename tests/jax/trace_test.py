"""PJRTKIT_TRACE through JAX: the exact C-API calls of a `jax.device_put` and of a first
`jax.jit` call read back with numpy, on each supported JAX release, and the summary at exit.

The child process notes the trace file's size around each operation, so each segment holds
exactly the lines of the calls that operation made. The expected segments are in
testdata/trace_jax_<version>.txt (one file per release: the releases ask for different calls).
Normalised before comparing: the microseconds (" Nus"), the host's memory figures in
PJRT_Device_MemoryStats and fingerprints (machine- and build-dependent values).
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

import pytest

from tests.testing.plugin_env import plugin_env, run_python, run_python_with_stderr

_PROGRAM = """
    import json, os
    import numpy as np
    import jax
    path = os.environ["PJRTKIT_TRACE"]
    jax.devices()
    marks = [os.path.getsize(path)]
    x = jax.device_put(np.arange(4, dtype=np.float32))
    x.block_until_ready()
    marks.append(os.path.getsize(path))
    y = np.asarray(jax.jit(lambda x: x + 1)(x))
    marks.append(os.path.getsize(path))
    print(json.dumps({"jax": jax.__version__, "marks": marks, "y": y.tolist()}))
"""

_NORMALISE = [
    (re.compile(r" [0-9]+\.[0-9]us$"), " Nus"),
    (re.compile(r"\b(bytes_limit|bytes_reservable_limit|largest_free_block_bytes)=[0-9]+"),
     r"\1=N"),
    (re.compile(r"\b(fingerprint)=[0-9]+"), r"\1=N"),
    (re.compile(r'\b(executable_fingerprint)="[^"]*"'), r"\1=N"),
]


def _normalise(line: str) -> str:
  for pattern, replacement in _NORMALISE:
    line = pattern.sub(replacement, line)
  return line


def _expected(version: str) -> dict[str, list[str]]:
  """The sections ("# device_put", "# jit") of testdata/trace_jax_<version>.txt."""
  path = Path(__file__).parent / "testdata" / f"trace_jax_{version}.txt"
  if not path.exists():
    pytest.fail(f"no expected trace for jax {version}: {path}")
  sections: dict[str, list[str]] = {}
  current = None
  for line in path.read_text().splitlines():
    if line.startswith("# "):
      current = sections.setdefault(line[2:], [])
    elif line and current is not None:
      current.append(line)
  return sections


def test_device_put_and_jit_make_exactly_these_calls(tmp_path):
  trace = tmp_path / "trace.txt"
  got = run_python(_PROGRAM, env=plugin_env(JAX_PLATFORMS="pjrtkit", PJRTKIT_TRACE=str(trace)))
  assert got["y"] == [1.0, 2.0, 3.0, 4.0]
  text = trace.read_bytes()
  start, after_put, after_jit = got["marks"]
  segments = {
      "device_put": text[start:after_put].decode().splitlines(),
      "jit": text[after_put:after_jit].decode().splitlines(),
  }
  expected = _expected(got["jax"])
  for name in ("device_put", "jit"):
    assert [_normalise(l) for l in segments[name]] == expected[name], name

  # The summary at exit counts every call line of the file, per function.
  lines = text.decode().splitlines()
  calls = [l for l in lines if l.startswith("pjrtkit-trace PJRT_")]
  summary = [l for l in lines if l.startswith("pjrtkit-trace summary")]
  assert lines[-len(summary):] == summary
  counted = collections.Counter(l.split()[1] for l in calls)
  errors = collections.Counter(l.split()[1] for l in calls
                               if not re.search(r" = (OK|void) [0-9.]+us$", l))
  assert summary[0].startswith(
      f"pjrtkit-trace summary: {len(calls)} calls, {sum(errors.values())} errors, ")
  assert summary[0].endswith(f" us in {len(counted)} functions")
  per_function = {}
  for line in summary[1:]:
    match = re.fullmatch(r"pjrtkit-trace summary (\w+) calls=(\d+) errors=(\d+) "
                         r"total_us=[0-9.]+ mean_us=[0-9.]+", line)
    assert match, line
    per_function[match.group(1)] = (int(match.group(2)), int(match.group(3)))
  assert per_function == {name: (n, errors[name]) for name, n in counted.items()}


def test_trace_1_writes_to_stderr_and_unset_writes_nothing():
  program = """
      import json, jax, jax.numpy as jnp
      print(json.dumps({"y": (jnp.arange(3.0) + 1).tolist()}))
  """
  got, stderr = run_python_with_stderr(
      program, env=plugin_env(JAX_PLATFORMS="pjrtkit", PJRTKIT_TRACE="1"))
  assert got["y"] == [1.0, 2.0, 3.0]
  traced = [l for l in stderr.splitlines() if l.startswith("pjrtkit-trace ")]
  assert _normalise(traced[0]) == "pjrtkit-trace PJRT_Plugin_Initialize = OK Nus"
  assert any(l.startswith("pjrtkit-trace PJRT_LoadedExecutable_Execute ") for l in traced)
  assert traced[-1].startswith("pjrtkit-trace summary PJRT_")

  env = plugin_env(JAX_PLATFORMS="pjrtkit")
  env.pop("PJRTKIT_TRACE", None)
  got, stderr = run_python_with_stderr(program, env=env)
  assert got["y"] == [1.0, 2.0, 3.0]
  assert "pjrtkit-trace" not in stderr


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
