"""The barrier protocol of the warp-specialised Mosaic backward (`mosaic_bwd._kernel`), checked
without a GPU: the real kernel body runs once per (program, warpgroup) on plain Python integers,
with ``lax``, ``pl``, ``plgpu``, ``jnp`` and ``jax`` of `mosaic_bwd` (and ``lax``, ``jnp`` of
`mosaic_bwd_geometry`) replaced by recording fakes, so the kernel's own control flow decides
which barrier waits and arrivals happen, in which order. The barriers' arrival counts come from
`mosaic_bwd.backward`'s scratch list, run with a fake ``plgpu.kernel``. The three warpgroups of
each program are then interleaved under mbarrier semantics (a phase completes after
``num_arrivals`` arrivals; each warpgroup keeps its own parity per barrier; a TMA load arrives
when issued), under round robin and every strict priority order, and must not deadlock, never let
a barrier complete two phases past a warpgroup that still waits on it (parity aliases), leave no
phase part-arrived, and wait on every phase of a barrier that announces data (`UNWAITED_OK`).

Not modelled: memory contents (a buffer released before it is read, or overwritten while a TMA
store still reads it, passes unless the barrier phases show it), wgmma asynchrony and its waits,
the ordering of TMA stores (``wait_smem_to_gmem``), Pallas's own warpgroup barriers, and TMA loads
completing late (only waits depend on them: arriving at issue runs barriers furthest ahead).
"""

from __future__ import annotations

import collections
import dataclasses
import inspect
import itertools
import math
import sys
import types
from typing import Any, Callable

from pjrtkit.kernels import testing

testing.setup_environment()

import jax.numpy as real_jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit.kernels.core import pallas as pallas_lib  # noqa: E402
from pjrtkit.kernels.dot_product_attention import mosaic_bwd  # noqa: E402
from pjrtkit.kernels.dot_product_attention import mosaic_bwd_geometry  # noqa: E402

Event = tuple[str, str, int]
"""("wait" or "arrive", barrier name (the kernel's parameter), barrier index)."""
Tweaks = dict[tuple[int, str, str, int], int]
"""Injected protocol bugs: (warpgroup, "wait" or "arrive", barrier, its n-th such event there) ->
how many times it happens (0: dropped, 2: doubled; 1 for all others)."""
UNWAITED_OK = frozenset({"q_free", "ds_free", "kv_free", "stagger"})
"""Barriers that release a buffer (or start a warpgroup), whose last phases may go unwaited.
Every phase of the others (kv_bar, q_bar, do_bar, lse_bar, delta_bar, ds_ready, done) announces
data or a meeting and must be waited on: one nobody waits on means skipped work."""


class ProtocolError(AssertionError):
  """The replayed kernel breaks the barrier protocol."""


class _Value:
  """An array value (scores, dK, dV, a mask): absorbs arithmetic, casts and indexing, and refuses
  to be a Python bool (a traced value deciding Python control flow would not replay)."""

  def astype(self, dtype: Any) -> _Value:
    return self

  def __bool__(self) -> bool:
    raise TypeError("an array value reached Python control flow")


for _op in "add radd sub rsub mul rmul lt le gt ge and rand getitem".split():
  setattr(_Value, f"__{_op}__", lambda self, *_: self)


class _Ref:
  """A ref (global, shared, accumulator or barrier): its name and the indices taken with ``.at``;
  reads give a `_Value`, writes are dropped."""
  dtype = "ref-dtype"

  def __init__(self, name: str, index: tuple[Any, ...] = ()):
    self.name, self.index = name, index

  @property
  def at(self) -> Any:
    return _At(self)

  def transpose(self, perm: Any) -> _Ref:
    return self

  def __getitem__(self, key: Any) -> _Value:
    return _Value()

  def __setitem__(self, key: Any, value: Any) -> None:
    pass


class _At:
  """``ref.at``: indexing it gives the ref with the index appended."""

  def __init__(self, ref: _Ref):
    self.ref = ref

  def __getitem__(self, key: Any) -> _Ref:
    return _Ref(self.ref.name, self.ref.index + (key,))


@dataclasses.dataclass(frozen=True)
class _Barrier:
  """``plgpu.Barrier`` as `backward` declares it."""
  num_arrivals: int = 1
  num_barriers: int = 1


def _div(a: int, b: int) -> int:
  """``lax.div`` on ints: rounds toward zero (so `_rem` takes the sign of `a`: -1 rem 2 is -1)."""
  assert isinstance(a, int) and isinstance(b, int), (a, b)
  return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)


def _rem(a: int, b: int) -> int:
  """``lax.rem`` on ints: the sign of `a`."""
  return a - b * _div(a, b)


def _fori_loop(lo: int, hi: int, body: Callable[[int, Any], Any], carry: Any) -> Any:
  assert isinstance(lo, int) and isinstance(hi, int), (lo, hi)
  for i in range(lo, hi):
    carry = body(i, carry)
  return carry


def _when(cond: bool) -> Callable[[Callable[[], None]], None]:
  assert isinstance(cond, bool), f"pl.when on {cond!r}, not a Python bool"
  return lambda f: f() if cond else None


def _run_state(f: Callable[[Any], None]) -> Callable[[Any], Any]:
  def run(init: Any) -> Any:
    many = isinstance(init, tuple)
    f(tuple(_Ref("acc") for _ in init) if many else _Ref("acc"))
    return tuple(_Value() for _ in init) if many else _Value()

  return run


class _Acc:
  """``plgpu.ACC``: an accumulator allocation; ``ACC.init(x)`` is just `x`."""
  init = staticmethod(lambda value: value)

  def __init__(self, *args: Any):
    pass


class _Replay:
  """The fakes, recording the barrier events of the (program, warpgroup) being replayed."""

  def __init__(self, tweaks: Tweaks):
    self.pid = self.wg = 0
    self.events: list[Event] = []
    self.made: collections.Counter[tuple[str, str]] = collections.Counter()
    self.tweaks = tweaks
    self.launch: dict[str, Any] = {}
    value = lambda *a, **k: _Value()
    noop = lambda *a, **k: None
    self.lax = types.SimpleNamespace(axis_index=self.axis_index, fori_loop=_fori_loop, div=_div,
                                     rem=_rem, broadcast_in_dim=value)
    self.pl = types.SimpleNamespace(
        when=_when, ds=lambda start, size: ("ds", start, size), run_state=_run_state,
        run_scoped=lambda f, *allocs: f(*(_Ref("acc") for _ in allocs)))
    self.jnp = types.SimpleNamespace(int32=int, float32=float, minimum=min, zeros=value,
                                     exp2=value, where=value)
    self.jax = types.SimpleNamespace(ShapeDtypeStruct=noop, new_ref=lambda x: x,
                                     freeze=lambda x: x)
    self.plgpu = types.SimpleNamespace(
        Barrier=_Barrier, SMEM=noop, CompilerParams=noop, kernel=self.kernel, ACC=_Acc,
        Layout=types.SimpleNamespace(WGMMA=types.SimpleNamespace(reduce=noop)),
        set_max_registers=noop, wgmma=noop, commit_smem=noop, wgmma_accumulator_load=value,
        load=value, broadcasted_iota=value, layout_cast=lambda x, layout: x,
        copy_smem_to_gmem=noop, wait_smem_to_gmem=noop,
        copy_gmem_to_smem=lambda src, dst, barrier, **k: self.record("arrive", barrier),
        barrier_arrive=lambda bar: self.record("arrive", bar),
        barrier_wait=lambda bar: self.record("wait", bar))

  def axis_index(self, name: str) -> int:
    return {pallas_lib.MOSAIC_GRID_AXIS: self.pid, "wg": self.wg}[name]

  def kernel(self, body: Callable[..., None], **launch: Any) -> Callable[..., tuple[None, None]]:
    self.launch = dict(launch, body=body)
    return lambda *args: (None, None)

  def record(self, kind: str, bar: _Ref) -> None:
    """A barrier wait or arrival (a TMA load's, at issue) of `bar` (index -1: no ``.at``)."""
    assert len(bar.index) <= 1 and all(isinstance(i, int) for i in bar.index), bar.index
    n = self.made[kind, bar.name]
    self.made[kind, bar.name] += 1
    event = (kind, bar.name, bar.index[0] if bar.index else -1)
    self.events += [event] * self.tweaks.get((self.wg, kind, bar.name, n), 1)


def _trace(g: mosaic_bwd.BwdGeometry, tweaks: Tweaks
           ) -> tuple[dict[str, _Barrier], dict[int, list[list[Event]]]]:
  """The kernel's barriers (name -> declaration) and, per program, each warpgroup's events."""
  replay = _Replay(tweaks)
  with pytest.MonkeyPatch.context() as mp:
    for module, names in ((mosaic_bwd, ("lax", "pl", "plgpu", "jnp", "jax")),
                          (mosaic_bwd_geometry, ("lax", "jnp"))):
      for name in names:
        mp.setattr(module, name, getattr(replay, name))
    arg = types.SimpleNamespace(dtype=real_jnp.bfloat16)
    mosaic_bwd.backward(*[arg] * 6, g)
    launch = replay.launch
    assert launch["grid"] == (g.launched,) and launch["num_threads"] == 3
    assert launch["grid_names"] == (pallas_lib.MOSAIC_GRID_AXIS,)
    assert launch["thread_name"] == "wg"
    names = list(inspect.signature(mosaic_bwd._kernel).parameters)[:-1]  # all but `g`
    scratch = launch["scratch_types"]
    refs = [_Ref(name) for name in names]
    barriers = {n: s for n, s in zip(names[len(names) - len(scratch):], scratch)
                if isinstance(s, _Barrier)}
    traces = {}
    for replay.pid in range(g.launched):
      traces[replay.pid] = []
      for replay.wg in range(launch["num_threads"]):
        replay.events, replay.made = [], collections.Counter()
        launch["body"](*refs)
        traces[replay.pid].append(replay.events)
  for events in traces.values():
    for _, name, index in itertools.chain(*events):
      n = barriers[name].num_barriers
      if not (index == -1 and n == 1 or 0 <= index < n):
        raise ProtocolError(f"{name} has {n} barriers: index {index} used")
  return barriers, traces


def _simulate(barriers: dict[str, _Barrier], events: list[list[Event]],
              pick: Callable[[list[int], int], int]) -> None:
  """Runs one program's warpgroups together, each step the unblocked one `pick` (ready
  warpgroups, the last one run) names; `ProtocolError` on a deadlock, a barrier two phases past
  a warpgroup still to wait on it, a phase left part-arrived, or one nobody waits on (but
  `UNWAITED_OK`)."""
  pos = [0] * len(events)
  done: collections.Counter[tuple[str, int]] = collections.Counter()  # completed phases
  count: collections.Counter[tuple[str, int]] = collections.Counter()  # this phase's arrivals
  waited = [collections.Counter() for _ in events]  # phases each warpgroup waited on
  to_wait = [collections.Counter((n, i) for kind, n, i in ev if kind == "wait") for ev in events]

  def ready(w: int) -> bool:
    if pos[w] == len(events[w]):
      return False
    kind, name, index = events[w][pos[w]]
    return kind == "arrive" or done[name, index] > waited[w][name, index]

  last = len(events) - 1
  while runnable := [w for w in range(len(events)) if ready(w)]:
    last = w = pick(runnable, last)
    kind, name, index = events[w][pos[w]]
    bar = (name, index)
    pos[w] += 1
    if kind == "wait":
      waited[w][bar] += 1
      to_wait[w][bar] -= 1
      continue
    count[bar] += 1
    if count[bar] < barriers[name].num_arrivals:
      continue
    count[bar] = 0
    done[bar] += 1
    for v, (seen, left) in enumerate(zip(waited, to_wait)):
      if left[bar] and done[bar] - seen[bar] > 1:
        raise ProtocolError(f"{name}[{index}] completed phase {done[bar]} while warpgroup {v} "
                            f"has waited on {seen[bar]} of its phases (parity aliases)")
  stuck = {w: events[w][pos[w]] for w in range(len(events)) if pos[w] < len(events[w])}
  if stuck:
    raise ProtocolError(f"deadlock: warpgroups blocked at {stuck}")
  if partial := {bar: n for bar, n in count.items() if n}:
    raise ProtocolError(f"phases left part-arrived at the end: {partial}")
  for (name, index), n in done.items():
    if name not in UNWAITED_OK and n > max(seen[name, index] for seen in waited):
      raise ProtocolError(f"{name}[{index}] completed {n} phases, waited on at most "
                          f"{max(seen[name, index] for seen in waited)}")


_SCHEDULES = [lambda ready, last: min(ready, key=lambda w: (w - last - 1) % 3)] + [
    lambda ready, last, order=order: min(ready, key=order.index)
    for order in itertools.permutations(range(3))]
"""Round robin, then each strict priority order (a warpgroup runs as far as it can first)."""


def _check(g: mosaic_bwd.BwdGeometry, pids: Any = None, tweaks: Tweaks | None = None
           ) -> dict[int, list[int]]:
  """Every schedule of every program (or `pids`) of `g`; returns each program's query steps per
  work item (as warpgroup 0 waited on them)."""
  barriers, traces = _trace(g, tweaks or {})
  for pid in traces if pids is None else pids:
    for pick in _SCHEDULES:
      _simulate(barriers, traces[pid], pick)
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
_HALVES = _choose(1, 320, 1, 64, 256, 1, False)
_EMPTY_TAIL = _choose(1, 128, 1, 128, 384, 1, True)


@pytest.mark.parametrize("g,empty,paths", [
    (_LAGGED, False, "lag_dq dq_columns_split"),                  # 4 steps, 2 stages
    (dataclasses.replace(_LAGGED, lag_dq=False), False, "dq_columns_split"),
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
    _check(_HALVES, [0], {(2, "arrive", "q_bar", 0): 2})


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
