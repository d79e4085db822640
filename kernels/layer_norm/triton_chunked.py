"""The "triton" layer norm kernels for rows too wide to hold in registers: a config with `chunk`
below the padded row.

* `forward_kernel`: one row at a time in chunks of `chunk` channels, three walks (the mean, the
  variance, then y); the row's second and third reads come from cache.
* `backward`: two kernels. `_bwd_rows_kernel` walks each row once in [block_rows, chunk] tiles
  of x and dy for the statistics dx needs (four float32 numbers per row); `_bwd_tiles_kernel`
  writes dx from [block_rows, chunk] tiles over a grid of channel chunks x row groups, each group
  one float32 row of dscale/doffset partial sums.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm.triton_tiles import call_params, load_f32, load_vector, tile_loop


def forward_kernel(*refs, has_scale, has_offset, n, c, chunk, programs, epsilon, subtract_mean):
  """The forward one row at a time in chunks of `chunk` channels: the row's sum, then the sum of
  squared deviations, then y (three reads of the row, two of them from cache)."""
  x_ref, *params, y_ref = refs
  scale_ref = params.pop(0) if has_scale else None
  offset_ref = params.pop(0) if has_offset else None
  pid = pl.program_id(0)
  chunks = pl.cdiv(c, chunk)

  def columns(k: Any) -> tuple[Any, Any]:
    cols = k * chunk + lax.iota(jnp.int32, chunk)
    return cols, (cols < c) if c % chunk else None

  def load(ref: Any, index: Any, mask: Any) -> Any:
    if mask is None:
      return plt.load(ref.at[index]).astype(jnp.float32)
    return load_f32(ref.at[index], mask)

  def row_body(i: Any, _: Any) -> None:
    row = pid + i * programs

    def total(k: Any, acc: Any) -> Any:
      cols, mask = columns(k)
      return acc + jnp.sum(load(x_ref, (row, cols), mask))

    mean = (lax.fori_loop(0, chunks, total, jnp.float32(0)) * (1.0 / c) if subtract_mean
            else jnp.float32(0))

    def squares(k: Any, acc: Any) -> Any:
      cols, mask = columns(k)
      d = load(x_ref, (row, cols), mask) - mean
      if mask is not None:
        d = jnp.where(mask, d, 0.0)
      return acc + jnp.sum(d * d)

    rstd = lax.rsqrt(lax.fori_loop(0, chunks, squares, jnp.float32(0)) * (1.0 / c) + epsilon)

    def write(k: Any, _: Any) -> None:
      cols, mask = columns(k)
      y = (load(x_ref, (row, cols), mask) - mean) * rstd
      if has_scale:
        y = y * load(scale_ref, cols, mask)
      if has_offset:
        y = y + load(offset_ref, cols, mask)
      if mask is None:
        plt.store(y_ref.at[row, cols], y.astype(y_ref.dtype))
      else:
        plt.store(y_ref.at[row, cols], y.astype(y_ref.dtype), mask=mask)

    lax.fori_loop(0, chunks, write, None)

  # Rows pid, pid + programs, ... below n.
  lax.fori_loop(0, lax.div(n - pid + programs - 1, programs), row_body, None)


def _bwd_rows_kernel(*refs, has_scale, n, c, chunk, block_rows, programs, blocks, prefetch,
                     epsilon, subtract_mean):
  """The chunked backward's first kernel: the row statistics dx needs, in one walk over
  [block_rows, chunk] tiles of x and dy, never a whole row at once.

  A program takes row blocks pid, pid + programs, ... below `blocks`; per chunk it reduces its
  tile about the chunk's own mean (the count, mean and sum of squared deviations, the sums of g
  and of g * (x - chunk mean), g = dy * scale) and merges that into the row's running values
  about the running mean (Chan et al.'s pairwise update, exact in exact arithmetic; no
  E[x^2] - mean^2 cancellation). It writes per row mean, rstd,
  u = rstd^3 * sum(g * (x - mean)) / c and w = rstd * sum(g) / c (0 for RMS norm), so that
  dx = rstd * g - (x - mean) * u - w.
  """
  if has_scale:
    x_ref, sc_ref, dy_ref, mean_ref, rstd_ref, u_ref, w_ref = refs
  else:
    x_ref, dy_ref, mean_ref, rstd_ref, u_ref, w_ref = refs
  pid = pl.program_id(0)
  chunks = pl.cdiv(c, chunk)
  zeros = jnp.zeros((block_rows,), jnp.float32)

  def merge(rows, cols, mask, tiles, acc):
    x, dy = tiles
    k, count, mean, squares, g_sum, gd_sum = acc  # k: this chunk's index
    g = dy * load_vector(sc_ref, c, chunk, k * chunk) if has_scale else dy
    if not subtract_mean:  # sums about 0
      return (k + 1, count, mean, squares + jnp.sum(x * x, axis=1), g_sum + jnp.sum(g, axis=1),
              gd_sum + jnp.sum(g * x, axis=1))
    here = jnp.minimum(c - k * chunk, chunk).astype(jnp.float32)  # channels in this chunk
    chunk_mean = jnp.sum(x, axis=1) * (1.0 / here)
    d = jnp.where(mask, x - chunk_mean[:, None], 0.0)
    chunk_g = jnp.sum(g, axis=1)
    total = count + here
    delta = chunk_mean - mean
    # The mean moves by `step`; both sums of g * (x - mean) are re-centred by exact differences
    # (not by subtracting the nearly equal means themselves).
    step = delta * (here / total)
    return (k + 1, total, mean + step,
            squares + jnp.sum(d * d, axis=1) + delta * delta * (count * here / total),
            g_sum + chunk_g,
            gd_sum - step * g_sum + jnp.sum(g * d, axis=1) + (delta - step) * chunk_g)

  def block(i: Any, _: Any) -> None:
    first_row = (pid + i * programs) * block_rows

    def origin(k: Any) -> tuple[Any, Any]:
      # The prefetch after the last chunk reloads that chunk (from cache) rather than reading
      # past the row. (Pointing it at fully masked rows instead measured the same on the H200:
      # 2.33 against 2.32 TB/s forward+backward at 4096x16384.)
      return first_row, jnp.minimum(k, chunks - 1) * chunk

    _, _, mean, squares, g_sum, gd_sum = tile_loop(
        chunks, origin, block_rows, n, c, chunk, [x_ref, dy_ref], merge,
        (jnp.int32(0), jnp.float32(0), zeros, zeros, zeros, zeros), prefetch)
    rstd = lax.rsqrt(squares * (1.0 / c) + epsilon)
    rows = first_row + lax.iota(jnp.int32, block_rows)
    valid = rows < n
    plt.store(mean_ref.at[rows], mean, mask=valid)
    plt.store(rstd_ref.at[rows], rstd, mask=valid)
    plt.store(u_ref.at[rows], rstd * rstd * rstd * gd_sum * (1.0 / c), mask=valid)
    plt.store(w_ref.at[rows], rstd * g_sum * (1.0 / c) if subtract_mean else zeros, mask=valid)

  # The count of this program's real row blocks. (A static count with the tile kernel's static
  # one ran 198.0 / 205.4 us at 4096x16384 / 2048x32768 against 199.9 / 198.8 for this.)
  lax.fori_loop(0, lax.div(blocks - pid + programs - 1, programs), block, None)


def _bwd_tiles_kernel(*refs, has_scale, n, c, chunk, block_rows, groups, steps, prefetch):
  """The chunked backward's second kernel: program (k, j) takes channels [k * chunk,
  (k + 1) * chunk) of row tiles j, j + groups, ... (`steps` of them; those past the last row are
  fully masked); it writes dx there from the first kernel's row statistics, and one float32 row
  of dscale/doffset partial sums (row j of the partials).

  The trip count is static: on the H200 (both backward kernels at 4096x16384 and
  2048x32768 bf16, tiles of 1 x 1024, 4 warps, prefetch) the count of each program's real tiles,
  lax.div(blocks - j + groups - 1, groups), ran 207.3 / 206.9 us against 199.9 / 198.8 us for
  the static count."""
  if has_scale:
    x_ref, sc_ref, dy_ref, mean_ref, rstd_ref, u_ref, w_ref, dx_ref, ds_ref, do_ref = refs
  else:
    x_ref, dy_ref, mean_ref, rstd_ref, u_ref, w_ref, dx_ref, ds_ref, do_ref = refs
  k, j = pl.program_id(0), pl.program_id(1)
  first_col = k * chunk
  scale = load_vector(sc_ref, c, chunk, first_col) if has_scale else 1.0

  def body(rows, cols, mask, tiles, carry):
    x, dy = tiles
    dscale, doffset = carry
    index = rows[:, 0]
    valid = index < n
    # Rows past n read 0 for every statistic: their xhat is 0, and so is their dy.
    mean, rstd, u, w = (load_f32(ref.at[index], valid)[:, None]
                        for ref in (mean_ref, rstd_ref, u_ref, w_ref))
    d = x - mean
    g = dy * scale if has_scale else dy
    plt.store(dx_ref.at[rows, cols], (rstd * g - d * u - w).astype(dx_ref.dtype), mask=mask)
    return dscale + jnp.sum(dy * (d * rstd), axis=0), doffset + jnp.sum(dy, axis=0)

  def origin(step: Any) -> tuple[Any, Any]:
    return (step * groups + j) * block_rows, first_col

  zeros = jnp.zeros((chunk,), jnp.float32)
  dscale, doffset = tile_loop(steps, origin, block_rows, n, c, chunk, [x_ref, dy_ref], body,
                              (zeros, zeros), prefetch)
  index = first_col + lax.iota(jnp.int32, chunk)
  valid = (index < c) if c % chunk else None
  plt.store(ds_ref.at[j, index], dscale, mask=valid)
  plt.store(do_ref.at[j, index], doffset, mask=valid)


def backward(rows: Any, scale: Any, dy: Any, spec: Spec, *, chunk: int, block_rows: int,
             programs: int, tile_programs: int, prefetch: bool, num_warps: int
             ) -> tuple[Any, Any, Any]:
  """(dx, dscale partials, doffset partials) of `rows` [n, c]: `_bwd_rows_kernel` over
  `programs` programs (each looping over every programs-th row block), then `_bwd_tiles_kernel`
  over a grid of channel chunks x row groups, about `tile_programs` programs in all, each group
  writing one row of partial sums."""
  n, c = rows.shape
  r = block_rows
  blocks = pl.cdiv(n, r)
  params = [] if scale is None else [scale]
  stat = jax.ShapeDtypeStruct((n,), jnp.float32)
  mean, rstd, u, w = pl.pallas_call(
      functools.partial(_bwd_rows_kernel, has_scale=scale is not None, n=n, c=c, chunk=chunk,
                        block_rows=r, programs=programs, blocks=blocks, prefetch=prefetch,
                        epsilon=spec.param("epsilon"), subtract_mean=spec.param("subtract_mean")),
      grid=(programs,), out_shape=[stat] * 4, name="pjrtkit_layer_norm_bwd_rows",
      **call_params(num_warps),
  )(rows, *params, dy)
  chunks = pl.cdiv(c, chunk)
  groups = min(blocks, max(1, pl.cdiv(tile_programs, chunks)))
  part = jax.ShapeDtypeStruct((groups, c), jnp.float32)
  return pl.pallas_call(
      functools.partial(_bwd_tiles_kernel, has_scale=scale is not None, n=n, c=c, chunk=chunk,
                        block_rows=r, groups=groups, steps=pl.cdiv(blocks, groups),
                        prefetch=prefetch),
      grid=(chunks, groups), out_shape=[jax.ShapeDtypeStruct(rows.shape, rows.dtype), part, part],
      name="pjrtkit_layer_norm_bwd_tiles", **call_params(num_warps),
  )(rows, *params, dy, mean, rstd, u, w)
