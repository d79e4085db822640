"""Kernel table: every pjrtkit.kernels implementation's time per shape as a ratio to "xla" in
the same run, on the current device, plus a PNG.

  JAX_PLATFORMS=pjrtkit .venv/bin/python -m tools.bench.kernels [--size ci|large|gpu] [--out DIR]

Each row times ``jax.jit`` of the forward and of forward+gradient (``jax.grad`` of a sum) with
`pjrtkit.kernels.benchmarking` (method None: CUPTI on NVIDIA GPUs, wall clock on pjrtkit's CPU
device), medians of the iterations. Implementations that cannot serve a row are "n/a".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from tools.bench.png import Canvas

SIZES = {  # name -> [(op, shape, dtype, causal)]
    "ci": [("attention", (1, 256, 4, 64), "float32", False),
           ("attention", (1, 256, 4, 64), "bfloat16", True),
           ("layer_norm", (256, 1024), "float32", False)],
    "large": [("attention", (2, 1024, 8, 64), "float32", False),
              ("attention", (2, 1024, 8, 64), "bfloat16", True),
              ("attention", (1, 2048, 16, 64), "float32", True),
              ("layer_norm", (4096, 4096), "float32", False),
              ("layer_norm", (4096, 4096), "bfloat16", False)],
    "gpu": [("attention", (32, 2048, 16, 64), "bfloat16", False),
            ("attention", (32, 2048, 16, 64), "bfloat16", True),
            ("attention", (8, 4096, 16, 128), "bfloat16", True),
            ("layer_norm", (65536, 64), "bfloat16", False),
            ("layer_norm", (16384, 4096), "bfloat16", False)],
}


def _time(f, args, iterations):
  run = pk.benchmarking.compile_benchmark(jax.jit(f), args)
  return run(args, iterations=iterations).median_evaluation_time_ms


def rows(size: str, iterations: int):
  for op, shape, dtype, causal in SIZES[size]:
    key = jax.random.key(0)
    x = jax.random.normal(key, shape, dtype)
    impls = pk.IMPLEMENTATIONS["dot_product_attention" if op == "attention" else op]
    for phase in ("fwd", "fwd+bwd"):
      label = f"{op} {'x'.join(map(str, shape))} {dtype}{' causal' if causal else ''} {phase}"
      times = {}
      for impl in impls:
        if op == "attention":
          fn = lambda x, impl=impl: pk.dot_product_attention(x, x, x, is_causal=causal,
                                                             implementation=impl)
        else:
          fn = lambda x, impl=impl: pk.layer_norm(x, None, None, implementation=impl)
        f = fn if phase == "fwd" else jax.grad(lambda x, fn=fn: jnp.sum(fn(x).astype(jnp.float32)))
        try:
          times[impl] = _time(f, [x], iterations)
        except pk.UnsupportedImplementationError:
          times[impl] = None
        except Exception as e:  # pylint: disable=broad-except
          print(f"{label} {impl}: failed: {type(e).__name__}: {str(e)[:400]}", file=sys.stderr,
                flush=True)
          times[impl] = None
      base = times.get("xla")
      yield {"label": label, "ms": times,
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
  p.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
  a = p.parse_args(argv)
  dev = pk.current_device()
  impls = list(pk.IMPLEMENTATIONS["dot_product_attention"])
  print(f"device: {dev.describe()}, size {a.size}, ratio = time / xla time (same run)",
        flush=True)
  print("| row | " + " | ".join(impls) + " |")
  print("| --- |" + " --- |" * len(impls), flush=True)
  table = []
  for r in rows(a.size, a.iterations):  # Each row printed as soon as it is measured.
    table.append(r)
    cells = [("n/a" if r["ms"].get(i) is None else f"{r['ms'][i]:.2f} ms ({r['ratio'][i]:.2f})")
             if i in r["ms"] else "-" for i in impls]
    print(f"| {r['label']} | " + " | ".join(cells) + " |", flush=True)
  a.out.mkdir(parents=True, exist_ok=True)
  stem = f"kernels_{a.size}_{dev.platform}_{dev.kind.replace(' ', '_')}"
  (a.out / f"{stem}.json").write_text(json.dumps({"device": dev.describe(), "rows": table},
                                                 indent=1))
  draw(table, a.out / f"{stem}.png", dev.describe())
  return 0


if __name__ == "__main__":
  sys.exit(main())
