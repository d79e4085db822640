"""JAX on pjrtkit's sim device: its own StableHLO compiler, memory, queues and kernels.

Every case runs in a fresh interpreter (the device is chosen per process) against the Bazel-built
plugin from this test's runfiles, with ``PJRTKIT_DEVICE=sim``.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.testing.plugin_env import plugin_env, run_python


def sim_env(**extra: str) -> dict[str, str]:
  return plugin_env(JAX_PLATFORMS="pjrtkit", PJRTKIT_DEVICE="sim", **extra)


_SEED = """
import json
import jax, jax.numpy as jnp
devs = jax.devices()
out = jax.pmap(lambda x: x + jax.lax.psum(x, 'i'), axis_name='i')(jnp.arange(jax.device_count()))
maps = open('/proc/self/maps').read()
print(json.dumps({
    "platform": devs[0].platform,
    "kinds": sorted({d.device_kind for d in devs}),
    "ids": [d.id for d in devs],
    "add": int(jnp.add(1, 1)),
    "jit": float(jax.jit(lambda x: x * 2)(1.)),
    "pmap": out.tolist(),
    "inner_plugins": [name for name in ("xla_cpu_pjrt.so", "xla_cuda_plugin.so") if name in maps],
    "stablehlo_library": "libTorchMLIRAggregateCAPI.so" in maps,
}))
"""


def test_seed_runs_on_four_sim_devices_without_an_inner_plugin():
  got = run_python(_SEED, env=sim_env())
  assert got["platform"] == "pjrtkit"
  assert got["kinds"] == ["pjrtkit_sim"]
  assert got["ids"] == [0, 1, 2, 3]
  assert got["add"] == 2
  assert got["jit"] == 2.0
  assert got["pmap"] == [6, 7, 8, 9]
  assert got["inner_plugins"] == []
  assert got["stablehlo_library"]


def test_seed_on_one_sim_device():
  code = ("import jax\njax.config.update('jax_pjrt_client_create_options', "
          "{'device': 'sim', 'device_count': 1})\n" + _SEED)
  got = run_python(code, env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  assert got["ids"] == [0]
  assert got["pmap"] == [0]
  assert got["inner_plugins"] == []


_MLP = """
import json
import jax, jax.numpy as jnp, numpy as np

def init(key):
  k1, k2 = jax.random.split(key)
  return {"w1": jax.random.normal(k1, (8, 16)) * 0.3, "b1": jnp.zeros(16),
          "w2": jax.random.normal(k2, (16, 3)) * 0.3, "b2": jnp.zeros(3)}

def loss(p, x, y):
  h = jnp.tanh(x @ p["w1"] + p["b1"])
  logits = h @ p["w2"] + p["b2"]
  return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 3), -1))

@jax.jit
def step(p, x, y):
  l, g = jax.value_and_grad(loss)(p, x, y)
  return jax.tree.map(lambda a, b: a - 0.1 * b, p, g), l

rng = np.random.default_rng(0)
x = rng.normal(size=(64, 8)).astype(np.float32)
y = rng.integers(0, 3, 64)
p = init(jax.random.key(0))
losses = []
for _ in range(30):
  p, l = step(p, x, y)
  losses.append(float(l))
print(json.dumps({"platform": jax.devices()[0].platform, "losses": losses,
                  "params": {k: np.asarray(v).ravel().tolist() for k, v in p.items()}}))
"""


def test_mlp_trained_30_steps_matches_jaxlib_cpu():
  sim = run_python(_MLP, env=sim_env())
  cpu = run_python(_MLP, env=plugin_env(JAX_PLATFORMS="cpu"))
  assert sim["platform"] == "pjrtkit" and cpu["platform"] == "cpu"
  assert sim["losses"][-1] < sim["losses"][0]
  # f32 sums in another order: a few ulps per step, after 30 steps well under 1e-5.
  assert sim["losses"] == pytest.approx(cpu["losses"], rel=1e-5, abs=1e-6)
  for name in cpu["params"]:
    assert sim["params"][name] == pytest.approx(cpu["params"][name], rel=1e-4, abs=1e-5), name


_ERRORS = """
import json
import jax, jax.numpy as jnp, numpy as np
out = {}
try:
  jax.jit(jnp.fft.fft)(jnp.ones(8, jnp.complex64)).block_until_ready()
except Exception as e:
  out["fft"] = str(e).splitlines()[0]
dev = jax.devices()[0]
start = dev.memory_stats()["bytes_in_use"]
try:
  jax.device_put(np.zeros((64, 1024, 1024), np.float32), dev).block_until_ready()  # 256 MiB
except Exception as e:
  out["oversize"] = str(e).splitlines()[0]
x = jax.device_put(np.arange(1024, dtype=np.float32), dev)
x.block_until_ready()  # The host-to-device copy holds the memory until it completes.
out["during"] = dev.memory_stats()["bytes_in_use"] - start
x.delete()
out["after"] = dev.memory_stats()["bytes_in_use"] - start
# Ready means the device's work let go of the memory: awaited then deleted, inputs and results of
# jit give theirs back at once, every time.
inc = jax.jit(lambda v: v + 1)
inc(jnp.ones(1024)).block_until_ready()  # Compiled; its results deleted with it.
out["held"] = 0
for _ in range(100):
  a = jax.device_put(np.ones(1024, np.float32), dev)
  b = inc(a)
  b.block_until_ready()
  a.delete()
  b.delete()
  out["held"] += dev.memory_stats()["bytes_in_use"] != start
out["still_works"] = float(jax.jit(lambda v: (v * 2).sum())(jnp.ones(4)))
print(json.dumps(out))
"""


def test_refusals_name_the_op_and_the_process_keeps_working():
  code = ("import jax\njax.config.update('jax_pjrt_client_create_options', "
          "{'device': 'sim', 'memory_mib': 64})\n" + _ERRORS)
  got = run_python(code, env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  assert "stablehlo.fft" in got["fft"] and "sim device" in got["fft"], got["fft"]
  assert "RESOURCE_EXHAUSTED" in got["oversize"] and "out of memory" in got["oversize"]
  assert got["during"] == 4096
  assert got["after"] == 0
  assert got["held"] == 0
  assert got["still_works"] == 8.0


_COPY_SEMANTICS = """
import json
import jax, numpy as np
host = np.arange(6, dtype=np.float32)
on_device = jax.device_put(host)
host[:] = -1  # The device holds its own copy.
print(json.dumps({"values": np.asarray(on_device).tolist()}))
"""


def test_device_put_copies_host_data():
  assert run_python(_COPY_SEMANTICS, env=sim_env())["values"] == [0, 1, 2, 3, 4, 5]


_SHARD_MAP = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("d",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("d")))
psum = jax.jit(jax.shard_map(lambda a: jax.lax.psum(a, "d"), mesh=mesh, in_specs=P("d"),
                             out_specs=P()))(x)
gathered = jax.jit(jax.shard_map(lambda a: jax.lax.all_gather(a, "d", tiled=True), mesh=mesh,
                                 in_specs=P("d"), out_specs=P(), check_vma=False))(x)
doubled = jax.jit(jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("d"),
                                out_specs=P("d")))(x)
# Results sharded over a 2x2 mesh, the tensor's dimensions on the mesh axes in reverse order: the
# device reports each result's sharding (tile k on which device) and JAX assembles it from that.
mesh2 = Mesh(np.array(jax.devices()).reshape(2, 2), ("a", "b"))
y = jax.device_put(jnp.arange(16.0).reshape(4, 4), NamedSharding(mesh2, P("b", "a")))
tagged = jax.jit(jax.shard_map(
    lambda v: v + jax.lax.axis_index("a") * 100 + jax.lax.axis_index("b") * 10,
    mesh=mesh2, in_specs=P("b", "a"), out_specs=P("b", "a")))(y)
out = {"psum": np.asarray(psum).tolist(), "gathered": np.asarray(gathered).tolist(),
       "doubled": np.asarray(doubled).tolist(), "doubled_spec": list(doubled.sharding.spec),
       "tagged": np.asarray(tagged).tolist(), "tagged_spec": list(tagged.sharding.spec),
       "tagged_shards": sorted([s.device.id, s.index[0].start, s.index[1].start]
                               for s in tagged.addressable_shards)}
# Outside shard_map the compiler partitions: a sum over the pieces, and a shard_map's result read
# by an op outside it.
out["automatic"] = float(jax.jit(lambda a: jnp.sum(a * 2))(x))
out["after_shard_map"] = float(jax.jit(lambda a: jnp.sum(jax.shard_map(
    lambda v: v * 2, mesh=mesh, in_specs=P("d"), out_specs=P("d"))(a)))(x))
print(json.dumps(out))
"""


def test_shard_map_collectives_and_automatic_partitioning():
  got = run_python(_SHARD_MAP, env=sim_env())
  assert got["psum"] == [12.0, 16.0]
  assert got["gathered"] == [float(i) for i in range(8)]
  assert got["doubled"] == [2.0 * i for i in range(8)]
  assert got["doubled_spec"] == ["d"]
  # Device (a, b) = 2a + b holds rows 2b.., columns 2a.. and adds 100a + 10b to them.
  expected = np.arange(16.0).reshape(4, 4)
  for a in range(2):
    for b in range(2):
      expected[2 * b:2 * b + 2, 2 * a:2 * a + 2] += 100 * a + 10 * b
  assert got["tagged"] == expected.tolist()
  assert got["tagged_spec"] == ["b", "a"]
  assert got["tagged_shards"] == [[0, 0, 0], [1, 2, 0], [2, 0, 2], [3, 2, 2]]
  assert got["automatic"] == 56.0
  assert got["after_shard_map"] == 56.0


_RESHARDING = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"))
y = jax.device_put(jnp.arange(16.0).reshape(4, 4), NamedSharding(mesh, P("a", "b")))
tag = lambda v: v + jax.lax.axis_index("a") * 100 + jax.lax.axis_index("b") * 10
shards = lambda r: sorted([s.device.id, s.index[0].start, s.index[1].start]
                          for s in r.addressable_shards)
out = {}
# The argument is cut (a, b); shard_map wants (b, a): the pieces move before the body runs.
r = jax.jit(jax.shard_map(tag, mesh=mesh, in_specs=P("b", "a"), out_specs=P("b", "a")))(y)
out["argument"] = [np.asarray(r).tolist(), list(r.sharding.spec), shards(r)]
# The body returns (b, a); the caller asks for (a, b): the pieces move after it.
r = jax.jit(jax.shard_map(tag, mesh=mesh, in_specs=P("a", "b"), out_specs=P("b", "a")),
            out_shardings=NamedSharding(mesh, P("a", "b")))(y)
out["result"] = [np.asarray(r).tolist(), list(r.sharding.spec), shards(r)]
# A shard_map over one axis of two: pieces cut by "a" only, "b" left to the compiler.
g = jax.shard_map(lambda v: jax.lax.psum(v, "a"), mesh=mesh, in_specs=P("a", None),
                  out_specs=P(None, None), axis_names={"a"})
r = jax.jit(lambda v: g(v * 2) + 1)(y)
out["partial"] = [np.asarray(r).tolist(), [str(p) for p in r.sharding.spec]]
print(json.dumps(out))
"""


def test_shard_map_boundaries_with_other_shardings_move_the_pieces():
  # What jaxlib's cpu client computes and reports for the same programs, shard placements too.
  got = run_python(_RESHARDING, env=sim_env())
  cpu = run_python(_RESHARDING, env=plugin_env(
      JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=4"))
  assert got == cpu
  assert got["argument"][2] == [[0, 0, 0], [1, 2, 0], [2, 0, 2], [3, 2, 2]]


_SERIALIZE = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax import export
from jax.experimental import serialize_executable

f = lambda a: jnp.tanh(a) @ a.T
x = jnp.arange(6.0).reshape(2, 3)
compiled = jax.jit(f).lower(x).compile()
payload, in_tree, out_tree = serialize_executable.serialize(compiled)
# As with jaxlib's cpu client, the executable loads onto the devices it is given (default: all).
one = jax.devices()[:1]
loaded = serialize_executable.deserialize_and_load(payload, in_tree, out_tree,
                                                  execution_devices=one)
out = {"loaded": np.asarray(loaded(x)).tolist(), "direct": np.asarray(jax.jit(f)(x)).tolist()}
corrupt = bytearray(payload)
corrupt[len(corrupt) // 2] ^= 0xFF
try:
  serialize_executable.deserialize_and_load(bytes(corrupt), in_tree, out_tree,
                                         execution_devices=one)(x)
except Exception as e:
  out["corrupt"] = str(e).splitlines()[0]
exported = export.deserialize(export.export(jax.jit(f))(x).serialize())
out["exported"] = np.asarray(exported.call(x)).tolist()
cost = compiled.cost_analysis()
out["flops"] = float((cost[0] if isinstance(cost, list) else cost)["flops"])
print(json.dumps(out))
"""


def test_executables_serialize_and_export_round_trips():
  got = run_python(_SERIALIZE, env=sim_env())
  assert got["loaded"] == got["direct"]
  np.testing.assert_allclose(got["exported"], got["direct"], rtol=1e-6)
  assert got["flops"] > 0
  assert "corrupt" in got, got
  assert ("corrupted" in got["corrupt"] or "not a serialized sim executable" in got["corrupt"]
          or "malformed" in got["corrupt"]), got["corrupt"]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-v"]))
