"""One round of the GPU benchmark on one backend, in a fresh interpreter.

``python -m tools.bench.gpu_worker --backend {cuda,pjrtkit} --out record.json [--quick]``

The backend is chosen with ``JAX_PLATFORMS`` before JAX starts (``cuda,cpu``: JAX's CUDA plugin
used directly; ``pjrtkit,cpu``: pjrtkit's xla_gpu device on the same CUDA plugin). Every workload
reports seconds per operation (medians of samples); transfers also report GB/s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from tools.bench.timing import median_seconds

BACKENDS = ("cuda", "pjrtkit")
MIB = 1 << 20
TRANSFER_SIZES = (64 * MIB, 1024 * MIB)


def _aligned(nbytes: int, offset: int) -> Any:
  """A float32 numpy array of ``nbytes`` whose data starts ``offset`` bytes past 64-aligned."""
  import numpy as np  # pylint: disable=g-import-not-at-top

  raw = np.ones(nbytes + 128, np.uint8)
  start = (-raw.ctypes.data) % 64 + offset
  return raw[start:start + nbytes].view(np.float32)


def run(backend: str, quick: bool) -> dict[str, Any]:
  """Measures every workload on ``backend``; returns {name: {"seconds": s, ...}}."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top

  device = jax.devices(backend)[0]
  on_device = jax.sharding.SingleDeviceSharding(device, memory_kind="device")
  pinned = jax.sharding.SingleDeviceSharding(device, memory_kind="pinned_host")
  out: dict[str, Any] = {"device": repr(device), "device_kind": device.device_kind,
                         "platform_version": device.client.platform_version}
  repeats = 3 if quick else 5

  def record(name: str, seconds: float, nbytes: int | None = None, flops: float | None = None):
    entry: dict[str, Any] = {"seconds": seconds}
    if nbytes is not None:
      entry["GBps"] = nbytes / seconds / 1e9
    if flops is not None:
      entry["TFLOPs"] = flops / seconds / 1e12
    out[name] = entry

  # Dispatch: a jitted x + 1 on f32[8], asynchronously (enqueue only) and blocking.
  f = jax.jit(lambda x: x + 1)
  x = jax.device_put(np.zeros(8, np.float32), device)
  f(x).block_until_ready()
  calls = 200 if quick else 2000

  def async_calls() -> None:
    y = x
    for _ in range(calls):
      y = f(y)
    y.block_until_ready()

  record("dispatch_async", median_seconds(async_calls, repeats=repeats) / calls)
  record("dispatch_blocking",
         median_seconds(lambda: f(x).block_until_ready(), repeats=repeats, inner=calls // 4))

  # bf16 matmul 8192^3 on random data.
  n = 2048 if quick else 8192
  k1, k2 = jax.random.split(jax.random.key(0))
  a = jax.device_put(jax.random.normal(k1, (n, n), jnp.bfloat16), device)
  b = jax.device_put(jax.random.normal(k2, (n, n), jnp.bfloat16), device)
  mm = jax.jit(lambda p, q: p @ q)
  mm(a, b).block_until_ready()
  record(f"matmul_bf16_{n}", median_seconds(lambda: mm(a, b).block_until_ready(),
                                            repeats=repeats, inner=10), flops=2.0 * n ** 3)
  del a, b

  sizes = (8 * MIB,) if quick else TRANSFER_SIZES
  for nbytes in sizes:
    tag = f"{nbytes // MIB}MiB"
    host = _aligned(nbytes, 0)
    misaligned = _aligned(nbytes, 16)
    record(f"h2d_{tag}", median_seconds(
        lambda: jax.device_put(host, device).block_until_ready(), repeats=repeats), nbytes)
    record(f"h2d_{tag}_misaligned", median_seconds(
        lambda: jax.device_put(misaligned, device).block_until_ready(), repeats=repeats), nbytes)
    from_pinned = jax.device_put(host, pinned)
    from_pinned.block_until_ready()
    record(f"h2d_{tag}_from_pinned_host", median_seconds(
        lambda: jax.device_put(from_pinned, on_device).block_until_ready(), repeats=repeats),
           nbytes)
    del from_pinned
    resident = jax.device_put(host, device)
    add = jax.jit(lambda v: v + 1)

    def fresh() -> Any:  # A new device array, so nothing of it is cached on the host.
      y = add(resident)
      y.block_until_ready()
      return y

    record(f"d2h_{tag}", median_seconds(lambda y: np.asarray(y), repeats=repeats,
                                        setup=fresh), nbytes)
    record(f"d2h_{tag}_to_pinned_host", median_seconds(
        lambda y: jax.device_put(y, pinned).block_until_ready(), repeats=repeats,
        setup=fresh), nbytes)
    del resident
  return out


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--backend", choices=BACKENDS, required=True)
  parser.add_argument("--out", type=Path, required=True)
  parser.add_argument("--quick", action="store_true")
  args = parser.parse_args(argv)
  os.environ["JAX_PLATFORMS"] = f"{args.backend},cpu"
  start = time.perf_counter()
  record = run(args.backend, args.quick)
  record["wall_seconds"] = time.perf_counter() - start
  args.out.write_text(json.dumps({"backend": args.backend, "results": record}, indent=1))
  return 0


if __name__ == "__main__":
  sys.exit(main())
