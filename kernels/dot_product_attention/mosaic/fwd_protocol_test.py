"""The barrier protocol of the warp-specialised Mosaic forward (`mosaic_fwd._kernel`), checked
without a GPU: the real kernel body runs once per (program, warpgroup) on plain Python integers,
with ``lax``, ``pl``, ``plgpu``, ``jnp`` and ``jax`` of `mosaic_fwd` and ``named_barrier`` of
`pallas` replaced by the recording fakes of `protocol_replay`, so the kernel's own control flow
(persistent deals, the listed launch's tile table, the split tail's pieces, causal drains)
decides which barrier waits, arrivals and named-barrier syncs happen, in which order. The
barriers come from `mosaic_fwd.forward`'s scratch list, run with a fake ``plgpu.kernel``; a
listed launch's table is `mosaic_work.tile_list`'s, readable only after ``list_bar`` was awaited.
The three warpgroups of each program are then interleaved by `protocol_replay.simulate` under
mbarrier and named-barrier semantics, under round robin and every strict priority order, and must
not deadlock, never let a barrier run two phases past a waiter, never arrive twice in one
ping-pong generation, leave nothing part-arrived, and wait on every phase of a data barrier. The
traces also account for the work: every tile's key steps loaded once, every query block stored
once (or, in a split tail, as its pieces' partial results).

Not modelled: see `protocol_replay` (memory contents, wgmma asynchrony, TMA store ordering).
"""

from __future__ import annotations

import collections
import itertools
import sys
import types
from typing import Any

from pjrtkit.kernels import testing

testing.setup_environment()

import jax.numpy as real_jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit.kernels.core import pallas as pallas_lib  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import fwd as mosaic_fwd  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import work as mosaic_work  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic.testing import protocol_replay  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic.testing.protocol_replay import Event  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic.testing.protocol_replay import ProtocolError  # noqa: E402

UNWAITED_OK = frozenset({"k_free", "v_free"})
"""Barriers that release a key/value slot, whose last phases go unwaited. Every phase of the
others (q_bar, k_bar, v_bar, list_bar) announces data and must be waited on."""
WAITERS = {"k_bar": frozenset({0, 1}), "v_bar": frozenset({0, 1}),
           "list_bar": frozenset({0, 1, 2})}
"""Barriers each of these warpgroups waits on, every phase of every index: both compute
warpgroups every key and value step (a step one of them skips it still waits for), and every
warpgroup the tile list (query slots are each one warpgroup's)."""
REUSE = {"k_bar": "k_free", "v_bar": "v_free"}
"""Each key/value slot's fill barrier -> the barrier that releases the slot."""
_TURN = pallas_lib.FIRST_FREE_NAMED_BARRIER
"""Warpgroup 0 takes its turn at named barrier `_TURN`, warpgroup 1 at ``_TURN + 1``."""
_SCRATCH = "q_s k_s v_s lse_s q_bar k_bar v_bar k_free v_free".split()
Traces = dict[int, list[list[Event]]]


class _Table(protocol_replay.Ref):
  """The listed launch's tile table in shared memory: reads give this program's row of
  `mosaic_work.tile_list`, and only once the reading warpgroup has waited on ``list_bar``."""

  def __init__(self, replay: protocol_replay.Replay, table: Any):
    super().__init__("listed")
    self.replay, self.table = replay, table

  def __getitem__(self, key: Any) -> int:
    if ("wait", "list_bar", 0) not in self.replay.events:
      raise ProtocolError(f"warpgroup {self.replay.wg} reads the tile list before list_bar")
    return int(self.table[self.replay.pid, key])


def _names(launch: dict[str, Any], g: mosaic_fwd.FwdGeometry) -> list[str]:
  """The body's ref names (inputs, outputs, scratch), as `forward` launches it for `g`."""
  assert launch["grid"] == (g.programs,) and launch["num_threads"] == 3
  assert launch["grid_names"] == (pallas_lib.MOSAIC_GRID_AXIS,)
  assert launch["thread_name"] == "wg"
  inputs = ["q_g", "k_g", "v_g"] + ["table"] * g.listed
  outputs = ["o_g"] + ["lse_g"] * g.with_lse + ["part_o_g", "part_lse_g"] * g.split_tail
  return inputs + outputs + _SCRATCH + ["listed", "list_bar"] * g.listed


def _check(g: mosaic_fwd.FwdGeometry, pids: Any = None,
           tweaks: protocol_replay.Tweaks | None = None, reuse: bool = True
           ) -> tuple[Traces, list[protocol_replay.Ref]]:
  """Every schedule of every program (or `pids`) of `g` (`reuse`: with the buffer-reuse check);
  returns the traces and the stores."""
  replay, barriers, traces = _trace(g, tweaks or {})
  protocol_replay.check(barriers, traces, UNWAITED_OK, pids, WAITERS, REUSE if reuse else {})
  return traces, replay.stores


def _trace(g: mosaic_fwd.FwdGeometry, tweaks: protocol_replay.Tweaks) -> tuple[Any, Any, Any]:
  """The replay (its stores and fills), `g`'s barriers and its per-program traces."""
  replay = protocol_replay.Replay(tweaks)
  if g.listed:
    replay.refs["listed"] = _Table(replay, mosaic_work.tile_list(g))
  patches = [(mosaic_fwd, ("lax", "pl", "plgpu", "jnp", "jax")), (pallas_lib, ("named_barrier",))]
  arg = types.SimpleNamespace(dtype=real_jnp.bfloat16)
  barriers, traces = protocol_replay.trace(
      replay, patches, lambda: mosaic_fwd.forward(arg, arg, arg, g), lambda l: _names(l, g))
  return replay, barriers, traces


def test_reads_are_not_checked_against_run_time_slots():
  """The forward's query slots change barriers at run time (a tile's pair of 64-row blocks), so
  `protocol_replay.check_reads`, which needs one barrier per slot, refuses its fills."""
  replay, barriers, traces = _trace(_PLAIN, {})
  with pytest.raises(ValueError, match=r"q_s\[-1\] is filled through .*one barrier per slot"):
    protocol_replay.check_reads(barriers, traces, replay.fills, REUSE)


def _geometry(b: int, t: int, h: int, k: int, s: int, d: int, block_kv: int, stages: int,
              causal: bool, programs: int, **kw: Any) -> mosaic_fwd.FwdGeometry:
  """A forward geometry as `attention.py` builds one (queries padded to pairs of 64-row blocks,
  keys to `block_kv`), with the launch fields (`programs`, `split_tail`, `listed`) given."""
  return mosaic_fwd.FwdGeometry(
      batch=b, heads=h, kv_heads=k, q_len_padded=pallas_lib.round_up(t, 128), kv_len=s,
      kv_len_padded=pallas_lib.round_up(s, block_kv), head_dim=d, block_q=64,
      block_kv=block_kv, stages=stages, scale=d ** -0.5, causal=causal, programs=programs, **kw)


def _pair_steps(g: mosaic_fwd.FwdGeometry, tile: int) -> int:
  """Key steps of `tile` (as `mosaic_fwd._tile` numbers tiles: by length when `g.snake`)."""
  if not g.causal:
    return g.kv_steps
  pair = tile % g.q_pairs if not g.snake else g.q_pairs - 1 - tile // (g.batch * g.heads)
  if not g.snake:
    pair = g.q_pairs - 1 - pair
  return mosaic_work.pair_steps(pair, 2 * g.block_q, g.block_kv, g.kv_steps)


def _features(g: mosaic_fwd.FwdGeometry, traces: Traces) -> set[str]:
  """The paths a geometry's replay took."""
  found = {name for name in ("causal", "snake", "listed", "split_tail") if getattr(g, name)}
  found |= {"persistent"} if g.programs < g.tiles else set()
  found |= {"no_lse"} if not g.with_lse else set()
  found |= {"key_mask"} if g.kv_len < g.kv_len_padded else set()
  found |= {"gqa"} if g.kv_heads < g.heads else set()
  if g.split_tail and any(len(p) > 1 for p in mosaic_work.tail_pieces(g)):
    found.add("two_pieces")
  for events in itertools.chain(*traces.values()):
    for (k1, n1, _), (k2, n2, _) in zip(events, events[1:]):
      if (k1, n1, k2, n2) == ("wait", "k_bar", "wait", "v_bar"):
        found.add("drain")  # a warpgroup passes over a step the other computes
  return found


def _account(g: mosaic_fwd.FwdGeometry, traces: Traces, stores: list[Any]) -> None:
  """Every tile's key steps are loaded once in all, and every query block is stored once (a split
  tail's as two halves per piece, plus its log-sum-exps)."""
  loads = sum(e[:2] == ("arrive", "k_bar") for events in traces.values() for e in events[2])
  assert loads == sum(_pair_steps(g, tile) for tile in range(g.tiles))
  rows = collections.Counter((s.name, s.index[0][0], s.index[0][1][1], s.index[0][2])
                             for s in stores if s.name == "o_g")
  tail = set()
  for tile in range(g.tiles - g.tail_tiles * g.split_tail, g.tiles):
    pair, b, h = tile % g.q_pairs, tile // g.q_pairs % g.batch, tile // (g.q_pairs * g.batch)
    tail |= {("o_g", b, pair * 2 * g.block_q + r, h) for r in (0, g.block_q)}
  every = {("o_g", b, r, h) for b in range(g.batch) for h in range(g.heads)
           for r in range(0, g.q_len_padded, g.block_q)}
  assert set(rows) == every - tail and max(rows.values()) == 1
  named = collections.Counter(s.name for s in stores)
  assert named["lse_g"] == (len(rows) if g.with_lse else 0)
  pieces = sum(map(len, mosaic_work.tail_pieces(g))) if g.split_tail else 0
  assert (named["part_o_g"], named["part_lse_g"]) == (4 * pieces, 2 * pieces)


_PLAIN = _geometry(1, 256, 3, 1, 384, 64, 128, 2, False, 4)     # 6 tiles on 4 programs
_SPLIT = _geometry(1, 128, 7, 1, 300, 128, 128, 2, False, 4, split_tail=True)
_SNAKE = _geometry(1, 512, 2, 2, 512, 64, 64, 3, True, 3)      # 8 tiles, 1-8 key steps
_LISTED = _geometry(2, 384, 2, 1, 384, 64, 64, 2, True, 5, listed=True)


@pytest.mark.parametrize("g,paths", [
    (_PLAIN, "persistent"),
    (_geometry(1, 256, 3, 1, 384, 64, 128, 2, False, 6), ""),                  # one tile each
    (_geometry(2, 200, 2, 2, 200, 128, 64, 3, False, 3, with_lse=False),
     "persistent key_mask no_lse"),
    (_SPLIT, "persistent split_tail two_pieces key_mask"),
    (_geometry(1, 128, 7, 7, 200, 64, 64, 3, False, 5, split_tail=True, with_lse=False),
     "persistent split_tail key_mask no_lse"),
    (_SNAKE, "causal persistent snake drain"),
    (_geometry(1, 300, 2, 1, 300, 128, 128, 2, True, 3), "causal persistent snake key_mask gqa"),
    (_geometry(1, 384, 2, 2, 384, 64, 64, 2, True, 6), "causal drain"),           # one tile each
    (_geometry(1, 256, 2, 1, 200, 128, 64, 3, True, 4, with_lse=False), "causal key_mask no_lse"),
    (_LISTED, "causal persistent listed drain gqa"),
    (_geometry(1, 640, 1, 1, 600, 128, 128, 3, True, 2, listed=True, with_lse=False),
     "causal persistent listed key_mask no_lse"),
])
def test_every_program_keeps_the_barrier_protocol(g, paths):
  """Every program of each geometry (`paths`: the features its replay shows, `_features`)."""
  traces, stores = _check(g)
  assert set(paths.split()) <= _features(g, traces), _features(g, traces)
  _account(g, traces, stores)


def test_a_missing_k_free_arrival_deadlocks():
  """Warpgroup 1's first release of key slot 0 dropped: the producer's refill of slot 0 (step
  `stages`) waits for ever."""
  with pytest.raises(ProtocolError, match=r"deadlock: .*2: \('wait', 'k_free', 0\)"):
    _check(_PLAIN, [0], {(1, "arrive", "k_free", 0): 0})


def test_a_missing_turn_deadlocks():
  """Warpgroup 0's first pass of the turn dropped: warpgroup 1's first take (a sync on its
  named barrier) never completes."""
  with pytest.raises(ProtocolError, match=rf"deadlock: .*1: \('nsync', {_TURN + 1}, 256\)"):
    _check(_SNAKE, [0], {(0, "narrive", _TURN + 1, 0): 0})


def test_a_doubled_turn_arrives_twice_in_one_generation():
  """Warpgroup 1 passing the turn twice at once completes warpgroup 0's named barrier on its
  arrivals alone."""
  with pytest.raises(ProtocolError, match=rf"named barrier {_TURN}: warpgroup 1 arrived twice"):
    _check(_PLAIN, [0], {(1, "narrive", _TURN, 0): 2})


def test_a_doubled_key_load_runs_a_barrier_two_phases_ahead():
  """A second arrival of the first key load completes slot 0's next phase early; its refill
  then completes a phase past a compute warpgroup's wait."""
  with pytest.raises(ProtocolError, match=r"k_bar\[0\] completed phase [23] while warpgroup"):
    _check(_PLAIN, [0], {(2, "arrive", "k_bar", 0): 2}, reuse=False)


def test_a_refill_before_the_release_is_reported():
  """The producer refilling key slot 0 without waiting for both compute warpgroups to release
  it: the refill itself, or (in the first schedule, where the compute warpgroups run ahead) the
  release's next phase completing past the producer's skipped wait, is reported."""
  with pytest.raises(ProtocolError, match=r"k_bar\[0\] filled for phase 2 while k_free released "
                                          r"it 0 times|k_free\[0\] completed phase 2 while "
                                          r"warpgroup 2 has waited on 0"):
    _check(_PLAIN, [0], {(2, "wait", "k_free", 0): 0})


def test_a_dropped_query_wait_is_reported():
  """A warpgroup that skips its wait for its first query block leaves that phase unwaited."""
  with pytest.raises(ProtocolError, match=r"q_bar\[0\] completed 1 phases, waited on at most 0"):
    _check(_SNAKE, [2], {(0, "wait", "q_bar", 0): 0})


def test_the_tile_list_is_read_only_after_its_barrier():
  """Without its wait on ``list_bar`` a warpgroup would read the tile list before it landed."""
  with pytest.raises(ProtocolError, match=r"warpgroup 0 reads the tile list before list_bar"):
    _check(_LISTED, [0], {(0, "wait", "list_bar", 0): 0})


def test_a_tile_end_arrive_instead_of_sync_arrives_twice():
  """Warpgroup 0 ending its first tile with an arrive on warpgroup 1's named barrier rather than
  a sync (the version that hung on the H200): its next tile's first pass of the turn arrives
  there again before warpgroup 1 synced."""
  with pytest.raises(ProtocolError, match=rf"named barrier {_TURN + 1}: warpgroup 0 arrived twice"):
    _check(_PLAIN, [0], {(0, "nsync", _TURN + 1, 0): "narrive"})


def test_a_compute_warpgroup_skipping_a_key_wait_is_reported():
  """Warpgroup 0 reading its first key tile without waiting for it."""
  with pytest.raises(ProtocolError, match=r"k_bar\[0\]"):
    _check(_PLAIN, [0], {(0, "wait", "k_bar", 0): 0})


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
