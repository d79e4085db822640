"""Host callbacks and FFI handlers on pjrtkit's sim device (its own compiler and runtime): typed
FFI custom calls run the handlers registered for platform ``pjrtkit``, inside jit, scan, cond and
loops, with the values and call order of jaxlib's ``cpu`` backend.

Every case runs in fresh interpreters: the sim device (``JAX_PLATFORMS=pjrtkit,cpu``: JAX's
callbacks hand the Python function cpu arrays) and jaxlib's cpu backend alone, then compares.
"""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_PROGRAMS = """
import ctypes, json
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental import io_callback
from jax_plugins.pjrtkit import _xla_ffi as X

platform = jax.devices()[0].platform
order = []

# A typed FFI handler written against the XLA FFI C ABI (ctypes): out = in + 1 on f32.
@X.HANDLER
def add_one(frame_pointer):
  frame = frame_pointer.contents
  if X.fill_metadata(frame):
    return None
  src = X.Buffer.from_address(frame.args.args[0])
  dst = X.Buffer.from_address(frame.rets.rets[0])
  n = int(np.prod([src.dims[i] for i in range(src.rank)]))
  a = np.ctypeslib.as_array((ctypes.c_float * n).from_address(src.data))
  b = np.ctypeslib.as_array((ctypes.c_float * n).from_address(dst.data))
  b[:] = a + 1
  order.append(("ffi", n))
  return None

jax.ffi.register_ffi_target("pjrtkit_test_add_one",
                            jax.ffi.pycapsule(ctypes.cast(add_one, ctypes.c_void_p).value),
                            platform=platform)

def add_one_ffi(v):
  return jax.ffi.ffi_call("pjrtkit_test_add_one", jax.ShapeDtypeStruct(v.shape, v.dtype))(v)

def host_sin(a):
  order.append(("sin", a.tolist()))
  return np.sin(a)

def f(x):
  def body(c, xi):
    y = jax.pure_callback(host_sin, jax.ShapeDtypeStruct(xi.shape, xi.dtype), xi)
    jax.debug.callback(lambda c: order.append(("step", int(c))), c)
    return c + 1, add_one_ffi(y * 2)
  c, ys = jax.lax.scan(body, 0, x)
  z = jax.lax.cond(ys.sum() > 0,
                   lambda v: io_callback(lambda a: (order.append(("io", a.shape)), a + 1)[1],
                                         jax.ShapeDtypeStruct(v.shape, v.dtype), v),
                   add_one_ffi, ys)
  w = jax.lax.fori_loop(0, 3, lambda i, v: jax.pure_callback(
      lambda a, i: a + i, jax.ShapeDtypeStruct(v.shape, v.dtype), v, i), z)
  return c, w

c, w = jax.jit(f)(jnp.arange(6.0, dtype=jnp.float32).reshape(3, 2))
vm = jax.jit(jax.vmap(lambda v: jax.pure_callback(
    lambda a: a * 10, jax.ShapeDtypeStruct(v.shape, v.dtype), v, vmap_method="sequential")))(
        jnp.arange(4.0))
out = {"platform": platform, "c": int(c), "w": np.asarray(w).tolist(),
       "vmap": np.asarray(vm).tolist(),
       "order": [[k, v if not isinstance(v, tuple) else list(v)] for k, v in order]}

def boom(a):
  raise ValueError("boom in callback")
try:
  jax.jit(lambda v: jax.pure_callback(boom, jax.ShapeDtypeStruct(v.shape, v.dtype), v))(
      jnp.ones(2)).block_until_ready()
except Exception as e:
  out["error"] = str(e).splitlines()[0]
out["after_error"] = np.asarray(jax.jit(lambda v: add_one_ffi(v * 3))(jnp.ones(2))).tolist()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results():
  sim = run_python(_PROGRAMS, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu", PJRTKIT_DEVICE="sim"))
  cpu = run_python(_PROGRAMS, env=plugin_env(JAX_PLATFORMS="cpu"))
  return sim, cpu


def test_callbacks_and_ffi_handlers_match_jaxlib_cpu(results):
  sim, cpu = results
  assert (sim["platform"], cpu["platform"]) == ("pjrtkit", "cpu")
  for key in ("c", "w", "vmap", "after_error"):
    assert sim[key] == cpu[key], key
  assert sim["c"] == 3
  assert sim["vmap"] == [0.0, 10.0, 20.0, 30.0]
  assert sim["after_error"] == [4.0, 4.0]
  # The same calls with the same arguments. Calls that depend on each other's data keep their
  # order (per row: sin, then the handler on its result; then the branch's io_callback); the
  # debug callback depends on neither, so the compilers may place it anywhere in its iteration.
  assert sorted(map(str, sim["order"])) == sorted(map(str, cpu["order"]))
  for got in (sim, cpu):
    assert [k for k, _ in got["order"] if k != "step"] == ["sin", "ffi"] * 3 + ["io"]
    assert [v for k, v in got["order"] if k == "step"] == [0, 1, 2]
  assert [v for k, v in sim["order"] if k == "sin"] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


def test_a_failing_callback_fails_its_execution_only(results):
  sim, _ = results
  assert sim["error"].startswith("INTERNAL: custom call @xla_ffi_python_cpu_callback: pjrtkit "
                                 "host callback failed: ValueError('boom in callback')"), sim["error"]


_ORDERED = """
import json, jax, jax.numpy as jnp, numpy as np
out = {}
try:
  jax.jit(lambda v: (jax.debug.print("{v}", v=v, ordered=True), v)[1])(jnp.ones(2))
except Exception as e:
  out["ordered"] = str(e).splitlines()[0]
try:
  jax.jit(lambda v: jax.ffi.ffi_call("no_such_target", jax.ShapeDtypeStruct(v.shape, v.dtype))(v))(jnp.ones(2))
except Exception as e:
  out["missing"] = str(e).splitlines()[0]
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()), ("i",))
x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P()))
double = lambda v: jax.pure_callback(lambda a: a * 2, jax.ShapeDtypeStruct(v.shape, v.dtype), v)
try:
  jax.jit(double, out_shardings=NamedSharding(mesh, P()))(x)
except Exception as e:
  out["placed_on_one_device"] = str(e).splitlines()[0]
shard_map = getattr(jax, "shard_map", None)
if shard_map is None:
  from jax.experimental.shard_map import shard_map
f = shard_map(double, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
out["in_shard_map"] = np.asarray(jax.jit(f)(jax.device_put(jnp.arange(8.0),
                                                           NamedSharding(mesh, P("i"))))).tolist()
print(json.dumps(out))
"""


def test_ordered_effects_and_unregistered_targets_are_refused_by_name():
  got = run_python(_ORDERED, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu", PJRTKIT_DEVICE="sim"))
  assert got["ordered"] == ("UNIMPLEMENTED: func.func @main: a token value (ordered effects such "
                            "as io_callback) is not supported by the sim device"), got["ordered"]
  assert got["missing"].startswith("NOT_FOUND: No FFI handler registered for custom call "
                                   "@no_such_target on platform pjrtkit"), got["missing"]
  # On 4 devices: a callback JAX places on one device is refused by name (every device would
  # run it); inside shard_map each device calls it on its shard.
  assert got["placed_on_one_device"].startswith(
      "UNIMPLEMENTED: stablehlo.custom_call at "), got["placed_on_one_device"]
  assert ("custom_call @xla_ffi_python_cpu_callback placed on one device of a program over 4 "
          "devices" in got["placed_on_one_device"])
  assert got["in_shard_map"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
