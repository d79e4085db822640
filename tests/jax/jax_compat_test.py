"""Buffer donation on pjrtkit, and the fence around the JAX internals that make it possible.

JAX gates donation and the persistent compilation cache by platform name through private
objects (see python/jax_plugins/pjrtkit/_jax_compat.py). The first tests here fail loudly when
a JAX upgrade changes those objects: update `_jax_compat` (and `TESTED_JAX_RANGE`) after checking
the new release, then these expected values.
"""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_ENV = {"JAX_PLATFORMS": "pjrtkit"}

# JAX's own lists, as of jax 0.11.2 .. 0.12.0.1. A change here means a JAX upgrade moved the
# gates `_jax_compat` widens: re-check it before editing these.
_JAX_DONATION_PLATFORMS = ["cpu", "cuda", "rocm", "tpu", "neuron", "oneapi"]
_JAX_CACHE_PLATFORMS_LINE = 'supported_platforms = ["tpu", "gpu", "cpu", "neuron"]'


def test_jax_internals_still_have_the_shape_pjrtkit_relies_on():
  got = run_python("""
      import inspect, json, jax
      from jax._src import compilation_cache, compiler
      from jax._src.interpreters import mlir
      from jax_plugins.pjrtkit import _jax_compat, _jax_internals
      gate = compilation_cache.is_cache_used
      print(json.dumps({
          "version": jax.__version__,
          "tested": _jax_compat.is_tested_version(jax.__version__),
          "donation": list(mlir._platforms_with_donation),
          "cache_line": _jax_internals.CACHE_PLATFORMS_SOURCE in inspect.getsource(gate),
          "gate_params": list(inspect.signature(gate).parameters),
          "compiler_calls_gate": "is_cache_used" in compiler._get_cache_key.__code__.co_names,
          "problems": [_jax_internals.donation_problem(mlir),
                       _jax_internals.cache_problem(compilation_cache, compiler)],
      }))
  """, env=plugin_env(JAX_PLATFORMS="cpu"))  # pjrtkit not initialised: JAX's own state
  assert got["tested"] is True, f"jax {got['version']} is outside _jax_compat.TESTED_JAX_RANGE"
  assert got["donation"] == _JAX_DONATION_PLATFORMS
  assert got["cache_line"] is True, f"is_cache_used no longer has {_JAX_CACHE_PLATFORMS_LINE!r}"
  assert got["gate_params"] == ["backend"]
  assert got["compiler_calls_gate"] is True
  assert got["problems"] == [None, None]


def test_initialize_opts_pjrtkit_in_once_and_leaves_other_platforms_alone():
  got = run_python("""
      import json, jax
      from jax._src import compilation_cache
      from jax._src.interpreters import mlir
      from jax_plugins.pjrtkit import _jax_compat
      jax.devices()  # runs initialize()
      gate = compilation_cache.is_cache_used
      _jax_compat.enable_donation("pjrtkit", mlir)  # idempotent
      _jax_compat.enable_persistent_cache("pjrtkit", compilation_cache)
      class Backend:
        platform = "someaccel"
        supports_executable_serialization = True
      print(json.dumps({
          "donation": list(mlir._platforms_with_donation),
          "gate_unchanged": compilation_cache.is_cache_used is gate,
          "gate_platforms": sorted(compilation_cache.is_cache_used._pjrtkit_platforms),
          "other_platform_view": _jax_compat._CacheGateView(Backend()).platform,
      }))
  """, env=plugin_env(**_ENV))
  assert got["donation"] == _JAX_DONATION_PLATFORMS + ["pjrtkit"]
  assert got["gate_unchanged"] is True
  assert got["gate_platforms"] == ["pjrtkit"]
  assert got["other_platform_view"] == "cpu"


def test_changed_internals_are_detected():
  got = run_python("""
      import json, types
      from jax_plugins.pjrtkit import _jax_compat, _jax_internals
      def is_cache_used(backend, extra):
        return False
      print(json.dumps({
          "tuple_list": _jax_internals.donation_problem(types.SimpleNamespace(
              _platforms_with_donation=("cpu",))),
          "missing_list": _jax_internals.donation_problem(types.SimpleNamespace()),
          "gate_signature": _jax_internals.cache_problem(
              types.SimpleNamespace(is_cache_used=is_cache_used), types.SimpleNamespace()),
          "versions": [_jax_compat.is_tested_version(v) for v in
                       ("0.11.1", "0.11.2", "0.12.0", "0.12.0.1", "0.12.0.2", "0.12.9",
                        "0.13.0")],
          "range": _jax_compat.tested_range_text(),
      }))
  """, env=plugin_env(JAX_PLATFORMS="cpu"))
  assert got["tuple_list"] == ("jax._src.interpreters.mlir._platforms_with_donation is tuple, "
                               "expected a list")
  assert got["missing_list"] == ("jax._src.interpreters.mlir._platforms_with_donation is "
                                 "NoneType, expected a list")
  assert got["gate_signature"] == ("jax._src.compilation_cache.is_cache_used(backend, extra) "
                                   "no longer takes (backend)")
  assert got["versions"] == [False, True, True, True, False, False, False]
  # The range comes from the two lock files through build_info.json.
  assert got["range"] == "0.11.2 <= jax <= 0.12.0.1"


def test_donation_deletes_input_reuses_memory_and_does_not_warn():
  got = run_python("""
      import json, warnings, numpy as np, jax, jax.numpy as jnp
      warnings.simplefilter('error')   # "Donation is not implemented" would fail here
      x = jnp.arange(8.0)
      ptr = x.unsafe_buffer_pointer()
      f = jax.jit(lambda a, b: (a * 2 + b, b), donate_argnums=0)
      b = jnp.ones(8)
      y, b2 = f(x, b)
      hlo = f.lower(jnp.arange(8.0), b).as_text()
      try:
        x + 1
        use_after_donate = "no error"
      except RuntimeError as e:
        use_after_donate = "deleted" if "deleted" in str(e).lower() else str(e)
      # Donated but not reusable (no output of its shape): JAX's own warning, still no crash.
      with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        jax.jit(lambda a: a.sum(), donate_argnums=0)(jnp.arange(3.0))
      print(json.dumps({
          "y": np.asarray(y).tolist(), "b_alive": not b.is_deleted(),
          "x_deleted": x.is_deleted(), "reused": y.unsafe_buffer_pointer() == ptr,
          "aliased_in_hlo": "tf.aliasing_output = 0" in hlo,
          "use_after_donate": use_after_donate,
          "unusable": [str(w.message).splitlines()[0] for w in caught],
      }))
  """, env=plugin_env(**_ENV))
  assert got["y"] == [2.0 * v + 1 for v in range(8)]
  assert got["b_alive"] is True
  assert got["x_deleted"] is True
  assert got["reused"] is True
  assert got["aliased_in_hlo"] is True
  assert got["use_after_donate"] == "deleted"
  assert len(got["unusable"]) == 1
  assert got["unusable"][0].startswith("Some donated buffers were not usable: ")
  assert "float32[3]" in got["unusable"][0]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
