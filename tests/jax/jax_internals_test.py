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

from tests.testing.plugin_env import plugin_env, run_python

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
  # Each object of _jax_compat.CALLBACK_INTERNALS, checked one by one so a failure names it.
  got = _run("""
      import inspect, json
      import jax
      from jax._src import callback, checkify, compiler, debugging
      from jax._src.interpreters import mlir, pxla
      from jax_plugins.pjrtkit import _jax_compat
      params = lambda f: sorted(inspect.signature(f).parameters)
      original = compiler.compile_or_get_cached  # Before initialize() wraps it.
      jax.devices()
      cpu = mlir._platform_specific_lowerings["cpu"]
      print(json.dumps({
          "problems": _jax_compat.callback_problems(),
          "compile": list(inspect.signature(original).parameters)[:5],
          "pxla_calls_compile": "compiler.compile_or_get_cached(" in inspect.getsource(pxla),
          "wrapped": getattr(compiler.compile_or_get_cached, "_pjrtkit_binds", None),
          "emit_lines": [l in inspect.getsource(callback.emit_python_callback)
                         for l in _jax_compat.EMIT_PYTHON_CALLBACK_SOURCE],
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


def test_jax_callback_impls_still_refuse_without_the_cpu_backend():
  # pjrtkit raises JAX's own error at lowering by calling these impls (_callback_rules).
  got = run_python(textwrap.dedent("""
      import json, jax
      from jax._src import callback, debugging
      jax.devices()
      never = lambda *a: 1 / 0
      out = []
      for probe in (
          lambda: callback.pure_callback_impl(result_avals=(), callback=never, sharding=None,
                                              vmap_method=None),
          lambda: callback.io_callback_impl(result_avals=(), callback=never, sharding=None,
                                            ordered=False),
          lambda: debugging.debug_callback_p.impl(callback=never,
                                                  effect=debugging.debug_effect,
                                                  partitioned=False)):
        try:
          probe()
          out.append(None)
        except RuntimeError as e:
          out.append(str(e))
      print(json.dumps(out))
  """), env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  assert [m.split(" failed to find")[0] for m in got] == [
      "jax.pure_callback", "jax.io_callback", "jax.debug.callback"]
  assert all('Make sure "cpu" is listed in --jax_platforms' in m for m in got)


def test_a_changed_callback_internal_turns_callbacks_off_with_one_warning():
  got = _run("""
      import json, logging
      import jax, jax.numpy as jnp
      from jax._src import callback, compiler
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
      print(json.dumps({
          "warnings": [r for r in records if "host callbacks" in r],
          "wrapped": hasattr(compiler.compile_or_get_cached, "_pjrtkit_binds"),
          "rule": callback.pure_callback_p in mlir._platform_specific_lowerings["pjrtkit"],
          "lowered": lowered,
          "other_ops": float(jax.jit(lambda a: a * 2)(jnp.float32(1.5))),
      }))
  """)
  assert len(got["warnings"]) == 1
  assert got["warnings"][0].startswith("pjrtkit: host callbacks are off for platform 'pjrtkit': "
                                       "jax._src.callback.emit_python_callback no longer has")
  assert got["wrapped"] is False and got["rule"] is False
  assert got["lowered"] == "TypeError"  # JAX's generic rule, nothing of pjrtkit's.
  assert got["other_ops"] == 3.0


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
