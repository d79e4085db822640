"""Cold vs warm compile time through JAX's persistent compilation cache, in fresh processes.

Each run makes an empty cache directory, then starts two child processes that lower and
compile the same program: the cold one compiles it with XLA and writes the cache, the warm one
finds it there and only deserializes it. The program is the training step of a 2-layer
transformer encoder (attention, MLP, layer norm; about a second to compile on XLA:CPU). The
table gives the median over runs per backend, and the cold/warm ratio.

Usage (from the repository root):
  .venv/bin/python -m tools.bench.compile_cache [--runs 5] [--backends pjrtkit,cpu]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from tools.bench import backends

LAYERS = 2
"""Transformer layers in the benchmarked training step."""
DIM, HEADS, SEQ, BATCH = 128, 4, 64, 8
"""Model width, attention heads, sequence length, batch size."""


def transformer_step() -> Any:
  """The jitted SGD step of a small transformer encoder (an untraced `jax.jit` object)."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

  def layer_norm(x: Any) -> Any:
    mean = x.mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)

  def block(p: dict[str, Any], x: Any) -> Any:
    q, k, v = (jnp.einsum("bsd,de->bse", layer_norm(x), p[n]).reshape(
        BATCH, SEQ, HEADS, DIM // HEADS) for n in ("wq", "wk", "wv"))
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(DIM // HEADS)
    attn = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, -1), v).reshape(BATCH, SEQ, DIM)
    x = x + attn @ p["wo"]
    return x + jax.nn.gelu(layer_norm(x) @ p["w1"]) @ p["w2"]

  def loss(params: list[dict[str, Any]], x: Any, y: Any) -> Any:
    for p in params:
      x = block(p, x)
    return jnp.mean((layer_norm(x) - y) ** 2)

  def step(params: list[dict[str, Any]], x: Any, y: Any) -> Any:
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return value, jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)

  return jax.jit(step)


def _abstract_args() -> tuple[Any, Any, Any]:
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top

  def spec(*shape: int) -> Any:
    return jax.ShapeDtypeStruct(shape, np.float32)

  layer = {"wq": spec(DIM, DIM), "wk": spec(DIM, DIM), "wv": spec(DIM, DIM), "wo": spec(DIM, DIM),
           "w1": spec(DIM, 4 * DIM), "w2": spec(4 * DIM, DIM)}
  return [dict(layer) for _ in range(LAYERS)], spec(BATCH, SEQ, DIM), spec(BATCH, SEQ, DIM)


def child(backend: str, cache_dir: str) -> dict[str, Any]:
  """Runs in a fresh process: times `lower(...).compile()` with the cache at `cache_dir`."""
  backends.activate(backend)
  import jax  # pylint: disable=g-import-not-at-top

  events: list[str] = []
  jax.monitoring.register_event_listener(lambda event, **_: events.append(event))
  jax.config.update("jax_compilation_cache_dir", cache_dir)
  jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
  jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
  lowered = transformer_step().lower(*_abstract_args())
  start = time.perf_counter()
  lowered.compile()
  seconds = time.perf_counter() - start
  return {"seconds": seconds,
          "hits": events.count("/jax/compilation_cache/cache_hits"),
          "misses": events.count("/jax/compilation_cache/cache_misses")}


@dataclasses.dataclass(frozen=True)
class Row:
  """Medians over runs for one backend."""

  backend: str
  cold_s: float
  warm_s: float
  warm_hits: int
  runs: int

  @property
  def ratio(self) -> float:
    """How many times faster the warm compile is."""
    return self.cold_s / self.warm_s


def _spawn(backend: str, cache_dir: str) -> dict[str, Any]:
  proc = subprocess.run(
      [sys.executable, "-m", "tools.bench.compile_cache", "--child", backend, cache_dir],
      capture_output=True, text=True, check=False,
      env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
  if proc.returncode != 0:
    raise RuntimeError(f"{backend} child failed:\n{proc.stdout}\n{proc.stderr}")
  return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(backend: str, runs: int) -> Row:
  """`runs` cold/warm pairs of fresh processes on `backend`, each with a new cache directory."""
  cold, warm, hits = [], [], []
  for _ in range(runs):
    with tempfile.TemporaryDirectory(prefix="pjrtkit_compile_cache_") as cache_dir:
      first = _spawn(backend, cache_dir)
      second = _spawn(backend, cache_dir)
    if first["hits"] != 0 or first["misses"] != 1:
      raise RuntimeError(f"{backend}: the cold process was not a cache miss: {first}")
    cold.append(first["seconds"])
    warm.append(second["seconds"])
    hits.append(second["hits"])
  return Row(backend, statistics.median(cold), statistics.median(warm), min(hits), runs)


def table(rows: list[Row]) -> str:
  """The report: one line per backend, then pjrtkit's times relative to each baseline."""
  lines = [f"compile cache: {LAYERS}-layer transformer training step (d={DIM}, seq={SEQ}, "
           f"batch={BATCH}), median of {rows[0].runs} fresh-process runs", "",
           f"{'backend':<16}{'cold (s)':>10}{'warm (s)':>10}{'cold/warm':>11}{'warm hits':>11}"]
  for r in rows:
    lines.append(f"{r.backend:<16}{r.cold_s:>10.3f}{r.warm_s:>10.3f}{r.ratio:>10.1f}x"
                 f"{r.warm_hits:>11d}")
  by_name = {r.backend: r for r in rows}
  if "pjrtkit" in by_name:
    pk = by_name["pjrtkit"]
    for base in (r for r in rows if r.backend != "pjrtkit"):
      lines.append(f"pjrtkit / {base.backend}: cold {pk.cold_s / base.cold_s:.2f}, "
                   f"warm {pk.warm_s / base.warm_s:.2f}")
  return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
  """Command-line entry point."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--runs", type=int, default=5, help="cold/warm pairs per backend")
  parser.add_argument("--backends", default="pjrtkit,cpu",
                      help=f"comma-separated, from {[b.name for b in backends.BACKENDS]}")
  parser.add_argument("--json", help="also write the rows here")
  parser.add_argument("--child", nargs=2, metavar=("BACKEND", "CACHE_DIR"), help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  if args.child:
    print(json.dumps(child(*args.child)))
    return 0
  rows = [measure(name, args.runs) for name in args.backends.split(",") if name]
  print(table(rows))
  if args.json:
    with open(args.json, "w", encoding="utf-8") as f:
      json.dump([dataclasses.asdict(r) | {"ratio": r.ratio} for r in rows], f, indent=1)
  return 0


if __name__ == "__main__":
  sys.exit(main())
