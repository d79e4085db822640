"""gated_linear_unit on pjrtkit's CPU device: "native" (ragged_dot's native kernels, AMX tiles
for bfloat16 where the CPU has them), "xla", ``implementation=None`` (the rule's choice per
phase) and a plain jnp SwiGLU in the same run.

  JAX_PLATFORMS=pjrtkit .venv/bin/python -m tools.bench.glu_native [--rounds 2]
      [--iterations 3] [--shapes 2048x1024x1024:bfloat16,...]

Per shape ``MxKxN:dtype``: x ``[M, K]`` (normal), fused weights ``[K, 2, N]`` (normal /
sqrt(K)), ``activation=jax.nn.silu``. Phases "fwd" (the output) and "fwd+bwd" (``jax.grad`` of
a sum with respect to x and the weights). Wall-clock medians of `--iterations` calls
(`pjrtkit.kernels.benchmarking`), rounds alternating the contenders; a row reports the median
over rounds, each contender's ratio to "xla", and native's GFLOP/s (4*M*K*N per forward,
3x that per forward+backward).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels.gated_linear_unit.benchmark import jnp_swiglu
from tools.bench import contenders

DEFAULT_SHAPES = ("2048x1024x1024:bfloat16,8192x1024x2816:bfloat16,2048x4096x4096:bfloat16,"
                  "2048x1024x1024:float32")
CONTENDERS = ("None", "native", "xla", "jnp")
PHASES = ("fwd", "fwd+bwd")


def _forward(name: str) -> Callable[[Any, Any], Any]:
  if name == "jnp":
    return jnp_swiglu
  impl = None if name == "None" else name
  return lambda x, w: pk.gated_linear_unit(x, w, activation=jax.nn.silu, implementation=impl)


def _function(phase: str, f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
  if phase == "fwd":
    return jax.jit(f)
  return jax.jit(jax.grad(lambda x, w: jnp.sum(f(x, w).astype(jnp.float32)), argnums=(0, 1)))


def rows(shapes: list[tuple[tuple[int, ...], str]], iterations: int, rounds: int
         ) -> Iterator[tuple[str, dict[str, float]]]:
  """Yields (label, {contender: median ms, "flops": the phase's FLOPs})."""
  for (m, k, n), dtype in shapes:
    x = jax.random.normal(jax.random.key(0), (m, k), dtype)
    w = (jax.random.normal(jax.random.key(1), (k, 2, n), jnp.float32) / k ** 0.5).astype(dtype)
    for phase in PHASES:
      runs = {c: pk.benchmarking.compile_benchmark(_function(phase, _forward(c)), [x, w])
              for c in CONTENDERS}
      ms = contenders.medians(runs, [x, w], rounds, iterations)
      ms["flops"] = 4.0 * m * k * n * (1 if phase == "fwd" else 3)
      yield f"{m}x{k}x{n} {dtype} {phase}", ms


def main(argv: list[str] | None = None) -> int:
  return contenders.native_against_xla(argv, __doc__, DEFAULT_SHAPES, "MxKxN:dtype", CONTENDERS,
                                       rows)


if __name__ == "__main__":
  sys.exit(main())
