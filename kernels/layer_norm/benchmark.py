"""layer_norm in the kernel comparison (``python -m tools.bench.kernel_compare``): its
contenders and its byte count.

Contenders: pjrtkit.kernels' implementations (``triton``, ``mosaic``, ``xla`` and the automatic
choice ``None``), a plain jnp layer norm (XLA's fused reference: ratios are taken against it and
the correctness guard compares with it), and Tokamax's ``triton`` and ``xla``. Every one takes
``(x, scale, offset)``.

Bytes: passes x the input's bytes; forward 2 passes (read x, write y), forward+backward 5.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
from typing import Callable

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.comparison import (FWD, FWD_BWD, OURS, TOKAMAX, XLA_REF, Case,
                                             Contender, Forward, OpBenchmark, import_tokamax)
from pjrtkit.kernels.layer_norm import arg_specs
from pjrtkit.kernels.layer_norm.api import layer_norm

EPSILON = arg_specs.EPSILON
PASSES = {FWD: 2, FWD_BWD: 5}
"""Passes over the input's bytes counted per phase."""
DTYPE_BYTES = 2
"""bfloat16."""
CONVENTION = "TB/s: bytes = passes x input bytes; fwd 2 passes (read x, write y), fwd+bwd 5"
"""The throughput convention, as printed above each table."""


def bytes_moved(case: Case) -> int:
  """Bytes counted for a case: passes x the input's bytes."""
  return PASSES[case.phase] * math.prod(case.shape) * DTYPE_BYTES


def pk_forward(case: Case, implementation: str | None) -> Forward:
  """pjrtkit.kernels' layer norm with `implementation`: what every "pk" contender times."""
  del case
  return lambda x, scale, offset: layer_norm(x, scale, offset, epsilon=EPSILON,
                                             implementation=implementation)


def jnp_layer_norm(x: jax.Array, scale: jax.Array, offset: jax.Array) -> jax.Array:
  """Layer norm in plain jnp (float32 inside, the input's dtype out): XLA's fused reference."""
  xf = x.astype(jnp.float32)
  mean = jnp.mean(xf, axis=-1, keepdims=True)
  var = jnp.mean(jnp.square(xf - mean), axis=-1, keepdims=True)
  y = (xf - mean) * jax.lax.rsqrt(var + EPSILON)
  return (y * scale.astype(jnp.float32) + offset.astype(jnp.float32)).astype(x.dtype)


def _tokamax_triton_import_reason() -> str | None:
  """Why tokamax's Triton layer norm is missing from its table: the import error it hides."""
  try:
    importlib.import_module("tokamax._src.ops.normalization.triton")
  except Exception as e:  # pylint: disable=broad-except
    versions = []
    for dist in ("triton", "jax-triton"):
      try:
        versions.append(f"{dist} {importlib.metadata.version(dist)}")
      except importlib.metadata.PackageNotFoundError:
        versions.append(f"{dist} not installed")
    try:
      needs = [r for r in importlib.metadata.requires("jax-triton") or () if r.startswith("triton")]
      versions.append(f"jax-triton requires {', '.join(needs) or 'any triton'}")
    except importlib.metadata.PackageNotFoundError:
      pass
    return (f"tokamax's Triton layer norm did not import: {type(e).__name__}: {e} "
            f"({'; '.join(versions)})")
  return None


def _pk(implementation: str | None) -> Callable[[Case], Forward]:
  return lambda case: pk_forward(case, implementation)


def _tokamax(implementation: str) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    del case
    tokamax = import_tokamax()
    if implementation == "triton":
      from tokamax._src.ops.normalization import api  # pylint: disable=g-import-not-at-top
      if "triton" not in api.IMPLEMENTATIONS:
        raise NotImplementedError(_tokamax_triton_import_reason() or
                                  "tokamax has no Triton layer norm here")
    return lambda x, scale, offset: tokamax.layer_norm(x, scale, offset, epsilon=EPSILON,
                                                       implementation=implementation)
  return make


def contenders() -> list[Contender]:
  """Ours (triton, mosaic, xla, None), the plain jnp reference, Tokamax (triton, xla)."""
  ours = [Contender(f"pk {impl}", OURS, arg_specs.OP, _pk(impl), impl)
          for impl in ("triton", "mosaic", "xla")]
  ours.append(Contender("pk None", OURS, arg_specs.OP, _pk(None), None))
  return ours + [Contender("XLA jnp", XLA_REF, arg_specs.OP, lambda case: jnp_layer_norm)] + [
      Contender(f"tokamax {impl}", TOKAMAX, arg_specs.OP, _tokamax(impl), impl)
      for impl in ("triton", "xla")]


BENCHMARK = OpBenchmark(
    name=arg_specs.OP,
    cases=arg_specs.CASES,
    quick_shapes=arg_specs.QUICK_SHAPES,
    unit="TB/s",
    amount_key="bytes",
    amount=bytes_moved,
    convention=CONVENTION,
    contenders=contenders,
    make_inputs=arg_specs.make_inputs,
    pk_forward=pk_forward,
    baselines=("XLA jnp", "pk xla"),
    references=("XLA jnp", "pk xla"),
)
"""layer_norm's part of the kernel comparison."""
