"""The loss's peak memory as the vocabulary grows, per implementation, on JAX's default device:
``python -m pjrtkit.kernels.linear_softmax_cross_entropy_loss.memory [--b B] [--h H]
[--vocab V,V,...] [--dtype bfloat16] [--impl chunked_xla,xla,...]``.

For each vocabulary size: the largest temporaries of the compiled value-and-gradient (XLA's
memory analysis, ``temp_size_in_bytes``) in MiB, and their ratio to the float32 logits'
``b * v * 4`` bytes. Implementations include "tokamax:<name>" where Tokamax is importable.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp

from pjrtkit.kernels.linear_softmax_cross_entropy_loss.api import (
    linear_softmax_cross_entropy_loss)


def _loss_fn(impl: str) -> Callable[..., Any]:
  if impl.startswith("tokamax:"):
    import tokamax  # pylint: disable=g-import-not-at-top
    name = impl.split(":", 1)[1]
    return lambda x, w, labels: tokamax.linear_softmax_cross_entropy_loss(
        x, labels, w, implementation=name)
  return lambda x, w, labels: linear_softmax_cross_entropy_loss(x, labels, w,
                                                                implementation=impl)


def temp_bytes(impl: str, b: int, h: int, v: int, dtype: str) -> int:
  """The compiled value-and-gradient's temporaries, in bytes."""
  f = jax.jit(jax.value_and_grad(_loss_fn(impl), (0, 1)))
  compiled = f.lower(jax.ShapeDtypeStruct((b, h), dtype), jax.ShapeDtypeStruct((h, v), dtype),
                     jax.ShapeDtypeStruct((b,), jnp.int32)).compile()
  return int(compiled.memory_analysis().temp_size_in_bytes)


def main(argv: Sequence[str] | None = None) -> int:
  """Prints one JSON line per (implementation, vocabulary) and a table."""
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--b", type=int, default=8192)
  parser.add_argument("--h", type=int, default=4096)
  parser.add_argument("--vocab", default="32768,131072,262144")
  parser.add_argument("--dtype", default="bfloat16")
  parser.add_argument("--impl", default="chunked_xla,xla,tokamax:chunked_xla,tokamax:xla")
  args = parser.parse_args(argv)
  vocab = [int(v) for v in args.vocab.split(",")]
  print(f"device: {jax.devices()[0].device_kind}; b={args.b} h={args.h} {args.dtype}; "
        f"temporaries of value_and_grad in MiB (x logits' float32 bytes)")
  for impl in args.impl.split(","):
    cells = []
    for v in vocab:
      try:
        t = temp_bytes(impl, args.b, args.h, v, args.dtype)
      except Exception as e:  # pylint: disable=broad-except
        cells.append(f"v={v}: {type(e).__name__}")
        print(json.dumps({"impl": impl, "vocab": v, "error": str(e)[:200]}))
        continue
      ratio = t / (args.b * v * 4)
      cells.append(f"v={v}: {t / 2**20:.0f} ({ratio:.2f}x)")
      print(json.dumps({"impl": impl, "vocab": v, "temp_bytes": t, "logits_ratio": ratio}))
    print(f"{impl:>22}: " + "  ".join(cells))
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
