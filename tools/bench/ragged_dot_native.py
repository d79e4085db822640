"""ragged_dot on pjrtkit's CPU device: "native" against "xla_grouped", "xla" and
``jax.lax.ragged_dot`` in the same run.

  JAX_PLATFORMS=pjrtkit .venv/bin/python -m tools.bench.ragged_dot_native [--rounds 2]
      [--iterations 3] [--shapes 8x2048x1024x1024:float32,...]

Inputs as `tools.bench.kernels` makes them (lhs normal, rhs normal / sqrt(k), skewed group sizes
with every 8th expert empty). Phases: "fwd" (the product), "fwd+bwd lhs" (``jax.grad`` of a sum
with respect to lhs, as `tools.bench.kernels` times it) and "fwd+bwd" (with respect to lhs and
rhs, a training step's products). Wall-clock medians of `--iterations` calls
(`pjrtkit.kernels.benchmarking`), rounds alternating the contenders; a row reports the median
over rounds and each contender's ratio to "xla_grouped" and to ``jax.lax.ragged_dot``.
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels.ragged_dot import arg_specs
from tools.bench import contenders

DEFAULT_SHAPES = "8x2048x1024x1024:float32,32x2048x512x512:bfloat16,64x4096x512x256:bfloat16"
CONTENDERS = ("native", "xla_grouped", "xla", "lax")
PHASES = ("fwd", "fwd+bwd lhs", "fwd+bwd")


def _product(name: str, rhs_sizes):
  rhs, sizes = rhs_sizes
  if name == "lax":
    return lambda x, w: jax.lax.ragged_dot(x, w, sizes, preferred_element_type=jnp.float32
                                           ).astype(x.dtype)
  return lambda x, w: pk.ragged_dot(x, w, sizes, implementation=name)


def _function(phase: str, f):
  loss = lambda x, w: jnp.sum(f(x, w).astype(jnp.float32))  # noqa: E731
  if phase == "fwd":
    return jax.jit(f)
  if phase == "fwd+bwd lhs":
    return jax.jit(jax.grad(loss))
  return jax.jit(jax.grad(loss, argnums=(0, 1)))


def rows(shapes: list[tuple[tuple[int, ...], str]], iterations: int, rounds: int):
  """Yields (label, {contender: median ms})."""
  for (g, m, k, n), dtype in shapes:
    x = jax.random.normal(jax.random.key(0), (m, k), dtype)
    w = (jax.random.normal(jax.random.key(2), (g, k, n), jnp.float32) / k ** 0.5).astype(dtype)
    sizes = jnp.asarray(arg_specs.skewed_sizes(m, g, 8), jnp.int32)
    for phase in PHASES:
      runs = {c: pk.benchmarking.compile_benchmark(_function(phase, _product(c, (w, sizes))),
                                                   [x, w]) for c in CONTENDERS}
      yield f"{g}x{m}x{k}x{n} {dtype} {phase}", contenders.medians(runs, [x, w], rounds,
                                                                   iterations)


def main(argv=None) -> int:
  a = contenders.arguments(__doc__, DEFAULT_SHAPES, "GxMxKxN:dtype").parse_args(argv)
  contenders.print_table(
      f"ms (ratio to xla_grouped / to lax), medians of {a.rounds} rounds of {a.iterations} calls",
      CONTENDERS, rows(contenders.parse_shapes(a.shapes), a.iterations, a.rounds),
      lambda ms, c: f"{ms[c]:.2f} ({ms[c] / ms['xla_grouped']:.2f} / {ms[c] / ms['lax']:.2f})")
  return 0


if __name__ == "__main__":
  sys.exit(main())
