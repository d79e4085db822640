"""Ahead-of-time compilation for a pjrtkit topology, through JAX (jax 0.11.2 .. 0.12.x).

The JAX paths that reach ``PJRT_Compile``, each checked end to end in a fresh interpreter:

* ``jax.experimental.topologies.get_topology_desc(platform="pjrtkit", ...)``, then
  ``jax.jit(f).trace(...).lower().compile()`` on its compile-only devices (jaxlib's
  ``CompileOnlyPyClient``: ``PJRT_Compile`` without a client), then
  ``jax.experimental.serialize_executable`` round trip onto the pjrtkit backend, with results
  bitwise equal to a normal ``jax.jit``; in the same process and across processes (the compile
  in a process without a pjrtkit backend);
* compile-only devices of the client's own topology (``xla_client.get_topology_for_devices``):
  jax 0.12's ``_get_cross_compile_backend`` then compiles through the real pjrtkit client with
  that topology (``PJRT_Compile`` with a client); jax 0.11.2 keeps the compile-only client (its
  platform version carries a "PJRT C API" prefix, so the versions never match);
* ``Client.compile(module, topology=...)`` directly.

A client of another device count refuses the bytes with a clear error, and host callbacks are
refused at lowering with a clear error (JAX's compile-only client cannot take pjrtkit's).
"""

from __future__ import annotations

import os
import sys
import tempfile

import pytest

from tests.testing.plugin_env import plugin_env, run_python

# Compiles f (x * 2 + 1 over 8 elements sharded over every device) and, when CHOL, a Cholesky
# (LAPACK through FFI) for a topology; `TOPOLOGY` is the get_topology_desc call. A Cholesky
# compile failing is reported, not raised.
_COMPILE = """
import json, pickle, sys
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental import serialize_executable as se
from jax.experimental import topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding
topology = {TOPOLOGY}
mesh = Mesh(np.array(topology.devices), ("x",))
sharded = NamedSharding(mesh, P("x"))
f = jax.jit(lambda x: x * 2 + 1, in_shardings=sharded, out_shardings=sharded)
compiled = f.trace(jax.ShapeDtypeStruct((8,), jnp.float32)).lower().compile()
saved = {{"f": se.serialize(compiled)}}
chol_error = None
if {CHOL}:
  one = SingleDeviceSharding(topology.devices[0])
  chol = jax.jit(jnp.linalg.cholesky, in_shardings=one, out_shardings=one)
  try:
    chol_compiled = chol.trace(jax.ShapeDtypeStruct((3, 3), jnp.float32)).lower().compile()
    saved["chol"] = se.serialize(chol_compiled)
  except jax.errors.JaxRuntimeError as e:
    chol_error = str(e)
cost = compiled.cost_analysis()
cost = cost[0] if isinstance(cost, list) else cost
memory = compiled.memory_analysis()
pickle.dump(saved, open(sys.argv[1], "wb"))
print(json.dumps({{
    "client": type(topology.devices[0].client).__name__,
    "devices": len(topology.devices),
    "text": compiled.as_text().split(",")[0],
    "flops": cost["flops"], "bytes": cost["bytes accessed"],
    "argument_bytes": memory.argument_size_in_bytes,
    "output_bytes": memory.output_size_in_bytes,
    "in_spec": list(compiled.input_shardings[0][0].spec),
    "chol_error": chol_error,
}}))
"""

# Loads what _COMPILE wrote onto the pjrtkit backend and runs it next to a normal jax.jit.
_LOAD = """
import json, pickle, sys
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental import serialize_executable as se
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
saved = pickle.load(open(sys.argv[1], "rb"))
devices = jax.devices("pjrtkit")
sharded = NamedSharding(Mesh(np.array(devices), ("x",)), P("x"))
x = jax.device_put(jnp.arange(8, dtype=jnp.float32), sharded)
a = jax.device_put(np.array([[4, 2, 0], [2, 5, 1], [0, 1, 3]], np.float32), devices[0])
out = {{}}
try:
  f = se.deserialize_and_load(*saved["f"], backend="pjrtkit")
  chol = None
  if "chol" in saved:  # A single-device executable: load it on one device.
    chol = se.deserialize_and_load(*saved["chol"], backend="pjrtkit",
                                   execution_devices=devices[:1])
except jax.errors.JaxRuntimeError as e:
  print(json.dumps({{"error": str(e)}}))
  sys.exit(0)
y = f(x)
normal = jax.jit(lambda x: x * 2 + 1, in_shardings=sharded, out_shardings=sharded)(x)
c = chol(a) if chol is not None else None
c_normal = jax.jit(jnp.linalg.cholesky)(a)
print(json.dumps({{
    "y": np.asarray(y).tolist(),
    "y_equals_normal": bool(np.array_equal(np.asarray(y), np.asarray(normal))),
    "y_spec": list(y.sharding.spec),
    "y_devices": sorted(d.id for d in y.devices()),
    "y_platform": list(y.devices())[0].platform,
    "chol": None if c is None else np.asarray(c).tolist(),
    "chol_equals_normal": c is not None and bool(np.array_equal(np.asarray(c),
                                                                np.asarray(c_normal))),
}}))
"""

_F_OF_ARANGE = [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0]


def _script(code: str, argv: list[str], **env: str):
  """Runs `code` as a script with `argv` in a fresh interpreter with `env` added."""
  with tempfile.TemporaryDirectory(prefix="aot_test_") as tmp:
    path = os.path.join(tmp, "s.py")
    with open(path, "w") as f:
      f.write(code)
    return run_python(f"import runpy, sys\nsys.argv = {[path] + argv!r}\n"
                      f"runpy.run_path({path!r}, run_name='__main__')", env=plugin_env(**env))


# A program with a custom call compiles only once its FFI handlers are registered with XLA:CPU,
# which pjrtkit does for live pjrtkit clients: a process without a pjrtkit backend cannot compile
# one for a topology (README, "Ahead-of-time compilation").
_NO_FFI_HANDLER = ("NOT_FOUND: XLA:CPU PJRT_Client_Compile: No FFI handler registered for "
                   "lapack_spotrf_ffi on a platform Host (canonical host)")


def _expected_compile(devices: int, chol_error: str | None = None) -> dict:
  per_device = 8 // devices  # f32 elements of each shard.
  return {"client": "CompileOnlyPyClient", "devices": devices, "text": "HloModule jit__lambda",
          "flops": 2.0 * per_device, "bytes": 8.0 * per_device,
          "argument_bytes": 4 * per_device, "output_bytes": 4 * per_device,
          "in_spec": ["x"], "chol_error": chol_error}


def _expected_load(devices: int, chol: bool = True) -> dict:
  # Cholesky of [[4,2,0],[2,5,1],[0,1,3]]: L = [[2,0,0],[1,2,0],[0,0.5,sqrt(2.75)]] in float32.
  return {"y": _F_OF_ARANGE, "y_equals_normal": True, "y_spec": ["x"],
          "y_devices": list(range(devices)), "y_platform": "pjrtkit",
          "chol": ([[2.0, 0.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.5, 1.658312439918518]]
                   if chol else None),
          "chol_equals_normal": chol}


def test_compile_for_a_topology_serialize_load_and_run_in_one_process(tmp_path):
  saved = str(tmp_path / "compiled.pkl")
  code = _COMPILE.format(TOPOLOGY='topologies.get_topology_desc(platform="pjrtkit")',
                        CHOL=True)
  got = _script(code + "\n" + _LOAD.format(), [saved], JAX_PLATFORMS="pjrtkit,cpu")
  assert got == _expected_load(4)


def test_compiled_without_a_pjrtkit_backend_loads_in_another_process(tmp_path):
  # The compile process has no pjrtkit client: the topology compiles through its own XLA:CPU
  # client, from the xla_cpu_plugin_path pjrtkit's topology factory passes.
  saved = str(tmp_path / "compiled.pkl")
  code = _COMPILE.format(
      TOPOLOGY='topologies.get_topology_desc(platform="pjrtkit", device_count=2)', CHOL=True)
  got = _script(code, [saved], JAX_PLATFORMS="cpu")
  assert got == _expected_compile(2, chol_error=_NO_FFI_HANDLER)
  got = _script(_LOAD.format(), [saved], JAX_PLATFORMS="pjrtkit,cpu",
                JAX_PJRT_CLIENT_CREATE_OPTIONS="device_count:2")
  assert got == _expected_load(2, chol=False)


def test_a_client_of_another_device_count_refuses_the_executable(tmp_path):
  saved = str(tmp_path / "compiled.pkl")
  code = _COMPILE.format(
      TOPOLOGY='topologies.get_topology_desc(platform="pjrtkit", device_count=2)', CHOL=False)
  assert _script(code, [saved], JAX_PLATFORMS="pjrtkit,cpu") == _expected_compile(2)
  got = _script(_LOAD.format(), [saved], JAX_PLATFORMS="pjrtkit,cpu")  # 4 devices.
  assert got == {"error": (
      "INVALID_ARGUMENT: DeserializeAndLoad: the executable was compiled for a pjrtkit "
      "topology of 2 devices, but this client has 4 (create the client with device_count=2 to "
      "load it)")}


def test_compile_only_devices_of_the_clients_topology():
  got = _script("""
import json
import numpy as np
import jax, jax.numpy as jnp
from jax._src import compiler
from jax._src.lib import xla_client as xc
from jax.experimental import serialize_executable as se
from jax.experimental import topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
devices = jax.devices("pjrtkit")
topology = topologies.TopologyDescription(
    xc.get_topology_for_devices(devices)._make_compile_only_devices())
client = topology.devices[0].client
cross = compiler._get_cross_compile_backend(client) is not None
s = NamedSharding(Mesh(np.array(topology.devices), ("x",)), P("x"))
compiled = jax.jit(lambda x: x * 3, in_shardings=s, out_shardings=s).trace(
    jax.ShapeDtypeStruct((8,), jnp.float32)).lower().compile()
loaded = se.deserialize_and_load(*se.serialize(compiled), backend="pjrtkit")
real = NamedSharding(Mesh(np.array(devices), ("x",)), P("x"))
y = loaded(jax.device_put(jnp.arange(8, dtype=jnp.float32), real))
print(json.dumps({"jax": jax.__version__, "cross": cross, "y": np.asarray(y).tolist()}))
""", [], JAX_PLATFORMS="pjrtkit,cpu")
  # jax 0.12 compiles through the real pjrtkit client (PJRT_Compile with a client); 0.11.2's
  # compile-only client reports "PJRT C API\n<version>", which never equals the client's.
  assert got["cross"] == (not got["jax"].startswith("0.11.")), got
  assert got["y"] == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0]


def test_client_compile_with_a_topology():
  got = _script("""
import json
import numpy as np
import jax, jax.numpy as jnp
from jax._src.lib import xla_client as xc
devices = jax.devices("pjrtkit")
client = devices[0].client
module = jax.jit(lambda x: x + 1).lower(jnp.ones((4,), jnp.float32)).compiler_ir("stablehlo")
executable = client.compile(module, topology=xc.get_topology_for_devices(devices),
                            compile_options=xc.CompileOptions())
loaded = client.deserialize_executable(executable.serialize(),
                                       executable_devices=xc.DeviceList((devices[0],)))
x = jax.device_put(jnp.arange(4, dtype=jnp.float32), devices[0])
y = loaded.execute_sharded([x]).disassemble_into_single_device_arrays()[0][0]
cost = executable.cost_analysis()
print(json.dumps({"type": type(executable).__name__, "y": np.asarray(y).tolist(),
                  "flops": cost["flops"],
                  "output_bytes": executable.get_compiled_memory_stats().output_size_in_bytes}))
""", [], JAX_PLATFORMS="pjrtkit,cpu")
  assert got == {"type": "Executable", "y": [1.0, 2.0, 3.0, 4.0], "flops": 4.0,
                 "output_bytes": 16}


_SINGLE_DEVICE_LOAD = """
import json
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental import serialize_executable as se
from jax.sharding import SingleDeviceSharding
backend = "{backend}"
devices = jax.devices(backend)
one = SingleDeviceSharding(devices[0])
f = jax.jit(lambda x: x * 2 + 1, in_shardings=one, out_shardings=one)
saved = se.serialize(f.trace(jax.ShapeDtypeStruct((3,), jnp.float32)).lower().compile())
x = jax.device_put(np.arange(3, dtype=np.float32), devices[0])
out = {{}}
for name, kwargs in (("all_devices", {{}}), ("one_device", {{"execution_devices": devices[:1]}})):
  loaded = se.deserialize_and_load(*saved, backend=backend, **kwargs)
  try:
    out[name] = np.asarray(loaded(x)).tolist()
  except jax.errors.JaxRuntimeError as e:
    out[name] = str(e)
print(json.dumps(out))
"""


def test_a_single_device_executable_loads_like_on_jaxlibs_cpu():
  # deserialize_and_load without execution_devices hands the loader every device of the backend,
  # so a single-device executable is loaded on 4 and refuses one argument shard: JAX's choice,
  # the same on jaxlib's cpu with 4 devices. Loaded on one device, it runs on both.
  refusal = ("INVALID_ARGUMENT: Expected args to execute_sharded_on_local_devices to have 4 "
             "shards, got: [1]")
  want = {"all_devices": refusal, "one_device": [1.0, 3.0, 5.0]}
  assert _script(_SINGLE_DEVICE_LOAD.format(backend="pjrtkit"), [],
                 JAX_PLATFORMS="pjrtkit,cpu") == want
  assert _script(_SINGLE_DEVICE_LOAD.format(backend="cpu"), [], JAX_PLATFORMS="cpu",
                 XLA_FLAGS="--xla_force_host_platform_device_count=4") == want


def test_host_callbacks_are_refused_with_a_clear_error():
  got = _script("""
import json
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental import topologies
from jax.sharding import SingleDeviceSharding
from jax_plugins.pjrtkit import _topology
topology = topologies.get_topology_desc(platform="pjrtkit", device_count=1)
s = SingleDeviceSharding(topology.devices[0])
def f(x):
  return jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct((3,), jnp.float32), x)
try:
  jax.jit(f, in_shardings=s, out_shardings=s).trace(
      jax.ShapeDtypeStruct((3,), jnp.float32)).lower().compile()
  print(json.dumps({"error": None}))
except NotImplementedError as e:
  print(json.dumps({"error": str(e), "expected": _topology.HOST_CALLBACK_AOT_ERROR}))
""", [], JAX_PLATFORMS="pjrtkit,cpu")
  assert got["error"] == got["expected"]
  assert got["error"].startswith("pjrtkit: host callbacks (jax.pure_callback, ")


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
