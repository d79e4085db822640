"""Leaks: 10,000 transfer/execute/delete cycles keep the resident memory flat.

The child warms up for 1,000 cycles (compiles, pools, allocator arenas), then runs 10,000 more;
its RSS may grow by at most RSS_BOUND_MIB over those 10,000 (a leak of 1 KiB per cycle would be
about 10 MiB; of one 4 KiB array per cycle, 40 MiB).
"""

from __future__ import annotations

import sys

from tests.testing.plugin_env import plugin_env, run_python

CYCLES = 10_000
RSS_BOUND_MIB = 4.0

_PROGRAM = """
    import gc, json, os
    import numpy as np
    import jax, jax.numpy as jnp

    def rss():
      with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    devices = jax.devices()
    f = jax.jit(lambda x: x * 2 + 1)
    x = np.arange(1024, dtype=np.float32)   # 4 KiB per array.
    expected = x * 2 + 1

    def cycle(i):
      a = jax.device_put(x, devices[i %% len(devices)])
      b = f(a)
      if i %% 1000 == 0 and not np.array_equal(np.asarray(b), expected):
        raise AssertionError("wrong result")
      b.block_until_ready()
      a.delete()
      b.delete()

    for i in range(1000):
      cycle(i)
    gc.collect()
    before = rss()
    for i in range(%d):
      cycle(i)
    gc.collect()
    print(json.dumps({"growth": rss() - before, "before": before}))
"""


def test_transfer_execute_delete_cycles_keep_rss_flat():
  got = run_python(_PROGRAM % CYCLES, env=plugin_env(JAX_PLATFORMS="pjrtkit"), timeout=300)
  growth_mib = got["growth"] / (1 << 20)
  print(f"{CYCLES} cycles: RSS {got['before'] / (1 << 20):.0f} MiB -> +{growth_mib:.2f} MiB")
  assert growth_mib <= RSS_BOUND_MIB, f"RSS grew by {growth_mib:.2f} MiB over {CYCLES} cycles"


if __name__ == "__main__":
  sys.exit(__import__("pytest").main([__file__, "-q", "-s", "-p", "no:cacheprovider"]))
