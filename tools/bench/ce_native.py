"""linear_softmax_cross_entropy_loss on pjrtkit's CPU device: "native" (the chunked tiles with
ragged_dot's native products, AMX tiles for bfloat16 where the CPU has them), "chunked_xla",
"xla" (full logits) and ``implementation=None`` (the rule's choice per phase) in the same run.

  JAX_PLATFORMS=pjrtkit .venv/bin/python -m tools.bench.ce_native [--rounds 2]
      [--iterations 3] [--shapes 2048x1024x32768:bfloat16,...]

Per shape ``BxHxV:dtype``: x ``[B, H]`` (normal), weights ``[H, V]`` (normal / sqrt(H)),
labels uniform in ``[0, V)``, ``reduction="sum"``. Phases "fwd" (the loss) and "fwd+bwd"
(``jax.grad`` with respect to x and the weights). Wall-clock medians of `--iterations` calls
(`pjrtkit.kernels.benchmarking`), rounds alternating the contenders; a row reports the median
over rounds, each contender's ratio to "xla", and native's GFLOP/s (2*B*H*V per forward, 4x
that per forward+backward: the backward recomputes the logits).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from tools.bench import contenders

DEFAULT_SHAPES = ("2048x1024x32768:bfloat16,1024x2048x65536:bfloat16,"
                  "512x1024x32768:bfloat16,2048x1024x32768:float32")
CONTENDERS = ("None", "native", "chunked_xla", "xla")
PHASES = ("fwd", "fwd+bwd")


def _loss(name: str, labels: Any) -> Callable[[Any, Any], Any]:
  impl = None if name == "None" else name
  return lambda x, w: pk.linear_softmax_cross_entropy_loss(x, labels, w, implementation=impl)


def _function(phase: str, f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
  return jax.jit(f if phase == "fwd" else jax.grad(f, argnums=(0, 1)))


def rows(shapes: list[tuple[tuple[int, ...], str]], iterations: int, rounds: int
         ) -> Iterator[tuple[str, dict[str, float]]]:
  """Yields (label, {contender: median ms, "flops": the phase's FLOPs})."""
  for (b, h, v), dtype in shapes:
    keys = jax.random.split(jax.random.key(0), 3)
    x = jax.random.normal(keys[0], (b, h), dtype)
    w = (jax.random.normal(keys[1], (h, v), jnp.float32) / h ** 0.5).astype(dtype)
    labels = jax.random.randint(keys[2], (b,), 0, v)
    for phase in PHASES:
      runs = {c: pk.benchmarking.compile_benchmark(_function(phase, _loss(c, labels)), [x, w])
              for c in CONTENDERS}
      ms = contenders.medians(runs, [x, w], rounds, iterations)
      ms["flops"] = 2.0 * b * h * v * (1 if phase == "fwd" else 4)
      yield f"{b}x{h}x{v} {dtype} {phase}", ms


def main(argv: list[str] | None = None) -> int:
  return contenders.native_against_xla(argv, __doc__, DEFAULT_SHAPES, "BxHxV:dtype", CONTENDERS,
                                       rows, digits=1)


if __name__ == "__main__":
  sys.exit(main())
