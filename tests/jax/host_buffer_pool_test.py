"""pjrtkit.host_buffer_pool_stats() and pjrtkit.trim_host_buffer_pool() on the CPU device.

The pool keeps the host block of a pooled device_put once its array is gone (issue 11: release it
from Python, and count it). Each case runs in a fresh interpreter; arrays are misaligned numpy
views so that XLA:CPU cannot alias them and the copy goes through the pool. Blocks of 2 MiB and
more are rounded to 2 MiB, so 64 MiB and 8 MiB arrays take blocks of exactly that size.
"""

from __future__ import annotations

import sys

from tests.testing.plugin_env import plugin_env, run_python

_ENV = {"JAX_PLATFORMS": "pjrtkit"}
_MIB = 1 << 20
_LIMIT = 512 * _MIB  # host_buffer_cache_mib's default.

# Polls pjrtkit.host_buffer_pool_stats() until `held_bytes` is `want` (XLA:CPU gives the block
# back on its own thread a moment after the array goes; the pool frees it after a second idle,
# so the test trims at once after seeing it).
_HELPERS = """
    import dataclasses, gc, json, time, numpy as np, pjrtkit

    def stats():
      return dataclasses.asdict(pjrtkit.host_buffer_pool_stats())

    def wait_held(want):
      for _ in range(1000):
        got = stats()
        if got["held_bytes"] == want:
          return got
        time.sleep(0.002)
      return got
"""


def test_a_64_mib_block_is_kept_after_delete_and_trim_gives_it_back():
  got = run_python(_HELPERS + """
    before_jax = stats()  # The library is loaded; no client exists yet.
    import jax
    dev = jax.devices()[0]
    x = jax.device_put(np.ones((16 << 20) + 1, np.float32)[1:], dev)  # 64 MiB, misaligned.
    x.block_until_ready()
    live = stats()
    x.delete()
    kept = wait_held(64 << 20)
    kept_memory = dev.memory_stats()
    trimmed = pjrtkit.trim_host_buffer_pool()
    after = stats()
    after_memory = dev.memory_stats()
    print(json.dumps({
        "before_jax": before_jax, "live": live, "kept": kept, "trimmed": trimmed,
        "after": after, "again": pjrtkit.trim_host_buffer_pool(),
        "kept_pool_minus_in_use": kept_memory["pool_bytes"] - kept_memory["bytes_in_use"],
        "after_pool_minus_in_use": after_memory["pool_bytes"] - after_memory["bytes_in_use"],
    }))
  """, env=plugin_env(**_ENV))

  def pool(held, held_blocks, in_use, in_use_blocks, limit=_LIMIT, clients=1):
    return {"held_bytes": held, "held_blocks": held_blocks, "in_use_bytes": in_use,
            "in_use_blocks": in_use_blocks, "limit_bytes": limit, "clients": clients}

  assert got["before_jax"] == pool(0, 0, 0, 0, limit=0, clients=0)
  assert got["live"] == pool(0, 0, 64 * _MIB, 1)
  assert got["kept"] == pool(64 * _MIB, 1, 0, 0)
  assert got["trimmed"] == 64 * _MIB
  assert got["after"] == pool(0, 0, 0, 0)
  assert got["again"] == 0
  # memory_stats() counts the kept block as pool_bytes - bytes_in_use, until the trim.
  assert got["kept_pool_minus_in_use"] == 64 * _MIB
  assert got["after_pool_minus_in_use"] == 0


def test_a_lone_large_put_gives_its_memory_back_at_once_and_a_repeated_one_is_pooled():
  # Above 64 MiB a block is kept only once its size repeats: one 256 MiB put and delete leaves
  # the resident memory where it was (as on jaxlib's cpu), the second is kept for the third.
  got = run_python(_HELPERS + """
    import jax
    def rss():
      return int(open("/proc/self/statm").read().split()[1]) * 4096
    dev = jax.devices()[0]
    host = np.ones((64 << 20) + 1, np.float32)[1:]  # 256 MiB, misaligned: copied via the pool.
    jax.device_put(host[:16], dev).block_until_ready()
    gc.collect()
    before = rss()
    rounds = []
    for _ in range(3):
      x = jax.device_put(host, dev)
      x.block_until_ready()
      x.delete()
      for _ in range(1000):  # XLA:CPU gives the block back on its own thread.
        if stats()["in_use_bytes"] == 0:
          break
        time.sleep(0.002)
      got = stats()
      rounds.append({"held": got["held_bytes"], "rss_over_before": rss() - before})
    print(json.dumps(rounds))
  """, env=plugin_env(**_ENV))
  assert got[0]["held"] == 0
  assert got[0]["rss_over_before"] < 64 * _MIB, got
  assert [r["held"] for r in got[1:]] == [256 * _MIB, 256 * _MIB]


def test_trim_leaves_the_blocks_of_live_arrays_alone():
  got = run_python(_HELPERS + """
    import jax
    dev = jax.devices()[0]
    host = np.arange((2 << 20) + 1, dtype=np.float32)
    kept_alive = jax.device_put(host[1:], dev)  # 8 MiB, misaligned.
    dropped = jax.device_put((host * 2)[1:], dev)
    jax.block_until_ready([kept_alive, dropped])
    dropped.delete()
    before = wait_held(8 << 20)
    trimmed = pjrtkit.trim_host_buffer_pool()
    after = stats()
    same = bool(np.array_equal(np.asarray(kept_alive), host[1:]))
    print(json.dumps({"before": before, "trimmed": trimmed, "after": after, "same": same}))
  """, env=plugin_env(**_ENV))
  assert got["before"] == {"held_bytes": 8 * _MIB, "held_blocks": 1, "in_use_bytes": 8 * _MIB,
                           "in_use_blocks": 1, "limit_bytes": _LIMIT, "clients": 1}
  assert got["trimmed"] == 8 * _MIB
  assert got["after"] == {"held_bytes": 0, "held_blocks": 0, "in_use_bytes": 8 * _MIB,
                          "in_use_blocks": 1, "limit_bytes": _LIMIT, "clients": 1}
  assert got["same"] is True


if __name__ == "__main__":
  sys.exit(__import__("pytest").main([__file__, "-q", "-p", "no:cacheprovider"]))
