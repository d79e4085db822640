"""Fences around the JAX internals pjrtkit's op lowering and host callbacks rely on.

``jax_plugins.pjrtkit._lowering`` reads (never writes) JAX's table of cpu lowering rules, and
``_callback_rules`` reuses jax._src.callback / jax._src.debugging helpers because JAX's own
callback lowering rejects platforms outside a fixed set. These tests fail loudly when a JAX
upgrade changes any of that, saying what to revisit. Each check runs in a fresh interpreter.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from tests.testing.plugin_env import plugin_env, run_python, runfiles_root

_CPU_ONLY_LINALG = ["eig", "eigh", "geqp3", "hessenberg", "schur", "tridiagonal"]
_LAPACK_BACKED = ["cholesky", "geqrf", "householder_product", "lu", "ormqr", "svd",
                  "triangular_solve", "tridiagonal_solve"]


def _run(code: str) -> dict:
  return run_python(textwrap.dedent(code), env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))


def test_jax_is_a_tested_release():
  got = _run("""
      import json, jax
      from jax_plugins.pjrtkit import _jax_compat
      print(json.dumps([jax.__version__, _jax_compat.is_tested_version(jax.__version__)]))
  """)
  assert got[1], (f"jax {got[0]}: re-check the internals these tests fence, then widen "
                  "TESTED_JAX_RANGE")


def test_cpu_rules_are_kept_where_pjrtkit_reads_them_and_are_reused():
  got = _run("""
      import json, jax
      jax.devices()
      from jax._src.interpreters import mlir
      from jax_plugins.pjrtkit import _lowering
      cpu = _lowering.cpu_rules()
      pk = mlir._platform_specific_lowerings["pjrtkit"]
      same = sorted(p.name for p, e in cpu.items() if p in pk and pk[p].rule is e.rule)
      print(json.dumps({"cpu": sorted(p.name for p in cpu), "same": same,
                        "generic": sorted(p.name for p in cpu if p in mlir._lowerings)}))
  """)
  for name in _CPU_ONLY_LINALG + _LAPACK_BACKED:
    assert name in got["cpu"], f"JAX no longer registers a cpu rule for {name}"
    assert name in got["same"], f"pjrtkit does not reuse the cpu rule for {name}"
  for name in _CPU_ONLY_LINALG:
    assert name not in got["generic"], f"{name} gained a generic rule: pjrtkit may not need cpu's"
  # Callbacks are the only cpu rules pjrtkit registers differently (run as for cpu, see
  # _callback_rules).
  assert sorted(set(got["cpu"]) - set(got["same"])) == ["check", "debug_callback", "debug_print"]


def test_jax_still_refuses_callbacks_on_plugin_platforms():
  got = _run("""
      import json, jax, jax.numpy as jnp
      from jax._src import callback
      from jax._src.interpreters import mlir
      jax.devices()
      mlir._platform_specific_lowerings["pjrtkit"].pop(callback.pure_callback_p)
      # JAX's own emit_python_callback, without pjrtkit's wrapper (follow_emit_python_callback).
      callback.emit_python_callback = callback.emit_python_callback.__wrapped__
      f = jax.jit(lambda x: jax.pure_callback(lambda v: v, jax.ShapeDtypeStruct((), x.dtype), x))
      try:
        f.lower(1.0)
        print(json.dumps(None))
      except ValueError as e:
        print(json.dumps(str(e)))
  """)
  assert got == "`EmitPythonCallback` not supported on pjrtkit backend.", (
      "JAX's own callback lowering now accepts pjrtkit: consider dropping _callback_rules")


def test_callback_internals_have_the_shape_pjrtkit_uses():
  # The callback entries of _jax_internals.INTERNALS, checked by hand too so a failure names it.
  got = _run("""
      import inspect, json
      import jax
      from jax._src import callback, checkify, compiler, debugging
      from jax._src.interpreters import mlir, pxla
      from jax_plugins.pjrtkit import _jax_internals
      params = lambda f: sorted(inspect.signature(f).parameters)
      original = compiler.compile_or_get_cached  # Before initialize() wraps it.
      jax.devices()
      cpu = mlir._platform_specific_lowerings["cpu"]
      print(json.dumps({
          "problems": _jax_internals.problems([_jax_internals.HOST_CALLBACKS]),
          "compile": list(inspect.signature(original).parameters)[:5],
          "pxla_calls_compile": "compiler.compile_or_get_cached(" in inspect.getsource(pxla),
          "wrapped": getattr(compiler.compile_or_get_cached, "_pjrtkit_binds", None),
          "emit_lines": [l in inspect.getsource(callback.emit_python_callback)
                         for l in _jax_internals.EMIT_PYTHON_CALLBACK_SOURCE],
          "rules": [mlir._lowerings[callback.pure_callback_p].rule is
                    callback.pure_callback_lowering,
                    mlir._lowerings[callback.io_callback_p].rule is callback.io_callback_lowering,
                    cpu[debugging.debug_callback_p].rule is debugging.debug_callback_lowering,
                    cpu[debugging.debug_print_p].rule is debugging.debug_print_lowering_rule,
                    cpu[checkify.check_p].rule is checkify.check_lowering_rule],
          "pure": params(callback.pure_callback_impl),
          "io": params(callback.io_callback_impl),
          "debug_callback_impl": params(debugging.debug_callback_p.impl),
      }))
  """)
  assert got["problems"] == []
  assert got["compile"] == ["backend", "computation", "devices", "compile_options",
                            "host_callbacks"]
  assert got["pxla_calls_compile"] is True
  assert got["wrapped"] == "pjrtkit"
  assert got["emit_lines"] == [True] * 5
  assert got["rules"] == [True] * 5
  assert got["pure"] == ["args", "callback", "result_avals", "sharding", "vmap_method"]
  assert got["io"] == ["args", "callback", "ordered", "result_avals", "sharding"]
  assert got["debug_callback_impl"] == ["args", "callback", "effect", "partitioned"]


def test_every_jax_internal_pjrtkit_uses_is_listed_and_unchanged():
  # One line per INTERNALS entry, so the failure names the object a JAX release changed.
  got = _run("""
      import json
      import jax
      from jax_plugins.pjrtkit import _jax_internals as ji
      out = {}
      for internal in ji.INTERNALS:
        try:
          out[internal.name] = [internal.feature, internal.check()]
        except Exception as e:
          out[internal.name] = [internal.feature, f"{type(e).__name__}: {e}"]
      print(json.dumps(out))
  """)
  assert len(got) == 67  # Distinct names: the xla_gpu device reuses some of the cpu entries.
  assert {name: problem for name, (_, problem) in got.items() if problem is not None} == {}
  features = sorted({feature for feature, _ in got.values()})
  # Host callbacks are one feature on both devices (the same rules, compile wrapper and
  # internals; only the FFI handler differs).
  assert features == sorted(["ffi", "cpu lowering", "host callbacks", "donation",
                             "persistent cache", "ahead-of-time topologies", "jit_report",
                             "cuda lowering", "pallas gpu", "gpu alias",
                             "kernels cupti", "platform_dependent", "export",
                             "dlpack", "host values", "shardy export"])


SCANNED = ("python", "kernels")
"""The folders of pjrtkit's Python code: the packages, and pjrtkit.kernels' sources."""


def _python_files() -> list:
  files = []
  for folder in SCANNED:
    root = runfiles_root() / folder
    assert root.is_dir(), f"{root} is not in the test's runfiles"
    files += sorted(p for p in root.rglob("*.py") if not p.name.endswith("_test.py"))
  return files


def _jax_src_references() -> set[str]:
  """Every ``jax._src`` module pjrtkit's Python code (``SCANNED``) imports, and every private
  (``_x``) attribute it reads through one (``mlir._platforms_with_donation``), directly or with
  ``getattr(module, "_x")``."""
  import re  # pylint: disable=g-import-not-at-top
  found = set()
  for path in _python_files():
    text = path.read_text(encoding="utf-8")
    aliases = {}
    for module, names in re.findall(r"^\s*from (jax\._src[\w.]*) import ([\w, ]+)", text, re.M):
      for name in names.split(","):
        name, _, alias = name.strip().partition(" as ")
        aliases[alias or name] = f"{module}.{name}"
    for module, alias in re.findall(r"^\s*import (jax\._src[\w.]*)(?: as (\w+))?", text, re.M):
      aliases[alias or module] = module
    found.update(aliases.values())
    for alias, target in aliases.items():
      for attr in re.findall(rf"\b{re.escape(alias)}\.(_[A-Za-z]\w*)", text):
        found.add(f"{target}.{attr}")
      for attr in re.findall(rf"getattr\({re.escape(alias)}, \"(_[A-Za-z]\w*)\"", text):
        found.add(f"{target}.{attr}")
  return found


def test_no_module_reaches_into_jax_src_without_an_entry_in_the_one_list():
  from jax_plugins.pjrtkit import _jax_internals  # pylint: disable=g-import-not-at-top
  listed = [i.name for i in _jax_internals.INTERNALS]
  refs = _jax_src_references()
  assert "jax._src.interpreters.mlir._platforms_with_donation" in refs  # The scan sees them.
  assert any("kernels" in str(p) for p in _python_files())  # ... and kernels/ is scanned.
  unlisted = sorted(ref for ref in refs
                    if not any(name == ref or name.startswith(ref + ".") for name in listed))
  assert unlisted == [], ("pjrtkit imports or reads these JAX internals without an entry in "
                          "_jax_internals.INTERNALS: " + ", ".join(unlisted))


def test_a_changed_internal_turns_the_whole_integration_off_with_one_warning():
  got = _run("""
      import json, logging
      import jax, jax.numpy as jnp
      from jax._src import callback, compilation_cache, compiler
      from jax._src.interpreters import mlir
      records = []
      class Keep(logging.Handler):
        def emit(self, record):
          records.append(record.getMessage())
      logging.getLogger("jax_plugins.pjrtkit").addHandler(Keep())
      # A JAX release whose emit_python_callback emits something else.
      callback.emit_python_callback = callback.pure_callback_lowering
      jax.devices()  # initialize()
      f = jax.jit(lambda x: jax.pure_callback(lambda v: v, jax.ShapeDtypeStruct((), x.dtype), x))
      try:
        f.lower(1.0)
        lowered = None
      except Exception as e:
        lowered = type(e).__name__
      rules = mlir._platform_specific_lowerings.get("pjrtkit", {})
      print(json.dumps({
          "warnings": records,
          "wrapped": hasattr(compiler.compile_or_get_cached, "_pjrtkit_binds"),
          "rules": len(rules),
          "donation": "pjrtkit" in mlir._platforms_with_donation,
          "cache_gate": hasattr(compilation_cache.is_cache_used, "_pjrtkit_platforms"),
          "lowered": lowered,
          "other_ops": float(jax.jit(lambda a: a * 2)(jnp.float32(1.5))),
      }))
  """)
  assert len(got["warnings"]) == 1, got["warnings"]
  assert got["warnings"][0].startswith(
      "pjrtkit: JAX internals the integration relies on changed, so platform 'pjrtkit' runs "
      "without it (//tests/jax:jax_internals_test says more): "
      "jax._src.callback.emit_python_callback (host callbacks): no longer contains")
  assert got["wrapped"] is False and got["rules"] == 0
  assert got["donation"] is False and got["cache_gate"] is False
  assert got["lowered"] == "TypeError"  # JAX's generic rule, nothing of pjrtkit's.
  assert got["other_ops"] == 3.0


def test_a_failing_install_step_rolls_everything_back():
  got = _run("""
      import json, logging
      import jax, jax.numpy as jnp
      from jax._src import compilation_cache, compiler
      from jax._src.interpreters import mlir
      from jax._src import callback
      from jax._src.lib import xla_client
      from jax.interpreters import mlir as public_mlir
      from jax_plugins.pjrtkit import _jax_compat
      records = []
      class Keep(logging.Handler):
        def emit(self, record):
          records.append((record.levelname, record.getMessage()))
      logging.getLogger("jax_plugins.pjrtkit").addHandler(Keep())
      compile_before, gate_before = compiler.compile_or_get_cached, compilation_cache.is_cache_used
      ffi_before = xla_client.register_custom_call_target
      emit_before = callback.emit_python_callback
      def broken(platform, mlir):
        raise RuntimeError("simulated failure")
      # After the cpu rules, the followers and the compile wrappers went in.
      _jax_compat.enable_donation = broken
      jax.devices()  # initialize()
      print(json.dumps({
          "log": records,
          "rules": len(mlir._platform_specific_lowerings.get("pjrtkit", {})),
          "table": type(mlir._platform_specific_lowerings.get("pjrtkit", {})).__name__,
          "follows_cpu": jax.lax.linalg.eigh_p in mlir._platform_specific_lowerings.get(
              "pjrtkit", {}),
          "ffi_restored": xla_client.register_custom_call_target is ffi_before,
          "emit_restored": (callback.emit_python_callback is emit_before
                            and public_mlir.emit_python_callback is emit_before),
          "compile_restored": compiler.compile_or_get_cached is compile_before,
          "gate_restored": compilation_cache.is_cache_used is gate_before,
          "donation": "pjrtkit" in mlir._platforms_with_donation,
          "other_ops": float(jax.jit(lambda a: a * 2)(jnp.float32(1.5))),
      }))
  """)
  assert got["log"] == [["ERROR", "pjrtkit: installing the JAX integration for 'pjrtkit' "
                                  "failed; it was rolled back"]]
  assert got["rules"] == 0 and got["table"] == "dict" and got["follows_cpu"] is False
  assert got["ffi_restored"] is True and got["emit_restored"] is True
  assert got["compile_restored"] is True and got["gate_restored"] is True
  assert got["donation"] is False
  assert got["other_ops"] == 3.0


def test_an_untested_jax_release_gets_no_integration_and_one_warning():
  got = _run("""
      import json, logging
      import jax, jax.numpy as jnp
      from jax._src import compiler
      from jax._src.interpreters import mlir
      records = []
      class Keep(logging.Handler):
        def emit(self, record):
          records.append(record.getMessage())
      logging.getLogger("jax_plugins.pjrtkit").addHandler(Keep())
      jax.__version__ = "0.13.0"
      print(json.dumps({
          "platform": jax.devices()[0].platform,
          "log": records,
          "rules": len(mlir._platform_specific_lowerings.get("pjrtkit", {})),
          "wrapped": hasattr(compiler.compile_or_get_cached, "_pjrtkit_binds"),
          "donation": "pjrtkit" in mlir._platforms_with_donation,
          "other_ops": float(jax.jit(lambda a: a * 2)(jnp.float32(1.5))),
      }))
  """)
  assert got["platform"] == "pjrtkit"
  assert got["log"] == [
      "pjrtkit: jax 0.13.0 is outside the range pjrtkit checked its JAX integration on "
      "(0.11.2 <= jax <= 0.12.0.1); platform 'pjrtkit' runs, but without pjrtkit's JAX "
      "integration (cpu lowering rules and LAPACK, host callbacks, donation, persistent cache)"]
  assert got["rules"] == 0 and got["wrapped"] is False and got["donation"] is False
  assert got["other_ops"] == 3.0


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
