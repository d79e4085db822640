"""One round of the 2-device benchmark on one backend, in a fresh interpreter.

``python -m tools.bench.multi_gpu_worker --backend {cuda,pjrtkit,cpu} --out record.json [--quick]``

The backend is chosen with ``JAX_PLATFORMS`` before JAX starts (``cuda,cpu``: JAX's CUDA plugin
used directly; ``pjrtkit,cpu``: pjrtkit's device, xla_gpu on a GPU machine; ``cpu``: jaxlib's CPU
backend with 2 devices, the baseline of the CPU test). The first two devices of the backend run
two workloads, each checked for exact values before it is timed:

* ``allreduce``: a float32 all-reduce, ``shard_map`` + ``psum`` over the 2 devices. Each device
  holds ``allreduce_bytes`` (1 GiB; the global array is [2, 2^28] sharded over its first axis),
  the size of the all-reduce in NCCL's convention; algbw = bytes / time and
  busbw = algbw * 2(n-1)/n.
* ``matmul``: a bf16 [M, K] x [K, N] product with K sharded over the 2 devices (each holds half of
  K), the partial products summed with ``psum``; TFLOP/s = 2MNK / time.

Seconds are per call: the median over samples of back-to-back calls, the last one waited for.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from tools.bench.timing import median_seconds

BACKENDS = ("cuda", "pjrtkit", "cpu")
DEVICES = 2
MIB = 1 << 20
PERIOD = 128
"""The matmul check's inputs are nonzero where k = i (mod PERIOD) and k = j (mod PERIOD)."""


@dataclasses.dataclass(frozen=True)
class Sizes:
  """The workloads' sizes and repeat counts."""
  allreduce_bytes: int
  m: int
  k: int
  n: int
  calls: int
  repeats: int


FULL = Sizes(allreduce_bytes=1024 * MIB, m=8192, k=16384, n=8192, calls=20, repeats=5)
QUICK = Sizes(allreduce_bytes=8 * MIB, m=256, k=512, n=256, calls=3, repeats=3)


def allreduce_key(sizes: Sizes) -> str:
  return f"allreduce_{sizes.allreduce_bytes // MIB}MiB"


def matmul_key(sizes: Sizes) -> str:
  return f"matmul_bf16_{sizes.m}x{sizes.k}x{sizes.n}"


def bus_bandwidth(algbw: float, devices: int) -> float:
  """An all-reduce's bus bandwidth from its algorithm bandwidth (NCCL's convention)."""
  return algbw * 2 * (devices - 1) / devices


def _platform_setup(backend: str) -> None:
  """Chooses the backend before JAX starts."""
  os.environ["JAX_PLATFORMS"] = "cpu" if backend == "cpu" else f"{backend},cpu"
  import jax  # pylint: disable=g-import-not-at-top
  if backend == "cpu":
    jax.config.update("jax_num_cpu_devices", DEVICES)


def devices_of(backend: str) -> list:
  """The backend's first two devices; RuntimeError naming how many it has when fewer."""
  import jax  # pylint: disable=g-import-not-at-top
  devices = jax.devices(backend)
  if len(devices) < DEVICES:
    raise RuntimeError(f"needs {DEVICES} devices, backend {backend} has {len(devices)}")
  return devices[:DEVICES]


def allreduce_program(mesh) -> Callable:
  """psum over the mesh's axis of each device's [1, n] block."""
  import jax  # pylint: disable=g-import-not-at-top
  from jax.sharding import PartitionSpec as P  # pylint: disable=g-import-not-at-top
  return jax.jit(jax.shard_map(lambda a: jax.lax.psum(a, "i"), mesh=mesh,
                               in_specs=P("i", None), out_specs=P("i", None)))


def allreduce_input(mesh, elements: int):
  """Row d (device d's block): (j % 1000) + 1000 d, made on the devices."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  from jax.sharding import NamedSharding, PartitionSpec as P  # pylint: disable=g-import-not-at-top

  def make():
    j = jax.lax.broadcasted_iota(jnp.int32, (DEVICES, elements), 1)
    d = jax.lax.broadcasted_iota(jnp.int32, (DEVICES, elements), 0)
    return (j % 1000 + 1000 * d).astype(jnp.float32)

  return jax.jit(make, out_shardings=NamedSharding(mesh, P("i", None)))()


def check_allreduce(out, devices: list, elements: int) -> dict[str, Any]:
  """Every device's block must be 2 (j % 1000) + 1000 exactly (the sum of the two rows)."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top

  def mismatches(block):
    j = jax.lax.broadcasted_iota(jnp.int32, block.shape, 1)
    return jnp.sum(block != (2 * (j % 1000) + 1000).astype(jnp.float32))

  count = jax.jit(mismatches)
  shards = sorted(out.addressable_shards, key=lambda s: devices.index(s.device))
  got = [int(count(s.data)) for s in shards]
  first = [np.asarray(s.data[0, :4]).tolist() for s in shards]
  expected_first = [1000.0, 1002.0, 1004.0, 1006.0]
  return {"mismatches": got, "first": first, "expected_first": expected_first,
          "elements": elements,
          "ok": got == [0] * DEVICES and first == [expected_first] * DEVICES}


def matmul_program(mesh) -> Callable:
  """[M, K] x [K, N] with K sharded over the mesh's axis: local products, then psum."""
  import jax  # pylint: disable=g-import-not-at-top
  from jax.sharding import PartitionSpec as P  # pylint: disable=g-import-not-at-top
  return jax.jit(jax.shard_map(lambda a, b: jax.lax.psum(a @ b, "i"), mesh=mesh,
                               in_specs=(P(None, "i"), P("i", None)), out_specs=P()))


def matmul_check_inputs(mesh, sizes: Sizes):
  """bf16 inputs whose partial and full products are exact in bf16.

  a[i, k] = 1 where k = i (mod PERIOD); b[k, j] = w where k = j (mod PERIOD), w = 1 in the first
  half of K (device 0's) and 2 + j % 2 in the second (device 1's); else 0. So
  out[i, j] = r (3 + j % 2) where i = j (mod PERIOD), else 0, with r = K / 2 / PERIOD; each
  device's partial product is r or r (2 + j % 2) there (every value <= 256: exact in bf16).
  """
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  from jax.sharding import NamedSharding, PartitionSpec as P  # pylint: disable=g-import-not-at-top

  m, k, n = sizes.m, sizes.k, sizes.n

  def make_a():
    i = jax.lax.broadcasted_iota(jnp.int32, (m, k), 0)
    kk = jax.lax.broadcasted_iota(jnp.int32, (m, k), 1)
    return (i % PERIOD == kk % PERIOD).astype(jnp.bfloat16)

  def make_b():
    kk = jax.lax.broadcasted_iota(jnp.int32, (k, n), 0)
    j = jax.lax.broadcasted_iota(jnp.int32, (k, n), 1)
    w = jnp.where(kk < k // 2, 1, 2 + j % 2)
    return jnp.where(kk % PERIOD == j % PERIOD, w, 0).astype(jnp.bfloat16)

  a = jax.jit(make_a, out_shardings=NamedSharding(mesh, P(None, "i")))()
  b = jax.jit(make_b, out_shardings=NamedSharding(mesh, P("i", None)))()
  return a, b


def matmul_expected_value(sizes: Sizes, i: int, j: int) -> float:
  """out[i, j] of the check inputs."""
  r = sizes.k // 2 // PERIOD
  return float(r * (3 + j % 2)) if i % PERIOD == j % PERIOD else 0.0


def check_matmul(out, devices: list, sizes: Sizes) -> dict[str, Any]:
  """Every device's copy of the product must equal matmul_expected_value exactly."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top

  r = sizes.k // 2 // PERIOD

  def mismatches(c):
    i = jax.lax.broadcasted_iota(jnp.int32, c.shape, 0)
    j = jax.lax.broadcasted_iota(jnp.int32, c.shape, 1)
    want = jnp.where(i % PERIOD == j % PERIOD, r * (3 + j % 2), 0).astype(jnp.float32)
    return jnp.sum(c.astype(jnp.float32) != want)

  count = jax.jit(mismatches)
  shards = sorted(out.addressable_shards, key=lambda s: devices.index(s.device))
  got = [int(count(s.data)) for s in shards]
  corner = [np.asarray(s.data[:2, :2].astype(jnp.float32)).tolist() for s in shards]
  expected_corner = [[matmul_expected_value(sizes, i, j) for j in range(2)] for i in range(2)]
  return {"mismatches": got, "corner": corner, "expected_corner": expected_corner,
          "ok": (got == [0] * DEVICES and len(shards) == DEVICES and
                 corner == [expected_corner] * DEVICES)}


def _chain_seconds(fn: Callable, args: tuple, sizes: Sizes) -> float:
  """Seconds per call of ``fn(*args)``: ``sizes.calls`` calls back to back, the last waited for."""

  def calls() -> None:
    out = None
    for _ in range(sizes.calls):
      out = fn(*args)
    out.block_until_ready()

  return median_seconds(calls, repeats=sizes.repeats) / sizes.calls


def run(backend: str, sizes: Sizes) -> dict[str, Any]:
  """Checks, then times, both workloads on ``backend``'s first two devices."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # pylint: disable=g-import-not-at-top

  devices = devices_of(backend)
  mesh = Mesh(np.array(devices), ("i",))
  out: dict[str, Any] = {"devices": [repr(d) for d in devices],
                         "platform": devices[0].platform,
                         "device_kind": devices[0].device_kind,
                         "platform_version": devices[0].client.platform_version,
                         "jax": jax.__version__}

  elements = sizes.allreduce_bytes // 4
  allreduce = allreduce_program(mesh)
  x = allreduce_input(mesh, elements)
  entry: dict[str, Any] = {"bytes_per_device": sizes.allreduce_bytes, "devices": DEVICES,
                           "check": check_allreduce(allreduce(x), devices, elements)}
  if entry["check"]["ok"]:
    seconds = _chain_seconds(allreduce, (x,), sizes)
    algbw = sizes.allreduce_bytes / seconds / 1e9
    entry.update(seconds=seconds, algbw_GBps=algbw, busbw_GBps=bus_bandwidth(algbw, DEVICES))
  out[allreduce_key(sizes)] = entry
  del x

  matmul = matmul_program(mesh)
  flops = 2.0 * sizes.m * sizes.n * sizes.k
  entry = {"m": sizes.m, "k": sizes.k, "n": sizes.n, "flops": flops,
           "check": check_matmul(matmul(*matmul_check_inputs(mesh, sizes)), devices, sizes)}
  if entry["check"]["ok"]:
    k1, k2 = jax.random.split(jax.random.key(0))
    a = jax.device_put(jax.random.normal(k1, (sizes.m, sizes.k), jnp.bfloat16),
                       NamedSharding(mesh, P(None, "i")))
    b = jax.device_put(jax.random.normal(k2, (sizes.k, sizes.n), jnp.bfloat16),
                       NamedSharding(mesh, P("i", None)))
    seconds = _chain_seconds(matmul, (a, b), sizes)
    entry.update(seconds=seconds, TFLOPs=flops / seconds / 1e12)
  out[matmul_key(sizes)] = entry
  return out


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--backend", choices=BACKENDS, required=True)
  parser.add_argument("--out", type=Path, required=True)
  parser.add_argument("--quick", action="store_true")
  args = parser.parse_args(argv)
  _platform_setup(args.backend)
  start = time.perf_counter()
  record = run(args.backend, QUICK if args.quick else FULL)
  record["wall_seconds"] = time.perf_counter() - start
  args.out.write_text(json.dumps({"backend": args.backend, "results": record}, indent=1))
  return 0


if __name__ == "__main__":
  sys.exit(main())
