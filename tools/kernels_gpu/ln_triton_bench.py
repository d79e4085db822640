"""The layer norm at wide rows on a GPU, per shape and parameter dtype (bf16 x): which
implementation ``implementation=None`` takes, the forward and forward+backward of ``None``,
``"triton"``, ``"xla"`` and ``"mosaic"`` (where it serves), the Triton forward's untuned config
against the earlier wide-row config ``SEVENTH`` (two rows per program, 16 warps, one program
per SM), and two
copies of x as roofs (`ln_bench_common.roofs`: XLA's elementwise pass, and a Pallas Triton copy
with the untuned config's rows per program and warps, one program per tile), all in one process,
alternating rounds, CUPTI medians; every layer norm output and gradient checked against a
float32 jnp layer norm's (bfloat16 tolerances of kernels/testing.py), the roofs only for x's
shape and dtype.

  PYTHONPATH=KIT:KIT/python python -m tools.kernels_gpu.ln_triton_bench
      [--shapes 4096x16384,2048x32768] [--params bfloat16,float32] [--rounds 3]

TB/s count 2 passes of x's bytes for the forward and the roofs and 5 for forward+backward (as
tools/bench/kernel_compare.py). Recorded runs: docs/results/kernels/layer_norm_triton_wide_h200.txt.
"""

from __future__ import annotations

from typing import Any, Sequence

import jax

from pjrtkit import kernels as pk
from pjrtkit.kernels.layer_norm.triton import TritonLayerNorm, TritonLayerNormConfig
from tools.bench import compare_contenders
from tools.kernels_gpu import ln_bench_common as common

SEVENTH = TritonLayerNormConfig(2, 16, 132)
"""An earlier untuned wide-row config of the Triton forward, kept as a contender (two rows per
program, 16 warps, one program per SM on the H200's 132 SMs). The name is part of the output's
contender label."""


def _contenders(spec: Any) -> dict[str, common.Contender]:
  """name -> (phase, function of (x, s, o[, dy]))."""
  out = {}
  for impl in (None, "triton", "xla", "mosaic"):
    fwd = lambda x, s, o, impl=impl: pk.layer_norm(x, s, o, implementation=impl)  # noqa: E731

    def fwd_bwd(x, s, o, dy, fwd=fwd):
      y, pull = jax.vjp(fwd, x, s, o)
      return y, pull(dy)

    out[f"fwd {impl}"] = ("fwd", fwd)
    out[f"fwd+bwd {impl}"] = ("fwd+bwd", fwd_bwd)
  op = TritonLayerNorm()
  untuned = op.phase_config(spec, "fwd")
  for name, config in (("triton untuned", untuned), ("triton seventh session", SEVENTH)):
    out[f"fwd {name} {config}"] = (
        "fwd", lambda x, s, o, c=config: op.forward((x, s, o), spec, c)[0])
  out.update(common.roofs(untuned.block_rows, untuned.num_warps))
  return out


def main(argv: Sequence[str] | None = None) -> int:
  args = common.parse_args(__doc__, "16384x4096,8192x8192,4096x16384,2048x32768,1024x65536",
                           "bfloat16,float32", argv)
  failures = 0
  for label, inputs, spec in common.cases(args):
    print(f"{label}: None takes " + compare_contenders.automatic_choice(
        lambda x, s, o: pk.layer_norm(x, s, o), inputs[:3]), flush=True)
    failures += common.check_and_time(label, inputs, _contenders(spec), args.rounds)
  return 1 if failures else 0


if __name__ == "__main__":
  raise SystemExit(main())
