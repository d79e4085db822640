"""The Triton layer norm's chunked backward on a GPU: forward+backward of the Triton forward
(its untuned config) with the chunked backward at several tilings, against the whole-row
backward and XLA's forward+backward, per shape and parameter dtype (bf16 x), in one process,
alternating rounds, CUPTI medians; every output and gradient checked against a float32 jnp layer
norm's (bfloat16 tolerances of kernels/testing.py).

  PYTHONPATH=KIT:KIT/python python -m tools.kernels_gpu.ln_chunked_bwd_bench
      [--shapes 4096x16384,2048x32768] [--params bfloat16,float32] [--rounds 3]

TB/s count 5 passes of x's bytes for forward+backward (as tools/bench/kernel_compare.py) and 3
for the backward alone. Recorded runs: docs/results/kernels/
layer_norm_triton_wide_h200.txt (section 9).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax

from pjrtkit import kernels as pk
from pjrtkit.kernels.core.pallas import sm_count
from pjrtkit.kernels.layer_norm.triton import TritonLayerNorm, TritonLayerNormConfig
from tools.kernels_gpu import ln_bench_common as common

TILINGS = (  # (rows per tile, channels per chunk, warps, programs per SM, prefetch)
    (1, 1024, 4, 8, True), (1, 2048, 4, 8, True), (2, 2048, 8, 4, True), (2, 1024, 4, 8, True),
    (1, 1024, 4, 12, True), (1, 512, 4, 8, True), (1, 1024, 2, 16, True), (2, 1024, 8, 4, True),
    (1, 4096, 8, 4, True), (1, 2048, 8, 4, True), (1, 1024, 4, 0, True), (1, 1024, 4, 8, False),
)
"""The tilings timed; programs per SM 0 means one program per row block."""


def _contenders(spec: Any) -> dict[str, common.Contender]:
  """name -> (phase, function of (x, s, o, dy))."""
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

  out = {"xla fwd+bwd": ("fwd+bwd", xla),
         "triton fwd + whole-row bwd": ("fwd+bwd", triton_with(op.default_config(spec)))}
  for rows, chunk, warps, per_sm, prefetch in TILINGS:
    config = TritonLayerNormConfig(rows, warps, per_sm * sm_count(), prefetch, chunk)
    out[f"triton fwd + chunked bwd {rows}x{chunk} w{warps} x{per_sm} prefetch "
        f"{int(prefetch)}"] = ("fwd+bwd", triton_with(config))
  untuned = op.phase_config(spec, "bwd")
  out[f"bwd alone, untuned {untuned}"] = (
      "bwd", lambda x, s, o, dy: op.backward((x, s, o, None, None), dy, spec, untuned))
  return out


def main(argv: Sequence[str] | None = None) -> int:
  args = common.parse_args(__doc__, "8192x8192,4096x12288,4096x16384,2048x32768,1024x65536",
                           "bfloat16", argv)
  failures = sum(common.check_and_time(label, inputs, _contenders(spec), args.rounds)
                 for label, inputs, spec in common.cases(args))
  return 1 if failures else 0


if __name__ == "__main__":
  raise SystemExit(main())
