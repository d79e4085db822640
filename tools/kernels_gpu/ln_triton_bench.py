"""The layer norm at wide rows on a GPU, per shape and parameter dtype (bf16 x): which
implementation ``implementation=None`` takes, the forward and forward+backward of ``None``,
``"triton"``, ``"xla"`` and ``"mosaic"`` (where it serves), and the Triton forward's untuned
config against the seventh session's (two rows per program, 16 warps, one program per SM), all
in one process, alternating rounds, CUPTI medians; every output and gradient checked against a
float32 jnp layer norm's (bfloat16 tolerances of kernels/testing.py).

  PYTHONPATH=KIT:KIT/python python -m tools.kernels_gpu.ln_triton_bench
      [--shapes 4096x16384,2048x32768] [--params bfloat16,float32] [--rounds 3]

TB/s count 2 passes of x's bytes for the forward and 5 for forward+backward (as
tools/bench/kernel_compare.py). The eighth session's runs: tools/bench/results/
layer_norm_triton_wide_h200.txt.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels import testing
from pjrtkit.kernels.layer_norm import base
from pjrtkit.kernels.layer_norm.triton import TritonLayerNorm, TritonLayerNormConfig
from tools.bench import compare_contenders

SEVENTH = TritonLayerNormConfig(2, 16, 132)
"""The Triton forward's untuned wide-row config before the eighth session (one program per SM on
the H200's 132 SMs)."""


def _reference(x: Any, s: Any, o: Any) -> Any:
  return base.reference(x, s, o, axis=-1, epsilon=1e-6, subtract_mean=True)


def _contenders(spec: Any) -> dict[str, tuple[str, Callable[..., Any]]]:
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
  return out


def main(argv: Sequence[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--shapes", default="16384x4096,8192x8192,4096x16384,2048x32768,1024x65536")
  parser.add_argument("--params", default="bfloat16,float32", help="scale/offset dtypes")
  parser.add_argument("--rounds", type=int, default=3)
  args = parser.parse_args(argv)
  failures = 0
  for shape_text in args.shapes.split(","):
    shape = tuple(int(d) for d in shape_text.split("x"))
    for params in args.params.split(","):
      kx, ks, ko, kd = jax.random.split(jax.random.key(0), 4)
      x = jax.random.normal(kx, shape, jnp.bfloat16)
      s = (1 + 0.1 * jax.random.normal(ks, shape[1:])).astype(params)
      o = (0.1 * jax.random.normal(ko, shape[1:])).astype(params)
      dy = jax.random.normal(kd, shape, jnp.bfloat16)
      spec = base.make_spec(x, s, o, -1, 1e-6, True)
      label = f"{shape_text} params {params}"
      print(f"{label}: None takes " + compare_contenders.automatic_choice(
          lambda x, s, o: pk.layer_norm(x, s, o), (x, s, o)), flush=True)
      want, pullback = jax.vjp(_reference, x, s, o)
      want_grads = pullback(dy)
      runs = {}
      for name, (phase, f) in _contenders(spec).items():
        inputs = (x, s, o) if phase == "fwd" else (x, s, o, dy)
        try:
          got = jax.jit(f)(*inputs)
          testing.assert_close(got if phase == "fwd" else got[0], want, "bfloat16", "fwd")
          for g, w in zip(() if phase == "fwd" else got[1], want_grads):
            testing.assert_close(g, w, "bfloat16", "grad")
          f_std, arrays = pk.benchmarking.standardize_function(f, *inputs)
          runs[name] = (phase, pk.benchmarking.compile_benchmark(f_std, arrays), arrays, [])
        except pk.UnsupportedImplementationError as e:
          print(f"{label} {name}: refused ({str(e)[:100]})", flush=True)
        except AssertionError as e:
          failures += 1
          print(f"{label} {name}: WRONG {str(e)[:200]}", flush=True)
      for _ in range(args.rounds):
        for _, run, arrays, times in runs.values():
          times.append(run(arrays, iterations=10).median_evaluation_time_ms)
      for name, (phase, _, _, times) in runs.items():
        tb = (2 if phase == "fwd" else 5) * x.size * x.dtype.itemsize / 1e9
        print(f"{label} {name}: {tb / statistics.median(times):.3f} TB/s", flush=True)
  return 1 if failures else 0


if __name__ == "__main__":
  raise SystemExit(main())
