"""pjrtkit is quiet by default: no log line of XLA:CPU's unless the user asks for one.

XLA:CPU (the inner plugin) logs through its own absl/TSL copy, at the threshold it reads from
TF_CPP_MIN_LOG_LEVEL at its first message; ``import jax`` sets that variable to 1 when unset, so
without pjrtkit's care every run printed absl's "All log messages before absl::InitializeLog()"
warning and "E0000 ... library_matcher.h:53] Unsupported fusion type: 5". These cases run
without the TF_CPP_MIN_LOG_LEVEL=3 that ``tests.testing.plugin_env`` sets for other tests.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from tests.testing.plugin_env import plugin_env, run_python_with_stderr

# A jit compile and run (XLA:CPU logs "Unsupported fusion type" while compiling it), then the
# C-level value of TF_CPP_MIN_LOG_LEVEL, which pjrtkit must leave as it found it.
_PROGRAM = """
    import ctypes, json, jax, jax.numpy as jnp
    y = jax.jit(lambda x: jnp.sin(x) * 2 + 1)(jnp.arange(4.0))
    libc = ctypes.CDLL(None)
    libc.getenv.restype = ctypes.c_char_p
    level = libc.getenv(b"TF_CPP_MIN_LOG_LEVEL")
    print(json.dumps({"platform": jax.devices()[0].platform, "y": y.tolist(),
                      "level_after": level.decode() if level is not None else None}))
"""

_INNER_LINES = ("library_matcher.h", "absl::InitializeLog", "E0000", "I0000", "W0000")


def _env(**extra: str) -> dict[str, str]:
  env = plugin_env(JAX_PLATFORMS="pjrtkit")
  env.pop("TF_CPP_MIN_LOG_LEVEL", None)
  env.pop("PJRTKIT_XLA_CPU_LOG_LEVEL", None)
  env.update(extra)
  return env


def _inner_lines(stderr: str) -> list[str]:
  return [line for line in stderr.splitlines() if any(m in line for m in _INNER_LINES)]


def test_no_inner_log_line_by_default():
  got, stderr = run_python_with_stderr(_PROGRAM, env=_env())
  assert got["platform"] == "pjrtkit"
  assert len(got["y"]) == 4
  assert _inner_lines(stderr) == []
  # JAX's own default, untouched by pjrtkit.
  assert got["level_after"] == "1"


def test_a_child_of_a_jax_program_is_quiet_too():
  # `import jax` set TF_CPP_MIN_LOG_LEVEL=1 in the parent; the child starts with it.
  got, stderr = run_python_with_stderr("""
      import json, subprocess, sys
      import jax
      child = subprocess.run([sys.executable, "-c", sys.argv[1]], capture_output=True, text=True)
      print(json.dumps({"parent_set": __import__("os").environ.get("TF_CPP_MIN_LOG_LEVEL"),
                        "rc": child.returncode, "child": child.stdout.splitlines()[-1:],
                        "stderr": child.stderr}))
  """.replace("sys.argv[1]", repr(textwrap.dedent(_PROGRAM))), env=_env())
  assert (got["parent_set"], got["rc"]) == ("1", 0), got["stderr"]
  assert json.loads(got["child"][0])["platform"] == "pjrtkit"
  assert _inner_lines(got["stderr"]) == [], got["stderr"]
  assert _inner_lines(stderr) == []


@pytest.mark.parametrize("extra", [
    {"TF_CPP_MIN_LOG_LEVEL": "0"},
    {"PJRTKIT_XLA_CPU_LOG_LEVEL": "1"},
    {"PJRTKIT_XLA_CPU_LOG_LEVEL": "2"},
], ids=["tf_cpp_0", "pjrtkit_1", "pjrtkit_2"])
def test_inner_logs_show_when_asked_for(extra):
  got, stderr = run_python_with_stderr(_PROGRAM, env=_env(**extra))
  lines = _inner_lines(stderr)
  assert any("library_matcher.h:53] Unsupported fusion type: 5" in l for l in lines), stderr
  assert any("All log messages before absl::InitializeLog() is called" in l for l in lines)
  # What the user set stays set; pjrtkit's own switch does not touch TF_CPP_MIN_LOG_LEVEL.
  assert got["level_after"] == extra.get("TF_CPP_MIN_LOG_LEVEL", "1")


def test_explicit_quiet_level_and_a_bad_switch():
  got, stderr = run_python_with_stderr(_PROGRAM, env=_env(TF_CPP_MIN_LOG_LEVEL="0",
                                                          PJRTKIT_XLA_CPU_LOG_LEVEL="3"))
  assert not any("library_matcher" in l for l in stderr.splitlines())
  assert got["level_after"] == "0"
  got, stderr = run_python_with_stderr("""
      import json, jax
      try:
        jax.devices("pjrtkit")
        print(json.dumps("created"))
      except RuntimeError as e:
        print(json.dumps(str(e)))
  """, env=_env(PJRTKIT_XLA_CPU_LOG_LEVEL="loud", JAX_PLATFORMS="pjrtkit,cpu"))
  assert "PJRTKIT_XLA_CPU_LOG_LEVEL must be 0, 1, 2 or 3" in got
  assert "got 'loud'" in got


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
