"""`python -m pjrtkit.jit_report` on a sample script with known recompiles (testdata/)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest

from tests.testing.plugin_env import plugin_env, run_python, runfiles_root

_SAMPLE = runfiles_root() / "tests" / "jax" / "testdata" / "jit_report_sample.py"


def _report(*extra: str) -> tuple[subprocess.CompletedProcess, dict]:
  with tempfile.TemporaryDirectory(prefix="jit_report_") as tmp:
    out = os.path.join(tmp, "report.json")
    proc = subprocess.run(
        [sys.executable, "-m", "pjrtkit.jit_report", "--json", out, *extra, str(_SAMPLE), "a",
         "b"], env=plugin_env(), capture_output=True, text=True, timeout=240, check=False)
    assert os.path.exists(out), proc.stdout + proc.stderr
    with open(out, encoding="utf-8") as f:
      return proc, json.load(f)


def _summary(report: dict) -> list:
  return [[f["name"], f["location"].rsplit(":", 1)[1], f["calls"], f["compilations"],
           f["in_memory_hits"], f["persistent_cache_hits"],
           [[c["call"], c["reasons"], c["detail"]] for c in f["compiles"]]]
          for f in report["functions"]]


_EXPECTED = [
    ["scale", "10", 5, 3, 2, 0, [[1, ["first call"], ""],
                                 [3, ["shape"], "x: f32[3] -> f32[4]"],
                                 [4, ["static argument"], "n: 2 -> 3"]]],
    ["total", "15", 3, 2, 1, 0, [[1, ["first call"], ""],
                                 [2, ["tree structure"],
                                  "[0][0]: <class 'dict'> with 1 child -> <class 'dict'> with 2 "
                                  "children"]]],
    ["<lambda>", "30", 3, 2, 1, 0, [[1, ["first call"], ""],
                                    [2, ["dtype"], "v: f32[3] -> i32[3]"]]],
    ["<lambda>", "34", 3, 3, 0, 0, [[1, ["first call"], ""],
                                    [2, ["weak type"],
                                     "v: f32[]{weak_type=True} -> f32[]{weak_type=False}"],
                                    [3, ["argument placement"], ""]]],
]


def test_counts_and_reasons_of_every_recompile():
  proc, report = _report()
  assert proc.returncode == 3  # the script's own exit code
  assert "sample done ['a', 'b']" in proc.stdout
  assert report["platform"] == "pjrtkit"
  assert _summary(report) == _EXPECTED
  assert all(f["location"].startswith(str(_SAMPLE)) for f in report["functions"])
  for f in report["functions"]:
    assert f["compile_s"] > 0 and f["mean_execute_s"] > 0
    assert all(c["persistent_cache_hit"] is False for c in f["compiles"])
  # The first compile of each function keeps JAX's own explanation.
  assert report["functions"][0]["compiles"][1]["explanation"].startswith("TRACING CACHE MISS")
  # The printed report says the same.
  text = proc.stdout
  assert "scale  (" in text
  assert "  calls 5 | compilations 3 | in-memory cache hits 2 | persistent cache hits 0" in text
  assert "  #2 at call 3: shape (x: f32[3] -> f32[4]); " in text
  assert "  #3 at call 4: static argument (n: 2 -> 3); " in text
  assert "  #2 at call 2: dtype (v: f32[3] -> i32[3]); " in text
  assert "  #3 at call 3: argument placement; " in text
  # JAX's explanations are captured, not printed to stderr; this JAX is a checked one.
  assert "TRACING CACHE MISS" not in proc.stderr
  assert "jit_report: warning" not in proc.stderr


def test_the_explanation_text_is_fenced_like_every_jax_internal():
  got = run_python("""
      import json, jax
      from pjrtkit import jit_report
      print(json.dumps([jit_report.fence_problems(jax.__version__),
                        jit_report.fence_problems("0.13.0")]))
  """, env=plugin_env(JAX_PLATFORMS="cpu"))
  assert got == [[], ["jax 0.13.0 is outside the range jit_report was checked on "
                      "(0.11.2 <= jax <= 0.12.0.1)"]]


def test_persistent_cache_hits_in_a_second_run(tmp_path):
  cache_dir = str(tmp_path / "cache")
  _, cold = _report("--cache-dir", cache_dir)
  _, warm = _report("--cache-dir", cache_dir)
  assert [[f["name"], f["persistent_cache_hits"]] for f in cold["functions"]] == [
      ["scale", 0], ["total", 0], ["<lambda>", 0],
      # bump(1.0) and bump(jnp.float32(1.0)) lower to the same module: weak types leave no
      # trace in HLO, so the second is already in the cache.
      ["<lambda>", 1]]
  # Every executable of the second run is loaded, none compiled; the reasons stay the same.
  assert _summary(warm) == [row[:5] + [row[3]] + row[6:] for row in _EXPECTED]
  assert all(c["persistent_cache_hit"] for f in warm["functions"] for c in f["compiles"])
  assert warm["other_compiles"] == cold["other_compiles"]
  assert warm["other_persistent_cache_hits"] == warm["other_compiles"]


def test_recorder_restores_jax_after_the_run():
  got = run_python("""
      import json, logging, jax
      from pjrtkit._jit_recorder import JitRecorder
      from pjrtkit import _jit_explain
      jit_before = jax.jit
      with JitRecorder() as rec:
        inside = jax.jit is not jit_before
        f = jax.jit(lambda x: x * 2)
        f(1.0); f(2.0)
        lowered_text = f.lower(1.0).as_text()[:6]
      report = rec.report("inline")
      print(json.dumps({
          "inside": inside, "restored": jax.jit is jit_before,
          "explain": jax.config.jax_explain_cache_misses,
          "handlers": len(logging.getLogger(_jit_explain.EXPLAIN_LOGGER).handlers),
          "calls": report.functions[0].calls, "lower": lowered_text,
      }))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  assert got == {"inside": True, "restored": True, "explain": False, "handlers": 0, "calls": 2,
                 "lower": "module"}


def test_explanation_parser_on_jax_message_shapes():
  from pjrtkit import _jit_explain as ex  # pylint: disable=g-import-not-at-top
  assert ex.aval_change_kinds("f32[3]", "f32[4]") == ("shape",)
  assert ex.aval_change_kinds("f32[3]", "i32[3]") == ("dtype",)
  assert ex.aval_change_kinds("f32[3]", "bf16[4,2]") == ("dtype", "shape")
  assert ex.aval_change_kinds("f32[8@i]", "f32[8]") == ("sharding",)
  assert ex.aval_change_kinds("f32[]{weak_type=True}", "f32[]{weak_type=False}") == ("weak type",)
  assert ex.parse("Persistent compilation cache hit for 'f'") is None
  e = ex.parse("TRACING CACHE MISS at s.py:3:1 (<module>):\n  for g defined at /a/s.py:7\n"
               "  all previously seen cache keys differ. For the closest previous key:\n"
               "  different input types:\n  * at x, now f32[2] and before f32[1]\n"
               "  * at y, now i8[] and before f32[]")
  assert (e.func_name, e.filename, e.lineno, e.reasons) == ("g", "/a/s.py", 7, ("shape", "dtype"))
  assert [(c.arg, c.before, c.now) for c in e.changes] == [("x", "f32[1]", "f32[2]"),
                                                            ("y", "f32[]", "i8[]")]
  e = ex.parse("TRACING CACHE MISS at s.py:3:1 (<module>):\n  for g defined at /a/s.py:7\n"
               "  all previously seen cache keys differ. For the closest previous key:\n"
               "  Tracing context doesn't match, e.g. due to config or context manager.")
  assert e.reasons == ("trace context",)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
