"""dQ in int32 fixed point for the fused Mosaic backward (`BwdGeometry.fixed_point_dq`).

The fused backward adds each key block's part of dQ to global memory with TMA reduce-adds, in
whatever order the programs reach them. In float32 that order changes the rounding, so the
gradient differs from run to run in its last bits. Integer addition is associative: if every
part is first scaled to an integer of a common per-row grid, the sum is the same in any order.

Row i of dQ is ``dQ_i = sum_j dS_ij K_j`` with ``dS_ij = P_ij (dP_ij - delta_i) scale``,
``dP_ij = dO_i . V_j``, ``delta_i = dO_i . O_i = sum_j P_ij dP_ij`` (``O_i = sum_j P_ij V_j``,
``sum_j P_ij = 1``). Every partial sum of it over any set of key blocks is at most ``scale
max|K| sum_j P_ij |dP_ij - delta_i|`` per element, and by Jensen's inequality
``sum_j P_ij |dP_ij - delta_i| <= sqrt(sum_j P_ij (dP_ij - delta_i)**2) <= max_j |dP_ij|
<= |dO_i| max_j |V_j|``, so it is bounded by

    B_i = scale * max|K| * |dO_i| * max_j |V_j|

(norms Euclidean, max|K| over the elements of the row's key/value head). `row_factors` gives
each row the power of two ``2**(FRACTION_TARGET - e)`` with ``B_i < 2**e``: scaled parts and
their partial sums stay below ``2**FRACTION_TARGET`` in magnitude, 4x under int32's ``2**31``,
room for what the kernel's arithmetic adds to the bound (dS and O rounded to 16 bits, the
approximate exponential: well under 1 %) and half a unit of rounding per part. Multiplying by a
power of two is exact, so the kernel computes exactly what the float32 kernel computes, scaled,
and rounds it to the nearest integer: a row's error is at most half a unit of its grid per key
block, ``kv_blocks * B_i * 2**-(FRACTION_TARGET + 1)``. The bound is loose by about
``sqrt(key length)`` times more than the spread of the row's ``dP`` (random bfloat16 inputs,
head_dim 128, 64 rows, CPU replay in ``fixed_point_test.py``: the largest scaled partial sum
``2**21`` at 1024 keys, ``2**18`` at 32768), so the error grows with the sequence: relative to
each row's largest dQ about 5e-6 at 1024 keys, 2e-5 at 4096 and 2e-4 at 32768, where float32
sums are at 1e-7 to 7e-7; rounded to bfloat16, 0.2 %, 1.1 % and 6.6 % of dQ's elements land one
unit away from the exactly rounded value (float32 sums: at most 0.02 %).

NaN and infinity: a part that is not finite converts to an arbitrary integer, so `decode`
returns NaN for a row whose bound, log-sum-exp or delta is not finite. A non-finite query, key,
value or output cotangent makes delta (through the forward's output) or the bound of the rows it
reaches non-finite, so those rows come out NaN; a non-finite key or value makes every row of its
key/value head NaN (the float32 kernel keeps causal rows before it finite), and a bound that
overflows float32 (inputs around 1e12 and more) makes its row NaN. A dS that overflows float16
(|dS| > 65504) while the bound stays finite gives its dQ row a finite wrong value here (the
float32 kernel gives inf or NaN); dK, which multiplies the same dS, is then not finite either.
"""

from __future__ import annotations

import os
from typing import Any

import jax.numpy as jnp
from jax import lax

from pjrtkit.kernels.core import pallas as pallas_lib

FRACTION_TARGET = 29
"""Scaled dQ parts and their partial sums stay below ``2**FRACTION_TARGET`` in magnitude."""
_MAX_EXPONENT = 126
"""Factors stay within float32's normal range, ``2**-126 .. 2**126`` (a row whose bound is 0 or
tiny has dQ 0 or tiny, and any factor up to its grid's keeps it below the target)."""


def row_factors(k: Any, v: Any, dout: Any, lse: Any, delta: Any, scale: float
                ) -> tuple[Any, Any]:
  """``(factor, finite)``, float32 and bool ``[B, H, T]``: the power of two each dQ row is
  scaled by, and whether the row's sum can be trusted (its bound, log-sum-exp `lse` and
  `delta`, ``[B, H, T]``, are finite; `decode` makes the others NaN), for keys and values
  ``[B, S, K, D]`` and the output cotangent ``[B, T, H, D]`` (H a multiple of K). Rows of zeros,
  such as padding, get ``2**FRACTION_TARGET``; rows whose bound is not finite 1."""
  f32 = jnp.float32
  group = dout.shape[2] // k.shape[2]
  kmax = jnp.max(jnp.abs(k), axis=(1, 3)).astype(f32)                            # [B, K]
  vmax = jnp.max(_norms(v), axis=1)                                              # [B, K]
  d_norm = _norms(dout)                                                          # [B, T, H]
  per_head = jnp.repeat(scale * kmax * vmax, group, axis=1)                      # [B, H]
  bound = per_head[:, :, None] * jnp.swapaxes(d_norm, 1, 2)                      # [B, H, T]
  finite = jnp.isfinite(bound) & jnp.isfinite(lse) & jnp.isfinite(delta)
  _, exponent = jnp.frexp(jnp.where(jnp.isfinite(bound), bound, 0.0))  # bound < 2**exponent
  shift = jnp.clip(FRACTION_TARGET - exponent, -_MAX_EXPONENT, _MAX_EXPONENT)
  factor = jnp.ldexp(jnp.ones_like(bound), shift)
  return jnp.where(jnp.isfinite(bound), factor, 1.0), finite


def _norms(x: Any) -> Any:
  """Euclidean norms over the last axis in float32, without overflow for entries whose squares
  exceed float32 (each row divided by its largest magnitude first)."""
  x = x.astype(jnp.float32)
  peak = jnp.max(jnp.abs(x), axis=-1)
  safe = jnp.where(peak > 0, peak, 1.0)
  return peak * jnp.sqrt(jnp.sum(jnp.square(x / safe[..., None]), axis=-1))


def encode(part: Any, factor: Any) -> Any:
  """One key block's dQ part ``[..., T, D]`` float32 as the kernel adds it: scaled by its rows'
  `factor` ``[..., T]`` and rounded to the nearest int32, ties to even (what the CPU tests
  replay)."""
  return lax.round(part * factor[..., None], lax.RoundingMethod.TO_NEAREST_EVEN).astype(jnp.int32)


def decode(total: Any, factor: Any, finite: Any) -> Any:
  """dQ float32 ``[B, T, H, D]`` from the int32 sum ``[B, T, H, D]`` and the rows' `factor` and
  `finite` (``[B, H, T]``, T as in `total`): each row divided by its factor (exact: a power of
  two), NaN where `finite` is False."""
  rows = jnp.swapaxes(factor, 1, 2)[..., None]
  keep = jnp.swapaxes(finite, 1, 2)[..., None]
  return jnp.where(keep, total.astype(jnp.float32) / rows, jnp.nan)


DQ_SUM_VARIABLE = "PJRTKIT_ATTENTION_DQ_SUM"
"""Environment variable choosing how the compiled Mosaic attention backward sums dQ (`dq_sum`)."""
DQ_SUMS = ("float32", "fixed_point", "split")


def dq_sum() -> str:
  """How the compiled Mosaic attention backward sums dQ, read when a call is traced:
  ``PJRTKIT_ATTENTION_DQ_SUM`` = ``float32`` (the fused kernel's float32 reduce-adds, in any
  order: the default), ``fixed_point`` (the fused kernel in int32 fixed point: bitwise the same
  every run) or ``split`` (a dQ kernel and a dK/dV kernel: bitwise the same every run, the
  default when ``XLA_FLAGS`` asks for deterministic ops, `pallas.deterministic_ops_requested`).

  Raises:
    ValueError: naming the variable and the accepted values.
  """
  value = os.environ.get(DQ_SUM_VARIABLE, "").strip().lower()
  if not value:
    return "split" if pallas_lib.deterministic_ops_requested() else "float32"
  if value not in DQ_SUMS:
    raise ValueError(f"{DQ_SUM_VARIABLE}={value!r}: accepted values are {', '.join(DQ_SUMS)} "
                     f"(or unset)")
  return value
