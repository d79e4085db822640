"""jax.Device.memory_stats() on pjrtkit: real values for every key jaxlib reports, no -1.

jaxlib turns PJRT_Device_MemoryStats into a dict: ``num_allocs``, ``bytes_in_use``,
``peak_bytes_in_use``, ``largest_alloc_size``, ``bytes_reserved``, ``peak_bytes_reserved`` and
``largest_free_block_bytes`` are always there (-1 when the plugin leaves them unset), and
``bytes_limit``, ``bytes_reservable_limit``, ``pool_bytes``, ``peak_pool_bytes`` only when set.
JAX code reads ``bytes_limit`` / ``bytes_reservable_limit``. Each case runs in a fresh interpreter.
"""

from __future__ import annotations

import sys

from tests.testing.plugin_env import plugin_env, run_python

_ENV = {"JAX_PLATFORMS": "pjrtkit"}

_KEYS = sorted([
    "num_allocs", "bytes_in_use", "peak_bytes_in_use", "largest_alloc_size", "bytes_limit",
    "bytes_reserved", "peak_bytes_reserved", "bytes_reservable_limit",
    "largest_free_block_bytes", "pool_bytes",
])


def test_memory_stats_exact_with_full_like_on_a_sharded_array():
  got = run_python("""
      import gc, json, os, numpy as np, jax, jax.numpy as jnp
      from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
      devices = jax.devices()
      fresh = [d.memory_stats() for d in devices]
      mesh = Mesh(np.array(devices), ('i',))
      x = jax.device_put(np.arange(32, dtype=np.float32).reshape(8, 4),
                         NamedSharding(mesh, P('i')))       # 2x4 f32 = 32 bytes per device.
      y = jnp.full_like(x, 3.0)                              # As JAX's own tests use it.
      z = jax.device_put(np.ones(5, np.float32), devices[1])  # 20 more bytes on device 1.
      gc.collect()
      stats = [d.memory_stats() for d in devices]
      del z; gc.collect()
      after = devices[1].memory_stats()
      print(json.dumps({
          "fresh": fresh, "stats": stats, "after": after,
          "physical": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
          "y": np.asarray(y).tolist(), "y_sharded": y.sharding.spec == P('i'),
      }))
  """, env=plugin_env(**_ENV))
  # The 4 devices share the host's memory: each reports a quarter, so the limits add up to it.
  limit = got["physical"] // 4
  assert got["y"] == [[3.0] * 4] * 8
  assert got["y_sharded"] is True

  def expect(in_use, peak, allocs, largest):
    return {
        "num_allocs": allocs, "bytes_in_use": in_use, "peak_bytes_in_use": peak,
        "largest_alloc_size": largest, "bytes_limit": limit, "bytes_reserved": 0,
        "peak_bytes_reserved": 0, "bytes_reservable_limit": limit,
        "largest_free_block_bytes": limit - in_use, "pool_bytes": in_use,
    }

  for fresh in got["fresh"]:
    assert sorted(fresh) == _KEYS
    assert fresh == expect(0, 0, 0, 0)
  assert len(got["stats"]) == 4
  for stats in got["stats"]:
    assert sorted(stats) == _KEYS
    assert -1 not in stats.values()
  # x and y: one 32-byte shard each per device. full_like also puts its fill value on device 0
  # (two 4-byte buffers, gone by now); z adds 20 bytes on device 1.
  assert got["stats"][0] == expect(64, 68, 4, 32)
  assert got["stats"][1] == expect(84, 84, 3, 32)
  assert got["stats"][2] == expect(64, 64, 2, 32)
  assert got["stats"][3] == expect(64, 64, 2, 32)
  assert got["after"] == expect(64, 84, 3, 32)


def test_pool_bytes_count_the_host_blocks_kept_for_reuse():
  got = run_python("""
      import gc, json, time, numpy as np, jax
      dev = jax.devices()[0]
      x = jax.device_put(np.zeros(1 << 18, np.float32)[1:], dev)  # 1 MiB - 4: misaligned, pooled.
      x.block_until_ready()
      held = dev.memory_stats()
      del x; gc.collect()
      for _ in range(500):  # XLA:CPU may give the block back a moment later, on its thread.
        kept = dev.memory_stats()
        if kept["pool_bytes"] == 1 << 20:
          break
        time.sleep(0.01)
      for _ in range(500):  # Unused for a second, the block is given back to the system.
        idle = dev.memory_stats()
        if idle["pool_bytes"] == 0:
          break
        time.sleep(0.01)
      print(json.dumps({"held": [held["bytes_in_use"], held["pool_bytes"]],
                        "kept": [kept["bytes_in_use"], kept["pool_bytes"]],
                        "idle": [idle["bytes_in_use"], idle["pool_bytes"]]}))
  """, env=plugin_env(**_ENV))
  # The pool keeps the block (4 KiB-rounded: 1 MiB) once the array is gone, and frees it after
  # a second unused (HostBufferPool's idle release).
  assert got == {"held": [(1 << 20) - 4, (1 << 20) - 4], "kept": [0, 1 << 20], "idle": [0, 0]}


if __name__ == "__main__":
  sys.exit(__import__("pytest").main([__file__, "-q", "-p", "no:cacheprovider"]))
