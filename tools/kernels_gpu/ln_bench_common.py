"""What the wide-row layer norm benchmarks share (ln_triton_bench, ln_chunked_bwd_bench): the
command line, the inputs per shape and parameter dtype, copies of x as bandwidth roofs, and the
loop that checks every contender against a float32 jnp layer norm and times them in alternating
rounds (CUPTI medians).

A contender is ``(phase, function)``: phase "fwd" takes (x, s, o) and returns y; "fwd+bwd" takes
(x, s, o, dy) and returns (y, (dx, dscale, doffset)); "bwd" takes (x, s, o, dy) and returns the
gradients; "roof" takes (x, s, o) and returns an array of x's shape and dtype (a copy: the
bandwidth a layer norm's forward could reach; its values are not checked). TB/s count 2 / 5 / 3 / 2 passes of x's bytes (as
tools/bench/kernel_compare.py).
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any, Callable, Iterator, Sequence

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from pjrtkit import kernels as pk
from pjrtkit.kernels import testing
from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.layer_norm import base
from pjrtkit.kernels.layer_norm.triton_tiles import call_params

PASSES = {"fwd": 2, "fwd+bwd": 5, "bwd": 3, "roof": 2}
"""Passes of x's bytes counted per phase."""

Contender = tuple[str, Callable[..., Any]]


def parse_args(doc: str, shapes: str, params: str,
               argv: Sequence[str] | None) -> argparse.Namespace:
  """--shapes (e.g. 4096x16384,2048x32768), --params (scale/offset dtypes), --rounds."""
  parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
  parser.add_argument("--shapes", default=shapes)
  parser.add_argument("--params", default=params, help="scale/offset dtypes")
  parser.add_argument("--rounds", type=int, default=3)
  return parser.parse_args(argv)


def cases(args: argparse.Namespace) -> Iterator[tuple[str, tuple[Any, ...], Any]]:
  """(label, (x, s, o, dy), spec) per shape and parameter dtype: bf16 x and dy, scale about 1
  and offset about 0 in the parameter dtype, over the last axis."""
  for shape_text in args.shapes.split(","):
    shape = tuple(int(d) for d in shape_text.split("x"))
    for params in args.params.split(","):
      kx, ks, ko, kd = jax.random.split(jax.random.key(0), 4)
      x = jax.random.normal(kx, shape, jnp.bfloat16)
      s = (1 + 0.1 * jax.random.normal(ks, shape[1:])).astype(params)
      o = (0.1 * jax.random.normal(ko, shape[1:])).astype(params)
      dy = jax.random.normal(kd, shape, jnp.bfloat16)
      yield f"{shape_text} params {params}", (x, s, o, dy), base.make_spec(x, s, o, -1, 1e-6, True)


def triton_copy(x: jax.Array, block_rows: int, num_warps: int) -> jax.Array:
  """x [rows, channels] copied by a Pallas Triton kernel, one program per `block_rows` rows with
  `num_warps` warps, no arithmetic: what Pallas Triton moves with a whole-row forward's tiles
  (one program per tile). Triton's tiles hold a power of two of elements: other tiles are
  refused (UnsupportedImplementationError), the rows' last tile may be partial."""
  n, c = x.shape
  if pallas_lib.next_pow2(block_rows * c, minimum=1) != block_rows * c:
    raise pk.UnsupportedImplementationError(
        "copy roof", "triton", f"a tile of block_rows x channels = {block_rows} x {c} elements is "
        "not a power of two (Triton's tiles must be)")

  def kernel(x_ref: Any, y_ref: Any) -> None:
    y_ref[...] = x_ref[...]

  block = pl.BlockSpec((block_rows, c), lambda i: (i, 0))
  return pl.pallas_call(kernel, grid=(pl.cdiv(n, block_rows),), in_specs=[block],
                        out_specs=block, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                        name="pjrtkit_copy_roof", **call_params(num_warps))(x)


def roofs(block_rows: int, num_warps: int) -> dict[str, Contender]:
  """Copies of x that time what a forward could reach at best: XLA's elementwise pass (a
  negation) and `triton_copy` with `block_rows` rows per program and `num_warps` warps."""
  return {"roof xla -x": ("roof", lambda x, s, o: -x),
          f"roof triton copy {block_rows} rows {num_warps} warps": (
              "roof", lambda x, s, o: triton_copy(x, block_rows, num_warps))}


def check_and_time(label: str, inputs: tuple[Any, ...], contenders: dict[str, Contender],
                   rounds: int) -> int:
  """Checks each contender's outputs and gradients (bfloat16 tolerances; a roof's output only for
  x's shape and dtype), times the correct ones in `rounds` alternating rounds of 10 iterations
  and prints their TB/s; returns how many were wrong. A contender refused with
  UnsupportedImplementationError is reported and skipped."""
  x, s, o, dy = inputs
  want, pullback = jax.vjp(lambda *a: base.reference(*a, axis=-1, epsilon=1e-6), x, s, o)
  want_grads = pullback(dy)
  failures, runs = 0, {}
  for name, (phase, f) in contenders.items():
    args = (x, s, o) if phase in ("fwd", "roof") else (x, s, o, dy)
    try:
      got = jax.jit(f)(*args)
      y, grads = {"fwd": (got, ()), "fwd+bwd": got, "bwd": (None, got),
                  "roof": (None, ())}[phase]
      if phase == "roof":
        assert (got.shape, got.dtype) == (x.shape, x.dtype), (
            f"a roof returns x's shape and dtype {x.shape} {x.dtype}, got {got.shape} {got.dtype}")
      if y is not None:
        testing.assert_close(y, want, "bfloat16", "fwd")
      for g, w in zip(grads, want_grads):
        testing.assert_close(g, w, "bfloat16", "grad")
      f_std, arrays = pk.benchmarking.standardize_function(f, *args)
      runs[name] = (phase, pk.benchmarking.compile_benchmark(f_std, arrays), arrays, [])
    except pk.UnsupportedImplementationError as e:
      print(f"{label} {name}: refused ({str(e)[:100]})", flush=True)
    except AssertionError as e:
      failures += 1
      print(f"{label} {name}: WRONG {str(e)[:200]}", flush=True)
  for _ in range(rounds):
    for _, run, arrays, times in runs.values():
      times.append(run(arrays, iterations=10).median_evaluation_time_ms)
  for name, (phase, _, _, times) in runs.items():
    ms = statistics.median(times)
    tb = PASSES[phase] * x.size * x.dtype.itemsize / 1e9
    print(f"{label} {name}: {ms * 1e3:.1f} us, {tb / ms:.3f} TB/s", flush=True)
  return failures
