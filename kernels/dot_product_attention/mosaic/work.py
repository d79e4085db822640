"""How the "mosaic" attention forward's tiles are shared out over its programs, and put back
together, on the host: the tile list of causal persistent launches (`tile_list`), each
program's load under a geometry's deal (`program_steps`), and the split tail's pieces and their
merge (`tail_pieces`, `tail_groups`, `merge_tail`). ``g`` is a `mosaic_fwd.FwdGeometry`
throughout; the kernel that reads these is ``mosaic_fwd``'s.
"""

from __future__ import annotations

import functools
import heapq
import math
from typing import Any

import jax.numpy as jnp
from jax import lax
import numpy as np

LISTED_TILE_COST = 1
"""`tile_list`'s cost of starting a tile, in key steps (also counted by `program_steps`)."""
LISTED_MAX_WIDTH = 256
"""The most int32s a program's row of `tile_list` may hold: one TMA copy moves at most 256
elements per dimension (Mosaic GPU refuses more)."""
_LOG2E = math.log2(math.e)


def dealt_item(pid: Any, i: Any, programs: int, snake: bool) -> Any:
  """The work item program `pid` of a persistent launch of `programs` runs `i`-th: items pid,
  pid + programs, ...; with `snake`, in rounds of `programs` with every other round in reverse
  program order (for items numbered longest first, so each program's total comes out about
  equal). Works on Python ints and on traced int32 scalars."""
  if not snake:
    return pid + i * programs
  if isinstance(i, int) and isinstance(pid, int):
    return i * programs + (pid if i % 2 == 0 else programs - 1 - pid)
  return i * programs + jnp.where(lax.rem(i, 2) == 0, pid, programs - 1 - pid)


def dealt_count(pid: Any, items: int, programs: int, snake: bool) -> Any:
  """How many of `items` program `pid` runs under `dealt_item` (programs <= items)."""
  if not snake:
    if isinstance(pid, int):
      return (items - pid + programs - 1) // programs
    return lax.div(items - pid + programs - 1, programs)
  rounds, rest = divmod(items, programs)
  last = pid if rounds % 2 == 0 else programs - 1 - pid
  if isinstance(pid, int):
    return rounds + (1 if last < rest else 0)
  return jnp.where(last < rest, rounds + 1, rounds)


def pair_steps(pair: int, pair_rows: int, block_kv: int, kv_steps: int) -> int:
  """Key steps of causal query pair `pair` (rows below (pair + 1) x pair_rows)."""
  return min(-(-(pair + 1) * pair_rows // block_kv), kv_steps)


def tile_list(g: Any) -> np.ndarray:
  """With ``g.listed``: int32 [programs, width], row p = (how many tiles program p runs, its
  tiles in order, zeros), width a multiple of 4 (16-byte rows for TMA). Tiles are taken in the
  one-tile-per-CTA order (`mosaic_fwd._tile`) and each goes to the program that is free first,
  counting a tile's key steps plus `LISTED_TILE_COST` (ties to the lowest program): the order
  the GPU would start one-tile CTAs in, on CTAs that stay resident. Cached per launch shape,
  read-only; `mosaic_fwd.forward` passes it to the kernel as a constant of the program."""
  return _tile_list(g.programs, g.q_pairs, g.batch * g.heads, g.q_len_padded // g.q_pairs,
                    g.block_kv, g.kv_steps)


@functools.lru_cache(maxsize=64)
def _tile_list(programs: int, q_pairs: int, heads: int, pair_rows: int, block_kv: int,
               kv_steps: int) -> np.ndarray:
  """`tile_list` for `heads` (batch x heads) runs of `q_pairs` causal tiles of `pair_rows`
  query rows each."""
  free_at = [(0, p) for p in range(programs)]
  lists: list[list[int]] = [[] for _ in range(programs)]
  for tile in range(q_pairs * heads):
    steps = pair_steps(q_pairs - 1 - tile % q_pairs, pair_rows, block_kv, kv_steps)
    at, p = heapq.heappop(free_at)
    lists[p].append(tile)
    heapq.heappush(free_at, (at + steps + LISTED_TILE_COST, p))
  width = -(-(1 + max(len(t) for t in lists)) // 4) * 4
  table = np.zeros((programs, width), np.int32)
  for p, tiles in enumerate(lists):
    table[p, 0] = len(tiles)
    table[p, 1:1 + len(tiles)] = tiles
  table.setflags(write=False)
  return table


def program_steps(g: Any) -> list[int]:
  """Each program's key steps plus `LISTED_TILE_COST` per tile, as geometry `g` deals the tiles
  out (the tile list, the length-sorted deal, or tiles pid, pid + programs, ...; plain Python,
  for launch decisions; without `split_tail`)."""
  pair_rows = g.q_len_padded // g.q_pairs

  def steps(tile: int) -> int:
    if not g.causal:
      return g.kv_steps + LISTED_TILE_COST
    pair = g.q_pairs - 1 - (tile // (g.batch * g.heads) if g.snake else tile % g.q_pairs)
    return pair_steps(pair, pair_rows, g.block_kv, g.kv_steps) + LISTED_TILE_COST

  if g.listed:
    return [sum(steps(int(t)) for t in row[1:1 + row[0]]) for row in tile_list(g)]
  loads = [0] * g.programs
  for i in range(-(-g.tiles // g.programs)):
    for pid in range(g.programs):
      tile = dealt_item(pid, i, g.programs, g.snake)
      if tile < g.tiles:
        loads[pid] += steps(tile)
  return loads


def tail_groups(g: Any) -> list[tuple[int, int, int, int, int]]:
  """The tail tiles as runs of one (batch, head): (first tail tile, count, batch, head, first
  query pair), in order (tiles number pairs fastest, then batch, then head)."""
  groups: list[tuple[int, int, int, int, int]] = []
  for a in range(g.tail_tiles):
    tile = g.full_rounds * g.programs + a
    b, h = tile // g.q_pairs % g.batch, tile // (g.q_pairs * g.batch)
    if groups and groups[-1][2:4] == (b, h):
      groups[-1] = groups[-1][:1] + (groups[-1][1] + 1,) + groups[-1][2:]
    else:
      groups.append((a, 1, b, h, tile % g.q_pairs))
  return groups


def tail_pieces(g: Any) -> list[list[tuple[int, int]]]:
  """With `split_tail`, per tail tile the (program, piece) whose partial results it merges: a
  program's share (`FwdGeometry.tail_range`) spans at most two tiles (shares are at most
  `kv_steps` long), its first piece in the first, its second in the next."""
  pieces: list[list[tuple[int, int]]] = [[] for _ in range(g.tail_tiles)]
  for pid in range(g.programs):
    start, end = g.tail_range(pid)
    if start == end:
      continue
    first = start // g.kv_steps
    pieces[first].append((pid, 0))
    if end > (first + 1) * g.kv_steps:
      pieces[first + 1].append((pid, 1))
  return pieces


def merge_tail(g: Any, out: Any, lse: Any, part_o: Any, part_lse: Any
               ) -> tuple[Any, Any]:
  """`out` and `lse` with the tail tiles written from the programs' partial results: per row,
  the pieces' outputs weighed by 2^(their log-sum-exp - the merged one). The tail tiles are
  consecutive (pair, batch, head)s, pairs fastest, so they are written as one slice per (batch,
  head) they cover (`tail_groups`), in place."""
  pieces = tail_pieces(g)
  width = max(len(p) for p in pieces)
  index = np.zeros((g.tail_tiles, width), np.int32)
  valid = np.zeros((g.tail_tiles, width, 1), bool)
  for tile, tile_pieces in enumerate(pieces):
    for j, (pid, piece) in enumerate(tile_pieces):
      index[tile, j] = 2 * pid + piece
      valid[tile, j] = True
  rows = g.q_len_padded // g.q_pairs
  halves = part_o.reshape(2 * g.programs, 2, rows, g.head_dim)[index].astype(jnp.float32)
  # [tail tiles, width, rows, D]; padding slots zeroed (their weight is 0, but 0 * NaN is not).
  outs = jnp.where(valid[..., None], halves[:, :, 0] + halves[:, :, 1], 0.0)
  lses = jnp.where(valid, part_lse.reshape(2 * g.programs, rows)[index], -jnp.inf)
  top = lses.max(axis=1)  # finite: every tail tile has a piece
  weights = jnp.exp2(lses - top[:, None])
  total = weights.sum(axis=1)
  merged = ((weights[..., None] * outs).sum(axis=1) / total[..., None]).astype(out.dtype)
  merged_lse = (top + jnp.log2(total)) / _LOG2E
  # XLA:GPU's dynamic-slice fusion would fuse an update of the kernel's output into the kernel's
  # custom call although the update reads the call's other outputs: "A cycle is detected" at
  # compile time (jax 0.11.2, H200). The barrier keeps the updates off the call.
  out, lse = lax.optimization_barrier((out, lse))
  for first, count, b, h, pair in tail_groups(g):
    block = merged[first:first + count].reshape(1, count * rows, 1, g.head_dim)
    out = lax.dynamic_update_slice(out, block, (b, pair * rows, h, 0))
    if lse is not None:
      lse = lax.dynamic_update_slice(
          lse, merged_lse[first:first + count].reshape(1, 1, count * rows), (b, h, pair * rows))
  return out, lse
