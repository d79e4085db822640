"""Facts about a GPU machine for pjrtkit's xla_gpu device, each probe in its own interpreter.

Run on the GPU machine: ``python3 tools/gpu/probe.py --plugin PATH/pjrtkit_plugin.so --out DIR``.
Prints one JSON line per probe and writes ``probe.json`` under ``--out``: where the CUDA plugin
and NVIDIA libraries are, what the direct CUDA backend reports (devices, attributes, memory
statistics, transfer bandwidth), and what JAX does on pjrtkit's xla_gpu device registered by hand
(with no pjrtkit Python integration), so the integration can be checked against it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
import time
from typing import Any

# Code run in a child interpreter; prints a JSON object on its last line.
_FACTS = r"""
import glob, importlib.util, json, os, subprocess
out = {}
out["nvidia_smi"] = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
out["proc_gpus"] = sorted(os.listdir("/proc/driver/nvidia/gpus")) if os.path.isdir("/proc/driver/nvidia/gpus") else None
out["dev_nvidia"] = sorted(glob.glob("/dev/nvidia*"))
out["cuda_visible_devices"] = os.environ.get("CUDA_VISIBLE_DEVICES")
for mod in ["jax", "jaxlib", "jax_plugins.xla_cuda13", "jax_cuda13_plugin", "nvidia", "triton"]:
  spec = importlib.util.find_spec(mod)
  out["module " + mod] = (list(spec.submodule_search_locations or []) or [spec.origin]) if spec else None
import jax, jaxlib
out["jax"] = jax.__version__; out["jaxlib"] = jaxlib.__version__
print(json.dumps(out))
"""

# Preamble of every JAX child: registers pjrtkit by hand when asked (no pjrtkit Python package).
_PREAMBLE = r"""
import json, os, sys, time, traceback
import numpy as np
PLUGIN = os.environ.get("PROBE_PJRTKIT")
if PLUGIN:
  from jax._src import xla_bridge as xb
  opts = {"device": "xla_gpu", "preallocate": False, "memory_fraction": 0.4}
  xb.register_plugin("pjrtkit", priority=500, library_path=PLUGIN, options=opts)
import jax, jax.numpy as jnp
out = {}
def attempt(name, fn):
  try:
    out[name] = fn()
  except Exception as e:  # noqa: BLE001
    out[name] = "ERROR " + type(e).__name__ + ": " + str(e).splitlines()[0][:300]
"""

_DEVICE = _PREAMBLE + r"""
d = jax.devices()[0]
out["platform"] = d.platform
out["devices"] = [repr(x) for x in jax.devices()]
out["device_kind"] = d.device_kind
out["client_platform_version"] = d.client.platform_version
attrs = {}
for name in ["compute_capability", "core_count", "device_vendor", "backend", "slice_index", "coords"]:
  try:
    attrs[name] = repr(getattr(d, name))
  except Exception as e:  # noqa: BLE001
    attrs[name] = "missing: " + type(e).__name__
out["attributes"] = attrs
out["memories"] = [m.kind for m in d.addressable_memories()]
attempt("memory_stats", lambda: d.memory_stats())
x = jnp.arange(8, dtype=jnp.float32)
attempt("jit_add", lambda: np.asarray(jax.jit(lambda a: a + 1)(x)).tolist())
attempt("pinned_host", lambda: str(jax.device_put(np.ones(4, np.float32), jax.sharding.SingleDeviceSharding(d, memory_kind="pinned_host")).sharding.memory_kind))
print(json.dumps(out, default=str))
"""

_BANDWIDTH = _PREAMBLE + r"""
d = jax.devices()[0]
def bench(fn, n):
  fn()
  t = time.perf_counter()
  for _ in range(n): fn()
  return (time.perf_counter() - t) / n
for mib in [64, 1024]:
  nbytes = mib << 20
  host = np.ones(nbytes // 4, np.float32)
  mis = np.frombuffer(np.ones(nbytes + 64, np.uint8).data, np.uint8)[16:16 + nbytes].view(np.float32)
  for tag, arr in [("numpy", host), ("misaligned", mis)]:
    t = bench(lambda: jax.device_put(arr, d).block_until_ready(), 5)
    out[f"h2d_{mib}MiB_{tag}_GBps"] = round(nbytes / t / 1e9, 2)
  dev = jax.device_put(host, d)
  dev.block_until_ready()
  def d2h():
    y = dev + 0  # a fresh array, so nothing is cached on the host
    y.block_until_ready()
    t0 = time.perf_counter(); np.asarray(y); return time.perf_counter() - t0
  d2h(); ts = [d2h() for _ in range(5)]
  out[f"d2h_{mib}MiB_GBps"] = round(nbytes / (sum(ts) / len(ts)) / 1e9, 2)
  try:
    pinned = jax.sharding.SingleDeviceSharding(d, memory_kind="pinned_host")
    hp = jax.device_put(host, pinned); hp.block_until_ready()
    t = bench(lambda: jax.device_put(hp, d).block_until_ready(), 5)
    out[f"h2d_{mib}MiB_from_pinned_GBps"] = round(nbytes / t / 1e9, 2)
    t = bench(lambda: jax.device_put(dev, pinned).block_until_ready(), 5)
    out[f"d2h_{mib}MiB_to_pinned_GBps"] = round(nbytes / t / 1e9, 2)
  except Exception as e:  # noqa: BLE001
    out[f"pinned_{mib}MiB"] = "ERROR " + str(e).splitlines()[0][:200]
k1, k2 = jax.random.split(jax.random.key(0))
a = jax.random.normal(k1, (8192, 8192), jnp.bfloat16); b = jax.random.normal(k2, (8192, 8192), jnp.bfloat16)
mm = jax.jit(lambda a, b: a @ b)
t = bench(lambda: mm(a, b).block_until_ready(), 10)
out["matmul_bf16_8192_TFLOPs"] = round(2 * 8192**3 / t / 1e12, 1)
f = jax.jit(lambda v: v + 1); v = jnp.zeros(8)
t = bench(lambda: f(v).block_until_ready(), 2000)
out["dispatch_blocking_us"] = round(t * 1e6, 2)
print(json.dumps(out, default=str))
"""

_OPS = _PREAMBLE + r"""
import functools
from jax.experimental import pallas as pl
key = jax.random.key(0)
m = jax.random.normal(key, (64, 64), jnp.float32)
spd = m @ m.T + 64 * jnp.eye(64)
attempt("random", lambda: float(jax.random.normal(key, (3,))[0]))
attempt("cholesky", lambda: float(jnp.abs(jnp.linalg.cholesky(spd) @ jnp.linalg.cholesky(spd).T - spd).max()))
attempt("qr", lambda: float(jnp.abs(jnp.linalg.qr(m)[0] @ jnp.linalg.qr(m)[1] - m).max()))
attempt("eigh", lambda: float(jnp.linalg.eigh(spd)[0][0]))
attempt("svd", lambda: float(jnp.linalg.svd(m)[1][0]))
attempt("lu_solve", lambda: float(jnp.abs(m @ jnp.linalg.solve(m, jnp.ones(64)) - 1).max()))
attempt("fft", lambda: float(jnp.abs(jnp.fft.ifft(jnp.fft.fft(jnp.arange(8.0))) - jnp.arange(8.0)).max()))
attempt("pure_callback", lambda: float(jax.jit(lambda x: jax.pure_callback(lambda a: a * 2, jax.ShapeDtypeStruct((), jnp.float32), x))(jnp.float32(3))))
attempt("debug_print", lambda: (jax.jit(lambda x: (jax.debug.print("probe x={x}", x=x), x)[1])(jnp.float32(1)).block_until_ready(), "ok")[1])
def add_kernel(x_ref, y_ref, o_ref): o_ref[...] = x_ref[...] + y_ref[...]
xs = jnp.arange(1024, dtype=jnp.float32)
attempt("pallas_triton_add", lambda: float(jnp.abs(pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(xs.shape, xs.dtype))(xs, xs) - 2 * xs).max()))
def donate():
  f = jax.jit(lambda a: a + 1, donate_argnums=0)
  a = jnp.ones(1024); b = f(a)
  return [a.is_deleted(), float(b[0])]
attempt("donation", donate)
attempt("cudnn_dot_product_attention", lambda: float(jax.nn.dot_product_attention(jnp.ones((1, 128, 4, 64), jnp.bfloat16), jnp.ones((1, 128, 4, 64), jnp.bfloat16), jnp.ones((1, 128, 4, 64), jnp.bfloat16), implementation="cudnn")[0, 0, 0, 0]))
attempt("devices_gpu", lambda: repr(jax.devices("gpu")))
from jax._src.interpreters import mlir
out["cuda_specific_lowerings"] = len(mlir._platform_specific_lowerings["cuda"])
out["cuda_lowering_names"] = sorted(str(p) for p in mlir._platform_specific_lowerings["cuda"])[:400]
print(json.dumps(out, default=str))
"""


def _run_child(name: str, code: str, env: dict[str, str], timeout: float) -> dict[str, Any]:
  """Runs `code` in a fresh interpreter; returns its last-line JSON plus timing and stderr tail."""
  start = time.perf_counter()
  try:
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=timeout)
  except subprocess.TimeoutExpired:
    return {"probe": name, "error": f"timed out after {timeout} s"}
  result: dict[str, Any] = {"probe": name, "seconds": round(time.perf_counter() - start, 1),
                            "returncode": proc.returncode}
  lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
  if lines:
    result.update(json.loads(lines[-1]))
  if proc.returncode != 0 or not lines:
    result["stderr_tail"] = proc.stderr[-3000:]
  return result


def main() -> int:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--plugin", required=True, help="pjrtkit_plugin.so")
  parser.add_argument("--out", required=True, help="folder for probe.json")
  args = parser.parse_args()
  os.makedirs(args.out, exist_ok=True)
  base = dict(os.environ, PYTHONUNBUFFERED="1", XLA_PYTHON_CLIENT_PREALLOCATE="false",
              XLA_PYTHON_CLIENT_MEM_FRACTION="0.4")
  direct = dict(base, JAX_PLATFORMS="cuda")
  ours = dict(base, JAX_PLATFORMS="pjrtkit", PROBE_PJRTKIT=os.path.abspath(args.plugin))
  results = [_run_child("facts", _FACTS, base, 120)]
  for tag, env in [("cuda", direct), ("pjrtkit", ours)]:
    results.append(_run_child(f"device[{tag}]", _DEVICE, env, 180))
    results.append(_run_child(f"ops[{tag}]", _OPS, env, 240))
    results.append(_run_child(f"bandwidth[{tag}]", _BANDWIDTH, env, 240))
  for r in results:
    print(json.dumps(r, default=str)[:6000], flush=True)
  with open(os.path.join(args.out, "probe.json"), "w") as f:
    json.dump(results, f, indent=1, default=str)
  return 0


if __name__ == "__main__":
  sys.exit(main())
