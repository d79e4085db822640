"""The "mosaic" attention forward's launch decisions, made on the host from the call's shape:
how many programs (`forward_programs`), whether the last round splits by key steps
(`split_forward_tail`), and whether causal persistent tiles run from a list (`listed_forward`).
``attention.py`` applies them when it builds a `mosaic_fwd.FwdGeometry`; each docstring gives the
H200 measurements behind its thresholds.
"""

from __future__ import annotations

import dataclasses

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.dot_product_attention.mosaic import fwd as mosaic_fwd
from pjrtkit.kernels.dot_product_attention.mosaic import work as mosaic_work

BLOCK_Q = 64
"""Query rows per compute warpgroup (a tile, a query pair, is two of them)."""


CAUSAL_PERSISTENT_MAX_KEYS = 4096
"""A causal forward runs persistent (`forward_programs`) when its tiles average at most this many
keys. Measured on either side of it: 1088 (persistent faster) and 8256 (slower)."""


def forward_programs(tiles: int, causal: bool, q_len_padded: int, kv_len_padded: int,
                     block_kv: int) -> int:
  """How many programs (CTAs) the compiled forward launches for `tiles` tiles of 128 query rows.

  Without a causal mask: persistent, one per SM (at most `tiles`), each looping over its tiles.
  Causal: persistent too when the tiles average at most `CAUSAL_PERSISTENT_MAX_KEYS` keys (key
  steps x `block_kv`), else one tile per program. On the H200 (bf16, CUPTI), 32x2048x16x64
  (1088 keys on average) took 0.736 ms persistent against 0.801 with one tile per program, but
  1x16384x16x128 (8256 keys) 1.654 against 1.614 ms
  (``docs/results/kernels/mosaic_fwd_variants_h200.txt``).
  """
  persistent = min(tiles, pallas_lib.sm_count())
  if not causal:
    return persistent
  kv_steps = kv_len_padded // block_kv
  pairs = q_len_padded // (2 * BLOCK_Q)
  steps = sum(mosaic_work.pair_steps(p, 2 * BLOCK_Q, block_kv, kv_steps) for p in range(pairs))
  return persistent if steps * block_kv <= CAUSAL_PERSISTENT_MAX_KEYS * pairs else tiles


SPLIT_TAIL_MIN_GAIN = 0.01
"""A persistent forward without a causal mask splits its last round's tiles by key steps over all
programs (`split_forward_tail`) when that shortens the busiest program's key steps by at least
this fraction."""
SPLIT_TAIL_MAX_RUNS = 4
"""... and when its tail tiles lie in at most this many (batch, head) runs (one in-place slice
update each after the kernel)."""


def split_forward_tail(g: mosaic_fwd.FwdGeometry) -> bool:
  """Whether the compiled forward of geometry `g` (built without the split) should split its
  tail (`FwdGeometry.split_tail`). The busiest program runs (full rounds + 1) x key steps whole,
  or full rounds x key steps + its share of the tail split: at 1x16384x16x128 on 132 SMs (2048
  tiles of 128 key steps: 15 rounds and 68 tiles) 1986 steps against 2048, 3.0 % fewer; at
  32x2048x16x64 with 256-key steps (8192 tiles of 8 steps: 62 rounds and 8 tiles) 497 against
  504, 1.4 %. On the H200 (``docs/results/kernels/mosaic_fwd_variants_h200.txt``): with the pieces
  in the full rounds' loop, 1x16384x16x128 683.4 -> 697.7 TFLOP/s and
  3x1024x4x64 on 5 programs 15.9 -> 16.1, but 32x2048x16x64 511.5 -> 459.2 (per-item cost in
  every round); with the pieces in a loop of their own, 32x2048x16x64 518.5
  -> 529.5 and 1x16384x16x128 690.6 -> 697.9 (one process), hence the 1 % threshold."""
  if g.causal or g.programs >= g.tiles or g.tail_tiles == 0:
    return False
  whole = (g.full_rounds + 1) * g.kv_steps
  split = g.full_rounds * g.kv_steps + -(-g.tail_tiles * g.kv_steps // g.programs)
  if 1 - split / whole < SPLIT_TAIL_MIN_GAIN:
    return False
  split = dataclasses.replace(g, split_tail=True)
  return len(mosaic_work.tail_groups(split)) <= SPLIT_TAIL_MAX_RUNS


LISTED_MAX_EXTRA_IMBALANCE = 0.02
"""A causal persistent forward runs its tiles from a list (`listed_forward`) only when the list's
busiest program exceeds the mean by at most this fraction more than the length-sorted deal's
does."""


def _imbalance(loads: list[int]) -> float:
  """The busiest program's load over the mean."""
  return max(loads) * len(loads) / sum(loads)


def listed_forward(g: mosaic_fwd.FwdGeometry) -> bool:
  """Whether the compiled forward of geometry `g` (built without the list) should run the tiles
  `mosaic_work.tile_list` gives each program (`FwdGeometry.listed`): causal and persistent, rows
  of at most `mosaic_work.LISTED_MAX_WIDTH`, and the list about as even as the length-sorted deal
  of every head's tiles (`FwdGeometry.snake`; `mosaic_work.program_steps`). The list starts the
  tiles in the one-tile-per-CTA order (each (batch, head)'s pairs together), so CTAs at work at
  the same time hold tiles of a few consecutive (batch, head)s (about 8 at 32x2048x16x64 on 132
  SMs, 16 tiles each) and share their keys and values in L2, where the deal runs the last pairs
  of every (batch, head) at once; it is less even where programs get few tiles. On the H200
  (one process each, outputs bitwise equal; ``docs/results/kernels/
  mosaic_fwd_variants_h200.txt``): 32x2048x16x64 causal 383.2 -> 398.8 and 377.7 -> 397.5
  TFLOP/s (busiest program 1.0177x the mean listed, 1.0024x dealt: taken), but 2x1024x8x64 on
  20 programs with 64-key steps 44.5 -> 41.0 (1.125x against 1.016x: not taken); 1x16384x16x128
  causal on 132 programs 668.4 -> 682.3, where one tile per program (684.3,
  `forward_programs`) stays the launch."""
  if not g.causal or g.programs >= g.tiles or g.split_tail:
    return False
  if -(-g.tiles // g.programs) + 1 > mosaic_work.LISTED_MAX_WIDTH:  # before building the list
    return False
  listed = dataclasses.replace(g, listed=True)
  if mosaic_work.tile_list(listed).shape[1] > mosaic_work.LISTED_MAX_WIDTH:
    return False
  return (_imbalance(mosaic_work.program_steps(listed))
          <= _imbalance(mosaic_work.program_steps(g)) + LISTED_MAX_EXTRA_IMBALANCE)
