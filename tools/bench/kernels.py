"""Kernel table: every pjrtkit.kernels implementation's time per shape as a ratio to "xla" in
the same run, on the current device, plus a PNG.

  JAX_PLATFORMS=pjrtkit .venv/bin/python -m tools.bench.kernels [--size ci|large|gpu]
      [--rounds N] [--ops layer_norm,attention,ragged_dot] [--phases fwd,fwd+bwd,bwd] [--out DIR]

Each row times ``jax.jit`` of the forward and of forward+gradient (``jax.grad`` of a sum: the
cotangent is a constant, and nothing reads the forward's output), or, with phase ``bwd``, of the
gradient alone from a given cotangent (``jax.vjp``, the cotangent a random array passed in), with
`pjrtkit.kernels.benchmarking` (method None: CUPTI on NVIDIA GPUs, wall clock on pjrtkit's CPU
device), medians of the iterations. Each implementation of a row is compiled once, then timed in
`--rounds` rounds that alternate the implementations (the order reversed every other round), so
load from other processes falls on all of them alike; a row reports the median over rounds, and
the JSON keeps every round. Implementations that cannot serve a row are "n/a".
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels.ragged_dot import arg_specs as ragged_specs
from tools.bench.config import DEFAULT_OUT
from tools.bench.png import Canvas

SIZES = {  # name -> [(op, shape, dtype, causal)]; ragged_dot's shape: (experts, m, k, n)
    "ci": [("attention", (1, 256, 4, 64), "float32", False),
           ("attention", (1, 256, 4, 64), "bfloat16", True),
           ("layer_norm", (256, 1024), "float32", False),
           ("ragged_dot", (8, 256, 64, 64), "float32", False)],
    "large": [("attention", (2, 1024, 8, 64), "float32", False),
              ("attention", (2, 1024, 8, 64), "bfloat16", True),
              ("attention", (1, 2048, 16, 64), "float32", True),
              ("layer_norm", (4096, 4096), "float32", False),
              ("layer_norm", (4096, 4096), "bfloat16", False),
              ("ragged_dot", (8, 2048, 1024, 1024), "float32", False),
              ("ragged_dot", (32, 2048, 512, 512), "bfloat16", False),
              ("ragged_dot", (64, 4096, 512, 256), "bfloat16", False)],
    "gpu": [("attention", (32, 2048, 16, 64), "bfloat16", False),
            ("attention", (32, 2048, 16, 64), "bfloat16", True),
            ("attention", (8, 4096, 16, 128), "bfloat16", True),
            ("layer_norm", (65536, 64), "bfloat16", False),
            ("layer_norm", (16384, 4096), "bfloat16", False)],
}


def _function(phase: str, fn):
  """The jitted function of `phase` for the op call `fn(x)`."""
  if phase == "fwd":
    return jax.jit(fn)
  if phase == "fwd+bwd":
    return jax.jit(jax.grad(lambda x: jnp.sum(fn(x).astype(jnp.float32))))
  return jax.jit(lambda x, dy: jax.vjp(fn, x)[1](dy)[0])


def rows(size: str, iterations: int, rounds: int = 1, ops: tuple[str, ...] = (),
         phases: tuple[str, ...] = ("fwd", "fwd+bwd")):
  """Yields one dict per row: label, median ms per implementation, ratio to "xla", rounds."""
  for op, shape, dtype, causal in SIZES[size]:
    if ops and op not in ops:
      continue
    key = jax.random.key(0)
    if op == "ragged_dot":  # x is lhs [m, k]; rhs and skewed group sizes are fixed
      groups, m, k, n = shape
      x = jax.random.normal(key, (m, k), dtype)
      rhs = (jax.random.normal(jax.random.key(2), (groups, k, n), jnp.float32) / k ** 0.5
             ).astype(dtype)
      sizes = jnp.asarray(ragged_specs.skewed_sizes(m, groups, 8), jnp.int32)
    else:
      x = jax.random.normal(key, shape, dtype)
    impls = pk.IMPLEMENTATIONS["dot_product_attention" if op == "attention" else op]
    for phase in phases:
      label = f"{op} {'x'.join(map(str, shape))} {dtype}{' causal' if causal else ''} {phase}"
      runs = {}
      fns = {}
      for impl in impls:
        if op == "attention":
          fn = lambda x, impl=impl: pk.dot_product_attention(x, x, x, is_causal=causal,
                                                             implementation=impl)
        elif op == "ragged_dot":
          fn = lambda x, impl=impl: pk.ragged_dot(x, rhs, sizes, implementation=impl)
        else:
          fn = lambda x, impl=impl: pk.layer_norm(x, None, None, implementation=impl)
        fns[impl] = fn
      args = [x]
      if phase == "bwd":
        out = jax.eval_shape(fns["xla"], x)
        args = [x, jax.random.normal(jax.random.key(1), out.shape, out.dtype)]
        label += " (cotangent given)"
      for impl, fn in fns.items():
        try:
          runs[impl] = pk.benchmarking.compile_benchmark(_function(phase, fn), args)
        except pk.UnsupportedImplementationError:
          runs[impl] = None
        except Exception as e:  # pylint: disable=broad-except
          print(f"{label} {impl}: failed: {type(e).__name__}: {str(e)[:400]}", file=sys.stderr,
                flush=True)
          runs[impl] = None
      per_round = {impl: [] for impl, run in runs.items() if run is not None}
      for r in range(rounds):
        order = list(per_round) if r % 2 == 0 else list(reversed(per_round))
        for impl in order:
          per_round[impl].append(runs[impl](args, iterations=iterations).median_evaluation_time_ms)
      times = {impl: (statistics.median(per_round[impl]) if impl in per_round else None)
               for impl in runs}
      base = times.get("xla")
      yield {"label": label, "ms": times, "rounds": per_round,
             "ratio": {k: (v / base if v and base else None) for k, v in times.items()}}


def draw(table, path: Path, title: str) -> None:
  impls = sorted({k for r in table for k in r["ratio"] if k != "xla"})
  colors = [(120, 144, 180), (226, 128, 44), (90, 170, 90), (180, 80, 160)]
  height = 70 + 12 * len(impls) * len(table) + 10 * len(table) + 40
  c = Canvas(900, height)
  c.text(10, 10, "kernel time / xla time (lower is faster)", scale=2)
  c.text(10, 34, title)
  y = 60
  for r in table:
    c.text(10, y, r["label"][:60])
    for i, impl in enumerate(impls):
      v = r["ratio"].get(impl)
      c.text(420, y + 10 + 12 * i, impl)
      if v is None:
        c.text(520, y + 10 + 12 * i, "n/a", (150, 0, 0))
      else:
        c.fill_rect(520, y + 10 + 12 * i, int(150 * min(v, 2.0)), 9, colors[i % 4])
        c.text(530 + int(150 * min(v, 2.0)), y + 10 + 12 * i, f"{v:.2f}")
    y += 12 * len(impls) + 14
  c.fill_rect(520 + 150, 56, 1, y - 56, (0, 0, 0))
  c.save(path)


def main(argv=None) -> int:
  p = argparse.ArgumentParser(description=__doc__)
  p.add_argument("--size", default="ci", choices=sorted(SIZES))
  p.add_argument("--iterations", type=int, default=5)
  p.add_argument("--rounds", type=int, default=1,
                 help="rounds alternating the implementations; medians over rounds")
  p.add_argument("--ops", default="",
                 help="comma-separated ops to run (attention, layer_norm, ragged_dot)")
  p.add_argument("--phases", default="fwd,fwd+bwd", help="comma-separated: fwd, fwd+bwd, bwd")
  p.add_argument("--out", type=Path, default=DEFAULT_OUT)
  a = p.parse_args(argv)
  dev = pk.current_device()
  ops = tuple(o for o in a.ops.split(",") if o)
  impls: list[str] = []  # the columns: every implementation of the ops run, in table order
  for op, *_ in SIZES[a.size]:
    if not ops or op in ops:
      for name in pk.IMPLEMENTATIONS["dot_product_attention" if op == "attention" else op]:
        if name not in impls:
          impls.append(name)
  print(f"device: {dev.describe()}, size {a.size}, {a.rounds} round(s), ratio = time / xla "
        f"time (same run)", flush=True)
  print("| row | " + " | ".join(impls) + " |")
  print("| --- |" + " --- |" * len(impls), flush=True)
  table = []
  phases = tuple(p for p in a.phases.split(",") if p)
  # Each row printed as soon as it is measured.
  for r in rows(a.size, a.iterations, a.rounds, ops, phases):
    table.append(r)
    cells = [("n/a" if r["ms"].get(i) is None else f"{r['ms'][i]:.2f} ms ({r['ratio'][i]:.2f})")
             if i in r["ms"] else "-" for i in impls]
    print(f"| {r['label']} | " + " | ".join(cells) + " |", flush=True)
  a.out.mkdir(parents=True, exist_ok=True)
  stem = f"kernels_{a.size}_{dev.platform}_{dev.kind.replace(' ', '_')}"
  if ops:
    stem += "_" + "_".join(ops)
  (a.out / f"{stem}.json").write_text(json.dumps({"device": dev.describe(), "rounds": a.rounds,
                                                  "rows": table}, indent=1))
  draw(table, a.out / f"{stem}.png", dev.describe())
  return 0


if __name__ == "__main__":
  sys.exit(main())
