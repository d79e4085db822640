"""The barrier protocol of the warp-specialised Mosaic backward (`mosaic_bwd._kernel`), checked
without a GPU: the real kernel body runs once per (program, warpgroup) on plain Python integers,
with ``lax``, ``pl``, ``plgpu``, ``jnp`` and ``jax`` of `mosaic_bwd` (and ``lax``, ``jnp`` of
`mosaic_bwd_geometry`) replaced by the recording fakes of `protocol_replay`, so the kernel's own
control flow decides which barrier waits and arrivals happen, in which order. The barriers'
arrival counts come from `mosaic_bwd.backward`'s scratch list, run with a fake ``plgpu.kernel``.
The three warpgroups of each program are then interleaved under mbarrier semantics (a phase
completes after ``num_arrivals`` arrivals; each warpgroup keeps its own parity per barrier; a TMA
load arrives when issued), under round robin and every strict priority order
(`protocol_replay.simulate`), and must not deadlock, never let a barrier complete two phases past
a warpgroup that still waits on it (parity aliases), leave no phase part-arrived, and wait on
every phase of a barrier that announces data (`UNWAITED_OK`). Each warpgroup's reads of the
TMA-filled buffers (``plgpu.load`` of the log-sum-exp and delta, wgmma operands) must follow a
wait on the barrier their load completes since the slot's last release
(`protocol_replay.check_reads`).

Not modelled: memory contents (a buffer released before it is read, or overwritten while a TMA
store still reads it, passes unless the barrier phases show it), wgmma asynchrony and its waits,
the ordering of TMA stores (``wait_smem_to_gmem``), Pallas's own warpgroup barriers, and TMA loads
completing late (only waits depend on them: arriving at issue runs barriers furthest ahead).
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
import sys
import types
from typing import Any
from unittest import mock

from pjrtkit.kernels import testing

testing.setup_environment()

import jax.numpy as real_jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit.kernels.core import pallas as pallas_lib  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import bwd as mosaic_bwd  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic import bwd_geometry as mosaic_bwd_geometry  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic.testing import protocol_replay  # noqa: E402
from pjrtkit.kernels.dot_product_attention.mosaic.testing.protocol_replay import ProtocolError  # noqa: E402

UNWAITED_OK = frozenset({"q_free", "ds_free", "kv_free", "stagger"})
"""Barriers that release a buffer (or start a warpgroup), whose last phases may go unwaited.
Every phase of the others (kv_bar, q_bar, do_bar, lse_bar, delta_bar, ds_ready, done) announces
data or a meeting and must be waited on: one nobody waits on means skipped work."""
COMPUTE = frozenset({0, 1})


def _waiters(g: mosaic_bwd.BwdGeometry) -> dict[str, frozenset[int]]:
  """The barriers both compute warpgroups wait on, every phase of every index: the inputs of
  every step, the meeting before the dK/dV stores, and (dQ split by columns) every dS^T tile."""
  names = ["kv_bar", "q_bar", "do_bar", "lse_bar", "delta_bar", "done"]
  return dict.fromkeys(names + ["ds_ready"] * g.dq_columns_split, COMPUTE)


def _reuse(g: mosaic_bwd.BwdGeometry) -> dict[str, str]:
  """Each buffer's fill barrier -> the barrier that releases it: a query slot's four loads ->
  ``q_free`` of the slot, the keys and values -> ``kv_free``, and (two dS^T tiles, each step's
  barriers those of its tile) a dS^T tile -> its ``ds_free``."""
  fills = dict.fromkeys(("q_bar", "do_bar", "lse_bar", "delta_bar"), "q_free")
  fills["kv_bar"] = "kv_free"
  if g.ds_slots == 2:
    fills["ds_ready"] = "ds_free"
  return fills


def _names(launch: dict[str, Any], g: mosaic_bwd.BwdGeometry) -> list[str]:
  """The kernel's ref names (its parameters but `g`), once the launch is as `backward` makes it."""
  assert launch["grid"] == (g.launched,) and launch["num_threads"] == 3
  assert launch["grid_names"] == (pallas_lib.MOSAIC_GRID_AXIS,)
  assert launch["thread_name"] == "wg"
  names = list(inspect.signature(mosaic_bwd._kernel).parameters)[:-1]
  # zero_s exists with `loop_descriptors` only, dqf_g and dqf_s with `fixed_point_dq` only
  # (`mosaic_bwd._all_refs`).
  absent = set() if g.loop_descriptors else {"zero_s"}
  if not g.fixed_point_dq:
    absent |= {"dqf_g", "dqf_s"}
  return [n for n in names if n not in absent]


def _trace(g: mosaic_bwd.BwdGeometry, tweaks: protocol_replay.Tweaks,
           replay: protocol_replay.Replay | None = None) -> tuple[Any, Any, Any]:
  """`g`'s barriers, per-program traces (with `tweaks`, or through `replay` as given) and the
  fills of its TMA loads."""
  replay = replay or protocol_replay.Replay(tweaks)
  patches = [(mosaic_bwd, ("lax", "pl", "plgpu", "jnp", "jax")),
             (mosaic_bwd_geometry, ("lax", "jnp"))]
  arg = types.SimpleNamespace(dtype=real_jnp.bfloat16)
  with mock.patch.object(mosaic_bwd.fixed_point, "row_factors", lambda *a: (arg, arg)):
    barriers, traces = protocol_replay.trace(
        replay, patches, lambda: mosaic_bwd.backward(*[arg] * 6, g), lambda l: _names(l, g))
  # The dQ factors' ring (`fixed_point_dq`) has stages + 2 rows, filled through do_bar's slot of
  # each step: its lifetime is argued in `BwdGeometry.factor_slots`, not checked by check_reads
  # (which needs one barrier per slot); its fills still take part in every barrier check.
  fills = {key: bars for key, bars in replay.fills.items() if key[0] != "dqf_s"}
  return barriers, traces, fills


def _check(g: mosaic_bwd.BwdGeometry, pids: Any = None,
           tweaks: protocol_replay.Tweaks | None = None, reuse: bool = True
           ) -> dict[int, list[int]]:
  """Every schedule of every program (or `pids`) of `g` (`reuse`: with the buffer-reuse check);
  returns each program's query steps per work item (as warpgroup 0 waited on them)."""
  barriers, traces, fills = _trace(g, tweaks or {})
  protocol_replay.check(barriers, traces, UNWAITED_OK, pids, _waiters(g),
                        _reuse(g) if reuse else {})
  protocol_replay.check_reads(barriers, traces, fills, _reuse(g))
  steps: dict[int, list[int]] = {pid: [] for pid in traces}
  for pid, events in traces.items():
    for event in events[0]:
      if event == ("wait", "kv_bar", 0):
        steps[pid].append(0)
      elif event[:2] == ("wait", "q_bar"):
        steps[pid][-1] += 1
  return steps


def _choose(b: int, t: int, h: int, d: int, s: int, k: int, causal: bool, **kw: Any
            ) -> mosaic_bwd.BwdGeometry:
  g = mosaic_bwd.choose(batch=b, q_len=t, heads=h, kv_heads=k, kv_len=s, head_dim=d,
                        scale=1 / math.sqrt(d), causal=causal, itemsize=2, max_stages=4,
                        block_qs=kw.pop("block_qs", (64,)), sms=132)
  return dataclasses.replace(g, **kw)


_LAGGED = _choose(1, 256, 1, 128, 256, 1, False)
_LAGGED_UNBIASED = dataclasses.replace(_LAGGED, biased_accumulators=False)
_HALVES = _choose(1, 320, 1, 64, 256, 1, False)
_EMPTY_TAIL = _choose(1, 128, 1, 128, 384, 1, True)


_FIXED = [dataclasses.replace(_LAGGED, fixed_point_dq=True),     # 4 steps, 2 stages: 4 rows
          dataclasses.replace(_HALVES, fixed_point_dq=True),     # 5 steps, 4 stages: 6 rows
          dataclasses.replace(_EMPTY_TAIL, fixed_point_dq=True),
          _choose(2, 256, 2, 64, 384, 2, True, persistent_programs=5, fixed_point_dq=True)]
"""Geometries with `BwdGeometry.fixed_point_dq`, one per path it changes."""


@pytest.mark.parametrize("g,empty,paths", [
    (_LAGGED, False, "lag_dq dq_columns_split biased_accumulators"),  # 4 steps, 2 stages
    (_LAGGED_UNBIASED, False, "lag_dq dq_columns_split"),
    (dataclasses.replace(_LAGGED, lag_dq=False), False, "dq_columns_split biased_accumulators"),
    (dataclasses.replace(_LAGGED, lag_dq=False, ds_slots=1), False, "dq_columns_split"),
    (_HALVES, False, ""),                                         # dQ alternating, 4 stages
    (dataclasses.replace(_HALVES, stages=2, ds_slots=1), False, ""),
    (dataclasses.replace(_HALVES, lag_dq=True), False, "lag_dq"),  # accepted, never chosen
    (_EMPTY_TAIL, True, "lag_dq longest_first"),                  # program 2 has no step
    (dataclasses.replace(_EMPTY_TAIL, lag_dq=False), True, "longest_first"),
    (_choose(1, 128, 1, 64, 384, 1, True, block_qs=(128,)), True, "longest_first"),
    (_choose(1, 192, 4, 64, 256, 2, False), False, "flat_steps"),
    (_choose(1, 320, 4, 128, 256, 2, True), False, "phased_steps lag_dq"),
    (_choose(1, 200, 2, 64, 200, 1, True), False, "mask_kv_len"),  # grouped causal, not phased
    (_choose(2, 300, 4, 128, 300, 2, False), False, "mask_kv_len flat_steps lag_dq"),
    (_choose(2, 256, 2, 64, 256, 2, False, persistent_programs=3), False, "persistent_programs"),
    (_choose(1, 128, 2, 128, 384, 1, True, persistent_programs=2, lag_dq=False), True,
     "persistent_programs dq_columns_split"),
    (_choose(2, 256, 2, 64, 384, 2, True, persistent_programs=5), True, "persistent_programs"),
    (_FIXED[0], False, "fixed_point_dq lag_dq dq_columns_split paired_loads"),
    (_FIXED[1], False, "fixed_point_dq"),
    (_FIXED[2], True, "fixed_point_dq lag_dq"),
    (_FIXED[3], True, "fixed_point_dq persistent_programs"),
])
def test_every_program_keeps_the_barrier_protocol(g, empty, paths):
  """Every program of each geometry (`paths`: the `BwdGeometry` fields that are true)."""
  assert all(getattr(g, path) for path in paths.split())
  items = list(itertools.chain(*_check(g).values()))
  assert g.launched <= 12 and len(items) == g.programs and max(items) > 0
  assert (0 in items) == empty  # whether some work item has no query step


def test_a_missing_stagger_arrival_for_an_empty_item_deadlocks():
  """Program 2 of `_EMPTY_TAIL` has no query step: warpgroup 0's arrival after its (empty) walk
  is what lets warpgroup 1 start."""
  assert _check(_EMPTY_TAIL, [2])[2] == [0]
  with pytest.raises(ProtocolError, match=r"deadlock: .*1: \('wait', 'stagger', -1\)"):
    _check(_EMPTY_TAIL, [2], {(0, "arrive", "stagger", 0): 0})


def test_a_missing_ds_free_arrival_deadlocks():
  """At head_dim 64 warpgroup 1 runs the odd steps' dQ products: without its first release of
  dS^T slot 1, step 3 waits for ever."""
  with pytest.raises(ProtocolError, match=r"deadlock: .*'ds_free', 1\)"):
    _check(_HALVES, [0], {(1, "arrive", "ds_free", 0): 0})


@pytest.mark.parametrize("wgs,error", [
    ((0, 1), r"ds_ready\[1\] completed 2 phases, waited on at most 1"),
    ((0,), r"part-arrived.*\('ds_free', 1\): 1"),
])
def test_a_skipped_final_lagged_dq_product_is_reported(wgs, error):
  """Step 3's lagged dQ product (`_LAGGED`: 4 steps) runs after the loop, and nothing waits for
  it to end: skipped by both warpgroups, its dS^T is never waited on; by one, its release of the
  dS^T slot is left half-arrived."""
  assert (_LAGGED.q_steps, _LAGGED.stages) == (4, 2)
  tweaks = {(wg, kind, name, 3): 0 for wg in wgs
            for kind, name in (("wait", "ds_ready"), ("arrive", "ds_free"))}
  with pytest.raises(ProtocolError, match=error):
    _check(_LAGGED, [0], tweaks)


def test_an_extra_arrival_runs_a_barrier_two_phases_ahead():
  """A second arrival of the first Q load completes slot 0's next phase early: its refill at step
  4 (4 stages, 5 steps) then completes a phase a compute warpgroup has not reached (or, in some
  schedules, the extra arrival already does)."""
  assert (_HALVES.q_steps, _HALVES.stages, _HALVES.ds_slots) == (5, 4, 2)
  with pytest.raises(ProtocolError, match=r"q_bar\[0\] completed phase [23] while warpgroup"):
    _check(_HALVES, [0], {(2, "arrive", "q_bar", 0): 2}, reuse=False)
  with pytest.raises(ProtocolError, match=r"q_bar\[0\] filled for phase 2 while q_free released"):
    _check(_HALVES, [0], {(2, "arrive", "q_bar", 0): 2})


def test_a_refill_before_the_release_is_reported():
  """The producer refilling query slot 0 (step `stages`) without waiting for both compute
  warpgroups to release it."""
  with pytest.raises(ProtocolError, match=r"q_bar\[0\] filled for phase 2 while q_free released "
                                          r"it 0 times"):
    _check(_LAGGED, [0], {(2, "wait", "q_free", 0): 0})


@pytest.mark.parametrize("name", ["q_bar", "do_bar"])
def test_paired_loads_need_both_arrivals(name):
  """With `BwdGeometry.paired_loads` (`_LAGGED`) Q and its log-sum-exp complete ``q_bar``
  together, dO and delta ``do_bar``: a step whose second load does not arrive there (the 2nd of
  the producer's arrivals, step 0's log-sum-exp or delta) leaves the phase part-arrived and the
  compute warpgroups waiting."""
  assert _LAGGED.paired_loads
  with pytest.raises(ProtocolError, match=rf"deadlock: .*'{name}', 0\)"):
    _check(_LAGGED, [0], {(2, "arrive", name, 1): 0})


@pytest.mark.parametrize("g", [_HALVES, _LAGGED])
def test_the_dq_factor_row_completes_do_bar(g):
  """With `BwdGeometry.fixed_point_dq` each step's dQ factor row is a third load on ``do_bar``
  (a second without paired loads): the barrier counts it, and without its arrival at step 0 the
  compute warpgroups wait for ever (any dropped arrival does that; a factor load completing
  another barrier fails `test_every_program_keeps_the_barrier_protocol`'s fixed-point cases)."""
  fixed = dataclasses.replace(g, fixed_point_dq=True)
  barriers, _, _ = _trace(fixed, {})
  assert barriers["do_bar"].num_arrivals == (3 if g.paired_loads else 2)
  assert barriers["q_bar"].num_arrivals == (2 if g.paired_loads else 1)
  factor_arrival = (2, "arrive", "do_bar", 2 if g.paired_loads else 1)
  with pytest.raises(ProtocolError, match=r"deadlock: .*'do_bar', 0\)"):
    _check(fixed, [0], {factor_arrival: 0})


@pytest.mark.parametrize("g", _FIXED)
def test_each_dq_product_reads_the_factor_row_of_its_step(g):
  """The producer loads step t's factor row into ring slot ``t % factor_slots``; each dQ product
  (step s's, by warpgroup ``s % 2``, or by both when dQ is split by columns; lagged or not) reads
  the slot step s's load filled. (That the ring's ``stages + 2`` rows outlive their reads is
  argued in `BwdGeometry.factor_slots`, not replayed.)"""
  replay = protocol_replay.Replay({})
  fills: dict[int, list[int]] = {}
  copy_in = replay.copy_in

  def recording_copy_in(src: Any, dst: Any, barrier: Any, **kwargs: Any) -> None:
    if dst.name == "dqf_s":
      fills.setdefault(replay.pid, []).append(dst.index[0])
    copy_in(src, dst, barrier, **kwargs)

  replay.plgpu.copy_gmem_to_smem = recording_copy_in
  _, traces, _ = _trace(g, {}, replay)
  for pid, events in traces.items():
    filled = fills.get(pid, [])
    assert filled == [t % g.factor_slots for t in range(len(filled))]
    for wg in (0, 1):
      reads = [index for kind, name, index in events[wg] if (kind, name) == ("read", "dqf_s")]
      mine = [t for t in range(len(filled)) if g.dq_columns_split or t % 2 == wg]
      assert reads == [filled[t] for t in mine], (pid, wg)


def _check_reads(g: mosaic_bwd.BwdGeometry, tweaks: protocol_replay.Tweaks) -> None:
  """`protocol_replay.check_reads` alone (no schedules) on `g`'s trace with `tweaks`."""
  barriers, traces, fills = _trace(g, tweaks)
  protocol_replay.check_reads(barriers, traces, fills, _reuse(g))


@pytest.mark.parametrize("g,tweak,error", [
    # Paired loads: Q's wait dropped, S^T's product reads Q's slot first.
    (_LAGGED_UNBIASED, (0, "wait", "q_bar", 0), r"warpgroup 0 reads q_s\[0\] after 0 waits on "
                                                r"q_bar\[0\]"),
    # dO's (and delta's) wait dropped: dP^T's product reads dO's slot.
    (_LAGGED_UNBIASED, (1, "wait", "do_bar", 0), r"warpgroup 1 reads do_s\[0\] after 0 waits on "
                                                 r"do_bar\[0\]"),
    # The slot's second fill (step 2 of 2 stages) not waited for: one wait, one release.
    (_LAGGED_UNBIASED, (1, "wait", "q_bar", 2), r"warpgroup 1 reads q_s\[0\] after 1 waits on "
                                                r"q_bar\[0\], which its load completes, and 1 "
                                                r"releases"),
    # With biased accumulators the log-sum-exp and delta rows are read first (into S^T's and
    # dP^T's accumulators, before their products).
    (_LAGGED, (0, "wait", "q_bar", 0), r"warpgroup 0 reads lse_s\[0\] after 0 waits on "
                                       r"q_bar\[0\]"),
    (_LAGGED, (1, "wait", "do_bar", 0), r"warpgroup 1 reads delta_s\[0\] after 0 waits on "
                                        r"do_bar\[0\]"),
    (_LAGGED, (1, "wait", "q_bar", 2), r"warpgroup 1 reads lse_s\[0\] after 1 waits on "
                                       r"q_bar\[0\], which its load completes, and 1 releases"),
    # Four barriers: the log-sum-exp read before its own barrier's wait.
    (_HALVES, (0, "wait", "lse_bar", 0), r"warpgroup 0 reads lse_s\[0\] after 0 waits on "
                                         r"lse_bar\[0\]"),
    (_HALVES, (1, "wait", "kv_bar", 1), r"warpgroup 1 reads v_s\[-1\] after 0 waits on "
                                        r"kv_bar\[1\]"),
])
def test_a_read_before_its_loads_barrier_is_reported(g, tweak, error):
  """Every read of a TMA-filled slot (``plgpu.load``, a wgmma operand) must follow a wait on the
  barrier its load completes since the slot's last release: a dropped wait is reported at the
  first read it leaves unguarded (the kernel as written passes, `_check`)."""
  with pytest.raises(ProtocolError, match=error):
    _check_reads(g, {tweak: 0})


@pytest.mark.parametrize("tweak,error", [
    ((1, "wait", "kv_bar", 0), r"warpgroup 1 waited on 0 of the 1 phases of kv_bar\[0\]"),
    ((1, "wait", "done", 0), r"warpgroup 1 waited on 0 of the 1 phases of done\[-1\]"),
    # Past its skipped wait warpgroup 0 runs on, and on some schedules both warpgroups complete
    # the tile's second phase before warpgroup 0 waits there: reported as parity aliasing.
    ((0, "wait", "ds_ready", 1), r"warpgroup 0 waited on 1 of the 2 phases of ds_ready\[1\]|"
                                 r"ds_ready\[1\] completed phase 2 while warpgroup 0 has waited "
                                 r"on 0"),
])
def test_a_compute_warpgroup_skipping_a_wait_is_reported(tweak, error):
  """One warpgroup reading keys, the meeting before the dK/dV stores, or a dS^T tile without
  waiting for it: the other warpgroup's waits complete those phases, so only the count of this
  warpgroup's own waits shows it."""
  with pytest.raises(ProtocolError, match=error):
    _check(_LAGGED, [0], {tweak: 0})


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
