"""Memory shared with NumPy outlives Array.delete() on pjrtkit, as on jaxlib's cpu backend.

jaxlib's buffer protocol (``memoryview``) and ``np.asarray`` of a CPU-resident array hold an
external reference (``PJRT_Buffer_IncreaseExternalReferenceCount``) and read the device memory
through ``PJRT_Buffer_OpaqueDeviceMemoryDataPointer``. After ``Array.delete()`` the memory must
stay valid until the view is dropped, for every source alignment (64-byte aligned sources are
aliased by XLA:CPU, misaligned ones are copied into XLA:CPU's memory or, from 64 KiB, into a
pjrtkit host-buffer-pool block). Each case runs in a fresh interpreter.
"""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_ENV = {"JAX_PLATFORMS": "pjrtkit"}

# (3, 4): 48 bytes, XLA:CPU's own allocation; (300, 400): 469 KiB and (1024, 1024): 4 MiB,
# both above the pool's 64 KiB threshold.
_SHAPES = [(3, 4), (300, 400), (1024, 1024)]

# Host data at `offset` bytes past a 64-byte boundary, holding the values.
_PRELUDE = """
    import json, numpy as np, jax
    def source(shape, offset):
      values = np.random.RandomState(0).randn(*shape).astype(np.float32)
      raw = np.empty(values.nbytes + 128, np.uint8)
      start = (-raw.ctypes.data) % 64 + offset
      x = raw[start:start + values.nbytes].view(np.float32).reshape(shape)
      x[...] = values
      assert x.ctypes.data % 64 == offset
      return x
"""


@pytest.mark.parametrize("offset", [0, 16], ids=["aligned", "misaligned"])
@pytest.mark.parametrize("shape", _SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_memoryview_reads_the_data_after_delete(shape, offset):
  got = run_python(_PRELUDE + f"""
    shape, offset = {shape!r}, {offset}
    x = source(shape, offset)
    y = jax.device_put(x); v = memoryview(y); y.delete()
    junk = [jax.device_put(np.full(shape, 7.0, np.float32)) for _ in range(4)]
    same = memoryview(x).tobytes() == v.tobytes()
    first = np.frombuffer(v, np.float32)[:3].tolist()
    print(json.dumps({{"platform": jax.devices()[0].platform, "deleted": y.is_deleted(),
                      "same": same, "first": first, "expected": x.reshape(-1)[:3].tolist(),
                      "junk": float(np.asarray(junk[3]).reshape(-1)[0])}}))
  """, env=plugin_env(**_ENV))
  assert got["platform"] == "pjrtkit"
  assert got["deleted"] is True
  assert got["first"] == got["expected"]
  assert got["same"] is True
  assert got["junk"] == 7.0


@pytest.mark.parametrize("offset", [0, 16], ids=["aligned", "misaligned"])
@pytest.mark.parametrize("shape", [(3, 4), (1024, 1024)], ids=lambda s: "x".join(map(str, s)))
def test_numpy_view_reads_the_data_after_delete(shape, offset):
  got = run_python(_PRELUDE + f"""
    shape, offset = {shape!r}, {offset}
    x = source(shape, offset)
    y = jax.device_put(x); a = np.asarray(y); y.delete()
    junk = [jax.device_put(np.full(shape, 7.0, np.float32)) for _ in range(4)]
    print(json.dumps({{"deleted": y.is_deleted(), "same": bool(np.array_equal(a, x)),
                      "first": a.reshape(-1)[:3].tolist(),
                      "expected": x.reshape(-1)[:3].tolist()}}))
  """, env=plugin_env(**_ENV))
  assert got["deleted"] is True
  assert got["first"] == got["expected"]
  assert got["same"] is True


def test_memory_is_released_when_the_last_view_goes():
  """The view keeps the buffer's bytes counted; dropping it releases them."""
  got = run_python(_PRELUDE + """
    import gc
    dev = jax.devices()[0]
    base = dev.memory_stats()["bytes_in_use"]
    y = jax.device_put(source((1024, 1024), 16), dev)
    v = memoryview(y)
    y.delete()
    held = dev.memory_stats()["bytes_in_use"] - base
    del v; gc.collect()
    after = dev.memory_stats()["bytes_in_use"] - base
    print(json.dumps({"held": held, "after": after}))
  """, env=plugin_env(**_ENV))
  assert got == {"held": 4 * 1024 * 1024, "after": 0}


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
