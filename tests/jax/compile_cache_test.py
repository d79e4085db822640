"""The persistent compilation cache on pjrtkit, and executable serialization round trips.

A first process compiles and writes every executable to ``jax_compilation_cache_dir``; a second
process with the same program loads every executable from there and compiles none (counted by
JAX's ``/jax/compilation_cache/*`` monitoring events), and its results are bitwise equal.
"""

from __future__ import annotations

import os
import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_ENV = {"JAX_PLATFORMS": "pjrtkit"}

_PROGRAM = """
import collections, json, os, sys, numpy as np, jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
events = collections.Counter()
jax.monitoring.register_event_listener(lambda name, **kw: events.update([name]))
compiled = []
def on_duration(name, secs, **kw):
  if name == '/jax/core/compile/backend_compile_duration':
    compiled.append(kw.get('fun_name'))
jax.monitoring.register_event_duration_secs_listener(on_duration)
jax.config.update('jax_compilation_cache_dir', sys.argv[1])
jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)
jax.config.update('jax_persistent_cache_min_entry_size_bytes', 0)

def mlp(params, x):
  for w, b in params:
    x = jnp.tanh(x @ w + b)
  return (x ** 2).mean()

key = np.random.default_rng(0)
params = [(jnp.asarray(key.standard_normal((16, 16)), jnp.float32) * 0.3,
           jnp.asarray(key.standard_normal(16), jnp.float32) * 0.1) for _ in range(3)]
x = jnp.asarray(key.standard_normal((8, 16)), jnp.float32)
loss, grads = jax.jit(jax.value_and_grad(mlp))(params, x)
mesh = Mesh(np.array(jax.devices()), ('i',))
sharded = jax.jit(lambda a: jnp.sin(a) @ a.T,
                  out_shardings=NamedSharding(mesh, P('i')))(
                      jax.device_put(x, NamedSharding(mesh, P('i'))))
summed = jax.pmap(lambda a: jax.lax.psum(a, 'i'), axis_name='i')(jnp.arange(4.0))
values = [loss, *jax.tree_util.tree_leaves(grads), sharded, summed]
print(json.dumps({
    "events": dict(events),
    "compiled": sorted(compiled),
    "files": len(os.listdir(sys.argv[1])),
    "bits": [np.asarray(v).tobytes().hex() for v in values],
    "summed": np.asarray(summed).tolist(),
}))
"""


def _run_program(cache_dir: str):
  script = os.path.join(cache_dir + "_script.py")
  with open(script, "w") as f:
    f.write(_PROGRAM)
  return run_python(f"import runpy, sys\nsys.argv = {[script, cache_dir]!r}\n"
                    f"runpy.run_path({script!r}, run_name='__main__')", env=plugin_env(**_ENV))


def test_second_process_loads_every_executable_from_the_cache(tmp_path):
  cache_dir = str(tmp_path / "cache")
  os.mkdir(cache_dir)
  cold = _run_program(cache_dir)
  warm = _run_program(cache_dir)
  n = len(cold["compiled"])
  assert n >= 3  # the value_and_grad MLP, the sharded jit, the pmap (+ eager helpers)
  assert {"jit(mlp)", "jit(<lambda>)"} <= set(cold["compiled"])
  assert cold["events"] == {
      "/jax/compilation_cache/tasks_using_cache": 1,
      "/jax/compilation_cache/compile_requests_use_cache": n,
      "/jax/compilation_cache/cache_misses": n,
  }
  assert cold["files"] == n
  # Same executables requested; every one read from disk, none compiled or written.
  assert warm["compiled"] == cold["compiled"]
  assert warm["events"] == {
      "/jax/compilation_cache/tasks_using_cache": 1,
      "/jax/compilation_cache/compile_requests_use_cache": n,
      "/jax/compilation_cache/cache_hits": n,
  }
  assert warm["files"] == n
  assert warm["bits"] == cold["bits"]
  assert warm["summed"] == [6.0, 6.0, 6.0, 6.0]


def test_without_cache_dir_nothing_is_read_or_written_same_as_cpu():
  code = """
      import collections, json, jax, jax.numpy as jnp
      events = collections.Counter()
      jax.monitoring.register_event_listener(lambda name, **kw: events.update([name]))
      jax.jit(lambda a: a + 1)(jnp.ones(3))
      print(json.dumps(dict(events)))
  """
  pjrtkit = run_python(code, env=plugin_env(**_ENV))
  cpu = run_python(code, env=plugin_env(JAX_PLATFORMS="cpu"))
  assert pjrtkit == cpu
  assert "/jax/compilation_cache/cache_hits" not in pjrtkit
  assert "/jax/compilation_cache/cache_misses" not in pjrtkit


def test_serialized_executable_deserializes_to_the_same_results():
  got = run_python("""
      import json, numpy as np, jax, jax.numpy as jnp
      from jax.experimental import serialize_executable as se
      from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
      mesh = Mesh(np.array(jax.devices()), ('i',))
      s = NamedSharding(mesh, P('i'))
      x = jax.device_put(jnp.arange(32.0).reshape(8, 4), s)
      f = jax.jit(lambda a: (jnp.cos(a) @ a.T, a.sum(0)), out_shardings=(s, None))
      compiled = f.lower(x).compile()
      payload, in_tree, out_tree = se.serialize(compiled)
      loaded = se.deserialize_and_load(payload, in_tree, out_tree)
      a1, b1 = compiled(x)
      a2, b2 = loaded(x)
      print(json.dumps({
          "payload_bytes": len(payload) > 0,
          "same": [np.asarray(a1).tobytes() == np.asarray(a2).tobytes(),
                   np.asarray(b1).tobytes() == np.asarray(b2).tobytes()],
          "sum": np.asarray(b2).tolist(),
          "devices": sorted(d.id for d in a2.sharding.device_set),
          "platform": loaded.runtime_executable().client.platform,
      }))
  """, env=plugin_env(**_ENV))
  assert got["payload_bytes"] is True
  assert got["same"] == [True, True]
  assert got["sum"] == [112.0, 120.0, 128.0, 136.0]
  assert got["devices"] == [0, 1, 2, 3]
  assert got["platform"] == "pjrtkit"


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
