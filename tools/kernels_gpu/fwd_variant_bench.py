"""A copy of the Mosaic attention forward (a module file, e.g. a branch's mosaic_fwd.py) against
the shipped ``mosaic_fwd`` on a GPU, one case per process: CUPTI median of each and the largest
difference of their outputs and log-sum-exps on the same inputs.

  git show BRANCH:kernels/dot_product_attention/mosaic_fwd.py > /tmp/variant.py
  PYTHONPATH=KIT:KIT/python python -m tools.kernels_gpu.fwd_variant_bench /tmp/variant.py A1

Cases (tuned configs): A1 1x16384x16x128, A2 the same causal, A3 32x2048x16x64, A5 the same causal
(persistent), S 3x1024x4x64 on 5 programs (about 19 tiles each), P 2x1024x8x64 causal on 20
programs with 64-key steps (persistent, with drains). The seventh session's runs are in
``tools/bench/results/mosaic_fwd_variants_h200.txt``.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit import kernels as pk
from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.dot_product_attention import mosaic_fwd

# name: (b, t, h, d, causal, block_kv, stages, programs (None: the SM count))
CASES = {"A1": (1, 16384, 16, 128, False, 128, 2, None),
         "A2": (1, 16384, 16, 128, True, 128, 2, 2048),
         "A3": (32, 2048, 16, 64, False, 256, 2, None),
         "A5": (32, 2048, 16, 64, True, 128, 3, None),
         "S": (3, 1024, 4, 64, False, 128, 2, 5),
         "P": (2, 1024, 8, 64, True, 64, 2, 20)}


def _time(f: Any, args: Sequence[Any]) -> float:
  f_std, a = pk.benchmarking.standardize_function(f, *args)
  return pk.benchmarking.compile_benchmark(f_std, a)(a).median_evaluation_time_ms


def main(argv: Sequence[str]) -> int:
  path, case = argv
  spec = importlib.util.spec_from_file_location("fwd_variant", path)
  variant = importlib.util.module_from_spec(spec)
  sys.modules[spec.name] = variant  # dataclasses look their module up there
  spec.loader.exec_module(variant)
  b, t, h, d, causal, block_kv, stages, programs = CASES[case]
  q, k, v = (jax.random.normal(key, (b, t, h, d), jnp.bfloat16)
             for key in jax.random.split(jax.random.key(2), 3))
  tiles = t // 128 * b * h
  programs = programs or min(tiles, pallas_lib.sm_count())
  flops = 4 * b * t * t * h * d * (0.5 if causal else 1.0)
  results = {}
  for label, module in (("variant", variant), ("shipped", mosaic_fwd)):
    g = module.FwdGeometry(batch=b, heads=h, kv_heads=h, q_len_padded=t, kv_len=t,
                           kv_len_padded=t, head_dim=d, block_q=64, block_kv=block_kv,
                           stages=stages, scale=1 / math.sqrt(d), causal=causal,
                           programs=programs)
    f = lambda q, k, v, module=module, g=g: module.forward(q, k, v, g)  # noqa: E731
    results[label] = [np.asarray(x, np.float32) for x in jax.jit(f)(q, k, v)]
    ms = _time(f, (q, k, v))
    print(f"{case} {label}: {ms:.4f} ms {flops / ms / 1e9:.1f} TFLOP/s (programs {programs})",
          flush=True)
  (vo, vl), (so, sl) = results["variant"], results["shipped"]
  print(f"{case} variant vs shipped: max|dO| {np.max(np.abs(vo - so)):.3g} "
        f"max|dlse| {np.max(np.abs(vl - sl)):.3g}", flush=True)
  return 0


if __name__ == "__main__":
  raise SystemExit(main(sys.argv[1:]))
