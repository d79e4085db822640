"""dot_product_attention: checks and Spec, the reference, the shared residuals and helpers.

Layout is JAX's ``[batch, seq, heads, head_dim]``: query ``[B, T, H, D]``, key and value
``[B, S, K, D]`` with ``H % K == 0`` (query head ``h`` reads key/value head ``h // (H // K)``:
grouped-query, multi-query when K == 1). `bias` (float) and `mask` (bool, True = attend) broadcast
to ``[B, H, T, S]``. ``is_causal``: query ``t`` attends keys ``s <= t`` (top-left aligned, as
``jax.nn.dot_product_attention``'s mask ``tril(ones((T, S)))``), also when the query length T
differs from the key length S: with ``T < S`` (decode, chunked prefill) query ``t`` sees keys
``0..t`` only, not the whole cache, so a decode step that should see every earlier key is a call
without ``is_causal`` (or with a `mask`); with ``T > S`` queries from ``S - 1`` on see every key.
Every implementation follows this alignment (``shape_classes_test.py`` checks it).
``local_window_size`` ``(left, right)``: query ``t`` attends keys ``t - left .. t + right`` only
(with ``is_causal`` as well: both hold). ``logits_soft_cap`` ``c``: the logits (scaled, bias
added) become ``c * tanh(logits / c)`` before masking. Value may have its own head dim ``Dv``
(``[B, S, K, Dv]``; the output is ``[B, T, H, Dv]``). The window, the soft cap and a ``precision``
other than the default are Spec parameters only when given (`option`), so the Specs of calls without
them (the keys of tuned results) are unchanged. A kernel that does not compute an option refuses the
call (`extras_reason`): "xla" and "xla_chunked" take them all, "native" and "triton" the window and
the soft cap. Bias and mask: "xla" and "xla_chunked" take any, "native" a key mask only (``[B or 1,
1, 1, S]``, `is_key_mask`: what ``key_value_seq_lengths`` gives), "triton" neither
(`flash_kernel_reason`); "mosaic" and "cudnn" have their own rules. Every implementation computes at
least as precisely as any ``precision`` asks (float32 products of float32 operands, exact ones of
16-bit operands), so only "xla" and "xla_chunked" read it. Masked logits take the finite value
`MASK_VALUE`, and kept logits are at least `MASK_VALUE` (a bias of ``finfo.min`` does not rank a
kept key below masked ones), so a row with every key masked averages all values in the forward (as
in ``jax.nn`` and Tokamax; "xla", "xla_chunked" and "native"), and the backward of those three gives
value that row's 1/S share and query, key and bias nothing (the saved log-sum-exp marks the row:
``MASK_VALUE + log(S)`` rounded to ``MASK_VALUE`` in float32 from "xla" and "xla_chunked", -inf from
"native"; their backwards read ``lse <= MASK_VALUE`` as such a row). Logits, softmax and
accumulation are float32; the output has the query's dtype. A call without keys (S = 0) or with
an empty output (B, T, H or Dv = 0) never reaches an implementation: its output is zeros with
zero gradients (`is_empty`, `empty_output`; a row without keys is an empty sum, where a row whose
keys are all masked averages them); a head_dim D of 0 is refused.

Residuals (every forward returns them, every backward takes them):
``(query, key, value, bias, mask, out, lse)``, `lse` the float32 log-sum-exp of each row's
logits, ``[B, H, T]``. A forward may append residuals of its own after these seven, which only
its own backward reads ("cudnn": the pullback of JAX's cuDNN call); every backward reads the
first `NUM_RESIDUALS` (`common_residuals`), so any forward still pairs with any backward.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core import empty, functions
from pjrtkit.kernels.core.spec import Spec

OP_NAME = "dot_product_attention"


@dataclasses.dataclass(frozen=True)
class PaddedShape:
  """The shape a compiled kernel runs at, the base of its geometry (`mosaic_fwd.FwdGeometry`,
  `mosaic_bwd.BwdGeometry`): query and key lengths padded to the kernel's blocks, `kv_len` the
  true key length (keys past it are masked)."""

  batch: int
  heads: int
  kv_heads: int
  q_len_padded: int
  kv_len: int
  kv_len_padded: int
  head_dim: int

NUM_RESIDUALS = 7
"""The residuals every forward returns first and every backward reads (module docstring)."""


def common_residuals(residuals: Any) -> tuple[Any, ...]:
  """The shared ``(query, key, value, bias, mask, out, lse)`` of any forward's residuals."""
  return tuple(residuals[:NUM_RESIDUALS])


FLOAT_DTYPES = ("float32", "bfloat16", "float16")
MASK_VALUE = -0.7 * float(jnp.finfo(jnp.float32).max)
"""The logit of a masked (query, key) pair."""


def _check_array(name: str, a: Any) -> None:
  if not hasattr(a, "shape") or not hasattr(a, "dtype"):
    raise TypeError(f"dot_product_attention: {name} must be an array, got {type(a).__name__}")


def _window(local_window_size: Any) -> tuple[int, int] | None:
  """``(left, right)`` from an int (both sides) or a pair of non-negative ints; None for None."""
  if local_window_size is None:
    return None
  pair = ((local_window_size, local_window_size) if isinstance(local_window_size, int)
          else tuple(local_window_size) if isinstance(local_window_size, (tuple, list)) else ())
  if (len(pair) != 2 or any(isinstance(x, bool) or not isinstance(x, int) for x in pair)
      or min(pair) < 0):
    raise ValueError(f"dot_product_attention: local_window_size must be None, an int >= 0 or a "
                     f"pair (left, right) of ints >= 0, got {local_window_size!r}")
  return int(pair[0]), int(pair[1])


def _precision(precision: Any) -> str | None:
  """The JSON name of an attention `precision`: None, a ``jax.lax.Precision`` (or its name)
  for both products, or a pair of them (``q k^T``, then ``p v``, as Tokamax)."""
  try:
    name = functions.precision_name(precision)
  except ValueError:
    name = "preset:"
  if name is not None and name.startswith("preset:"):
    raise ValueError(f"dot_product_attention: precision must be None, a jax.lax.Precision "
                     f"(DEFAULT, HIGH, HIGHEST) or a pair of them (for q k^T and for p v), got "
                     f"{precision!r}")
  return None if name in (None, "DEFAULT", "DEFAULT,DEFAULT") else name


def make_spec(query: Any, key: Any, value: Any, bias: Any, mask: Any, is_causal: bool,
              scale: float | None, *, local_window_size: Any = None,
              logits_soft_cap: float | None = None, precision: Any = None) -> Spec:
  """Checks a call and returns its Spec (scale resolved to ``1/sqrt(D)`` when None).

  Raises:
    TypeError: an argument is not an array of an accepted dtype.
    ValueError: shapes or options that do not fit the layout above.
  """
  for name, a in (("query", query), ("key", key), ("value", value)):
    _check_array(name, a)
    if a.ndim != 4:
      raise ValueError(f"dot_product_attention: {name} must be [batch, seq, heads, head_dim] "
                       f"(4 dimensions), got shape {tuple(a.shape)}")
    if not jnp.issubdtype(a.dtype, jnp.floating):
      raise TypeError(f"dot_product_attention: {name} must be floating (accepted: "
                      f"{', '.join(FLOAT_DTYPES)}), got {jnp.dtype(a.dtype).name}")
  if not query.dtype == key.dtype == value.dtype:
    raise TypeError(f"dot_product_attention: query, key and value must have one dtype, got "
                    f"{jnp.dtype(query.dtype).name}, {jnp.dtype(key.dtype).name}, "
                    f"{jnp.dtype(value.dtype).name}")
  b, t, h, d = query.shape
  _, s, k, _ = key.shape
  if tuple(key.shape) != (b, s, k, d):
    raise ValueError(f"dot_product_attention: key must be [batch={b}, seq, kv_heads, head_dim={d}]"
                     f", got {tuple(key.shape)}")
  if tuple(value.shape[:3]) != (b, s, k):
    raise ValueError(f"dot_product_attention: value must be [batch={b}, kv_seq={s}, "
                     f"kv_heads={k}, value_head_dim], got {tuple(value.shape)}")
  if k == 0 or h % k:
    raise ValueError(f"dot_product_attention: query heads ({h}) must be a multiple of key/value "
                     f"heads ({k})")
  if empty.is_zero(d):
    raise ValueError("dot_product_attention: query and key head_dim (their last dimension) must "
                     "be >= 1, got 0 (the logits would be empty sums and the default scale "
                     "1/sqrt(head_dim) infinite)")
  full = (b, h, t, s)
  for name, a, kind in (("bias", bias, "floating"), ("mask", mask, "bool")):
    if a is None:
      continue
    _check_array(name, a)
    ok_dtype = (jnp.issubdtype(a.dtype, jnp.floating) if kind == "floating"
                else a.dtype == jnp.bool_)
    if not ok_dtype:
      raise TypeError(f"dot_product_attention: {name} must be {kind}, got "
                      f"{jnp.dtype(a.dtype).name}")
    if a.ndim != 4 or any(x not in (1, f) for x, f in zip(a.shape, full)):
      raise ValueError(f"dot_product_attention: {name} must broadcast to [batch, heads, q_seq, "
                       f"kv_seq] = {full} (4 dimensions, each 1 or full), got {tuple(a.shape)}")
  if scale is None:
    scale = 1.0 / math.sqrt(d)
  params: dict[str, Any] = {"is_causal": bool(is_causal), "scale": float(scale)}
  window = _window(local_window_size)
  if window is not None:
    params["window_left"], params["window_right"] = window
  if logits_soft_cap is not None:
    if isinstance(logits_soft_cap, bool) or not isinstance(logits_soft_cap, (int, float)) or not (
        math.isfinite(logits_soft_cap) and logits_soft_cap > 0):
      raise ValueError(f"dot_product_attention: logits_soft_cap must be None or a finite number "
                       f"> 0, got {logits_soft_cap!r}")
    params["logits_soft_cap"] = float(logits_soft_cap)
  name = _precision(precision)
  if name is not None:
    params["precision"] = name
  return Spec.make(OP_NAME, {"query": query, "key": key, "value": value, "bias": bias,
                             "mask": mask}, params)


def option(spec: Spec, name: str) -> Any:
  """The Spec parameter `name` when the call gave it (window_left, window_right,
  logits_soft_cap, precision), else None."""
  return dict(spec.params).get(name)


def precisions(spec: Spec) -> tuple[Any, Any]:
  """The ``jax.lax`` precisions of ``q k^T`` and of ``p v`` (None for the default)."""
  p = functions.precision_of(option(spec, "precision"))
  return p if isinstance(p, tuple) else (p, p)


def extras_reason(spec: Spec, *, accepts_window: bool = False,
                  accepts_soft_cap: bool = False) -> str | None:
  """Why a kernel cannot serve `spec`'s options (module docstring), or None.

  `accepts_window` / `accepts_soft_cap`: it computes ``local_window_size`` /
  ``logits_soft_cap``. A value head dim other than the query's is "xla"'s and "xla_chunked"'s.
  """
  _, _, _, d, _, _ = dims(spec)
  given = [name for name, option_name, accepted in (
      ("local_window_size", "window_left", accepts_window),
      ("logits_soft_cap", "logits_soft_cap", accepts_soft_cap))
           if option(spec, option_name) is not None and not accepted]
  if given:
    return (f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} not computed by this "
            f"kernel ('xla' and 'xla_chunked' take every option; implementation=None chooses)")
  if spec.arg("value").shape[3] != d:
    return (f"a value head dim ({spec.arg('value').shape[3]}) other than the query's ({d}) is "
            f"served by 'xla' and 'xla_chunked' only (or implementation=None)")
  return None


def flash_kernel_reason(spec: Spec, *, accepts_key_mask: bool = False,
                        accepts_rows_without_keys: bool = False) -> str | None:
  """Why a flash kernel that computes windows and soft caps ("native", "triton") cannot serve
  `spec`'s options, or None: a bias or mask (with `accepts_key_mask`, a bias or a mask other than
  a key mask, `is_key_mask`), a value head dim of its own, or, unless
  `accepts_rows_without_keys`, a window leaving queries without keys."""
  if accepts_key_mask:
    if spec.arg("bias") is not None:
      return "bias is not supported (use 'xla_chunked' or 'xla')"
    mask = spec.arg("mask")
    if mask is not None and not is_key_mask(spec):
      b, _, _, _, s, _ = dims(spec)
      return (f"a mask other than a key mask ([{b} or 1, 1, 1, {s}]: one flag per batch element "
              f"and key, as key_value_seq_lengths gives) is not supported, got shape "
              f"{tuple(mask.shape)} (use 'xla_chunked' or 'xla')")
  elif has_bias_or_mask(spec):
    return "bias and mask are not supported (use 'xla_chunked' or 'xla')"
  reason = extras_reason(spec, accepts_window=True, accepts_soft_cap=True)
  if reason or accepts_rows_without_keys:
    return reason
  return empty_window_reason(spec)


def is_key_mask(spec: Spec) -> bool:
  """Whether `spec` has a key mask: a mask of shape ``[B or 1, 1, 1, S]`` (one flag per batch
  element and key, broadcast over heads and queries; ``key_value_seq_lengths`` gives one)."""
  mask = spec.arg("mask")
  if mask is None:
    return False
  b, _, _, _, s, _ = dims(spec)
  return tuple(mask.shape[1:]) == (1, 1, s) and mask.shape[0] in (1, b)


def mean_of_values(value: jax.Array, heads: int) -> jax.Array:
  """float32 ``[N, 1, heads, Dv]``: the mean over all S keys of `value` ``[N, S, K, Dv]`` for
  each query head (each key/value head's repeated over its group): the row of a query that
  attends no key. Zeros when there are no keys (S = 0, `is_empty`), not 0/0."""
  if empty.is_zero(value.shape[1]):
    n, _, _, dv = value.shape
    return jnp.zeros((n, 1, heads, dv), jnp.float32)
  mean = jnp.mean(value.astype(jnp.float32), axis=1)  # [N, K, Dv]
  return jnp.repeat(mean, heads // value.shape[2], axis=1)[:, None]


def is_empty(spec: Spec) -> bool:
  """Whether the call has a zero-size dimension: no batch elements, queries, heads or value
  features (an empty output), or no keys (S = 0). Its output is `empty_output`."""
  b, t, h, _, s, _ = dims(spec)
  return empty.any_zero((b, t, h, s, spec.arg("value").shape[3]))


def empty_output(spec: Spec) -> jax.Array:
  """The output of an `is_empty` call, from shapes alone: zeros ``[B, T, H, Dv]`` in the
  query's dtype. Without keys each row's weighted sum of values is an empty sum, so zero (as
  ``jax.nn.dot_product_attention`` gives), whatever the mask, bias or options; the gradient of
  every argument is zero."""
  b, t, h, _, _, _ = dims(spec)
  return jnp.zeros((b, t, h, spec.arg("value").shape[3]), jnp.dtype(spec.arg("query").dtype))


def window_leaves_rows_without_keys(spec: Spec) -> bool:
  """Whether `spec`'s ``local_window_size`` leaves some query with no key (``T - 1 - left >=
  S``): that row averages every value."""
  left = option(spec, "window_left")
  _, t, _, _, s, _ = dims(spec)
  return left is not None and t - 1 - left >= s


def empty_window_reason(spec: Spec) -> str | None:
  """Why a kernel that skips the key blocks outside a window and cannot fill rows without keys
  cannot serve `spec`, or None (`window_leaves_rows_without_keys`)."""
  if not window_leaves_rows_without_keys(spec):
    return None
  return ("local_window_size leaves queries without any key (query length - 1 - left >= key "
          "length): their rows average every value, which the kernel's window skipping does not "
          "compute (use 'xla_chunked' or 'xla')")


def reference(query: jax.Array, key: jax.Array, value: jax.Array, bias: jax.Array | None = None,
              mask: jax.Array | None = None, *, is_causal: bool = False,
              scale: float | None = None, local_window_size: Any = None,
              logits_soft_cap: float | None = None) -> jax.Array:
  """The plain-JAX definition at the highest precision (differentiated by JAX in tests)."""
  b, t, h, d = query.shape
  s, k = key.shape[1], key.shape[2]
  scale = 1.0 / math.sqrt(d) if scale is None else scale
  kr = jnp.repeat(key, h // k, axis=2).astype(jnp.float32)
  vr = jnp.repeat(value, h // k, axis=2).astype(jnp.float32)
  hi = jax.lax.Precision.HIGHEST
  logits = jnp.einsum("bthd,bshd->bhts", query.astype(jnp.float32), kr, precision=hi) * scale
  if bias is not None:
    logits = logits + bias.astype(jnp.float32)
  if logits_soft_cap is not None:
    logits = logits_soft_cap * jnp.tanh(logits / logits_soft_cap)
  logits = jnp.maximum(logits, MASK_VALUE)
  valid = jnp.ones((1, 1, t, s), bool)
  if mask is not None:
    valid = valid & mask
  qpos, kpos = jnp.arange(t)[:, None], jnp.arange(s)[None, :]
  if is_causal:
    valid = valid & (qpos >= kpos)[None, None]
  window = _window(local_window_size)
  if window is not None:
    valid = valid & ((kpos >= qpos - window[0]) & (kpos <= qpos + window[1]))[None, None]
  logits = jnp.where(valid, logits, MASK_VALUE)
  weights = jax.nn.softmax(logits, axis=-1)
  return jnp.einsum("bhts,bshd->bthd", weights, vr, precision=hi).astype(query.dtype)


def dims(spec: Spec) -> tuple[int, int, int, int, int, int]:
  """(B, T, H, D, S, K)."""
  b, t, h, d = spec.arg("query").shape
  s, k = spec.arg("key").shape[1:3]
  return b, t, h, d, s, k


def has_bias_or_mask(spec: Spec) -> bool:
  """Whether the call has a bias or a mask."""
  return spec.arg("bias") is not None or spec.arg("mask") is not None


def grouped_logits(q: jax.Array, k: jax.Array, spec: Spec) -> jax.Array:
  """float32 ``q k^T * scale`` as ``[B, H, T, S_chunk]`` for key chunk `k` ``[B, Sc, K, D]``."""
  b, t, h, d = q.shape
  kh = k.shape[2]
  qg = q.reshape(b, t, kh, h // kh, d)
  s = jnp.einsum("btkgd,bskd->bkgts", qg, k, preferred_element_type=jnp.float32,
                 precision=precisions(spec)[0])
  return s.reshape(b, h, t, k.shape[1]) * spec.param("scale")


def mask_logits(s: jax.Array, spec: Spec, bias: jax.Array | None, mask: jax.Array | None,
                key_start: Any = 0, key_len: int | None = None) -> tuple[jax.Array, jax.Array]:
  """Adds bias and applies mask/causality to float32 logits ``[B, H, T, Sc]`` of keys
  ``key_start ...``; keys at or past `key_len` (padding) get -inf. Returns (logits, valid)."""
  t, sc = s.shape[2], s.shape[3]
  if bias is not None:
    s = s + bias.astype(jnp.float32)
  cap = option(spec, "logits_soft_cap")
  if cap is not None:
    s = cap * jnp.tanh(s / cap)
  s = jnp.maximum(s, MASK_VALUE)  # A kept logit never ranks below a masked one.
  valid = jnp.ones((1, 1, t, sc), bool)
  if mask is not None:
    valid = valid & mask
  kpos = key_start + jnp.arange(sc)
  qpos = jnp.arange(t)[:, None]
  if spec.param("is_causal"):
    valid = valid & (qpos >= kpos[None, :])[None, None]
  if option(spec, "window_left") is not None:
    left, right = option(spec, "window_left"), option(spec, "window_right")
    valid = valid & ((kpos[None, :] >= qpos - left) & (kpos[None, :] <= qpos + right))[None, None]
  s = jnp.where(valid, s, MASK_VALUE)
  if key_len is not None:
    s = jnp.where((kpos < key_len)[None, None, None, :], s, -jnp.inf)
  return s, valid


def weighted_values(p: jax.Array, v: jax.Array, out_dtype: Any = jnp.float32,
                    precision: Any = None) -> jax.Array:
  """``p v`` for p ``[B, H, T, Sc]`` (float32) and v ``[B, Sc, K, Dv]``: ``[B, T, H, Dv]``."""
  b, h, t, sc = p.shape
  kh = v.shape[2]
  pg = p.reshape(b, kh, h // kh, t, sc)
  o = jnp.einsum("bkgts,bskd->btkgd", pg, v.astype(jnp.float32), precision=precision)
  return o.reshape(b, t, h, v.shape[3]).astype(out_dtype)


def reduce_to(x: jax.Array, shape: tuple[int, ...]) -> jax.Array:
  """Sums `x` over the axes where `shape` has 1 (a broadcast operand's cotangent)."""
  axes = tuple(i for i, (a, b) in enumerate(zip(x.shape, shape)) if b == 1 and a != 1)
  return jnp.sum(x, axis=axes, keepdims=True) if axes else x


def delta(out: jax.Array, dout: jax.Array) -> jax.Array:
  """``rowsum(dout * out)`` as float32 ``[B, H, T]`` (the softmax backward's correction)."""
  return jnp.einsum("bthd,bthd->bht", out.astype(jnp.float32), dout.astype(jnp.float32))
