"""dQ in int32 fixed point (`fixed_point`, `BwdGeometry.fixed_point_dq`), checked without a GPU.

The kernel's part of the arithmetic is replayed here in JAX on the CPU, key block by key block as
the fused backward computes it (probabilities from the log-sum-exp, dS rounded to the inputs'
dtype, each block's dQ part in float32), through `fixed_point`'s own `row_factors`, `encode` and
`decode`: the int32 sums stay inside int32 with the margin the bound promises (adversarial inputs
included), each row within half a unit of its grid per part, and decode to the float64 reference's
dQ within a stated tolerance. The kernel itself is checked lowering for CUDA here (bwd_test.py),
for spills with the H200's ptxas (tools/kernels_gpu/ptxas_local.py) and for values and
repeatability by dot_product_attention_test's GPU tests (which skip without a GPU).
"""

from __future__ import annotations

import math
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit.kernels.dot_product_attention.mosaic import bwd as mosaic_bwd  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import fixed_point  # noqa: E402

BLOCK = mosaic_bwd.BLOCK_KV


def _reference(q, k, v, do, scale, causal):
  """float64 numpy: (dq, per-block float32 parts as the kernel forms them, lse, delta)."""
  b, t, h, d = q.shape
  kh = k.shape[2]
  g = h // kh
  q64, k64, v64, do64 = (np.asarray(x, np.float64) for x in (q, k, v, do))
  kr, vr = np.repeat(k64, g, axis=2), np.repeat(v64, g, axis=2)
  s = np.einsum("bthd,bshd->bhts", q64, kr) * scale
  if causal:
    s = np.where(np.tril(np.ones((t, k.shape[1]), bool)), s, -np.inf)
  lse = np.log(np.sum(np.exp(s - s.max(-1, keepdims=True)), -1)) + s.max(-1)
  p = np.exp(s - lse[..., None])
  o = np.einsum("bhts,bshd->bthd", p, vr)
  o_in = np.asarray(jnp.asarray(o, q.dtype), np.float64)  # the forward's output, rounded
  delta = np.einsum("bthd,bthd->bht", o_in, do64)
  dp = np.einsum("bthd,bshd->bhts", do64, vr)
  ds = p * (dp - delta[..., None]) * scale
  dq = np.einsum("bhts,bshd->bthd", ds, kr)
  # The kernel: dS in the inputs' dtype, each block's product summed in float32.
  ds_in = jnp.asarray(ds, q.dtype).astype(jnp.float32)
  parts = [jnp.einsum("bhts,bshd->bthd", ds_in[..., j:j + BLOCK],
                      jnp.asarray(kr[:, j:j + BLOCK], jnp.float32))
           for j in range(0, k.shape[1], BLOCK)]
  return dq, parts, jnp.asarray(lse, jnp.float32), jnp.asarray(delta, jnp.float32)


def _inputs(shape, dtype, seed=0, magnitude=1.0):
  b, t, h, kh, s, d = shape
  keys = jax.random.split(jax.random.key(seed), 4)
  q = jax.random.normal(keys[0], (b, t, h, d), jnp.float32)
  k = jax.random.normal(keys[1], (b, s, kh, d), jnp.float32)
  v = jax.random.normal(keys[2], (b, s, kh, d), jnp.float32)
  do = jax.random.normal(keys[3], (b, t, h, d), jnp.float32) * magnitude
  return tuple(x.astype(dtype) for x in (q, k, v, do))


def _sum(parts, factor, order):
  """The int32 sum of the encoded parts in `order`, and the largest magnitude any partial sum
  reached (in int64, so an int32 overflow would show)."""
  total = np.zeros(parts[0].shape, np.int64)
  peak = 0
  for j in order:
    total = total + np.asarray(fixed_point.encode(parts[j], factor), np.int64)
    peak = max(peak, int(np.max(np.abs(total))))
  return jnp.asarray(total.astype(np.int32)), peak


def _factor_rows(k, v, do, lse, delta, scale):
  """`row_factors`' factor and finite rows, transposed to dQ's [B, T, H]."""
  factor, finite = fixed_point.row_factors(k, v, do, lse, delta, scale)
  return factor, finite, jnp.swapaxes(factor, 1, 2)


def _check_sum(shape, causal, dtype, magnitude=1.0):
  """Replays the kernel's sum at `shape`; returns (largest scaled partial sum, each row's error
  relative to its largest dQ element, float32 sums' same error)."""
  q, k, v, do = _inputs(shape, dtype, magnitude=magnitude)
  scale = 1 / math.sqrt(shape[-1])
  dq, parts, lse, delta = _reference(q, k, v, do, scale, causal)
  factor, finite, rows = _factor_rows(k, v, do, lse, delta, scale)
  assert bool(jnp.all(finite))
  total, peak = _sum(parts, rows, range(len(parts)))
  assert peak < 2 ** fixed_point.FRACTION_TARGET
  got = np.asarray(fixed_point.decode(total, factor, finite), np.float64)
  exact = np.sum([np.asarray(p, np.float64) for p in parts], axis=0)  # the parts' exact sum
  # The kernel's own rounding (dS in the inputs' dtype) against the float64 reference:
  assert np.max(np.abs(exact - dq)) / np.max(np.abs(dq)) < 1e-2
  # Half a unit of the row's grid per part, at most (the grid: 1 / factor).
  units = np.abs(got - exact) * np.asarray(rows)[..., None]
  assert np.max(units) <= 0.5 * len(parts)
  row_max = np.max(np.abs(exact), axis=-1, keepdims=True)
  row_max = np.where(row_max > 0, row_max, 1.0)
  f32 = parts[0]
  for part in parts[1:]:
    f32 = f32 + part
  return (peak, np.max(np.abs(got - exact) / row_max),
          np.max(np.abs(np.asarray(f32, np.float64) - exact) / row_max))


@pytest.mark.parametrize("shape,causal,dtype,magnitude", [
    ((2, 256, 4, 4, 640, 64), False, jnp.bfloat16, 1.0),
    ((1, 384, 8, 2, 384, 128), True, jnp.bfloat16, 1.0),     # grouped, causal
    ((1, 200, 2, 1, 520, 64), False, jnp.float16, 1.0),      # multi-query, float16
    ((1, 128, 2, 2, 1024, 64), False, jnp.bfloat16, 1e-30),  # a tiny loss scale
    ((1, 128, 2, 2, 512, 64), False, jnp.bfloat16, 1e25),    # a huge one
])
def test_fixed_point_sum_stays_in_int32_within_half_a_unit_per_part(shape, causal, dtype,
                                                                    magnitude):
  _, err, _ = _check_sum(shape, causal, dtype, magnitude)
  assert err < 2e-5  # of each row's largest dQ element


@pytest.mark.parametrize("keys,peak_at_least,most_err", [
    (1024, 2 ** 20, 1e-5), (4096, 2 ** 19, 5e-5), (32768, 2 ** 17, 4e-4)])
def test_fixed_point_error_grows_with_the_keys_as_documented(keys, peak_at_least, most_err):
  """The figures `fixed_point`'s docstring gives (64 rows, head_dim 128, bfloat16): how far the
  bound leaves the sums under the target, and each row's error relative to its largest dQ
  element, against float32 sums' (under 1e-6)."""
  peak, err, f32_err = _check_sum((1, 64, 1, 1, keys, 128), False, jnp.bfloat16)
  assert peak_at_least <= peak < 4 * peak_at_least
  assert most_err / 4 < err < most_err and f32_err < 1e-6


def test_factors_are_powers_of_two_and_keep_adversarial_sums_inside_int32():
  """Inputs near the bound: every key one row of +-max entries, half the values along dO and
  half zero, uniform probabilities, so the first half of the blocks' parts all have one sign:
  the scaled partial sums reach within 8x of 2**FRACTION_TARGET (the bound wastes at most three
  bits there: a factor 2 for the partial sums' sign change, one for |dP - delta| against
  max|dP|, one for the power of two) and stay below it."""
  b, t, h, s, d = 1, 128, 1, 1024, 64
  scale = 1.0
  q = jnp.zeros((b, t, h, d), jnp.float32)  # uniform probabilities
  sign = jnp.where(jnp.arange(d) % 2 == 0, 1.0, -1.0)
  k = jnp.broadcast_to(3.0 * sign, (b, s, h, d))
  v = jnp.zeros((b, s, h, d), jnp.float32).at[:, : s // 2].set(2.0)  # half the values
  do = jnp.ones((b, t, h, d), jnp.float32) * 5.0
  dq, parts, lse, delta = _reference(q, k, v, do, scale, False)
  factor, finite, rows = _factor_rows(k, v, do, lse, delta, scale)
  mantissa, _ = jnp.frexp(factor)
  assert bool(jnp.all(mantissa == 0.5)) and bool(jnp.all(finite))
  total, peak = _sum(parts, rows, range(len(parts)))
  assert 2 ** (fixed_point.FRACTION_TARGET - 3) < peak < 2 ** fixed_point.FRACTION_TARGET
  np.testing.assert_allclose(fixed_point.decode(total, factor, finite), dq, rtol=1e-6,
                             atol=1e-6 * np.max(np.abs(dq)))


def test_zero_rows_decode_to_zero_and_non_finite_rows_to_nan():
  shape = (1, 128, 2, 1, 256, 64)
  q, k, v, do = _inputs(shape, jnp.float32)
  do = do.at[0, 5].set(0.0)             # a padded row: dO 0
  do = do.at[0, 7, 1, 3].set(jnp.inf)   # a row whose dO is not finite
  scale = 0.125
  _, parts, lse, delta = _reference(q, k, v, do, scale, False)
  lse = lse.at[0, 0, 9].set(jnp.nan)    # a row whose log-sum-exp is not finite
  factor, finite, rows = _factor_rows(k, v, do, lse, delta, scale)
  total, _ = _sum([jnp.nan_to_num(p) for p in parts], rows, range(len(parts)))
  got = np.asarray(fixed_point.decode(total, factor, finite))
  assert np.all(got[0, 5] == 0.0)
  assert factor[0, 0, 5] == 2.0 ** fixed_point.FRACTION_TARGET
  bad = {(7, 1), (9, 0)}
  for t_ in range(128):
    for h_ in range(2):
      assert np.all(np.isnan(got[0, t_, h_])) == ((t_, h_) in bad), (t_, h_)
  # A key that is not finite reaches every row of its key/value head.
  _, finite_k = fixed_point.row_factors(k.at[0, 3, 0, 0].set(jnp.nan), v, do, lse, delta, scale)
  assert not bool(jnp.any(finite_k))


def test_factor_range_stays_in_float32_normals():
  k = jnp.full((1, 128, 1, 64), 1e-12, jnp.float32)  # bound 1.3e-34: 2**141 clipped to 2**126
  v = jnp.full((1, 128, 1, 64), 1e-12, jnp.float32)
  do = jnp.full((1, 64, 1, 64), 1e-12, jnp.float32)
  rows = jnp.zeros((1, 1, 64), jnp.float32)
  factor, finite = fixed_point.row_factors(k, v, do, rows, rows, 1.0)
  assert bool(jnp.all(factor == 2.0 ** 126)) and bool(jnp.all(finite))
  huge = jnp.full((1, 128, 1, 64), 1e30, jnp.float32)
  factor, finite = fixed_point.row_factors(huge, huge, do * 1e30, rows, rows, 1.0)
  assert bool(jnp.all(factor == 1.0)) and not bool(jnp.any(finite))  # the bound overflows


@pytest.mark.parametrize("value,want", [("", "float32"), ("fixed_point", "fixed_point"),
                                        ("SPLIT", "split"), ("float32", "float32")])
def test_dq_sum_reads_the_environment(monkeypatch, value, want):
  monkeypatch.delenv("XLA_FLAGS", raising=False)
  monkeypatch.setenv(fixed_point.DQ_SUM_VARIABLE, value)
  assert fixed_point.dq_sum() == want


def test_dq_sum_defaults_to_split_under_deterministic_xla_flags_and_refuses_bad_values(
    monkeypatch):
  monkeypatch.delenv(fixed_point.DQ_SUM_VARIABLE, raising=False)
  monkeypatch.setenv("XLA_FLAGS", "--xla_gpu_deterministic_ops=true")
  assert fixed_point.dq_sum() == "split"
  monkeypatch.setenv(fixed_point.DQ_SUM_VARIABLE, "fixed_point")
  assert fixed_point.dq_sum() == "fixed_point"
  monkeypatch.setenv(fixed_point.DQ_SUM_VARIABLE, "int64")
  with pytest.raises(ValueError, match="PJRTKIT_ATTENTION_DQ_SUM='int64': accepted values are "
                                       "float32, fixed_point, split"):
    fixed_point.dq_sum()


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
