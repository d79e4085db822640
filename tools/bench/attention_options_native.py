"""Attention with a local window and a logits soft cap (Gemma-style calls), or with key lengths
(padded batches), on pjrtkit's CPU device: "native" against "xla_chunked" and "xla" in the same
run.

  JAX_PLATFORMS=pjrtkit .venv/bin/python -m tools.bench.attention_options_native [--rounds 2]
      [--iterations 3] [--shapes 1x2048x8x4x128:float32,...] [--window 256] [--soft-cap 50]
      [--key-lengths 2048,1024,512,100]

Per shape ``BxTxHxKxD:dtype`` (T = S, H query heads on K key/value heads), four calls: no options
(every key of every query), causal, causal with a window of ``--window`` keys before each query, and
that window with the soft cap; with ``--key-lengths`` (one per batch element, B of them) instead two calls with
``key_value_seq_lengths``: without and with ``is_causal``. Phases "fwd" (the output) and "fwd+bwd"
(``jax.grad`` of a sum with respect to query, key and value). Wall-clock medians of `--iterations`
calls (`pjrtkit.kernels.benchmarking`), rounds alternating the contenders; a row reports the median
over rounds and each contender's ratio to "xla_chunked".
"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from tools.bench import contenders

DEFAULT_SHAPES = "1x2048x8x4x128:float32,1x4096x8x4x128:bfloat16"
CONTENDERS = ("native", "xla_chunked", "xla")
PHASES = ("fwd", "fwd+bwd")


def _calls(window: int, soft_cap: float, key_lengths: tuple[int, ...] | None) -> dict[str, dict]:
  if key_lengths:
    lengths = jnp.asarray(key_lengths, jnp.int32)
    text = ",".join(str(n) for n in key_lengths)
    return {f"key lengths {text}": dict(key_value_seq_lengths=lengths),
            f"causal, key lengths {text}": dict(is_causal=True, key_value_seq_lengths=lengths)}
  return {"no options": dict(),
          "causal": dict(is_causal=True),
          f"causal, window {window}": dict(is_causal=True, local_window_size=(window, 0)),
          f"causal, window {window}, soft cap {soft_cap:g}": dict(
              is_causal=True, local_window_size=(window, 0), logits_soft_cap=soft_cap)}


def _function(phase: str, impl: str, options: dict):
  f = lambda q, k, v: pk.dot_product_attention(q, k, v, implementation=impl, **options)  # noqa: E731
  if phase == "fwd":
    return jax.jit(f)
  loss = lambda q, k, v: jnp.sum(f(q, k, v).astype(jnp.float32))  # noqa: E731
  return jax.jit(jax.grad(loss, argnums=(0, 1, 2)))


def rows(shapes, window: int, soft_cap: float, iterations: int, rounds: int,
         key_lengths: tuple[int, ...] | None = None):
  """Yields (label, {contender: median ms})."""
  for (b, t, h, kh, d), dtype in shapes:
    if key_lengths and len(key_lengths) != b:
      raise ValueError(f"--key-lengths: {len(key_lengths)} lengths for a batch of {b}")
    keys = jax.random.split(jax.random.key(0), 3)
    q = jax.random.normal(keys[0], (b, t, h, d), dtype)
    k = jax.random.normal(keys[1], (b, t, kh, d), dtype)
    v = jax.random.normal(keys[2], (b, t, kh, d), dtype)
    for call, options in _calls(window, soft_cap, key_lengths).items():
      for phase in PHASES:
        runs = {c: pk.benchmarking.compile_benchmark(_function(phase, c, options), [q, k, v])
                for c in CONTENDERS}
        yield (f"{b}x{t}x{h}x{kh}x{d} {dtype} {call} {phase}",
               contenders.medians(runs, [q, k, v], rounds, iterations))


def main(argv=None) -> int:
  p = contenders.arguments(__doc__, DEFAULT_SHAPES, "BxTxHxKxD:dtype")
  p.add_argument("--window", type=int, default=256)
  p.add_argument("--soft-cap", type=float, default=50.0)
  p.add_argument("--key-lengths", default="",
                 help="L1,L2,...: one key length per batch element (the calls with lengths)")
  a = p.parse_args(argv)
  key_lengths = tuple(int(n) for n in a.key_lengths.split(",")) if a.key_lengths else None
  contenders.print_table(
      f"ms (ratio to xla_chunked), medians of {a.rounds} rounds of {a.iterations} calls",
      CONTENDERS, rows(contenders.parse_shapes(a.shapes), a.window, a.soft_cap, a.iterations,
                       a.rounds, key_lengths),
      lambda ms, c: f"{ms[c]:.2f} ({ms[c] / ms['xla_chunked']:.2f})")
  return 0


if __name__ == "__main__":
  sys.exit(main())
