"""The wide-row Mosaic layer norm forward (kernels/layer_norm/mosaic_wide.py) on a GPU: checks each
(stages, programs per SM) against a float32 jnp layer norm (bfloat16 output tolerance of
kernels/testing.py) and times it (CUPTI median) next to the Triton forward (``"triton"``, its
tuned or untuned config), ``implementation=None`` and the jnp layer norm, in one process.

  PYTHONPATH=KIT:KIT/python python -m tools.kernels_gpu.ln_wide_bench [--shapes 8192x8192]
      [--module COPY.py]

``--module`` times a copy of mosaic_wide.py (same ``forward`` signature) beside the shipped one.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels import testing
from pjrtkit.kernels.layer_norm import mosaic_wide

CONFIGS = ((1, 2), (1, 3), (1, 4), (1, 5), (1, 6), (2, 2), (2, 3))
"""(programs_per_sm, stages) tried where they fit shared memory."""


def _load(path: str) -> Any:
  spec = importlib.util.spec_from_file_location("ln_wide_variant", path)
  module = importlib.util.module_from_spec(spec)
  sys.modules[spec.name] = module
  spec.loader.exec_module(module)
  return module


def _reference(x: Any, s: Any, o: Any, subtract_mean: bool) -> Any:
  xf = x.astype(jnp.float32)
  if subtract_mean:
    xf = xf - jnp.mean(xf, axis=-1, keepdims=True)
  y = xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + 1e-6)
  if s is not None:
    y = y * s.astype(jnp.float32)
  if o is not None:
    y = y + o.astype(jnp.float32)
  return y.astype(x.dtype)


def _time(f: Callable[..., Any], args: Sequence[Any]) -> float:
  f_std, a = pk.benchmarking.standardize_function(f, *args)
  return pk.benchmarking.compile_benchmark(f_std, a)(a).median_evaluation_time_ms


def main(argv: Sequence[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--shapes", default="8192x8192,1000x2048", help="n x c, comma-separated")
  parser.add_argument("--module", default=None, help="a copy of mosaic_wide.py to time as well")
  args = parser.parse_args(argv)
  modules = [("", mosaic_wide)] + ([("variant ", _load(args.module))] if args.module else [])
  failures = 0
  for shape in args.shapes.split(","):
    n, c = (int(d) for d in shape.split("x"))
    kx, ks, ko = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(kx, (n, c), jnp.bfloat16)
    s = 1 + 0.1 * jax.random.normal(ks, (c,), jnp.bfloat16)
    o = 0.1 * jax.random.normal(ko, (c,), jnp.bfloat16)
    tb = 2 * x.size * x.dtype.itemsize / 1e9  # TB/s from ms: read x, write y
    for name, f in (("jnp", lambda x, s, o: _reference(x, s, o, True)),
                    ("pk triton", lambda x, s, o: pk.layer_norm(x, s, o, implementation="triton")),
                    ("pk None", lambda x, s, o: pk.layer_norm(x, s, o))):
      ms = _time(f, (x, s, o))
      print(f"{shape} {name}: {ms:.4f} ms {tb / ms:.3f} TB/s", flush=True)
    for (per_sm, stages), (prefix, module) in ((c, m) for c in CONFIGS for m in modules):
      sizes = (c, x.dtype.itemsize, [s.dtype.itemsize, o.dtype.itemsize])
      if module.unsupported_reason(*sizes, stages, per_sm):
        continue
      for with_params, subtract_mean in ((True, True), (False, False)):
        f = lambda x, s, o, m=module, st=stages, p=per_sm, sm=subtract_mean: m.forward(  # noqa
            x, s, o, epsilon=1e-6, subtract_mean=sm, stages=st, programs_per_sm=p)
        sp, op = (s, o) if with_params else (None, None)
        label = (f"{shape} {prefix}stages={stages} programs_per_sm={per_sm}"
                 f"{'' if with_params else ' rms, no scale/offset'}")
        try:
          out = jax.jit(f)(x, sp, op)
          testing.assert_close(out, _reference(x, sp, op, subtract_mean), "bfloat16", "fwd")
          if with_params:
            ms = _time(f, (x, sp, op))
            print(f"{label}: ok, {ms:.4f} ms {tb / ms:.3f} TB/s", flush=True)
          else:
            print(f"{label}: ok", flush=True)
        except Exception as e:  # pylint: disable=broad-except
          failures += 1
          print(f"{label}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
  return 1 if failures else 0


if __name__ == "__main__":
  raise SystemExit(main())
