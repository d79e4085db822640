"""Host callbacks on several pjrtkit devices: pmap, jits over NamedSharding (Shardy on and off,
against jaxlib's cpu backend), shard_map, partitioned debug callbacks (a known limitation),
callbacks computing on the cpu backend inside long sharded programs, and callbacks that dispatch
pjrtkit computations themselves (re-entrancy, threads). The single-device cases are in
host_callbacks_test.py.

Children run with JAX_PLATFORMS=pjrtkit,cpu (JAX's callback implementations place arguments on
the cpu backend, as on GPU/TPU); the default device is pjrtkit, so every jitted function below
runs on pjrtkit. Values are exact: the callbacks compute with numpy on integers or on floats
produced by the same numpy call in the child.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.testing import callback_child

_PRELUDE = callback_child.PRELUDE
_env = callback_child.env
_run = callback_child.run


_MULTI_DEVICE = """
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
shard_map = jax.shard_map
mesh = Mesh(np.array(jax.devices()), ("d",))
x = jax.device_put(jnp.arange(8.0, dtype=jnp.float32), NamedSharding(mesh, P("d")))
"""


def test_callbacks_on_four_devices():
  got = _run(setup=_MULTI_DEVICE, code="""
      # Read back from one device (see _SHARDED).
      one = lambda a: jax.device_put(a, jax.devices()[0]).tolist()
      out = {}
      out["pmap"] = one(jax.pmap(lambda v: jax.pure_callback(
          lambda a: a * 2, jax.ShapeDtypeStruct((), v.dtype), v))(jnp.arange(4.0)))
      out["sharded_pure"] = one(jax.jit(lambda v: jax.pure_callback(
          lambda a: a + 1, jax.ShapeDtypeStruct(v.shape, v.dtype), v))(x))
      seen = []
      per_shard = jax.jit(shard_map(
          lambda b: (jax.debug.callback(lambda a: seen.append(np.asarray(a).tolist()), b), b)[1],
          mesh=mesh, in_specs=P("d"), out_specs=P("d")))
      out["shard_map_values"] = one(per_shard(x))
      jax.effects_barrier()
      out["shard_map_calls"] = sorted(seen)
      print(json.dumps(out))
  """)
  assert got["pmap"] == [0.0, 2.0, 4.0, 6.0]
  assert got["sharded_pure"] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
  assert got["shard_map_values"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
  assert got["shard_map_calls"] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]


_SHARDED = """
import sys
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
platform, shardy = sys.argv[1], sys.argv[2] == "1"
jax.config.update("jax_use_shardy_partitioner", shardy)
devices = jax.devices(platform)[:4]
mesh = Mesh(np.array(devices), ("d",))
x = jax.device_put(jnp.arange(8, dtype=jnp.int32), NamedSharding(mesh, P("d")))
out, seen = {}, []
def run(name, fn):
  try:
    # Read back from one device: jaxlib's host copy of a sharded array sends a layout struct
    # without struct_size, which pjrtkit refuses today (issue 8 defect 2, not a callback matter).
    out[name] = jax.device_put(fn(), devices[0]).tolist()
    jax.effects_barrier()
  except Exception as e:  # Reported, compared below.
    out[name] = "error: " + str(e).splitlines()[0]
def record(tag):
  def callback(a):
    seen.append([tag, np.asarray(a).tolist()])
    return ()
  return callback
def counted(tag, fn):
  def callback(a):
    seen.append([tag, np.asarray(a).tolist()])
    return fn(a)
  return callback
spec = lambda v: jax.ShapeDtypeStruct(v.shape, v.dtype)
run("pure", lambda: jax.jit(lambda v: jax.pure_callback(counted("pure", lambda a: a + 1),
                                                        spec(v), v))(x))
run("io", lambda: jax.jit(lambda v: io_callback(counted("io", lambda a: a * 2), spec(v), v))(x))
run("io_ordered", lambda: jax.jit(lambda v: io_callback(counted("io_ordered_result",
                                                                lambda a: a * 3),
                                                        spec(v), v, ordered=True))(x))
run("io_ordered_no_result", lambda: jax.jit(
    lambda v: (io_callback(record("io_ordered"), (), v, ordered=True), v - 1)[1])(x))
run("debug_callback", lambda: jax.jit(
    lambda v: (jax.debug.callback(record("debug"), v), v + 2)[1])(x))
run("debug_print", lambda: jax.jit(lambda v: (jax.debug.print("print {}", v), v + 3)[1])(x))
per_shard = jax.shard_map(
    lambda b: (jax.debug.callback(record("shard"), b),
               io_callback(lambda a: a + 5, spec(b), b),
               jax.pure_callback(lambda a: a * 7, spec(b), b))[1:], mesh=mesh,
    in_specs=P("d"), out_specs=(P("d"), P("d")))
run("shard_map", lambda: jnp.stack(jax.jit(per_shard)(x)))
jax.effects_barrier()
out["seen"] = sorted(seen)
"""


@pytest.mark.parametrize("shardy", [True, False], ids=["shardy", "gspmd"])
def test_callbacks_in_jits_sharded_over_four_devices(shardy):
  # Every callback kind in a jit over NamedSharding(4 devices) and in a shard_map: the values
  # and calls are exact, and the same as on jaxlib's cpu backend (4 devices) in the same setup.
  code = textwrap.dedent(_PRELUDE.replace('assert jax.default_backend() == "pjrtkit", '
                                          'jax.default_backend()\n', "")) + \
      "jax.config.update('jax_num_cpu_devices', 4)\n" + _SHARDED + \
      "print(json.dumps(out))\n"
  results = {}
  for platform in ("pjrtkit", "cpu"):
    proc = subprocess.run([sys.executable, "-c", code, platform, "1" if shardy else "0"],
                          env=_env(), capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [l for l in proc.stdout.splitlines() if l.strip()]
    results[platform] = {"json": json.loads(lines[-1]), "printed": lines[:-1]}
  got = results["pjrtkit"]["json"]
  assert got["pure"] == [1, 2, 3, 4, 5, 6, 7, 8]
  assert got["io"] == [0, 2, 4, 6, 8, 10, 12, 14]
  assert got["io_ordered"] == [0, 3, 6, 9, 12, 15, 18, 21]
  assert got["io_ordered_no_result"] == [-1, 0, 1, 2, 3, 4, 5, 6]
  assert got["debug_callback"] == [2, 3, 4, 5, 6, 7, 8, 9]
  assert got["debug_print"] == [3, 4, 5, 6, 7, 8, 9, 10]
  assert got["shard_map"] == [[5, 6, 7, 8, 9, 10, 11, 12], [0, 7, 14, 21, 28, 35, 42, 49]]
  # Automatic sharding: one call with the whole value; shard_map: one call per shard.
  whole = [0, 1, 2, 3, 4, 5, 6, 7]
  assert got["seen"] == [["debug", whole], ["io", whole], ["io_ordered", whole],
                         ["io_ordered_result", whole], ["pure", whole],
                         ["shard", [0, 1]], ["shard", [2, 3]], ["shard", [4, 5]],
                         ["shard", [6, 7]]]
  assert results["pjrtkit"]["printed"] == ["print [0 1 2 3 4 5 6 7]"]
  assert results["pjrtkit"] == results["cpu"]


def test_known_limitation_partitioned_debug_callbacks_in_automatically_sharded_jits():
  # jax.debug.callback(partitioned=True) lowers to xla_ffi_partitioned_python_cpu_callback, which
  # jaxlib partitions with a custom partitioner registered in its own XLA. XLA:CPU of
  # xla-cpu-pjrt 0.0.1 has none (nor a custom-partitioner PJRT extension): with Shardy it refuses
  # the program, with GSPMD the callback runs once with the whole value instead of once per shard.
  # When this fails, update the README's known limitations.
  code = _PRELUDE + _MULTI_DEVICE + textwrap.dedent("""
      import sys
      jax.config.update("jax_use_shardy_partitioner", sys.argv[1] == "1")
      seen = []
      f = jax.jit(lambda v: (jax.debug.callback(lambda a: seen.append(np.asarray(a).tolist()),
                                                v, partitioned=True), v + 1)[1])
      try:
        out = jax.device_put(f(x), jax.devices()[0]).tolist()
        jax.effects_barrier()
      except Exception as e:
        out = str(e).splitlines()[0]
      print(json.dumps([out, seen]))
  """)
  got = {}
  for shardy in ("1", "0"):
    proc = subprocess.run([sys.executable, "-c", code, shardy], env=_env(), capture_output=True,
                          text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got[shardy] = json.loads(proc.stdout.splitlines()[-1])
  assert "Side-effect HLO must have sharding" in got["1"][0] and got["1"][1] == []
  assert got["0"] == [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                      [[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]]


def test_callbacks_compute_on_the_cpu_backend_inside_long_sharded_programs():
  # JAX's callbacks get cpu arrays and run under default_device(cpu): computations inside them go
  # to jaxlib's cpu backend, never back into pjrtkit, also while the calling program runs
  # asynchronously on XLA:CPU (programs too big to run inline), on one device and on four.
  got = _run(setup=_MULTI_DEVICE, code="""
      n = 384
      spec = lambda v: jax.ShapeDtypeStruct(v.shape, v.dtype)
      inner = jax.jit(lambda a: (jnp.ones((n, n)) @ jnp.ones((n, n))).sum() * 0 + a * 2 + 1)
      platforms = []
      def on_cpu(a):
        y = inner(a)
        platforms.append(y.devices().pop().platform)
        return np.asarray(y)
      dev0 = jax.devices()[0]
      w = jax.device_put(jnp.ones((n, n)), dev0)
      one = jax.jit(lambda v, w: jax.pure_callback(on_cpu, spec(v), v + (w @ w).sum() * 0))(
          jax.device_put(jnp.arange(4.0), dev0), w)
      big = jax.device_put(jnp.ones((4 * n, n)), NamedSharding(mesh, P("d")))
      four = jax.jit(shard_map(
          lambda b, w: io_callback(on_cpu, spec(b), b + (w @ w.T).sum() * 0), mesh=mesh,
          in_specs=(P("d"), P("d")), out_specs=P("d")))(x, big)
      print(json.dumps([jax.device_put(one, dev0).tolist(), jax.device_put(four, dev0).tolist(),
                        sorted(set(platforms))]))
  """)
  assert got == [[1.0, 3.0, 5.0, 7.0], [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0], ["cpu"]]


def test_a_callback_may_dispatch_small_pjrtkit_computations():
  # Re-entrancy: callbacks that run (small) pjrtkit programs, one of them with its own callback,
  # on one device, in a shard_map over four, and from six threads at once, with ordered effects
  # too. Known limitation (README): a callback that waits for a pjrtkit computation XLA:CPU runs
  # asynchronously on a device whose calling program is still running waits forever.
  got = _run(setup=_MULTI_DEVICE, code="""
      import threading
      devices = jax.devices("pjrtkit")
      inner = jax.jit(lambda a: a * 2 + 1)
      def on_pjrtkit(v):
        y = inner(jax.device_put(np.asarray(v), devices[int(np.asarray(v).ravel()[0]) % 4]))
        assert y.devices().pop().platform == "pjrtkit"
        return np.asarray(y)
      spec = lambda v: jax.ShapeDtypeStruct(v.shape, v.dtype)
      out = {}
      out["single"] = jax.jit(lambda v: jax.pure_callback(on_pjrtkit, spec(v), v))(
          jnp.arange(4.0)).tolist()
      nested = jax.jit(lambda a: jax.pure_callback(lambda b: b + 100, spec(a), a))
      out["nested"] = jax.jit(lambda v: jax.pure_callback(
          lambda a: np.asarray(nested(jax.device_put(a, devices[1]))), spec(v), v))(
              jnp.arange(3.0)).tolist()
      inner_ordered = jax.jit(lambda a: io_callback(lambda b: b - 1, spec(a), a, ordered=True))
      out["ordered"] = jax.jit(lambda v: io_callback(
          lambda a: np.asarray(inner_ordered(jax.device_put(a, devices[0]))), spec(v), v,
          ordered=True))(jnp.arange(3.0)).tolist()
      per_shard = jax.jit(shard_map(lambda b: io_callback(on_pjrtkit, spec(b), b), mesh=mesh,
                                    in_specs=P("d"), out_specs=P("d")))
      # Read back from one device (see _SHARDED).
      gather = lambda a: jax.device_put(a, devices[0]).tolist()
      out["shard_map"] = gather(per_shard(x))
      results, errors = [], []
      def worker():
        try:
          for _ in range(5):
            results.append(gather(per_shard(x)))
        except Exception as e:
          errors.append(repr(e))
      threads = [threading.Thread(target=worker) for _ in range(6)]
      [t.start() for t in threads]
      [t.join(120) for t in threads]
      out["threads"] = [len(results), all(r == out["shard_map"] for r in results), errors]
      jax.effects_barrier()
      print(json.dumps(out))
  """)
  assert got["single"] == [1.0, 3.0, 5.0, 7.0]
  assert got["nested"] == [100.0, 101.0, 102.0]
  assert got["ordered"] == [-1.0, 0.0, 1.0]
  assert got["shard_map"] == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0]
  assert got["threads"] == [30, True, []]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
