"""Tile helpers shared by the "triton" layer norm kernels (`triton.py`, `triton_chunked.py`).

A tile is `block_rows` rows by `width` channels of a [rows, channels] array in global memory:
`width` is the row padded to a power of two, or a chunk of it. Loads and stores are masked past
the last row and channel, so masked elements move no data.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax.numpy as jnp
from jax import lax
from jax.experimental.pallas import triton as plt

from pjrtkit.kernels.core.interpret import interpret_enabled


def call_params(num_warps: int) -> dict[str, Any]:
  """`pallas_call` keyword arguments: interpret mode where enabled, else `num_warps`."""
  if interpret_enabled():
    return {"interpret": True}
  # num_stages: Triton's pipeliner leaves these loops' loads alone (no dot: on Triton 3.6,
  # 2-4 stages give no cp.async, only more registers); `prefetch` does it.
  return {"compiler_params": plt.CompilerParams(num_warps=num_warps, num_stages=1)}


def tile_at(first_row: Any, block_rows: int, n: int, c: int, width: int, first_col: Any = 0
            ) -> tuple[Any, Any, Any]:
  """Row indices [block_rows, 1], channel indices [1, width] from `first_col`, and the mask of
  real elements (`width` is the padded row, or a chunk that divides it; c % width != 0 exactly
  when some tile reaches past channel c)."""
  rows = first_row + lax.broadcasted_iota(jnp.int32, (block_rows, 1), 0)
  cols = first_col + lax.broadcasted_iota(jnp.int32, (1, width), 1)
  mask = rows < n
  if c % width:
    mask = mask & (cols < c)
  return rows, cols, jnp.broadcast_to(mask, (block_rows, width))


def load_f32(ref: Any, mask: Any) -> Any:
  """`ref` read where `mask` (0 elsewhere), as float32."""
  return plt.load(ref, mask=mask, other=0).astype(jnp.float32)


def load_vector(ref: Any, c: int, width: int, first_col: Any = 0) -> Any:
  """A [1, width] float32 slice of a parameter vector from channel `first_col` (zero past c),
  read in its own dtype (`width`: the padded row, or a chunk that divides it)."""
  cols = first_col + lax.iota(jnp.int32, width)
  if c % width:
    return load_f32(ref.at[cols], cols < c)[None, :]
  return plt.load(ref.at[cols]).astype(jnp.float32)[None, :]


def normalize(x: Any, mask: Any, c: int, epsilon: float, subtract_mean: bool
              ) -> tuple[Any, Any]:
  """(xhat, rstd) of a float32 tile whose masked entries are 0; xhat is 0 where masked."""
  if subtract_mean:
    mean = jnp.sum(x, axis=1, keepdims=True) * (1.0 / c)
    xc = jnp.where(mask, x - mean, 0.0)
  else:
    xc = x
  rstd = lax.rsqrt(jnp.sum(xc * xc, axis=1, keepdims=True) * (1.0 / c) + epsilon)
  # Masked rows have rstd = rsqrt(epsilon) (inf for epsilon = 0): keep them out of xhat.
  return jnp.where(mask, xc * rstd, 0.0), rstd


def tile_loop(steps: Any, origin: Callable[[Any], tuple[Any, Any]], block_rows: int, n: int,
              c: int, width: int, refs: Sequence[Any], body: Any, init: Any, prefetch: bool
              ) -> Any:
  """Runs ``body(rows, cols, mask, tiles, carry) -> carry`` for step < `steps` over the
  [block_rows, width] tile whose first row and channel are ``origin(step)``, with ``tiles`` the
  float32 tiles of `refs` there (masked past row n and channel c: such elements move no data).

  With `prefetch`, the tiles of the next step are loaded before this step's are used: their
  loads are in flight while this step reduces and stores. ``origin(steps)`` (the last step's
  prefetch, never used) must be in bounds or fully masked.
  """

  def tile(step: Any) -> tuple[Any, Any, Any]:
    first_row, first_col = origin(step)
    return tile_at(first_row, block_rows, n, c, width, first_col)

  def load(step: Any) -> tuple[Any, ...]:
    rows, cols, mask = tile(step)
    return tuple(plt.load(ref.at[rows, cols], mask=mask, other=0) for ref in refs)

  def run(step: Any, tiles: tuple[Any, ...], carry: Any) -> Any:
    rows, cols, mask = tile(step)
    return body(rows, cols, mask, tuple(t.astype(jnp.float32) for t in tiles), carry)

  if isinstance(steps, int) and steps == 1:
    return run(0, load(0), init)
  if not prefetch:
    return lax.fori_loop(0, steps, lambda step, carry: run(step, load(step), carry), init)

  def step_fn(step: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
    tiles, carry = state
    following = load(step + 1)
    return following, run(step, tiles, carry)

  return lax.fori_loop(0, steps, step_fn, (load(0), init))[1]


def row_tiles(pid: Any, programs: int, block_rows: int) -> Callable[[Any], tuple[Any, Any]]:
  """`tile_loop`'s origin for a program looping over whole-row tiles pid, pid + programs, ...
  (tiles past the last row are fully masked)."""
  def origin(step: Any) -> tuple[Any, Any]:
    return (step * programs + pid) * block_rows, 0

  return origin
