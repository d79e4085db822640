"""Concurrency: Python threads dispatching jitted functions, transferring and deleting buffers on
every device of one pjrtkit client for a bounded time. Every result is checked, and the child
process has a hard timeout, so a deadlock fails the test instead of hanging CI.
"""

from __future__ import annotations

import sys

from tests.testing.plugin_env import plugin_env, run_python

THREADS = 8
SECONDS = 3.0

_PROGRAM = """
    import json, threading, time
    import numpy as np
    import jax, jax.numpy as jnp

    THREADS, SECONDS = %d, %f
    devices = jax.devices()
    f = jax.jit(lambda x, y: x * 2 + y)
    total = jax.jit(lambda x: jnp.sum(x))
    errors, counts = [], [0] * THREADS

    def work(index):
      rng = np.random.default_rng(index)
      deadline = time.monotonic() + SECONDS
      try:
        while time.monotonic() < deadline:
          device = devices[(index + counts[index]) %% len(devices)]
          # Small arrays, and ones large enough (>= 64 KiB, misaligned) for the host buffer pool.
          n = int(rng.choice([7, 1024, 1 << 15, (1 << 16) + 3]))
          x = rng.standard_normal(n).astype(np.float32)[1:] if n > 1024 else \\
              rng.standard_normal(n).astype(np.float32)
          y = np.float32(index)
          a = jax.device_put(x, device)
          b = f(a, y)
          got = np.asarray(b)
          if not np.allclose(got, x * 2 + y, rtol=1e-6, atol=1e-6):
            raise AssertionError(f"thread {index}: wrong result on {device}")
          if b.devices() != {device}:
            raise AssertionError(f"thread {index}: result on {b.devices()}, not {device}")
          s = float(total(a))
          if not np.isclose(s, float(np.sum(x, dtype=np.float64)), rtol=1e-3, atol=1e-2):
            raise AssertionError(f"thread {index}: sum {s} != {np.sum(x)}")
          a.delete()
          b.delete()
          counts[index] += 1
      except Exception as e:  # Reported to the parent below.
        errors.append(f"{type(e).__name__}: {e}")

    # Compile every (size, device) pair first, so the threads spend their time dispatching,
    # transferring and deleting rather than compiling.
    for device in devices:
      for n in (7, 1024, (1 << 15) - 1, (1 << 16) + 2):
        a = jax.device_put(np.ones(n, np.float32), device)
        f(a, np.float32(0)).block_until_ready()
        total(a).block_until_ready()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    start = time.monotonic()
    for t in threads:
      t.start()
    for t in threads:
      t.join(timeout=SECONDS + 60)
    hung = sum(t.is_alive() for t in threads)
    print(json.dumps({"errors": errors, "counts": counts, "hung": hung,
                      "devices": len(devices), "seconds": time.monotonic() - start}))
"""


def test_threads_dispatching_transferring_and_deleting_on_every_device():
  got = run_python(_PROGRAM % (THREADS, SECONDS), env=plugin_env(JAX_PLATFORMS="pjrtkit"),
                   timeout=SECONDS + 120)
  assert got["errors"] == []
  assert got["hung"] == 0
  assert got["devices"] == 4
  # Every thread made progress (each iteration: a transfer, two executions, two deletes).
  assert all(count > 0 for count in got["counts"]), got["counts"]
  print(f"{THREADS} threads x {SECONDS:.0f} s: {sum(got['counts'])} iterations "
        f"({got['counts']}) in {got['seconds']:.1f} s")


if __name__ == "__main__":
  sys.exit(__import__("pytest").main([__file__, "-q", "-s", "-p", "no:cacheprovider"]))
