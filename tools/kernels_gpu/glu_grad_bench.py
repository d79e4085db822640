"""What the gated linear unit's forward+backward costs written three ways, in one process:
pjrtkit's "xla" (its gradient's products asked for in float32, then rounded), the same with the
gradient's products asked for in the inputs' dtype, and JAX's autodiff of the one-einsum forward
(what `jax.grad` gives a user who writes the unit in jnp; Tokamax's "xla" is this form); Tokamax's
own "xla" and "mosaic" where tokamax imports.

  PYTHONPATH=KIT:KIT/python python -m tools.kernels_gpu.glu_grad_bench \\
      [--shapes 8192x4096x14336,6000x3072x8192] [--dtype bfloat16] [--rounds 3] \\
      [--iterations 10] [--out DIR]

Per shape (``MxKxN``: rows, model width, hidden width; fused ``[K, 2, N]`` weights, SiLU), each
contender's ``jit(grad)`` of ``sum(glu(x, w) * dout)`` in x and w (the forward included), timed
with `pk.benchmarking`'s default method (CUPTI kernel time on NVIDIA GPUs, wall clock
elsewhere) in rounds that alternate the contenders' order, the median of the round medians;
``max|d|``: the largest difference of its gradients from pjrtkit "xla"'s over the largest
gradient. Prints a Markdown table and writes ``glu_grad_<platform>.{md,json}`` into ``--out``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels.gated_linear_unit import base
from tools.kernels_gpu.determinism_bench import relative_difference, write_results

GradFn = Callable[[Any, Any, Any], tuple[Any, Any]]


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
  """``MxKxN,...`` as (m, k, n) triples.

  Raises:
    ValueError: naming the entry that is not three positive integers.
  """
  shapes = []
  for entry in (e for e in text.split(",") if e):
    parts = entry.split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
      raise ValueError(f"--shapes entry {entry!r} is not MxKxN with positive integers")
    shapes.append(tuple(int(p) for p in parts))
  if not shapes:
    raise ValueError("--shapes names no shape")
  return shapes


def _through_op(implementation: str | None) -> GradFn:
  def loss(x: Any, w: Any, dout: Any) -> Any:
    out = pk.gated_linear_unit(x, w, activation=jax.nn.silu, implementation=implementation)
    return jnp.sum(out.astype(jnp.float32) * dout.astype(jnp.float32))
  return jax.grad(loss, argnums=(0, 1))


def _products_in_input_dtype() -> GradFn:
  """pjrtkit "xla"'s forward and backward with the gradient's two products (dx and dw) asked
  for in the inputs' dtype instead of float32."""

  @jax.custom_vjp
  def glu(x: Any, w: Any) -> Any:
    return _fwd(x, w)[0]

  def _fwd(x: Any, w: Any) -> tuple[Any, Any]:
    y = base.products(x, w, None, None, None)
    spec, _ = base.make_spec(x, w, jax.nn.silu, None)
    return base.combine(y, spec, x.dtype), (x, w, y)

  def _bwd(residuals: Any, dout: Any) -> tuple[Any, Any]:
    x, w, y = residuals
    spec, _ = base.make_spec(x, w, jax.nn.silu, None)
    dy = base.products_cotangent(y, dout, spec).astype(y.dtype)
    dx = base.input_grad(dy, w, None, None, None, dtype=x.dtype)
    dw, _, _ = base.weight_grads(x, dy, w, None, dtype=w.dtype)
    return dx.astype(x.dtype), dw.astype(w.dtype)

  glu.defvjp(_fwd, _bwd)

  def loss(x: Any, w: Any, dout: Any) -> Any:
    return jnp.sum(glu(x, w).astype(jnp.float32) * dout.astype(jnp.float32))
  return jax.grad(loss, argnums=(0, 1))


def _jnp_autodiff() -> GradFn:
  """JAX's gradient of the unit written as one einsum, the activation and product in float32."""

  def loss(x: Any, w: Any, dout: Any) -> Any:
    y = jnp.einsum("mk,kjn->mjn", x, w).astype(jnp.float32)
    out = (jax.nn.silu(y[:, 0]) * y[:, 1]).astype(x.dtype)
    return jnp.sum(out.astype(jnp.float32) * dout.astype(jnp.float32))
  return jax.grad(loss, argnums=(0, 1))


def _tokamax(implementation: str) -> GradFn | None:
  try:
    import tokamax  # pylint: disable=import-outside-toplevel
  except ImportError:
    return None

  def loss(x: Any, w: Any, dout: Any) -> Any:
    out = tokamax.gated_linear_unit(x, w, activation=jax.nn.silu,
                                    implementation=implementation)
    return jnp.sum(out.astype(jnp.float32) * dout.astype(jnp.float32))
  return jax.grad(loss, argnums=(0, 1))


def contenders() -> dict[str, GradFn]:
  """Name -> gradient function, pjrtkit "xla" first (the reference of ``max|d|``)."""
  out: dict[str, GradFn] = {
      "pk xla": _through_op("xla"),
      "pk None": _through_op(None),
      "xla, gradient products in input dtype": _products_in_input_dtype(),
      "jnp autodiff (one einsum)": _jnp_autodiff(),
  }
  for impl in ("xla", "mosaic"):
    fn = _tokamax(impl)
    if fn is not None:
      out[f"tokamax {impl}"] = fn
  return out


def measure(shape: tuple[int, int, int], dtype: str, rounds: int, iterations: int
            ) -> list[dict[str, Any]]:
  """One row per contender: its time and difference, or the error that stopped it."""
  m, k, n = shape
  keys = jax.random.split(jax.random.key(0), 3)
  args = [jax.random.normal(keys[0], (m, k), dtype),
          (jax.random.normal(keys[1], (k, 2, n), jnp.float32) / k ** 0.5).astype(dtype),
          jax.random.normal(keys[2], (m, n), dtype)]
  runners: dict[str, Any] = {}
  rows: dict[str, dict[str, Any]] = {}
  reference = None
  for name, fn in contenders().items():
    row = rows.setdefault(name, {"shape": f"{m}x{k}x{n}", "contender": name})
    try:
      runner = pk.benchmarking.compile_benchmark(jax.jit(fn), args)
      grads = runner.compiled(*args)
    except Exception as e:  # pylint: disable=broad-except
      row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
      continue
    if reference is None:
      reference = grads
    row["max|d|"] = relative_difference(reference, grads)
    runners[name] = runner
  medians: dict[str, list[float]] = {name: [] for name in runners}
  for r in range(rounds):
    names = list(runners) if r % 2 == 0 else list(runners)[::-1]
    for name in names:
      data = runners[name](args, iterations=iterations)
      medians[name].append(data.median_evaluation_time_ms)
      rows[name]["method"] = data.method
  base_ms = statistics.median(medians["pk xla"]) if medians.get("pk xla") else None
  for name, times in medians.items():
    rows[name]["ms"] = statistics.median(times)
    rows[name]["rounds"] = times
    if base_ms:
      rows[name]["vs pk xla"] = rows[name]["ms"] / base_ms
  return list(rows.values())


def table(rows: Sequence[dict[str, Any]]) -> str:
  """The rows as Markdown."""
  lines = ["| shape | contender | ms | time / pk xla's | max\\|d\\| |",
           "| --- | --- | --- | --- | --- |"]
  for r in rows:
    if "error" in r:
      lines.append(f"| {r['shape']} | {r['contender']} | {r['error']} | | |")
    else:
      lines.append(f"| {r['shape']} | {r['contender']} | {r['ms']:.3f} | "
                   f"{r.get('vs pk xla', float('nan')):.3f} | {r['max|d|']:.2e} |")
  return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
  """Runs the shapes; 0 when every contender ran, 1 when one failed, 2 for bad arguments."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--shapes", default="8192x4096x14336,6000x3072x8192")
  parser.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--iterations", type=int, default=10)
  parser.add_argument("--out", type=Path, default=None)
  args = parser.parse_args(argv)
  try:
    shapes = parse_shapes(args.shapes)
  except ValueError as e:
    parser.error(str(e))
  if args.rounds < 1 or args.iterations < 1:
    parser.error(f"--rounds and --iterations must be >= 1, got {args.rounds} and "
                 f"{args.iterations}")
  device = jax.devices()[0]
  header = (f"device: {device.platform} {device.device_kind}; {args.dtype}; "
            f"jax {jax.__version__}\n\n")
  rows: list[dict[str, Any]] = []
  for shape in shapes:
    rows.extend(measure(shape, args.dtype, args.rounds, args.iterations))
    write_results(args.out, f"glu_grad_{device.platform}", header + table(rows), rows)
  print(header + table(rows), end="")
  return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
  sys.exit(main())
