"""One round of the own-runtime benchmark (``tools.bench.own_runtime``) on one backend.

Backends: ``sim`` and ``xla_cpu`` (pjrtkit's devices, chosen with ``PJRTKIT_DEVICE`` before JAX
starts, 4 devices each, the work on device 0), and ``numpy`` (numpy's matmul only, with the BLAS
threads the parent set in ``OPENBLAS_NUM_THREADS``). Every workload checks its values against a
numpy reference before it is timed; a failed check is recorded and the workload is not timed.

Usage (the parent runs it): python -m tools.bench.own_runtime_worker --backend sim --out FILE
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from tools.bench.timing import median_seconds

BACKENDS = ("sim", "xla_cpu", "numpy")
"""What a child can measure: the two pjrtkit devices and numpy's matmul."""


@dataclasses.dataclass(frozen=True)
class Sizes:
  """The workloads' sizes."""

  mlp: tuple[int, ...] = (784, 1024, 1024, 10)
  batch: int = 256
  chain_elements: int = 16 << 20
  dot: int = 1024
  repeats: int = 7
  dispatch_inner: int = 200


FULL = Sizes()
QUICK = Sizes(mlp=(16, 32, 32, 4), batch=8, chain_elements=4096, dot=64, repeats=2,
              dispatch_inner=10)


def arithmetic_chain(x: Any, xp: Any) -> Any:
  """Ten elementwise ops without transcendental functions (``xp``: jax.numpy or numpy)."""
  x = x * 1.5
  x = x + 0.25
  x = xp.maximum(x, 0.0)
  x = x - 0.5
  x = xp.abs(x)
  x = x * 0.75
  x = xp.minimum(x, 2.0)
  x = -x
  x = x + 1.0
  return x * x


def transcendental_chain(x: Any, xp: Any) -> Any:
  """Ten elementwise ops, five of them transcendental (tanh twice, exp, log1p, sqrt), each
  well-conditioned on the values it gets (no cancellation), so float32 results stay within a
  few ulps of a float64 reference."""
  x = xp.tanh(x)
  x = x * 2.0
  x = xp.exp(x)
  x = x + 1.0
  x = xp.log1p(x)
  x = x * 0.5
  x = xp.sqrt(x)
  x = x + 0.125
  x = xp.tanh(x)
  return x * 3.0


def mlp_params(sizes: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
  """Seeded weights (scaled normal) and zero biases."""
  rng = np.random.default_rng(0)
  return [(rng.standard_normal((m, n), dtype=np.float32) / np.float32(np.sqrt(m)),
           np.zeros((n,), np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp_batch(sizes: Sizes) -> tuple[np.ndarray, np.ndarray]:
  """A seeded batch: inputs and one-hot labels."""
  rng = np.random.default_rng(1)
  x = rng.standard_normal((sizes.batch, sizes.mlp[0]), dtype=np.float32)
  labels = rng.integers(0, sizes.mlp[-1], sizes.batch)
  return x, np.eye(sizes.mlp[-1], dtype=np.float32)[labels]


def mlp_loss_numpy(params: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray,
                   y: np.ndarray) -> float:
  """The MLP's mean softmax cross-entropy in float64 (the reference)."""
  h = x.astype(np.float64)
  for w, b in params[:-1]:
    h = np.maximum(h @ w + b, 0.0)
  w, b = params[-1]
  logits = h @ w + b
  logits = logits - logits.max(axis=-1, keepdims=True)
  log_softmax = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
  return float(-(log_softmax * y).sum(axis=-1).mean())


def _check(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> dict[str, Any]:
  bad = int(np.count_nonzero(~np.isclose(got, want, rtol=rtol, atol=atol)))
  return {"name": name, "mismatches": bad, "elements": int(want.size), "rtol": rtol,
          "atol": atol, "ok": bad == 0}


def _timed(check: dict[str, Any], run: Callable[[], Any], repeats: int,
           inner: int = 1) -> dict[str, Any]:
  """``check`` plus the median seconds of ``run`` when the check passed."""
  entry: dict[str, Any] = {"check": check}
  if check["ok"]:
    entry["seconds"] = median_seconds(run, repeats=repeats, inner=inner)
  return entry


def measure_jax(sizes: Sizes) -> dict[str, Any]:
  """The four JAX workloads on device 0 of the current backend."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

  device = jax.devices()[0]
  results: dict[str, Any] = {}

  # Dispatch: a tiny jit, waited for each time (round trip) and not (asynchronous).
  f = jax.jit(lambda v: v + 1.0)
  small = jax.device_put(np.arange(8, dtype=np.float32), device)
  check = _check("x+1", np.asarray(f(small)), np.arange(8, dtype=np.float32) + 1, 0, 0)
  results["dispatch_blocking"] = _timed(check, lambda: f(small).block_until_ready(),
                                        sizes.repeats, sizes.dispatch_inner)
  kept: dict[str, Any] = {}

  def dispatch_async() -> None:
    kept["last"] = f(small)  # Kept alive: the previous result is freed here, as in user code.

  results["dispatch_async"] = _timed(check, dispatch_async, sizes.repeats, sizes.dispatch_inner)
  kept["last"].block_until_ready()

  # Elementwise chains on one large array.
  host = np.random.default_rng(2).standard_normal(sizes.chain_elements, dtype=np.float32)
  x = jax.device_put(host, device)
  for key, chain, rtol in (("chain_arithmetic", arithmetic_chain, 1e-6),
                           ("chain_transcendental", transcendental_chain, 1e-5)):
    g = jax.jit(lambda v, chain=chain: chain(v, jnp))
    want = chain(host.astype(np.float64), np).astype(np.float32)
    check = _check(key, np.asarray(g(x)), want, rtol, 1e-6)
    results[key] = _timed(check, lambda g=g: g(x).block_until_ready(), sizes.repeats)
  del x

  # dot_general n x n x n.
  n = sizes.dot
  rng = np.random.default_rng(3)
  a_host = rng.standard_normal((n, n), dtype=np.float32)
  b_host = rng.standard_normal((n, n), dtype=np.float32)
  a, b = jax.device_put(a_host, device), jax.device_put(b_host, device)
  h = jax.jit(lambda p, q: jnp.matmul(p, q, precision="highest"))
  want = a_host.astype(np.float64) @ b_host.astype(np.float64)
  check = _check("matmul", np.asarray(h(a, b)), want, 1e-4, 1e-3 * np.sqrt(n))
  results["dot"] = _timed(check, lambda: h(a, b).block_until_ready(), sizes.repeats)
  del a, b

  # An SGD step of the MLP (softmax cross-entropy), parameters replaced by the step's output.
  params_host = mlp_params(sizes.mlp)
  xb_host, yb_host = mlp_batch(sizes)

  def loss(params: Any, xb: Any, yb: Any) -> Any:
    act = xb
    for w, bias in params[:-1]:
      act = jax.nn.relu(act @ w + bias)
    w, bias = params[-1]
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(act @ w + bias) * yb, axis=-1))

  @jax.jit
  def step(params: Any, xb: Any, yb: Any) -> Any:
    value, grads = jax.value_and_grad(loss)(params, xb, yb)
    return jax.tree.map(lambda p, g_: p - 0.01 * g_, params, grads), value

  state = {"params": jax.device_put(params_host, device)}
  xb, yb = jax.device_put(xb_host, device), jax.device_put(yb_host, device)
  state["params"], first = step(state["params"], xb, yb)
  check = _check("loss", np.asarray(first), np.asarray(mlp_loss_numpy(params_host, xb_host,
                                                                      yb_host)), 1e-4, 1e-5)

  def train_step() -> None:
    state["params"], value = step(state["params"], xb, yb)
    value.block_until_ready()

  results["mlp_step"] = _timed(check, train_step, sizes.repeats)

  # The same step data-parallel: the batch cut over 4 devices, the weights replicated
  # (NamedSharding), as users train on several devices; the device's compiler partitions it.
  from jax.sharding import Mesh, NamedSharding, PartitionSpec  # pylint: disable=g-import-not-at-top
  mesh = Mesh(np.array(jax.devices()[:4]), ("batch",))
  cut, whole = NamedSharding(mesh, PartitionSpec("batch")), NamedSharding(mesh, PartitionSpec())
  parallel = {"params": jax.device_put(params_host, whole)}
  xs, ys = jax.device_put(xb_host, cut), jax.device_put(yb_host, cut)
  parallel["params"], first = step(parallel["params"], xs, ys)
  check = _check("loss", np.asarray(first), np.asarray(mlp_loss_numpy(params_host, xb_host,
                                                                      yb_host)), 1e-4, 1e-5)

  def parallel_step() -> None:
    parallel["params"], value = step(parallel["params"], xs, ys)
    value.block_until_ready()

  results["mlp_step_data_parallel"] = _timed(check, parallel_step, sizes.repeats)
  return {"platform": device.platform, "device_kind": device.device_kind,
          "devices": len(jax.devices()), "results": results}


def measure_numpy(sizes: Sizes) -> dict[str, Any]:
  """numpy's n x n x n float32 matmul."""
  n = sizes.dot
  rng = np.random.default_rng(3)
  a = rng.standard_normal((n, n), dtype=np.float32)
  b = rng.standard_normal((n, n), dtype=np.float32)
  want = a.astype(np.float64) @ b.astype(np.float64)
  check = _check("matmul", a @ b, want, 1e-4, 1e-3 * np.sqrt(n))
  return {"platform": "numpy", "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
          "results": {"dot": _timed(check, lambda: a @ b, sizes.repeats)}}


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--backend", choices=BACKENDS, required=True)
  parser.add_argument("--out", type=Path, required=True)
  parser.add_argument("--quick", action="store_true")
  args = parser.parse_args(argv)
  sizes = QUICK if args.quick else FULL
  if args.backend == "numpy":
    record = measure_numpy(sizes)
  else:
    os.environ["PJRTKIT_DEVICE"] = args.backend
    os.environ["JAX_PLATFORMS"] = "pjrtkit"
    record = measure_jax(sizes)
  record["backend"] = args.backend
  args.out.write_text(json.dumps(record))
  return 0


if __name__ == "__main__":
  sys.exit(main())
