"""JAX runs on the pjrtkit plugin end to end: discovery, selection, options, computations.

Every case runs in a fresh interpreter (platform choice is per process) against the Bazel-built
plugin from this test's runfiles.
"""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python, run_python_failing

_COMPUTE = """
import json
import jax, jax.numpy as jnp
devs = jax.devices()
out = jax.pmap(lambda x: x + jax.lax.psum(x, 'i'), axis_name='i')(jnp.arange(jax.device_count()))
print(json.dumps({
    "platform": devs[0].platform,
    "backend": jax.default_backend(),
    "ids": [d.id for d in devs],
    "kinds": sorted({d.device_kind for d in devs}),
    "strs": [str(d) for d in devs],
    "add": int(jnp.add(1, 1)),
    "jit": float(jax.jit(lambda x: x * 2)(1.)),
    "jit_type": str(jax.jit(lambda x: x * 2)(1.).dtype),
    "pmap": out.tolist(),
}))
"""


def test_jax_platforms_env_selects_pjrtkit_with_four_devices():
  got = run_python(_COMPUTE, env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  assert got["platform"] == "pjrtkit"
  assert got["backend"] == "pjrtkit"
  assert got["ids"] == [0, 1, 2, 3]
  assert got["kinds"] == ["pjrtkit_cpu"]
  assert got["add"] == 2
  assert got["jit"] == 2.0
  assert got["jit_type"] == "float32"
  assert got["pmap"] == [6, 7, 8, 9]


def test_device_count_option_one_device():
  code = ("import jax\njax.config.update('jax_pjrt_client_create_options', {'device_count': 1})\n"
          + _COMPUTE)
  got = run_python(code, env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  assert got["ids"] == [0]
  assert got["pmap"] == [0]


def test_device_count_option_in_string_form():
  code = ("import jax\njax.config.update('jax_pjrt_client_create_options', 'device_count:2')\n"
          + _COMPUTE)
  got = run_python(code, env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  assert got["ids"] == [0, 1]
  assert got["pmap"] == [1, 2]


def test_config_update_selects_pjrtkit():
  code = "import jax\njax.config.update('jax_platforms', 'pjrtkit')\n" + _COMPUTE
  got = run_python(code)
  assert got["platform"] == "pjrtkit"
  assert got["pmap"] == [6, 7, 8, 9]


def test_priority_makes_pjrtkit_default_when_jax_platforms_empty():
  got = run_python(_COMPUTE, env=plugin_env(JAX_PLATFORMS=""))
  assert got["backend"] == "pjrtkit"
  assert got["platform"] == "pjrtkit"


def test_cpu_backend_still_available_beside_pjrtkit():
  got = run_python("""
      import json, jax, jax.numpy as jnp
      cpu = jax.devices('cpu')[0]
      pk = jax.devices('pjrtkit')[0]
      x = jax.device_put(jnp.arange(4.0), pk)
      y = jax.device_put(x, cpu)
      print(json.dumps({"cpu": cpu.platform, "pk": pk.platform, "y": y.tolist(),
                        "y_platform": list(y.devices())[0].platform}))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))
  assert got == {"cpu": "cpu", "pk": "pjrtkit", "y": [0.0, 1.0, 2.0, 3.0], "y_platform": "cpu"}


def test_unknown_create_option_is_invalid_argument_naming_it():
  out = run_python_failing("""
      import jax
      jax.config.update('jax_pjrt_client_create_options', {'no_such_option': 3})
      jax.config.update('jax_platforms', 'pjrtkit')
      jax.devices()
  """)
  assert "no_such_option" in out
  assert "device_count" in out  # the accepted options are listed
  assert "INVALID_ARGUMENT" in out


def test_wrong_option_type_is_invalid_argument_naming_it():
  out = run_python_failing("""
      import jax
      jax.config.update('jax_pjrt_client_create_options', {'device_count': 'four'})
      jax.config.update('jax_platforms', 'pjrtkit')
      jax.devices()
  """)
  assert "device_count" in out
  assert "INVALID_ARGUMENT" in out


def test_discovered_through_namespace_and_entry_point():
  got = run_python("""
      import json, pkgutil, importlib.metadata as md
      import jax_plugins
      names = [n for _, n, _ in pkgutil.iter_modules(jax_plugins.__path__)]
      eps = [e.value for e in md.entry_points(group='jax_plugins') if e.name == 'pjrtkit']
      print(json.dumps({"namespace": "pjrtkit" in names, "entry_points": eps}))
  """)
  assert got["namespace"] is True
  assert got["entry_points"] == ["jax_plugins.pjrtkit"]


def test_values_round_trip_and_dtypes():
  got = run_python("""
      import json, numpy as np, jax, jax.numpy as jnp
      x = np.arange(12, dtype=np.float32).reshape(3, 4)
      y = jax.device_put(x)
      z = jax.jit(lambda a: (a @ a.T, a.sum(axis=0), a.astype(jnp.int32) * 3))(y)
      print(json.dumps({"mm": np.asarray(z[0]).tolist(), "sum": np.asarray(z[1]).tolist(),
                        "ints": np.asarray(z[2]).tolist(), "dtype": str(z[2].dtype),
                        "platform": list(z[0].devices())[0].platform}))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  x = [[float(4 * r + c) for c in range(4)] for r in range(3)]
  assert got["mm"] == [[sum(a * b for a, b in zip(x[i], x[j])) for j in range(3)] for i in range(3)]
  assert got["sum"] == [12.0, 15.0, 18.0, 21.0]
  assert got["ints"] == [[3 * (4 * r + c) for c in range(4)] for r in range(3)]
  assert got["dtype"] == "int32"
  assert got["platform"] == "pjrtkit"


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
