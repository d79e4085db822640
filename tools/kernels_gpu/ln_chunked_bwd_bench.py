"""The Triton layer norm's chunked backward on a GPU: forward+backward of the Triton forward
(its untuned config) with the chunked backward at several tilings, against the whole-row
backward and XLA's forward+backward, per shape and parameter dtype (bf16 x), in one process,
alternating rounds, CUPTI medians; every output and gradient checked against a float32 jnp layer
norm's (bfloat16 tolerances of kernels/testing.py).

  PYTHONPATH=KIT:KIT/python python -m tools.kernels_gpu.ln_chunked_bwd_bench
      [--shapes 4096x16384,2048x32768] [--params bfloat16,float32] [--rounds 3]

TB/s count 5 passes of x's bytes for forward+backward (as tools/bench/kernel_compare.py) and 3
for the backward alone. The ninth session's run: tools/bench/results/
layer_norm_triton_wide_h200.txt (section 9).
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels import testing
from pjrtkit.kernels.core.pallas import sm_count
from pjrtkit.kernels.layer_norm import base
from pjrtkit.kernels.layer_norm.triton import TritonLayerNorm, TritonLayerNormConfig

TILINGS = (  # (rows per tile, channels per chunk, warps, programs per SM, prefetch)
    (1, 1024, 4, 8, True), (1, 2048, 4, 8, True), (2, 2048, 8, 4, True), (2, 1024, 4, 8, True),
    (1, 1024, 4, 12, True), (1, 512, 4, 8, True), (1, 1024, 2, 16, True), (2, 1024, 8, 4, True),
    (1, 4096, 8, 4, True), (1, 2048, 8, 4, True), (1, 1024, 4, 0, True), (1, 1024, 4, 8, False),
)
"""The tilings timed; programs per SM 0 means one program per row block."""


def _contenders(spec: Any) -> dict[str, tuple[int, Callable[..., Any]]]:
  """name -> (passes counted, function of (x, s, o, dy) returning (y, grads) or grads)."""
  op = TritonLayerNorm()
  forward_config = op.phase_config(spec, "fwd")

  def triton_with(backward_config: TritonLayerNormConfig) -> Callable[..., Any]:
    def f(x, s, o, dy):
      y, residuals = op.forward((x, s, o), spec, forward_config)
      return y, op.backward(residuals, dy, spec, backward_config)
    return f

  def xla(x, s, o, dy):
    y, pull = jax.vjp(lambda *a: pk.layer_norm(*a, implementation="xla"), x, s, o)
    return y, pull(dy)

  out = {"xla fwd+bwd": (5, xla),
         "triton fwd + whole-row bwd": (5, triton_with(op.default_config(spec)))}
  for rows, chunk, warps, per_sm, prefetch in TILINGS:
    config = TritonLayerNormConfig(rows, warps, per_sm * sm_count(), prefetch, chunk)
    out[f"triton fwd + chunked bwd {rows}x{chunk} w{warps} x{per_sm} prefetch "
        f"{int(prefetch)}"] = (5, triton_with(config))
  untuned = op.phase_config(spec, "bwd")
  out[f"chunked bwd alone, untuned {untuned}"] = (
      3, lambda x, s, o, dy: op.backward((x, s, o, None, None), dy, spec, untuned))
  return out


def main(argv: Sequence[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--shapes", default="8192x8192,4096x12288,4096x16384,2048x32768,1024x65536")
  parser.add_argument("--params", default="bfloat16", help="scale/offset dtypes")
  parser.add_argument("--rounds", type=int, default=3)
  args = parser.parse_args(argv)
  failures = 0
  for shape_text in args.shapes.split(","):
    shape = tuple(int(d) for d in shape_text.split("x"))
    for params in args.params.split(","):
      kx, ks, ko, kd = jax.random.split(jax.random.key(0), 4)
      x = jax.random.normal(kx, shape, jnp.bfloat16) * 2 + 0.5
      s = (1 + 0.1 * jax.random.normal(ks, shape[1:])).astype(params)
      o = (0.1 * jax.random.normal(ko, shape[1:])).astype(params)
      dy = jax.random.normal(kd, shape, jnp.bfloat16)
      spec = base.make_spec(x, s, o, -1, 1e-6, True)
      want, pullback = jax.vjp(lambda *a: base.reference(*a, axis=-1, epsilon=1e-6), x, s, o)
      want_grads = pullback(dy)
      label = f"{shape_text} params {params}"
      runs = {}
      for name, (passes, f) in _contenders(spec).items():
        try:
          got = jax.jit(f)(x, s, o, dy)
          grads = got[1] if passes == 5 else got
          if passes == 5:
            testing.assert_close(got[0], want, "bfloat16", "fwd")
          for g, w in zip(grads, want_grads):
            testing.assert_close(g, w, "bfloat16", "grad")
          f_std, arrays = pk.benchmarking.standardize_function(f, x, s, o, dy)
          runs[name] = (passes, pk.benchmarking.compile_benchmark(f_std, arrays), arrays, [])
        except AssertionError as e:
          failures += 1
          print(f"{label} {name}: WRONG {str(e)[:200]}", flush=True)
      for _ in range(args.rounds):
        for _, run, arrays, times in runs.values():
          times.append(run(arrays, iterations=10).median_evaluation_time_ms)
      for name, (passes, _, _, times) in runs.items():
        ms = statistics.median(times)
        tb = passes * x.size * x.dtype.itemsize / 1e9
        print(f"{label} {name}: {ms * 1e3:.1f} us, {tb / ms:.3f} TB/s", flush=True)
  return 1 if failures else 0


if __name__ == "__main__":
  raise SystemExit(main())
