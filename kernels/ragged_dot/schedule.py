"""The work list of a grouped matmul: which (group, row tile) pairs hold rows, as arrays.

Rows ``[m, k]`` are cut into tiles of `tile` rows. A group's run of rows ``[start, end)``
touches tiles ``start // tile`` to ``(end - 1) // tile``; every (group, tile) pair it touches is
one work item, in group order. There are at most ``ceil(m / tile) + g - 1`` items (each group
boundary inside a tile adds one), so a kernel launches that many programs, or a loop runs
``count`` iterations, and every item multiplies one row tile by one group's matrix, keeping the
rows in ``[row_lo, row_hi)``. Empty groups have no item; rows past the last group have none
(their results stay zero).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.ragged_dot import base


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Schedule:
  """Work items (each array ``[max_items]`` int32; items at and past `count` are padding that
  repeats the last real item's group with an empty row range).

  Attributes:
    group: the local group index (into rhs) of each item.
    tile: the row tile of each item.
    row_lo, row_hi: the rows ``[row_lo, row_hi)`` the item keeps (absolute row numbers).
    count: the number of real items (int32 scalar).
  """

  group: jax.Array
  tile: jax.Array
  row_lo: jax.Array
  row_hi: jax.Array
  count: jax.Array


def max_items(rows: int, groups: int, tile: int) -> int:
  """The static bound on the number of items."""
  return max(1, -(-rows // tile) + groups - 1)


def local_bounds(group_sizes: jax.Array, group_offset: jax.Array | None, local: int,
                 rows: int) -> tuple[jax.Array, jax.Array]:
  """``(start, end)`` of each local group's rows (int32 ``[local]``), clipped to `rows`."""
  gs = jnp.maximum(group_sizes.astype(jnp.int32), 0)
  ends = jnp.cumsum(gs)
  starts = ends - gs
  if group_offset is not None:
    off = base.clamped_offset(group_offset, gs.shape[0], local)
    starts = jax.lax.dynamic_slice(starts, (off,), (local,))
    ends = jax.lax.dynamic_slice(ends, (off,), (local,))
  return jnp.minimum(starts, rows), jnp.minimum(ends, rows)


def make(group_sizes: jax.Array, group_offset: jax.Array | None, local: int, rows: int,
         tile: int) -> Schedule:
  """The work list of `rows` rows over `local` groups (see the module docstring)."""
  starts, ends = local_bounds(group_sizes, group_offset, local, rows)
  nonempty = ends > starts
  first = starts // tile
  last = jnp.maximum(ends - 1, 0) // tile
  per_group = jnp.where(nonempty, last - first + 1, 0)
  cum = jnp.cumsum(per_group)
  count = cum[-1]
  n = max_items(rows, local, tile)
  items = jnp.arange(n, dtype=jnp.int32)
  group = jnp.minimum(jnp.searchsorted(cum, items, side="right"), local - 1).astype(jnp.int32)
  real = items < count
  # Padding items repeat the last real item's group and tile, with no rows.
  last_real = jnp.maximum(count - 1, 0)
  group = jnp.where(real, group, group[last_real])
  within = items - (cum[group] - per_group[group])
  tile_of = jnp.where(real, first[group] + within, first[group] + per_group[group] - 1)
  tile_of = jnp.clip(tile_of, 0, max(0, -(-rows // tile) - 1)).astype(jnp.int32)
  row_lo = jnp.where(real, starts[group], 0).astype(jnp.int32)
  row_hi = jnp.where(real, ends[group], 0).astype(jnp.int32)
  return Schedule(group, tile_of, row_lo, row_hi, count.astype(jnp.int32))


def untouched_tile(spare: Any, count: Any, first_tile: Any, last_tile: Any,
                   row_tiles: int) -> Any:
  """The row tile that padding item number `spare` (its index less `count`) covers: the tiles no
  real item touches, those before the first real item's (`first_tile`) and after the last
  one's (`last_tile`), in order; a value >= `row_tiles` when none is left for it (each such tile
  goes to exactly one padding item). Python ints or traced int32 scalars."""
  first = jnp.where(count > 0, first_tile, row_tiles)
  last = jnp.where(count > 0, last_tile, row_tiles - 1)
  return jnp.where(spare < first, spare, last + 1 + spare - first)
