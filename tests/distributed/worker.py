"""One process of the multi-process tests (multi_process_test.py starts two of these).

Usage: worker.py MODE PROCESS_ID NUM_PROCESSES PORT [INIT_TIMEOUT_S [JOIN_TIMEOUT_S]]

INIT_TIMEOUT_S is jax.distributed.initialize's initialization_timeout (default 30), JOIN_TIMEOUT_S
pjrtkit's create option process_join_timeout_s (default 20). $PJRTKIT_MP_DEVICE chooses pjrtkit's
device: "cpu" (default: 2 CPU devices per process) or "gpu" (one GPU per process, GPU i for
process i, through the CUDA plugin).

Prints one JSON line (the last line of stdout) with what it saw. MODE:
  full     initialize, global device list, a process-spanning jax.Array, shard_map psum and
           all-gather over every device (refused by the CPU device, with its error text), a jit
           on this process's devices.
  init     initialize and create the backend only; prints the error if either fails.
  idle     initialize, never create the backend (a process that never creates its client), sleep
           until killed.
"""

from __future__ import annotations

import json
import os
import sys
import traceback


def _error_text(fn):
  try:
    fn()
  except Exception as e:  # noqa: BLE001 (the text is what the test checks)
    return f"{type(e).__name__}: {e}"
  return None


def main() -> None:
  mode, process_id, num_processes, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
  init_timeout = int(sys.argv[5]) if len(sys.argv) > 5 else 30
  join_timeout = int(sys.argv[6]) if len(sys.argv) > 6 else 20
  import jax
  jax.config.update("jax_platforms", "pjrtkit")
  if os.environ.get("PJRTKIT_MP_DEVICE", "cpu") == "gpu":
    per_process = 1
    options = {"device": "xla_gpu", "visible_devices": [process_id]}
  else:
    per_process = 2
    options = {"device_count": 2, "process_join_timeout_s": join_timeout}
  jax.config.update("jax_pjrt_client_create_options", options)
  out: dict = {"process_id": process_id}
  try:
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}",
                               num_processes=num_processes, process_id=process_id,
                               initialization_timeout=init_timeout)
    if mode == "idle":
      import time
      time.sleep(600)
    out["devices"] = [[d.id, d.process_index, d.platform] for d in jax.devices()]
  except Exception as e:  # noqa: BLE001
    out["init_error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out), flush=True)
    # Exit now: JAX's atexit shutdown would wait at a barrier for a process that never comes.
    os._exit(0)
  if mode == "init":
    print(json.dumps(out), flush=True)
    return

  import numpy as np
  from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
  out["process_index"] = jax.process_index()
  out["process_count"] = jax.process_count()
  out["local_devices"] = [[d.id, d.process_index, d.local_hardware_id] for d in jax.local_devices()]
  out["addressable"] = sorted(d.id for d in jax.devices() if d.process_index == jax.process_index())

  mesh = Mesh(np.array(jax.devices()), ("x",))
  sharding = NamedSharding(mesh, P("x"))
  # CPU: p0 [1, 2], p1 [11, 12]; GPU: p0 [1], p1 [11].
  local = np.arange(per_process, dtype=np.float32) + 10 * process_id + 1
  arr = jax.make_array_from_process_local_data(sharding, local)
  out["array_shape"] = list(arr.shape)
  out["array_fully_addressable"] = arr.is_fully_addressable
  out["array_shards"] = [[s.device.id, np.asarray(s.data).tolist()] for s in arr.addressable_shards]

  shard_map = getattr(jax, "shard_map", None)
  if shard_map is None:  # jax 0.11 also has it at the top level; older only here.
    from jax.experimental.shard_map import shard_map  # type: ignore[no-redef]
  psum = jax.jit(shard_map(lambda x: jax.lax.psum(x, "x"), mesh=mesh, in_specs=P("x"),
                           out_specs=P()))
  # Every shard gathers all four values (out_specs P("x"): no replication check needed).
  gather = jax.jit(shard_map(lambda x: jax.lax.all_gather(x, "x", tiled=True), mesh=mesh,
                             in_specs=P("x"), out_specs=P("x")))
  results = {}
  def run(name, fn):
    value = fn(arr)
    results[name] = np.asarray(value.addressable_data(0)).tolist()
  out["psum_error"] = _error_text(lambda: run("psum", psum))
  out["all_gather_error"] = _error_text(lambda: run("all_gather", gather))
  out["results"] = results

  # This process's devices alone: a jit over a local mesh works.
  local_mesh = Mesh(np.array(jax.local_devices()), ("x",))
  local_sharding = NamedSharding(local_mesh, P("x"))
  x = jax.device_put(local, local_sharding)
  local_psum = jax.jit(shard_map(lambda v: jax.lax.psum(v, "x"), mesh=local_mesh,
                                 in_specs=P("x"), out_specs=P()))
  out["local_double"] = np.asarray(jax.jit(lambda v: v * 2)(x)).tolist()
  out["local_psum"] = np.asarray(local_psum(x)).tolist()
  print(json.dumps(out), flush=True)


if __name__ == "__main__":
  try:
    main()
  except Exception:  # noqa: BLE001
    traceback.print_exc()
    sys.exit(1)
