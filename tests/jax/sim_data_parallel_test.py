"""Automatic SPMD partitioning on pjrtkit's sim device, against jaxlib's cpu client with 4 devices.

`jax.jit` over arrays placed with NamedSharding: Shardy's propagation (run by the Python side)
annotates every op, and the sim compiler (xla_plugin/devices/sim/compiler/partitioner.h) runs each
op on the pieces the devices hold, with the collectives that make them add up. Each case runs the
same script in a fresh interpreter on both backends and compares values, result shardings and
which device holds which piece; the cost analysis shows that each device does a quarter of the
work.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.testing.plugin_env import plugin_env, run_python


def on_sim(code: str) -> dict:
  return run_python(code, env=plugin_env(JAX_PLATFORMS="pjrtkit", PJRTKIT_DEVICE="sim"))


def on_cpu(code: str) -> dict:
  return run_python(code, env=plugin_env(
      JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=4"))


# The MLP of the own-runtime issue: 784-1024-1024-10, batch 256, f32, the batch cut over 4 devices
# and the weights replicated; three SGD steps.
_TRAIN = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:4]), ("batch",))
sizes = [784, 1024, 1024, 10]

def init(key):
  keys = jax.random.split(key, 3)
  return [(jax.random.normal(k, (a, b)) / np.sqrt(a), jnp.zeros(b))
          for k, a, b in zip(keys, sizes[:-1], sizes[1:])]

def loss(params, x, y):
  h = x
  for w, b in params[:-1]:
    h = jax.nn.relu(h @ w + b)
  w, b = params[-1]
  return -jnp.mean(jnp.sum(jax.nn.log_softmax(h @ w + b) * jax.nn.one_hot(y, 10), -1))

@jax.jit
def step(params, x, y):
  l, g = jax.value_and_grad(loss)(params, x, y)
  return jax.tree.map(lambda a, b: a - 0.05 * b, params, g), l

rng = np.random.default_rng(0)
x = jax.device_put(rng.normal(size=(256, 784)).astype(np.float32), NamedSharding(mesh, P("batch")))
y = jax.device_put(rng.integers(0, 10, 256), NamedSharding(mesh, P("batch")))
params = jax.device_put(init(jax.random.key(0)), NamedSharding(mesh, P()))
cost = step.lower(params, x, y).compile().cost_analysis()
cost = cost[0] if isinstance(cost, list) else cost
losses = []
for _ in range(3):
  params, l = step(params, x, y)
  losses.append(float(l))
print(json.dumps({
    "losses": losses,
    "params": [np.asarray(a).ravel()[::97].tolist() for a in jax.tree.leaves(params)],
    "specs": sorted({str(a.sharding.spec) for a in jax.tree.leaves(params)}),
    "flops": float(cost["flops"]),
}))
"""


def test_data_parallel_mlp_trains_to_jaxlib_cpu_values_on_a_quarter_of_the_work():
  sim, cpu = on_sim(_TRAIN), on_cpu(_TRAIN)
  assert sim["losses"][-1] < sim["losses"][0]
  # f32 sums over the pieces in another order: a few ulps per step.
  assert sim["losses"] == pytest.approx(cpu["losses"], rel=1e-5)
  for got, want in zip(sim["params"], cpu["params"]):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
  assert sim["specs"] == cpu["specs"] == ["P()"]
  # Each device's program does a quarter of the matmuls: the flops of one device's program are
  # XLA's SPMD partitioner's (within 1 %) and about a quarter of the whole step's.
  whole = 3 * 2 * 256 * (784 * 1024 + 1024 * 1024 + 1024 * 10)
  assert sim["flops"] == pytest.approx(cpu["flops"], rel=0.01)
  assert sim["flops"] < 0.26 * whole


# A 2x2 mesh: the batch cut on "data", the layers' weights on "model" (Megatron's column- then
# row-cut pair), gradients of both; a sharding constraint and asked-for result shardings.
_MESHES = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
grid = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("data", "model"))
line = Mesh(np.array(jax.devices()[:4]), ("d",))
rng = np.random.default_rng(1)
x = rng.normal(size=(8, 6)).astype(np.float32)
w1 = rng.normal(size=(6, 4)).astype(np.float32)
w2 = rng.normal(size=(4, 3)).astype(np.float32)
put = lambda a, mesh, *spec: jax.device_put(a, NamedSharding(mesh, P(*spec)))
shards = lambda r: sorted([s.device.id] + [i.start or 0 for i in s.index]
                          for s in r.addressable_shards)
f = lambda x, w1, w2: jnp.sum(jnp.tanh(jax.nn.relu(x @ w1) @ w2))
value, (g1, g2) = jax.jit(jax.value_and_grad(f, argnums=(1, 2)))(
    put(x, grid, "data", None), put(w1, grid, None, "model"), put(w2, grid, "model", None))
out = {"value": float(value), "g1": np.asarray(g1).ravel().tolist(),
       "g2": np.asarray(g2).ravel().tolist(), "g1_spec": str(g1.sharding.spec),
       "g2_spec": str(g2.sharding.spec)}
v = put(np.arange(8.0, dtype=np.float32), line, "d")
r = jax.jit(lambda a: jax.lax.with_sharding_constraint(
    a.reshape(4, 2) * 3, NamedSharding(line, P(None, None))) + 1,
    out_shardings=NamedSharding(line, P("d")))(v)
out["constrained"] = [np.asarray(r).tolist(), str(r.sharding.spec), shards(r)]
r = jax.jit(lambda a: a.T @ a, out_shardings=NamedSharding(grid, P("data", "model")))(
    put(x, grid, "data", "model"))
out["gram"] = [np.asarray(r).ravel().tolist(), str(r.sharding.spec), shards(r)]
print(json.dumps(out))
"""


def test_two_axis_meshes_constraints_and_result_shardings_as_on_jaxlib_cpu():
  sim, cpu = on_sim(_MESHES), on_cpu(_MESHES)
  assert sim["value"] == pytest.approx(cpu["value"], rel=1e-6)
  np.testing.assert_allclose(sim["g1"], cpu["g1"], rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(sim["g2"], cpu["g2"], rtol=1e-5, atol=1e-6)
  assert (sim["g1_spec"], sim["g2_spec"]) == (cpu["g1_spec"], cpu["g2_spec"])
  assert sim["constrained"] == cpu["constrained"]
  np.testing.assert_allclose(sim["gram"][0], cpu["gram"][0], rtol=1e-5)
  assert sim["gram"][1:] == cpu["gram"][1:]


# Reductions and ops without a partitioning rule over cut arrays: each value exactly as jaxlib's
# cpu computes it (integers) or within float rounding.
_OPS = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:4]), ("d",))
rng = np.random.default_rng(2)
f = jax.device_put(rng.normal(size=(16, 6)).astype(np.float32), NamedSharding(mesh, P("d")))
i = jax.device_put(rng.integers(-50, 50, size=(16, 6)).astype(np.int32),
                   NamedSharding(mesh, P("d")))
cases = {
    "sum0": lambda: jnp.sum(f, 0), "mean1": lambda: jnp.mean(f, 1), "max": lambda: jnp.max(f),
    "min0": lambda: jnp.min(i, 0), "isum": lambda: jnp.sum(i), "prod": lambda: jnp.prod(i[:4] % 3 + 1, 0),
    "argmax0": lambda: jnp.argmax(f, 0), "cumsum0": lambda: jnp.cumsum(i, 0),
    "sort0": lambda: jnp.sort(f, 0), "any": lambda: jnp.any(i > 45),
    "einsum": lambda: jnp.einsum("bi,bj->ij", f, f), "softmax": lambda: jax.nn.softmax(f, 0),
    "take": lambda: f[jnp.array([15, 0, 7])], "concat": lambda: jnp.concatenate([f, f * 2], 0),
}
out = {name: np.asarray(jax.jit(fn)()).tolist() for name, fn in cases.items()}
print(json.dumps(out))
"""


def test_reductions_and_ops_without_a_rule_over_cut_arrays():
  sim, cpu = on_sim(_OPS), on_cpu(_OPS)
  assert sim.keys() == cpu.keys()
  for name in ("min0", "isum", "prod", "argmax0", "cumsum0", "sort0", "any", "take", "concat",
               "max"):
    assert sim[name] == cpu[name], name
  for name in ("sum0", "mean1", "einsum", "softmax"):
    np.testing.assert_allclose(sim[name], cpu[name], rtol=2e-6, atol=1e-6, err_msg=name)


# pmap and shard_map inside loops and branches (JAX's pmap_test issues 1065, 3399 and 7411): the
# pieces of a shard_map in a loop body or a branch are gathered whole again for the code around it.
_NESTED = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:4]), ("d",))
x = np.arange(8.0, dtype=np.float32).reshape(4, 2)
step = jax.pmap(lambda s: s * 2 + jax.lax.psum(s, "i"), axis_name="i")
out = {"loop": np.asarray(jax.jit(lambda s: jax.lax.fori_loop(0, 3, lambda i, c: step(c), s))(x)).tolist()}
out["cond"] = np.asarray(jax.jit(lambda s: jax.lax.cond(
    s[0, 0] < 1, jax.pmap(lambda v: v + 1), jax.pmap(lambda v: v - 1), s))(x)).tolist()
cut = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P("d")))
out["branch_reads_cut"] = np.asarray(jax.jit(lambda a, p: jax.lax.cond(
    p, lambda: jnp.cumsum(a), lambda: a * 0))(cut, True)).tolist()
pts = jnp.ones(4)
out["vmap_of_pmap"] = np.asarray(jax.vmap(
    lambda q: jax.pmap(lambda a, b: b, in_axes=(0, None))(pts, q), in_axes=0)(
        jnp.asarray([[0.0, 0.0], [3.0, 3.0], [2.0, 2.0]]))).tolist()
print(json.dumps(out))
"""


def test_pmap_and_shard_map_inside_loops_and_branches():
  sim, cpu = on_sim(_NESTED), on_cpu(_NESTED)
  assert sim == cpu
  assert sim["branch_reads_cut"] == [0.0, 1.0, 3.0, 6.0, 10.0, 15.0, 21.0, 28.0]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-v"]))
