"""The contenders of the GPU kernel comparison: pjrtkit.kernels' implementations, cuDNN and XLA
through ``jax.nn``, Tokamax, and a plain jnp layer norm; their inputs and phase functions.

Every contender is a forward function of the case's arrays (attention ``(q, k, v)``, k and v with
the case's kv_heads heads for grouped-query cases, which every attention contender takes as
``[B, S, K, D]`` with ``H % K == 0``; layer norm ``(x, scale, offset)``); `phase_function` turns
it into what is timed: the forward alone, or forward and backward through ``jax.vjp`` with a
random output cotangent (returns the output and every input's gradient). Whatever a contender raises while it is built, traced, compiled or run is
its skip reason (`reason_of`).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels.core import op as op_lib
from tools.bench.compare_cases import ATTENTION, FWD, LAYER_NORM, Case

OURS, CUDNN, JAX, TOKAMAX, XLA_REF = "ours", "cudnn", "jax", "tokamax", "xla"
GROUPS = (OURS, CUDNN, JAX, TOKAMAX, XLA_REF)
EPSILON = 1e-6

Forward = Callable[..., Any]


@dataclasses.dataclass(frozen=True)
class Contender:
  """One implementation under comparison.

  Attributes:
    name: the table's name (``pk triton``, ``cuDNN``, ``tokamax mosaic``).
    group: ``ours``, ``cudnn``, ``jax``, ``tokamax`` or ``xla`` (the jnp layer norm).
    op: ``attention`` or ``layer_norm``.
    make: builds the forward function for a case (may raise: the skip reason).
    implementation: the implementation argument given (None for pjrtkit's automatic choice).
  """

  name: str
  group: str
  op: str
  make: Callable[[Case], Forward]
  implementation: str | None = None


BASELINES = {ATTENTION: ("cuDNN", "jax.nn xla", "pk xla"), LAYER_NORM: ("XLA jnp", "pk xla")}
"""Per op, whom ratios are taken against: the first of these that ran (cuDNN; XLA)."""
REFERENCES = {ATTENTION: ("cuDNN", "jax.nn xla", "pk xla"), LAYER_NORM: ("XLA jnp", "pk xla")}
"""Per op, whose output the correctness guard compares with, first one that ran."""


def _tokamax() -> Any:
  """The tokamax module (ImportError with pip's words when it is not installed)."""
  return importlib.import_module("tokamax")


def _pk_attention(impl: str | None) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    return lambda q, k, v: pk.dot_product_attention(q, k, v, is_causal=case.causal,
                                                    implementation=impl)
  return make


def _jax_nn_attention(impl: str) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    return lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=case.causal,
                                                        implementation=impl)
  return make


def _tokamax_attention(impl: str) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    tokamax = _tokamax()
    return lambda q, k, v: tokamax.dot_product_attention(q, k, v, is_causal=case.causal,
                                                         implementation=impl)
  return make


def _pk_layer_norm(impl: str | None) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    del case
    return lambda x, scale, offset: pk.layer_norm(x, scale, offset, epsilon=EPSILON,
                                                  implementation=impl)
  return make


def pk_forward(case: Case, implementation: str | None) -> Forward:
  """pjrtkit.kernels' op of `case` (attention or layer norm, the comparison's parameters) with
  `implementation`: the forward every "pk" contender times."""
  maker = _pk_attention if case.op == ATTENTION else _pk_layer_norm
  return maker(implementation)(case)


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


def _tokamax_layer_norm(impl: str) -> Callable[[Case], Forward]:
  def make(case: Case) -> Forward:
    del case
    tokamax = _tokamax()
    if impl == "triton":
      from tokamax._src.ops.normalization import api  # pylint: disable=g-import-not-at-top
      if "triton" not in api.IMPLEMENTATIONS:
        raise NotImplementedError(_tokamax_triton_import_reason() or
                                  "tokamax has no Triton layer norm here")
    return lambda x, scale, offset: tokamax.layer_norm(x, scale, offset, epsilon=EPSILON,
                                                       implementation=impl)
  return make


def attention_contenders() -> list[Contender]:
  """Ours (mosaic, triton, xla_chunked, xla, None), cuDNN and XLA via jax.nn, Tokamax."""
  ours = [Contender(f"pk {impl}", OURS, ATTENTION, _pk_attention(impl), impl)
          for impl in ("mosaic", "triton", "xla_chunked", "xla")]
  ours.append(Contender("pk None", OURS, ATTENTION, _pk_attention(None), None))
  return ours + [
      Contender("cuDNN", CUDNN, ATTENTION, _jax_nn_attention("cudnn"), "cudnn"),
      Contender("jax.nn xla", JAX, ATTENTION, _jax_nn_attention("xla"), "xla"),
  ] + [Contender(f"tokamax {impl}", TOKAMAX, ATTENTION, _tokamax_attention(impl), impl)
       for impl in ("mosaic", "triton", "xla")]


def layer_norm_contenders() -> list[Contender]:
  """Ours (triton, mosaic, xla, None), the plain jnp reference, Tokamax (triton, xla)."""
  ours = [Contender(f"pk {impl}", OURS, LAYER_NORM, _pk_layer_norm(impl), impl)
          for impl in ("triton", "mosaic", "xla")]
  ours.append(Contender("pk None", OURS, LAYER_NORM, _pk_layer_norm(None), None))
  return ours + [Contender("XLA jnp", XLA_REF, LAYER_NORM, lambda case: jnp_layer_norm)] + [
      Contender(f"tokamax {impl}", TOKAMAX, LAYER_NORM, _tokamax_layer_norm(impl), impl)
      for impl in ("triton", "xla")]


def selector(name: str) -> str:
  """A contender's name as ``--contenders`` takes it on a command line: spaces as underscores
  (``pk_None``, ``tokamax_mosaic``); the name itself is accepted too."""
  return name.replace(" ", "_")


def check_selection(only: Sequence[str]) -> None:
  """Raises ValueError naming every entry of `only` that is neither a group nor a contender name
  (of either op), with the accepted values."""
  names = {c.name for c in attention_contenders() + layer_norm_contenders()}
  accepted = set(GROUPS) | names | {selector(n) for n in names}
  unknown = [s for s in only if s not in accepted]
  if unknown:
    raise ValueError(f"--contenders: unknown {', '.join(map(repr, unknown))}; accepted: the "
                     f"groups {', '.join(GROUPS)} or the names "
                     f"{', '.join(sorted({selector(n) for n in names}))}")


def contenders_for(op: str, only: Sequence[str] = ()) -> list[Contender]:
  """The contenders of `op`, restricted to the groups or names (`selector` form or as named) in
  `only` (all when empty)."""
  every = attention_contenders() if op == ATTENTION else layer_norm_contenders()
  if not only:
    return every
  return [c for c in every if c.group in only or c.name in only or selector(c.name) in only]


def make_inputs(case: Case) -> list[jax.Array]:
  """The case's arrays on JAX's default device (random normal bfloat16, fixed seed): the forward's
  inputs (attention: q of the case's shape, k and v of `Case.kv_shape`, fewer heads for GQA),
  plus the output cotangent for fwd+bwd (the output's shape: the query's, or the layer norm
  input's)."""
  keys = jax.random.split(jax.random.key(13), 4)
  dtype = jnp.bfloat16
  if case.op == ATTENTION:
    arrays = [jax.random.normal(keys[0], case.shape, dtype)] + [
        jax.random.normal(k, case.kv_shape, dtype) for k in keys[1:3]]
  else:
    features = case.shape[-1]
    arrays = [jax.random.normal(keys[0], case.shape, dtype),
              (1.0 + 0.1 * jax.random.normal(keys[1], (features,), jnp.float32)).astype(dtype),
              (0.1 * jax.random.normal(keys[2], (features,), jnp.float32)).astype(dtype)]
  if case.phase != FWD:
    arrays.append(jax.random.normal(keys[3], case.shape, dtype))
  return arrays


def phase_function(forward: Forward, case: Case) -> Forward:
  """What is timed for `case`: `forward`, or forward+backward returning (out, input gradients)."""
  if case.phase == FWD:
    return forward

  def fwd_bwd(*arrays: jax.Array) -> Any:
    *inputs, cotangent = arrays
    out, pullback = jax.vjp(forward, *inputs)
    return out, pullback(cotangent)

  return fwd_bwd


def automatic_choice(fn: Forward, args: Sequence[jax.Array]) -> str:
  """Which implementation each phase of pjrtkit's ``implementation=None`` calls in ``fn`` takes on
  the current device, e.g. ``fwd=triton (rule), bwd=triton (rule)``."""
  device = pk.current_device()
  parts = []
  for call in pk.find_kernel_calls(jax.jit(fn), *args):
    if call.requested != "auto":
      continue
    choice = op_lib.family(call.spec.op).choose(call.spec, None, call.phase, device)
    parts.append(f"{call.phase}={choice.op.implementation} ({choice.source})")
  return ", ".join(sorted(parts, key=lambda p: not p.startswith("fwd="))) or "no kernel call found"


def reason_of(error: BaseException) -> str:
  """The exception text a skipped contender records (sub-exceptions of a group included)."""
  text = f"{type(error).__name__}: {error}".strip()
  subs = getattr(error, "exceptions", None)
  if subs:
    text += " [" + "; ".join(reason_of(s) for s in subs) + "]"
  return text
