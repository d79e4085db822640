"""Test support (no kernel code): replays a warp-specialised Mosaic GPU kernel body per (program,
warpgroup) on plain Python integers and checks its barrier protocol without a GPU. Used by
``mosaic_bwd_protocol_test`` and ``mosaic_fwd_protocol_test``.

`Replay` holds recording fakes for ``lax``, ``pl``, ``plgpu``, ``jnp``, ``jax`` and
``pallas.named_barrier``; `trace` patches them into the kernel's modules, runs the host function
(whose ``plgpu.kernel`` is faked, to capture the body and its scratch declarations) and then the
body once per (program, warpgroup), so the kernel's own control flow decides which barrier waits
and arrivals happen, in which order. `simulate` interleaves one program's warpgroups under
mbarrier semantics (a phase completes after ``num_arrivals`` arrivals; each warpgroup keeps its
own parity per barrier; a TMA load arrives when issued) and hardware named-barrier semantics (a
generation completes when ``threads`` threads arrived; ``bar.sync`` blocks its warpgroup until the
generation it joined completes), under each of `SCHEDULES`, and raises `ProtocolError` on a
deadlock, a barrier two phases past a warpgroup that still waits on it (parity aliases), a
warpgroup arriving twice in one named-barrier generation (it would complete without the others),
a phase or generation left part-arrived, or a data barrier phase nobody waits on.
`check_reads` checks each warpgroup's reads (``plgpu.load`` and wgmma operands) of buffers that
TMA loads fill: each comes after a wait on the barrier its load completes, since the buffer's last
release.

Not modelled: memory contents, wgmma asynchrony, the ordering of TMA stores, Pallas's own
warpgroup barriers, and TMA loads completing late (arriving at issue runs barriers furthest
ahead).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import itertools
import types
from typing import Any, Callable, Iterable, Mapping, Sequence
from unittest import mock

Event = tuple[str, Any, int]
"""("wait" or "arrive", barrier name, barrier index (-1: no ``.at``)), ("nsync" or "narrive",
named barrier id, its thread count), or ("read", buffer name, slot (-1: no integer first index))."""
Tweaks = dict[tuple[int, str, Any, int], int | str]
"""Injected protocol bugs: (warpgroup, event kind, barrier name or named id, its n-th such event
there) -> how many times it happens (0: dropped, 2: doubled; 1 for all others), or the event kind
it becomes instead (say, "narrive" for an "nsync")."""
WG_THREADS = 128


class ProtocolError(AssertionError):
  """The replayed kernel breaks the barrier protocol."""


class Launched(Exception):
  """Raised by the fake kernel call once the launch is captured (the host stops there)."""


class Value:
  """An array value (scores, accumulators, masks): absorbs arithmetic, casts and indexing, and
  refuses to be a Python bool (a traced value deciding Python control flow would not replay)."""
  shape = ("value-shape",)

  def astype(self, dtype: Any) -> Value:
    return self

  def max(self, *args: Any, **kwargs: Any) -> Value:
    return self

  def sum(self, *args: Any, **kwargs: Any) -> Value:
    return self

  def __bool__(self) -> bool:
    raise TypeError("an array value reached Python control flow")

  def __eq__(self, other: Any) -> Value:  # type: ignore[override]
    return self

  def __ne__(self, other: Any) -> Value:  # type: ignore[override]
    return self

  __hash__ = None  # type: ignore[assignment]


for _op in "add radd sub rsub mul rmul truediv rtruediv neg lt le gt ge and rand getitem".split():
  setattr(Value, f"__{_op}__", lambda self, *_: self)


class Ref:
  """A ref (global, shared, accumulator or barrier): its name and the indices taken with ``.at``;
  reads give a `Value`, writes are dropped."""
  dtype = "ref-dtype"

  def __init__(self, name: str, index: tuple[Any, ...] = ()):
    self.name, self.index = name, index

  @property
  def at(self) -> At:
    return At(self)

  def transpose(self, perm: Any) -> Ref:
    return self

  def __getitem__(self, key: Any) -> Any:
    return Value()

  def __setitem__(self, key: Any, value: Any) -> None:
    pass


class At:
  """``ref.at``: indexing it gives the ref with the index appended."""

  def __init__(self, ref: Ref):
    self.ref = ref

  def __getitem__(self, key: Any) -> Ref:
    return Ref(self.ref.name, self.ref.index + (key,))


@dataclasses.dataclass(frozen=True)
class Barrier:
  """``plgpu.Barrier`` as the host function declares it."""
  num_arrivals: int = 1
  num_barriers: int = 1


def div(a: int, b: int) -> int:
  """``lax.div`` on ints: rounds toward zero (so `rem` takes the sign of `a`: -1 rem 2 is -1)."""
  assert isinstance(a, int) and isinstance(b, int), (a, b)
  return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)


def rem(a: int, b: int) -> int:
  """``lax.rem`` on ints: the sign of `a`."""
  return a - b * div(a, b)


def fori_loop(lo: int, hi: int, body: Callable[[int, Any], Any], carry: Any) -> Any:
  """``lax.fori_loop`` with Python int bounds, as a Python loop."""
  assert isinstance(lo, int) and isinstance(hi, int), (lo, hi)
  for i in range(lo, hi):
    carry = body(i, carry)
  return carry


def when(cond: bool) -> Callable[[Callable[[], None]], None]:
  """``pl.when`` on a Python bool: the decorated function runs at once, if `cond`."""
  assert isinstance(cond, bool), f"pl.when on {cond!r}, not a Python bool"
  return lambda f: f() if cond else None


def run_state(f: Callable[[Any], None]) -> Callable[[Any], Any]:
  """``pl.run_state``: `f` on accumulator refs; the results are array values."""

  def run(init: Any) -> Any:
    many = isinstance(init, tuple)
    f(tuple(Ref("acc") for _ in init) if many else Ref("acc"))
    return tuple(Value() for _ in init) if many else Value()

  return run


def on_ints(f: Callable[..., Any]) -> Callable[..., Any]:
  """A ``jnp`` function that computes `f` on Python ints and bools and gives a `Value` when any
  argument is an array value."""
  return lambda *args: Value() if any(isinstance(a, Value) for a in args) else f(*args)


class Acc:
  """``plgpu.ACC``: an accumulator allocation; ``ACC.init(x)`` is just `x`."""
  init = staticmethod(lambda value: value)

  def __init__(self, *args: Any):
    pass


class Replay:
  """The fakes, recording the barrier events of the (program, warpgroup) being replayed."""

  def __init__(self, tweaks: Tweaks):
    self.pid = self.wg = 0
    self.events: list[Event] = []
    self.made: collections.Counter[tuple[str, Any]] = collections.Counter()
    self.stores: list[Ref] = []
    self.fills: dict[tuple[str, int], set[tuple[str, int]]] = {}
    """(buffer, slot) -> the (barrier, index) pairs its TMA loads complete, as issued."""
    self.tweaks = tweaks
    self.launch: dict[str, Any] = {}
    value = lambda *a, **k: Value()
    noop = lambda *a, **k: None
    same = lambda x, *a, **k: x
    self.lax = types.SimpleNamespace(axis_index=self.axis_index, fori_loop=fori_loop, div=div,
                                     rem=rem, broadcast_in_dim=value, optimization_barrier=same,
                                     round=value,
                                     RoundingMethod=types.SimpleNamespace(TO_NEAREST_EVEN=0))
    self.pl = types.SimpleNamespace(
        when=when, ds=lambda start, size: ("ds", start, size), run_state=run_state,
        multiple_of=same,
        run_scoped=lambda f, *allocs: f(*(Ref("acc") for _ in allocs)))
    self.jnp = types.SimpleNamespace(
        int32=int, float32=float, inf=float("inf"), minimum=on_ints(min), maximum=on_ints(max),
        clip=on_ints(lambda x, lo, hi: min(max(x, lo), hi)),
        where=on_ints(lambda c, a, b: a if c else b), logical_not=on_ints(lambda x: not x),
        zeros=value, full=value, exp2=value, log2=value, asarray=same)
    self.jax = types.SimpleNamespace(ShapeDtypeStruct=noop, new_ref=same, freeze=same)
    wgmma_layout = types.SimpleNamespace(reduce=noop)
    self.plgpu = types.SimpleNamespace(
        Barrier=Barrier, SMEM=noop, CompilerParams=noop, kernel=self.kernel, ACC=Acc,
        Layout=types.SimpleNamespace(WGMMA=wgmma_layout), set_max_registers=noop,
        wgmma=self.wgmma, commit_smem=noop, wgmma_accumulator_load=value, load=self.load,
        broadcasted_iota=value, layout_cast=same,
        copy_smem_to_gmem=lambda src, dst, **k: self.stores.append(dst),
        wait_smem_to_gmem=noop, warp_map=self.warp_map, copy_gmem_to_smem=self.copy_in,
        barrier_arrive=lambda bar: self.record("arrive", bar),
        barrier_wait=lambda bar: self.record("wait", bar))
    self.refs: dict[str, Ref] = {}
    """Refs to pass in place of a plain `Ref` of that name (say, a table the kernel reads)."""

  def axis_index(self, name: str) -> int:
    """``lax.axis_index``: the program or the warpgroup being replayed."""
    return {self.launch["grid_names"][0]: self.pid, self.launch["thread_name"]: self.wg}[name]

  def kernel(self, body: Callable[..., None], **launch: Any) -> Callable[..., Any]:
    """``plgpu.kernel``: keeps the body and the launch; calling it raises `Launched`."""
    self.launch = dict(launch, body=body)

    def call(*args: Any) -> Any:
      self.launch["args"] = args
      raise Launched

    return call

  @staticmethod
  def warp_map(body: Callable[[int], None]) -> None:
    """``plgpu.warp_map``: the body once per warp of the warpgroup, in order."""
    for warp in range(WG_THREADS // 32):
      body(warp)

  def copy_in(self, src: Any, dst: Ref, barrier: Ref, **kwargs: Any) -> None:
    """``plgpu.copy_gmem_to_smem``: its barrier's arrival (at issue), and which barrier fills
    the destination's slot."""
    del src, kwargs
    self.fills.setdefault((dst.name, _slot(dst)), set()).add(
        (barrier.name, barrier.index[0] if barrier.index else -1))
    self.record("arrive", barrier)

  def load(self, ref: Ref, **kwargs: Any) -> Value:
    """``plgpu.load``: a read of `ref`."""
    del kwargs
    self.add("read", ref.name, _slot(ref))
    return Value()

  def wgmma(self, acc: Any, a: Any, b: Any) -> None:
    """``plgpu.wgmma``: reads of its operands in shared memory (those that are refs)."""
    del acc
    for operand in (a, b):
      if isinstance(operand, Ref):
        self.add("read", operand.name, _slot(operand))

  def named_barrier(self, op: str, barrier_id: Any, threads: int) -> None:
    """``pallas.named_barrier``: records ("nsync" or "narrive", id, threads)."""
    assert op in ("sync", "arrive") and isinstance(barrier_id, int), (op, barrier_id)
    assert threads % WG_THREADS == 0, threads
    self.add("n" + op, barrier_id, threads)

  def record(self, kind: str, bar: Ref) -> None:
    """A barrier wait or arrival (a TMA load's, at issue) of `bar` (index -1: no ``.at``)."""
    assert len(bar.index) <= 1 and all(isinstance(i, int) for i in bar.index), bar.index
    self.add(kind, bar.name, bar.index[0] if bar.index else -1)

  def add(self, kind: str, name: Any, index: int) -> None:
    """Records an event, as `tweaks` alter it."""
    n = self.made[kind, name]
    self.made[kind, name] += 1
    tweak = self.tweaks.get((self.wg, kind, name, n), 1)
    if isinstance(tweak, str):
      self.events.append((tweak, name, index))
    else:
      self.events += [(kind, name, index)] * tweak


def _slot(ref: Ref) -> int:
  """A ref's slot: its first ``.at`` index where that is an integer, else -1."""
  return ref.index[0] if ref.index and isinstance(ref.index[0], int) else -1


def trace(replay: Replay, patches: Iterable[tuple[Any, Sequence[str]]], host: Callable[[], Any],
          names: Callable[[dict[str, Any]], list[str]]
          ) -> tuple[dict[str, Barrier], dict[int, list[list[Event]]]]:
  """The kernel's barriers (name -> declaration) and, per program, each warpgroup's events.
  `patches`: (module, attribute names) to replace by `replay`'s attributes of those names while
  `host` (the host function, launching the kernel once) and the body run; `names`: the body's
  ref names, in order (the last ones its scratch), from the captured launch."""
  with contextlib.ExitStack() as stack:
    for module, attrs in patches:
      for attr in attrs:
        stack.enter_context(mock.patch.object(module, attr, getattr(replay, attr)))
    try:
      host()
      raise AssertionError("the host function launched no kernel")
    except Launched:
      pass
    launch = replay.launch
    assert len(launch["grid"]) == 1 and len(launch["grid_names"]) == 1, launch["grid"]
    ref_names = names(launch)
    scratch = launch["scratch_types"]
    assert len(ref_names) == len(launch["args"]) + len(launch["out_type"]) + len(scratch)
    refs = [replay.refs.get(name) or Ref(name) for name in ref_names]
    barriers = {n: s for n, s in zip(ref_names[len(ref_names) - len(scratch):], scratch)
                if isinstance(s, Barrier)}
    traces: dict[int, list[list[Event]]] = {}
    for replay.pid in range(launch["grid"][0]):
      traces[replay.pid] = []
      for replay.wg in range(launch["num_threads"]):
        replay.events, replay.made = [], collections.Counter()
        launch["body"](*refs)
        traces[replay.pid].append(replay.events)
  for events in traces.values():
    for kind, name, index in itertools.chain(*events):
      if kind in ("nsync", "narrive", "read"):
        continue
      n = barriers[name].num_barriers
      if not (index == -1 and n == 1 or 0 <= index < n):
        raise ProtocolError(f"{name} has {n} barriers: index {index} used")
  return barriers, traces


def simulate(barriers: dict[str, Barrier], events: list[list[Event]],
             pick: Callable[[list[int], int], int], unwaited_ok: frozenset[str],
             waiters: Mapping[str, frozenset[int]] = {},  # noqa: B006 (read only)
             reuse: Mapping[str, str] = {}) -> None:  # noqa: B006 (read only)
  """Runs one program's warpgroups together, each step the unblocked one `pick` (ready
  warpgroups, the last one run) names; `ProtocolError` on a deadlock, a barrier two phases past
  a warpgroup still to wait on it, a warpgroup arriving twice in one named-barrier generation, a
  phase or generation left part-arrived, a phase nobody waits on (but `unwaited_ok`), a
  warpgroup that waits on some phases of a barrier (outside `unwaited_ok`) but not all, one of
  `waiters[name]` that does not wait on every phase of every barrier `name`, or an arrival on a
  buffer's barrier `data` (``reuse[data]``: the barrier that releases the buffer) for its n-th
  fill before the release barrier completed n - 1 phases (a refill over data still in use)."""
  pos = [0] * len(events)
  done: collections.Counter[tuple[str, int]] = collections.Counter()  # completed phases
  count: collections.Counter[tuple[str, int]] = collections.Counter()  # this phase's arrivals
  waited = [collections.Counter() for _ in events]  # phases each warpgroup waited on
  to_wait = [collections.Counter((n, i) for kind, n, i in ev if kind == "wait") for ev in events]
  generation: collections.Counter[int] = collections.Counter()  # named: completed generations
  joined: dict[int, tuple[set[int], int]] = {}  # named: (who arrived, threads) this generation
  blocked: dict[int, tuple[Event, int]] = {}  # warpgroup -> (its sync, the generation it joined)

  def ready(w: int) -> bool:
    if w in blocked:
      (_, bar_id, _), gen = blocked[w]
      return generation[bar_id] > gen
    if pos[w] == len(events[w]):
      return False
    kind, name, index = events[w][pos[w]]
    return kind != "wait" or done[name, index] > waited[w][name, index]

  def arrive_named(w: int, event: Event) -> None:
    kind, bar_id, threads = event
    who, arrived = joined.get(bar_id, (set(), 0))
    if w in who:
      raise ProtocolError(f"named barrier {bar_id}: warpgroup {w} arrived twice in generation "
                          f"{generation[bar_id]} (it would complete without the others)")
    who.add(w)
    arrived += WG_THREADS
    if arrived > threads:
      raise ProtocolError(f"named barrier {bar_id}: {arrived} threads arrived for {threads}")
    if arrived == threads:
      generation[bar_id] += 1
      joined.pop(bar_id, None)
      return
    joined[bar_id] = (who, arrived)
    if kind == "nsync":
      blocked[w] = (event, generation[bar_id])

  last = len(events) - 1
  while runnable := [w for w in range(len(events)) if ready(w)]:
    last = w = pick(runnable, last)
    if blocked.pop(w, None):
      continue
    event = events[w][pos[w]]
    kind, name, index = event
    pos[w] += 1
    if kind in ("nsync", "narrive"):
      arrive_named(w, event)
      continue
    bar = (name, index)
    if kind == "wait":
      waited[w][bar] += 1
      to_wait[w][bar] -= 1
      continue
    if name in reuse:
      free = reuse[name]
      released = done[free, index if barriers[free].num_barriers > 1 else -1]
      if released < done[bar]:
        raise ProtocolError(f"{name}[{index}] filled for phase {done[bar] + 1} while {free} "
                            f"released it {released} times (data still in use)")
    count[bar] += 1
    if count[bar] < barriers[name].num_arrivals:
      continue
    count[bar] = 0
    done[bar] += 1
    for v, (seen, left) in enumerate(zip(waited, to_wait)):
      if left[bar] and done[bar] - seen[bar] > 1:
        raise ProtocolError(f"{name}[{index}] completed phase {done[bar]} while warpgroup {v} "
                            f"has waited on {seen[bar]} of its phases (parity aliases)")
  stuck = {w: blocked[w][0] if w in blocked else events[w][pos[w]]
           for w in range(len(events)) if w in blocked or pos[w] < len(events[w])}
  if stuck:
    raise ProtocolError(f"deadlock: warpgroups blocked at {stuck}")
  if partial := {bar: n for bar, n in count.items() if n}:
    raise ProtocolError(f"phases left part-arrived at the end: {partial}")
  if joined:
    raise ProtocolError(f"named barriers left part-arrived at the end (id: warpgroups, threads):"
                        f" {joined}")
  for (name, index), n in done.items():
    if name not in unwaited_ok and n > max(seen[name, index] for seen in waited):
      raise ProtocolError(f"{name}[{index}] completed {n} phases, waited on at most "
                          f"{max(seen[name, index] for seen in waited)}")
    for w, seen in enumerate(waited):
      must = w in waiters.get(name, ()) or (name not in unwaited_ok and seen[name, index])
      if must and seen[name, index] != n:
        raise ProtocolError(f"warpgroup {w} waited on {seen[name, index]} of the {n} phases of "
                            f"{name}[{index}]")


SCHEDULES = [lambda ready, last: min(ready, key=lambda w: (w - last - 1) % 3)] + [
    lambda ready, last, order=order: min(ready, key=order.index)
    for order in itertools.permutations(range(3))]
"""For three warpgroups: round robin, then each strict priority order (a warpgroup runs as far
as it can first)."""


def check(barriers: dict[str, Barrier], traces: dict[int, list[list[Event]]],
          unwaited_ok: frozenset[str], pids: Iterable[int] | None = None,
          waiters: Mapping[str, frozenset[int]] = {},  # noqa: B006 (read only)
          reuse: Mapping[str, str] = {}) -> None:  # noqa: B006 (read only)
  """`simulate` under every schedule, for every program (or `pids`)."""
  for pid in traces if pids is None else pids:
    assert len(traces[pid]) == 3, "SCHEDULES are for three warpgroups"
    events = [[e for e in wg_events if e[0] != "read"] for wg_events in traces[pid]]
    for pick in SCHEDULES:
      simulate(barriers, events, pick, unwaited_ok, waiters, reuse)


def check_reads(barriers: dict[str, Barrier], traces: dict[int, list[list[Event]]],
                fills: Mapping[tuple[str, int], set[tuple[str, int]]],
                reuse: Mapping[str, str] = {}) -> None:  # noqa: B006 (read only)
  """Each warpgroup's reads of a TMA-filled buffer slot (`fills`, `Replay.fills`: (buffer, slot)
  -> the barrier its loads complete; a buffer filled whole answers every slot) come after more
  waits on that barrier than arrivals on the barrier that releases the slot
  (``reuse[barrier]``), else after one wait: `ProtocolError` names the first read that does not.

  Raises:
    ValueError: a slot filled through more than one barrier (a kernel whose slots change
      barriers at run time, like the forward's, is not checked this way).
  """
  for (name, index), bars in fills.items():
    if len(bars) > 1:
      raise ValueError(f"{name}[{index}] is filled through {sorted(bars)}: check_reads needs "
                       f"one barrier per slot")
  for pid, events in traces.items():
    for w, wg_events in enumerate(events):
      seen: collections.Counter[tuple[str, str, int]] = collections.Counter()
      for kind, name, index in wg_events:
        if kind in ("wait", "arrive"):
          seen[kind, name, index] += 1
        if kind != "read":
          continue
        fill = fills.get((name, index)) or fills.get((name, -1))
        if fill is None:
          continue  # written by threads, not by TMA
        [(bar, bar_index)] = fill
        free = reuse.get(bar)
        released = 0
        if free is not None:
          released = seen["arrive", free, bar_index if barriers[free].num_barriers > 1 else -1]
        if seen["wait", bar, bar_index] <= released:
          raise ProtocolError(f"program {pid} warpgroup {w} reads {name}[{index}] after "
                              f"{seen['wait', bar, bar_index]} waits on {bar}[{bar_index}], which "
                              f"its load completes, and {released} releases")
