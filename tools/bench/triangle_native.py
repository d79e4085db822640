"""triangle_multiplication on pjrtkit's CPU device: "native" (every product in ragged_dot's
native kernels, channels first; AMX tiles for bfloat16 where the CPU has them), "composed"
(XLA with the library's layer norm and gated linear unit inside), "xla" and
``implementation=None`` (the rule's choice per phase) in the same run.

  JAX_PLATFORMS=pjrtkit .venv/bin/python -m tools.bench.triangle_native [--rounds 2]
      [--iterations 3] [--shapes 256x128x128x128:bfloat16,...]

Per shape ``NxCxHxD:dtype``: x ``[N, N, C]`` (normal), a mask with 90 % of pairs kept, weights
normal / sqrt(fan-in), both triangle types. Phases "fwd" (the output) and "fwd+bwd"
(``jax.grad`` of a sum with respect to x and the four weights). Wall-clock medians of
`--iterations` calls (`pjrtkit.kernels.benchmarking`), rounds alternating the contenders; a
row reports the median over rounds, each contender's ratio to "xla", and native's GFLOP/s
(2 x the multiply-adds of the four products per forward, 3x that per forward+backward).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels.triangle_multiplication import base
from tools.bench import contenders

DEFAULT_SHAPES = ("256x128x128x128:bfloat16,384x128x128x128:bfloat16,128x64x64x64:bfloat16,"
                  "256x128x128x128:float32")
CONTENDERS = ("None", "native", "composed", "xla")
PHASES = ("fwd", "fwd+bwd")


def inputs(n: int, c: int, h: int, d: int, dtype: str) -> list[Any]:
  """The ten arrays in the public order."""
  keys = iter(jax.random.split(jax.random.key(0), 11))

  def a(*shape: int, scale: float = 1.0, shift: float = 0.0) -> Any:
    return (shift + jax.random.normal(next(keys), shape, jnp.float32) * scale).astype(dtype)

  return [a(n, n, c), jax.random.uniform(next(keys), (n, n)) < 0.9,
          a(c, 2, h, scale=c ** -0.5), a(c, 2, h, scale=c ** -0.5), a(h, d, scale=h ** -0.5),
          a(c, d, scale=c ** -0.5), a(c, scale=0.1, shift=1.0), a(c, scale=0.1),
          a(h, scale=0.1, shift=1.0), a(h, scale=0.1)]


def _function(name: str, triangle_type: str, phase: str) -> Callable[..., Any]:
  impl = None if name == "None" else name

  def f(*args: Any) -> Any:
    return pk.triangle_multiplication(*args, triangle_type=triangle_type, implementation=impl)

  if phase == "fwd":
    return jax.jit(f)
  return jax.jit(jax.grad(lambda *a: jnp.sum(f(*a).astype(jnp.float32)), argnums=(0, 2, 3, 4, 5)))


def rows(shapes: list[tuple[tuple[int, ...], str]], iterations: int, rounds: int
         ) -> Iterator[tuple[str, dict[str, float]]]:
  """Yields (label, {contender: median ms, "flops": the phase's FLOPs})."""
  for (n, c, h, d), dtype in shapes:
    args = inputs(n, c, h, d, dtype)
    pairs = n * n
    flops = 2.0 * (pairs * c * 4 * h + n ** 3 * h + pairs * h * d + pairs * c * d)
    for triangle_type in base.TRIANGLE_TYPES:
      for phase in PHASES:
        runs = {name: pk.benchmarking.compile_benchmark(
                    _function(name, triangle_type, phase), args) for name in CONTENDERS}
        ms = contenders.medians(runs, args, rounds, iterations)
        ms["flops"] = flops * (1 if phase == "fwd" else 3)
        yield f"{n}x{c}x{h}x{d} {dtype} {triangle_type} {phase}", ms


def main(argv: list[str] | None = None) -> int:
  return contenders.native_against_xla(argv, __doc__, DEFAULT_SHAPES, "NxCxHxD:dtype",
                                       CONTENDERS, rows, digits=1)


if __name__ == "__main__":
  sys.exit(main())
