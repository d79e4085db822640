"""What a deterministic attention gradient costs: ``jit(grad)`` of the attention op per
implementation, with the order-free backward and with the two deterministic ones, timed in
alternating rounds in one process, and whether two calls of one compiled gradient agree bitwise.

  PYTHONPATH=KIT:KIT/python python -m tools.kernels_gpu.determinism_bench \\
      [--shapes 32x2048x16x64,16x1024x32x128:causal] [--implementations mosaic,cudnn,None] \\
      [--rounds 3] [--iterations 10] [--repeats 5] [--dtype bfloat16] [--out DIR]

Per shape (``BxTxHxD`` or ``BxTxHxKxD`` with K key-value heads, ``:causal`` for a causal mask) and
implementation (``None``: `implementation=None`), three contenders, each traced with
``PJRTKIT_ATTENTION_DQ_SUM`` set (`DQ_SUMS`): ``order-free`` (``float32``: the fused Mosaic
backward's float32 reduce-adds), ``fixed-order`` (``split``: its split dQ and dK/dV kernels; also
``--xla_gpu_deterministic_ops=true`` in ``XLA_FLAGS``) and ``fixed-point`` (``fixed_point``: the
fused backward summing dQ in int32); implementations without an order-dependent sum trace the same
program every way. The loss is ``sum(attention(q, k, v) * dout)`` and the timed function its
gradient in q, k and v (the forward included, as a training step runs it). Times:
`pk.benchmarking`'s default method (CUPTI kernel time on NVIDIA GPUs, wall clock elsewhere), the
median of the round medians. ``bitwise``: the gradients of ``--repeats`` calls of one compiled
function are equal bit for bit; ``max|d|`` the largest difference between a contender's gradients
and ``order-free``'s over the largest gradient; ``cost`` a contender's time over ``order-free``'s,
minus 1. Prints a Markdown table and writes ``determinism_<platform>.{md,json}`` into ``--out``
after every shape.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk

DETERMINISTIC_FLAG = "--xla_gpu_deterministic_ops=true"
VARIANTS = ("order-free", "fixed-order", "fixed-point")
DQ_SUM_VARIABLE = "PJRTKIT_ATTENTION_DQ_SUM"


@dataclasses.dataclass(frozen=True)
class Shape:
  """One attention call: batch, length, query heads, key-value heads, head_dim, causal."""

  b: int
  t: int
  h: int
  k: int
  d: int
  causal: bool

  @property
  def label(self) -> str:
    heads = f"{self.h}" if self.k == self.h else f"{self.h}/{self.k}"
    return f"{self.b}x{self.t}x{heads}x{self.d}{' causal' if self.causal else ''}"


def parse_shapes(text: str) -> list[Shape]:
  """``BxTxHxD[:causal]`` or ``BxTxHxKxD[:causal]``, comma-separated.

  Raises:
    ValueError: naming the entry and the accepted forms.
  """
  shapes = []
  for entry in filter(None, (e.strip() for e in text.split(","))):
    dims, _, flag = entry.partition(":")
    if flag not in ("", "causal"):
      raise ValueError(f"--shapes entry {entry!r}: the suffix must be ':causal' or none")
    try:
      numbers = [int(x) for x in dims.split("x")]
    except ValueError:
      numbers = []
    if len(numbers) not in (4, 5) or min(numbers, default=0) < 1:
      raise ValueError(f"--shapes entry {entry!r}: accepted BxTxHxD or BxTxHxKxD, positive "
                       f"integers, optionally ':causal'")
    b, t, h = numbers[:3]
    k = numbers[3] if len(numbers) == 5 else h
    if h % k:
      raise ValueError(f"--shapes entry {entry!r}: query heads {h} are not a multiple of "
                       f"key-value heads {k}")
    shapes.append(Shape(b, t, h, k, numbers[-1], flag == "causal"))
  if not shapes:
    raise ValueError("--shapes: no shape given")
  return shapes


@contextlib.contextmanager
def xla_flags_with(flag: str | None) -> Iterator[None]:
  """``XLA_FLAGS`` with `flag` appended (None: as it is) while tracing; restored after."""
  before = os.environ.get("XLA_FLAGS")
  if flag is not None:
    os.environ["XLA_FLAGS"] = f"{before} {flag}".strip() if before else flag
  try:
    yield
  finally:
    if before is None:
      os.environ.pop("XLA_FLAGS", None)
    else:
      os.environ["XLA_FLAGS"] = before


DQ_SUMS = {"order-free": "float32", "fixed-order": "split", "fixed-point": "fixed_point"}
"""``PJRTKIT_ATTENTION_DQ_SUM`` per variant, set whatever the shell had (it wins over
``XLA_FLAGS``)."""


@contextlib.contextmanager
def variant_environment(variant: str) -> Iterator[None]:
  """The environment `variant` is traced in: ``PJRTKIT_ATTENTION_DQ_SUM`` as `DQ_SUMS` says,
  and for ``fixed-order`` `DETERMINISTIC_FLAG` appended to ``XLA_FLAGS``; both restored after."""
  before = os.environ.get(DQ_SUM_VARIABLE)
  os.environ[DQ_SUM_VARIABLE] = DQ_SUMS[variant]
  try:
    with xla_flags_with(DETERMINISTIC_FLAG if variant == "fixed-order" else None):
      yield
  finally:
    if before is None:
      os.environ.pop(DQ_SUM_VARIABLE, None)
    else:
      os.environ[DQ_SUM_VARIABLE] = before


def inputs(shape: Shape, dtype: str) -> list[jax.Array]:
  """q, k, v and the output cotangent, normal random numbers (fixed seed)."""
  keys = jax.random.split(jax.random.key(0), 4)
  q_shape = (shape.b, shape.t, shape.h, shape.d)
  kv_shape = (shape.b, shape.t, shape.k, shape.d)
  return [jax.random.normal(keys[0], q_shape, dtype), jax.random.normal(keys[1], kv_shape, dtype),
          jax.random.normal(keys[2], kv_shape, dtype), jax.random.normal(keys[3], q_shape, dtype)]


def gradient(implementation: str, causal: bool) -> Callable[..., Any]:
  """``(q, k, v, dout) -> (dq, dk, dv)`` of ``sum(attention(q, k, v) * dout)``."""

  def loss(q: Any, k: Any, v: Any, dout: Any) -> Any:
    out = pk.dot_product_attention(q, k, v, is_causal=causal,
                                   implementation=None if implementation == "None" else
                                   implementation)
    return jnp.sum(out.astype(jnp.float32) * dout.astype(jnp.float32))

  return jax.grad(loss, argnums=(0, 1, 2))


def bitwise_equal(a: Sequence[Any], b: Sequence[Any]) -> bool:
  """Whether every pair of arrays is equal bit for bit (NaNs with the same bits included)."""
  for x, y in zip(a, b):
    bits = {2: jnp.uint16, 4: jnp.uint32, 8: jnp.uint64}[x.dtype.itemsize]
    if not bool(jnp.array_equal(jax.lax.bitcast_convert_type(x, bits),
                                jax.lax.bitcast_convert_type(y, bits))):
      return False
  return True


def relative_difference(a: Sequence[Any], b: Sequence[Any]) -> float:
  """max |a - b| over max |a|, over all pairs (0 when a is all zeros and equal to b)."""
  diff = max(float(jnp.max(jnp.abs(x.astype(jnp.float32) - y.astype(jnp.float32))))
             for x, y in zip(a, b))
  scale = max(float(jnp.max(jnp.abs(x.astype(jnp.float32)))) for x in a)
  return diff / scale if scale else diff


def measure_shape(shape: Shape, implementations: Sequence[str], dtype: str, rounds: int,
                  iterations: int, method: str | None, repeats: int = 5) -> list[dict[str, Any]]:
  """One row per implementation: both variants' times, bitwise checks (`repeats` calls of one
  compiled gradient against the first) and their difference; an implementation that cannot run
  gets its reason."""
  args = inputs(shape, dtype)
  rows = []
  for impl in implementations:
    runners: dict[str, Any] = {}
    row: dict[str, Any] = {"shape": shape.label, "implementation": impl}
    try:
      for variant in VARIANTS:
        with variant_environment(variant):
          runners[variant] = pk.benchmarking.compile_benchmark(
              jax.jit(gradient(impl, shape.causal)), args)
    except Exception as e:  # pylint: disable=broad-except
      row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
      rows.append(row)
      continue
    outputs = {}
    for variant, runner in runners.items():
      first = runner.compiled(*args)
      row[f"{variant} bitwise"] = all(bitwise_equal(first, runner.compiled(*args))
                                      for _ in range(repeats - 1))
      outputs[variant] = first
    row["max|d|"] = relative_difference(outputs["order-free"], outputs["fixed-order"])
    row["fixed-point max|d|"] = relative_difference(outputs["order-free"],
                                                    outputs["fixed-point"])
    medians: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for r in range(rounds):
      order = VARIANTS if r % 2 == 0 else VARIANTS[::-1]
      for variant in order:
        data = runners[variant](args, method=method, iterations=iterations)
        medians[variant].append(data.median_evaluation_time_ms)
        row["method"] = data.method
    for variant in VARIANTS:
      row[f"{variant} ms"] = statistics.median(medians[variant])
      row[f"{variant} rounds"] = medians[variant]
    row["cost"] = row["fixed-order ms"] / row["order-free ms"] - 1.0
    row["fixed-point cost"] = row["fixed-point ms"] / row["order-free ms"] - 1.0
    rows.append(row)
  return rows


def write_results(out: Path | None, stem: str, markdown: str, rows: Sequence[Any]) -> None:
  """``<out>/<stem>.md`` and ``.json`` (the rows), the folder made if needed; nothing without
  `out`."""
  if out is None:
    return
  out.mkdir(parents=True, exist_ok=True)
  (out / f"{stem}.md").write_text(markdown, encoding="utf-8")
  (out / f"{stem}.json").write_text(json.dumps(list(rows), indent=1), encoding="utf-8")


def table(rows: Sequence[dict[str, Any]]) -> str:
  """The rows as Markdown."""
  lines = ["| shape | implementation | order-free ms | fixed-order ms (cost) | fixed-point ms "
           "(cost) | bitwise (order-free / fixed-order / fixed-point) | max\\|d\\| (fixed-order / "
           "fixed-point) |", "| --- | --- | --- | --- | --- | --- | --- |"]
  for r in rows:
    if "error" in r:
      lines.append(f"| {r['shape']} | {r['implementation']} | {r['error']} | | | | |")
      continue
    bitwise = " / ".join("yes" if r[f"{v} bitwise"] else "NO" for v in VARIANTS)
    lines.append(
        f"| {r['shape']} | {r['implementation']} | {r['order-free ms']:.3f} | "
        f"{r['fixed-order ms']:.3f} ({100 * r['cost']:+.1f} %) | "
        f"{r['fixed-point ms']:.3f} ({100 * r['fixed-point cost']:+.1f} %) | {bitwise} | "
        f"{r['max|d|']:.2e} / {r['fixed-point max|d|']:.2e} |")
  return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
  """Runs the shapes; 0 when every contender ran (2 for bad arguments, 1 when one failed)."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--shapes", default="32x2048x16x64,16x1024x32x128:causal")
  parser.add_argument("--implementations", default="mosaic,cudnn,None")
  parser.add_argument("--repeats", type=int, default=5)
  parser.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--iterations", type=int, default=10)
  parser.add_argument("--method", default=None, choices=pk.benchmarking.METHODS)
  parser.add_argument("--out", type=Path, default=None)
  args = parser.parse_args(argv)
  try:
    shapes = parse_shapes(args.shapes)
  except ValueError as e:
    parser.error(str(e))
  if args.rounds < 1 or args.iterations < 1 or args.repeats < 2:
    parser.error(f"--rounds and --iterations must be >= 1 and --repeats >= 2, got "
                 f"{args.rounds}, {args.iterations} and {args.repeats}")
  implementations = [i for i in args.implementations.split(",") if i]
  device = jax.devices()[0]
  header = (f"device: {device.platform} {device.device_kind}; {args.dtype}; jax "
            f"{jax.__version__}; XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}\n\n")
  rows: list[dict[str, Any]] = []
  for shape in shapes:
    rows.extend(measure_shape(shape, implementations, args.dtype, args.rounds, args.iterations,
                              args.method, args.repeats))
    write_results(args.out, f"determinism_{device.platform}", header + table(rows), rows)
  print(header + table(rows), end="")
  return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
  sys.exit(main())
