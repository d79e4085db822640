"""Dispatch latency, compute-bound programs and a collective."""

from __future__ import annotations

from typing import Any

import numpy as np

from tools.bench.config import BenchConfig
from tools.bench.records import Measurement
from tools.bench.timing import median_seconds


def dispatch(config: BenchConfig, device: Any) -> list[Measurement]:
  """A tiny jitted function: asynchronous dispatch and a blocking round trip."""
  import jax  # pylint: disable=g-import-not-at-top

  f = jax.jit(lambda x: x + 1.0)
  x = jax.device_put(np.arange(8, dtype=np.float32), device)
  if np.asarray(f(x)).tolist() != [float(i + 1) for i in range(8)]:
    raise AssertionError("dispatch workload computed the wrong values")
  state = {"last": None}

  def async_call() -> None:
    state["last"] = f(x)

  def drain() -> None:  # Outside the timed part: waits for the queued calls.
    if state["last"] is not None:
      state["last"].block_until_ready()

  async_seconds = median_seconds(async_call, repeats=config.dispatch_repeats,
                                 inner=config.dispatch_inner, teardown=lambda _: drain())
  blocking_seconds = median_seconds(lambda: f(x).block_until_ready(),
                                    repeats=config.dispatch_repeats, inner=config.dispatch_inner)
  return [
      Measurement("dispatch_async", "jit dispatch, async (f32[8] x+1)", "dispatch", async_seconds),
      Measurement("dispatch_blocking", "jit round trip, blocking (f32[8] x+1)", "dispatch",
                  blocking_seconds),
  ]


def matmul(config: BenchConfig, device: Any) -> list[Measurement]:
  """An n x n float32 matmul, inputs already on the device."""
  import jax  # pylint: disable=g-import-not-at-top

  n = config.matmul_size
  rng = np.random.default_rng(0)
  a_host = rng.standard_normal((n, n), dtype=np.float32)
  b_host = rng.standard_normal((n, n), dtype=np.float32)
  a = jax.device_put(a_host, device)
  b = jax.device_put(b_host, device)
  f = jax.jit(lambda a, b: a @ b)
  got = np.asarray(f(a, b))
  want_row = a_host[:1] @ b_host
  if not np.allclose(got[:1], want_row, rtol=1e-3, atol=1e-2):
    raise AssertionError("matmul computed the wrong values")
  seconds = median_seconds(lambda: f(a, b).block_until_ready(), repeats=config.compute_repeats)
  return [Measurement(f"matmul_{n}", f"matmul {n}x{n} f32", "compute", seconds)]


def _mlp_init(sizes: tuple[int, ...], seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
  rng = np.random.default_rng(seed)
  return [(rng.standard_normal((m, n), dtype=np.float32) / np.sqrt(m).astype(np.float32),
           np.zeros((n,), np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp_train_step_fn(scale: float = 1.0) -> Any:
  """An SGD step of a tanh MLP with squared loss; `scale` changes the program (compile tests)."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

  def loss(params: Any, x: Any, y: Any) -> Any:
    h = x
    for w, b in params[:-1]:
      h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return jnp.mean((h @ w + b - y) ** 2) * scale

  def step(params: Any, x: Any, y: Any) -> Any:
    grads = jax.grad(loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

  return step


MLP_SIZES = (256, 512, 512, 10)
MLP_BATCH = 128


def mlp(config: BenchConfig, device: Any) -> list[Measurement]:
  """One training step of a small MLP (parameters donated and fed back)."""
  import jax  # pylint: disable=g-import-not-at-top

  rng = np.random.default_rng(1)
  params = jax.device_put(_mlp_init(MLP_SIZES), device)
  x = jax.device_put(rng.standard_normal((MLP_BATCH, MLP_SIZES[0]), dtype=np.float32), device)
  y = jax.device_put(rng.standard_normal((MLP_BATCH, MLP_SIZES[-1]), dtype=np.float32), device)
  step = jax.jit(mlp_train_step_fn(), donate_argnums=0)
  state = {"params": params}

  def run() -> None:
    state["params"] = step(state["params"], x, y)
    jax.block_until_ready(state["params"])

  seconds = median_seconds(run, repeats=config.mlp_repeats, warmup=3)
  if not all(np.isfinite(np.asarray(w)).all() for w, _ in state["params"]):
    raise AssertionError("MLP training produced non-finite weights")
  sizes = "-".join(str(s) for s in MLP_SIZES)
  return [Measurement("mlp_step", f"MLP {sizes} train step, batch {MLP_BATCH}", "compute",
                      seconds)]


def pmap_psum(config: BenchConfig) -> list[Measurement]:
  """x + psum(x) under pmap over all devices, input already sharded."""
  import jax  # pylint: disable=g-import-not-at-top

  n = jax.device_count()
  host = np.arange(n * 1024, dtype=np.float32).reshape(n, 1024)
  x = jax.pmap(lambda v: v)(host)
  f = jax.pmap(lambda v: v + jax.lax.psum(v, "i"), axis_name="i")
  got = np.asarray(f(x))
  if not np.array_equal(got, host + host.sum(axis=0, keepdims=True)):
    raise AssertionError("pmap/psum computed the wrong values")
  seconds = median_seconds(lambda: f(x).block_until_ready(), repeats=config.pmap_repeats,
                           warmup=5)
  return [Measurement("pmap_psum", f"pmap x+psum(x), {n} devices, f32[{n},1024]", "collective",
                      seconds)]
