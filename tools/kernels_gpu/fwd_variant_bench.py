"""Copies of the Mosaic attention forward (module files, e.g. branches' mosaic_fwd.py) against
the shipped ``mosaic_fwd`` on a GPU: alternating rounds in one process, CUPTI medians, and the
largest differences of their outputs and log-sum-exps on the same inputs.

  git show BRANCH:kernels/dot_product_attention/mosaic/fwd.py > /tmp/variant.py
  PYTHONPATH=KIT:KIT/python python -m tools.kernels_gpu.fwd_variant_bench /tmp/variant.py A2,A3 \\
      [--rounds 6] [--without-lse] [--tokamax] [--set listed=1]

Several copies go comma-separated (``/tmp/a.py,/tmp/b.py``) and are named by their file stems (one
copy is named ``variant``). ``shipped`` is built as the op builds it: with its last round split
where `mosaic_attention.split_forward_tail` says so (A1, A3, S) and causal persistent launches running their
tiles from a list (`mosaic_attention.listed_forward`: A2p, A5, P). ``--without-lse`` also times each copy
built with ``FwdGeometry(with_lse=False)`` (the kernel that calls which are not differentiated
run, where the copy has that field); ``--tokamax`` adds Tokamax's mosaic forward (its
wheel and ``tools/kernels_gpu/tokamax_shims`` on PYTHONPATH, as ``speed.sh`` sets them);
``--set FIELD=INT`` builds the copies with those FwdGeometry fields, the case's own included
(comma-separated; a copy whose geometry refuses them at a case is reported and left out there).

Cases (tuned configs): A1 1x16384x16x128, A2 the same causal, A3 32x2048x16x64, A5 the same causal
(persistent), S 3x1024x4x64 on 5 programs (about 19 tiles each), P 2x1024x8x64 causal on 20
programs with 64-key steps (persistent, with drains), A2p A2 on the SM count (persistent). Recorded
runs are in ``docs/results/kernels/mosaic_fwd_variants_h200.txt``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit import kernels as pk
from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.dot_product_attention.mosaic import attention as mosaic_attention
from pjrtkit.kernels.dot_product_attention.mosaic import fwd as mosaic_fwd
from tools.kernels_gpu import variant_cli

# name: (b, t, h, d, causal, block_kv, stages, programs (None: the SM count))
CASES = {"A1": (1, 16384, 16, 128, False, 128, 2, None),
         "A2": (1, 16384, 16, 128, True, 128, 2, 2048),
         "A2p": (1, 16384, 16, 128, True, 128, 2, None),
         "A3": (32, 2048, 16, 64, False, 256, 2, None),
         "A5": (32, 2048, 16, 64, True, 128, 3, None),
         "S": (3, 1024, 4, 64, False, 128, 2, 5),
         "P": (2, 1024, 8, 64, True, 64, 2, 20)}


_RESERVED = frozenset({"shipped", "tokamax mosaic"})
"""Contender names the copies' file stems must not take."""


def _contenders(variants: Any, case: str, without_lse: bool, tokamax: bool,
                fields: dict[str, int] | None = None
                ) -> dict[str, Callable[..., tuple[Any, Any]]]:
  """name -> f(q, k, v) returning (out, lse or None). `variants`: name -> module, or one module
  (named ``variant``); `fields`: FwdGeometry fields the copies are built with."""
  if not isinstance(variants, dict):
    variants = {"variant": variants}
  b, t, h, d, causal, block_kv, stages, programs = CASES[case]
  programs = programs or min(t // 128 * b * h, pallas_lib.sm_count())

  def kernel(module: Any, policy: bool = False, **extra: Any) -> Callable[..., tuple[Any, Any]]:
    # `extra` may also override the case's own fields (--set stages=3).
    g = module.FwdGeometry(**{**dict(batch=b, heads=h, kv_heads=h, q_len_padded=t, kv_len=t,
                                     kv_len_padded=t, head_dim=d, block_q=64,
                                     block_kv=block_kv, stages=stages, scale=1 / math.sqrt(d),
                                     causal=causal, programs=programs), **extra})
    if policy and mosaic_attention.split_forward_tail(g):
      g = dataclasses.replace(g, split_tail=True)
    elif policy and mosaic_attention.listed_forward(g):
      g = dataclasses.replace(g, listed=True)
    return lambda q, k, v: module.forward(q, k, v, g)

  # "shipped" as the op builds it (the last round split where `split_forward_tail` says so,
  # causal persistent tiles from a list where `listed_forward` does);
  # copies with their FwdGeometry's defaults.
  out = {"shipped": kernel(mosaic_fwd, policy=True)}
  for name, variant in variants.items():
    try:
      out[name] = kernel(variant, **(fields or {}))
    except ValueError as e:
      print(f"{case} {name}: left out ({e})", flush=True)
      continue
    if without_lse:
      known = {f.name for f in dataclasses.fields(variant.FwdGeometry)}
      if "with_lse" not in known:
        raise SystemExit(f"--without-lse: {name}'s FwdGeometry has no with_lse field")
      out[f"{name} without lse"] = kernel(variant, with_lse=False, **(fields or {}))
  if tokamax:
    import tokamax as tk  # pylint: disable=g-import-not-at-top

    out["tokamax mosaic"] = lambda q, k, v: (tk.dot_product_attention(
        q, k, v, is_causal=causal, implementation="mosaic"), None)
  return out


def run_case(variants: Any, case: str, rounds: int, without_lse: bool, tokamax: bool,
             fields: dict[str, int] | None = None) -> None:
  """Prints each contender's median and rounds (TFLOP/s) and its differences from the shipped
  kernel's output (and log-sum-exp, where both write one)."""
  b, t, h, d, causal = CASES[case][:5]
  q, k, v = (jax.random.normal(key, (b, t, h, d), jnp.bfloat16)
             for key in jax.random.split(jax.random.key(2), 3))
  flops = 4 * b * t * t * h * d * (0.5 if causal else 1.0)
  runs, results = {}, {}
  for name, f in _contenders(variants, case, without_lse, tokamax, fields).items():
    out, lse = jax.jit(f)(q, k, v)
    results[name] = (np.asarray(out, np.float32),
                     None if lse is None else np.asarray(lse, np.float32))
    f_std, a = pk.benchmarking.standardize_function(lambda q, k, v, f=f: f(q, k, v)[0], q, k, v)
    runs[name] = (pk.benchmarking.compile_benchmark(f_std, a), a, [])
  for _ in range(rounds):
    for run, a, times in runs.values():
      times.append(run(a, iterations=10).median_evaluation_time_ms)
  ref_out, ref_lse = results["shipped"]
  for name, (_, _, times) in runs.items():
    ms = statistics.median(times)
    out, lse = results[name]
    diff = f"max|dO| {np.max(np.abs(out - ref_out)):.3g}"
    if lse is not None:
      diff += f" max|dlse| {np.max(np.abs(lse - ref_lse)):.3g}"
    print(f"{case} {name}: {ms:.4f} ms {flops / ms / 1e9:.1f} TFLOP/s rounds "
          f"{' '.join(f'{flops / x / 1e9:.1f}' for x in times)}; {diff}", flush=True)


def main(argv: Sequence[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("paths", help="the copies' mosaic_fwd.py files, comma-separated")
  parser.add_argument("cases", help=f"comma-separated, of {sorted(CASES)}")
  parser.add_argument("--rounds", type=int, default=6)
  parser.add_argument("--without-lse", action="store_true")
  parser.add_argument("--tokamax", action="store_true")
  parser.add_argument("--set", default="", help="FIELD=INT[,FIELD=INT]: the copies' FwdGeometry")
  args = parser.parse_args(argv)
  cases = variant_cli.check_cases(parser, args.cases, CASES, args.rounds)
  paths = args.paths.split(",")
  # One copy is named "variant" whatever its file; several by their file stems.
  names = variant_cli.copy_names(parser, paths, args.paths, _RESERVED if len(paths) > 1 else ())
  if len(paths) == 1:
    names = ["variant"]
  try:
    fields = variant_cli.parse_fields(args.set)
  except ValueError as e:
    parser.error(str(e))
  if "with_lse" in fields:
    parser.error("--set: with_lse is --without-lse's (each copy runs with its lse, and without "
                 "it where --without-lse is given)")
  variants = {n: variant_cli.load_copy(p, f"fwd_variant_{i}")
              for i, (n, p) in enumerate(zip(names, paths))}
  variant_cli.check_fields(parser, variants, fields, "FwdGeometry")
  for case in cases:
    run_case(variants, case, args.rounds, args.without_lse, args.tokamax, fields)
  return 0


if __name__ == "__main__":
  raise SystemExit(main(sys.argv[1:]))
