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
  # Callbacks are the only cpu rules pjrtkit replaces with its own.
  assert sorted(set(got["cpu"]) - set(got["same"])) == ["debug_callback", "debug_print"]


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


def test_callback_helpers_have_the_shape_pjrtkit_uses():
  got = _run("""
      import inspect, json
      from jax._src import callback, debugging, effects
      params = lambda f: sorted(inspect.signature(f).parameters)
      print(json.dumps({
          "pure": params(callback.pure_callback_impl),
          "io": params(callback.io_callback_impl),
          "sharding": list(inspect.signature(callback._callback_op_sharding).parameters),
          "ordered_io": effects.ordered_effects.contains(callback._OrderedIOEffect),
          "debug_callback_impl": params(debugging.debug_callback_p.impl),
          "debug_print": hasattr(debugging, "debug_print_p"),
          "debug_effects": [effects.ordered_effects.contains(debugging.ordered_debug_effect),
                            effects.ordered_effects.contains(debugging.debug_effect)],
          "sdy_helper": callable(getattr(callback, "_get_sdy_array_list_for_callbacks", None)),
      }))
  """)
  assert got["pure"] == ["args", "callback", "result_avals", "sharding", "vmap_method"]
  assert got["io"] == ["args", "callback", "ordered", "result_avals", "sharding"]
  assert got["sharding"] == ["axis_context", "sharding", "avals_out"]  # Called positionally.
  assert got["ordered_io"] is True
  assert got["debug_callback_impl"] == ["args", "callback", "effect", "partitioned"]
  assert got["debug_effects"] == [True, False]
  assert got["sdy_helper"] is True
  assert got["debug_print"] is True  # jax >= 0.12; _callback_rules skips it when absent.


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
