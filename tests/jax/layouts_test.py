"""Non-default layouts on pjrtkit, end to end: what JAX reads back is the array, exactly.

jaxlib builds ``np.asarray``'s zero-copy view of a CPU buffer with the strides of the layout the
plugin reports through PJRT's Layouts extension (row-major for a plugin without it), so a
column-major buffer used to read back transposed. Each case runs in a fresh interpreter on
``pjrtkit`` (4 devices); every expected value is what jaxlib's own ``cpu`` backend gives for the
same script (checked with jax 0.11.2 and 0.12.0.1).
"""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_ENV = {"JAX_PLATFORMS": "pjrtkit"}

_PRELUDE = """
import json, numpy as np, jax, jax.numpy as jnp
from jax.experimental.layout import Format, Layout
d0, d1 = jax.devices()[:2]
x = np.arange(12, dtype=np.int32).reshape(3, 4)
cm = Format(Layout(major_to_minor=(1, 0)), jax.sharding.SingleDeviceSharding(d0))
out = {"platform": d0.platform}
def m2m(fmt):
  return list(fmt.layout.major_to_minor)
"""

_X = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def _run(body: str) -> dict:
  got = run_python(_PRELUDE + body + "\nprint(json.dumps(out))\n", env=plugin_env(**_ENV))
  assert got.pop("platform") == "pjrtkit"
  return got


def test_device_put_with_a_format_reads_back_exactly():
  got = _run("""
y = jax.device_put(x, cm)
a = np.asarray(y)
out.update(values=a.tolist(), strides=list(a.strides), f_contiguous=bool(a.flags.f_contiguous),
           format=m2m(y.format), shard_format=m2m(y.addressable_shards[0].data.format),
           device_get=jax.device_get(y).tolist(), copy=np.array(y, copy=True).tolist(),
           repr=repr(y), sum=int(jnp.sum(y * jnp.arange(12).reshape(3, 4))))
try:
  memoryview(y)
except BufferError as e:
  out["memoryview"] = str(e)
x3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
y3 = jax.device_put(x3, Format(Layout(major_to_minor=(0, 2, 1)),
                               jax.sharding.SingleDeviceSharding(d0)))
out.update(values3=np.asarray(y3).tolist(), strides3=list(np.asarray(y3).strides),
           format3=m2m(y3.format))
""")
  assert got["values"] == _X
  assert got["strides"] == [4, 12]  # Column-major: a view of the buffer, not a copy.
  assert got["f_contiguous"] is True
  assert got["format"] == [1, 0]
  assert got["shard_format"] == [1, 0]
  assert got["device_get"] == _X
  assert got["copy"] == _X
  assert got["repr"] == ("Array([[ 0,  1,  2,  3],\n       [ 4,  5,  6,  7],\n"
                         "       [ 8,  9, 10, 11]], dtype=int32)")
  assert got["sum"] == sum(v * v for v in range(12))
  # jaxlib refuses a buffer-protocol view of a non-default layout, on cpu as here.
  assert got["memoryview"] == ("INVALID_ARGUMENT: Buffer is potentially a device buffer with "
                               "non default layout.")
  assert got["values3"] == [[[float(12 * i + 4 * j + k) for k in range(4)] for j in range(3)]
                            for i in range(2)]
  assert got["strides3"] == [48, 4, 12]
  assert got["format3"] == [0, 2, 1]


def test_jit_in_and_out_layouts():
  got = _run("""
f = jax.jit(lambda a: a * 2, out_shardings=cm)
z = f(x)
compiled = f.lower(x).compile()
g = jax.jit(lambda a: a + 1, in_shardings=cm, out_shardings=cm)
y = jax.device_put(x, cm)
w = g(y)
g_compiled = g.lower(y).compile()
v = jax.jit(lambda a: a + 1)(y)            # a column-major argument, default layouts
out.update(z=np.asarray(z).tolist(), z_strides=list(np.asarray(z).strides),
           z_format=m2m(z.format),
           out_formats=[m2m(f) for f in jax.tree.leaves(compiled.output_formats)],
           w=np.asarray(w).tolist(),
           in_formats=[m2m(f) for f in jax.tree.leaves(g_compiled.input_formats)],
           v=np.asarray(v).tolist(), v_format=m2m(v.format),
           chained=np.asarray(g(g(y))).tolist())
""")
  assert got["z"] == [[2 * v for v in row] for row in _X]
  assert got["z_strides"] == [4, 12]
  assert got["z_format"] == [1, 0]
  assert got["out_formats"] == [[1, 0]]
  assert got["w"] == [[v + 1 for v in row] for row in _X]
  assert got["in_formats"] == [[1, 0]]
  assert got["v"] == [[v + 1 for v in row] for row in _X]
  assert got["v_format"] == [0, 1]
  assert got["chained"] == [[v + 2 for v in row] for row in _X]


def test_copies_between_devices_and_memories_keep_the_layout():
  got = _run("""
y = jax.device_put(x, cm)
c = jax.device_put(y, d1)
z = jax.jit(lambda a: a * 2, out_shardings=cm)(x)
pinned = jax.device_put(z, jax.sharding.SingleDeviceSharding(d1, memory_kind="pinned_host"))
back = jax.device_put(pinned, jax.sharding.SingleDeviceSharding(d0, memory_kind="device"))
out.update(c=np.asarray(c).tolist(), c_device=c.devices().pop().id, c_format=m2m(c.format),
           c_strides=list(np.asarray(c).strides),
           pinned=np.asarray(pinned).tolist(), pinned_kind=pinned.sharding.memory_kind,
           back=np.asarray(back).tolist(),
           on_d1=np.asarray(jax.jit(lambda a: a - 1)(c)).tolist())
""")
  assert got["c"] == _X
  assert got["c_device"] == 1
  assert got["c_format"] == [1, 0]
  assert got["c_strides"] == [4, 12]
  assert got["pinned"] == [[2 * v for v in row] for row in _X]
  assert got["pinned_kind"] == "pinned_host"
  assert got["back"] == [[2 * v for v in row] for row in _X]
  assert got["on_d1"] == [[v - 1 for v in row] for row in _X]


def test_default_layouts_come_from_the_plugin():
  got = _run("""
from jax._src import xla_bridge
backend = xla_bridge.get_backend("pjrtkit")
out.update(
    f32=str(backend.get_default_layout(np.dtype(np.float32), (3, 4), d0)),
    s4=str(backend.get_default_layout(np.dtype(jnp.int4), (8,), d0)),
    scalar=str(backend.get_default_layout(np.dtype(np.float32), (), d0)),
    rank3=str(backend.get_default_layout(np.dtype(jnp.bfloat16), (2, 3, 4), d0)),
    row_major_put=list(np.asarray(jax.device_put(x, d0)).strides))
""")
  assert got == {"f32": "{1,0}", "s4": "{0}", "scalar": "{}", "rank3": "{2,1,0}",
                 "row_major_put": [16, 4]}


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
