"""Instructions per call of the small, fixed-cost workloads, counted by valgrind's callgrind.

  .venv/bin/python -m tools.bench.instructions [--calls 2000] [--backends ...] [--out DIR]

Wall-clock times of a 5 us jit dispatch vary by 10-20 % between runs on a shared VM, more than
the overhead being measured; instruction counts do not. Each (backend, workload) pair runs in two
fresh interpreters under ``valgrind --tool=callgrind``: the workload is warmed up, then called N
(``--calls``) and 2N times from inside one ``sorted(range(n), key=step)``, and callgrind collects
only while ``builtin_sorted`` is on the stack (``--collect-atstart=no
--toggle-collect=builtin_sorted``). Imports and tracing call ``sorted()`` too, equally in both
children, so (count at 2N - count at N) / N is the calling thread's work per call (Python,
jaxlib, the plugin, the inner plugin, libc). Work on other threads (none for these workloads:
XLA:CPU runs programs this small inline) and the kernel's are not counted.

Workloads: ``dispatch_async`` (``y = f(x)`` with ``f = jax.jit(lambda x: x + 1)`` on f32[8]),
``dispatch_blocking`` (the same, then ``y.block_until_ready()``), ``device_put_1KiB``
(``jax.device_put`` of a float32[256] numpy array to device 0, waited for). It prints a table
with pjrtkit's count over each baseline's and writes ``instructions.json`` into ``--out``. Needs
``valgrind`` (Debian: ``apt-get install valgrind``); a run of the three backends and three
workloads takes about 20 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from tools.bench import backends as backends_lib
from tools.bench import child
from tools.bench.config import DEFAULT_OUT

_ROOT = Path(__file__).resolve().parents[2]

WORKLOADS: tuple[str, ...] = ("dispatch_async", "dispatch_blocking", "device_put_1KiB")
"""The workloads, in the order they run."""

TARGETS: dict[str, float] = {"dispatch_async": 1.05, "dispatch_blocking": 1.05}
"""The dispatch goal (pjrtkit at most 1.05x the direct XLA:CPU plugin) applied to instruction
counts; tools.bench applies the same goal to wall-clock time, a separate verdict."""

WARMUP_CALLS = 300
"""Calls before counting starts (compilation, caches, first-execution metadata)."""

_SUMMARY = re.compile(r"^summary:\s+(\d+)\s*$", re.MULTILINE)


def make_step(workload: str) -> tuple[Callable[[int], int], Callable[[], float], float]:
  """For `workload` (JAX must already be configured): the function one call runs, a function
  returning the first element of the last result, and the value that element must have."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top

  kept: list[Any] = [None]  # The last result stays alive until the next call replaces it.

  def first() -> float:
    return float(np.asarray(kept[0].block_until_ready()).ravel()[0])

  if workload in ("dispatch_async", "dispatch_blocking"):
    f = jax.jit(lambda v: v + 1)
    x = jnp.full(8, 41.0, jnp.float32)
    blocking = workload == "dispatch_blocking"

    def dispatch(_: int) -> int:
      kept[0] = f(x)
      if blocking:
        kept[0].block_until_ready()
      return 0

    return dispatch, first, 42.0
  if workload == "device_put_1KiB":
    host = np.arange(7, 7 + 256, dtype=np.float32)
    device = jax.devices()[0]

    def put(_: int) -> int:
      kept[0] = jax.device_put(host, device)
      kept[0].block_until_ready()
      return 0

    return put, first, 7.0
  raise ValueError(f"workload must be one of {list(WORKLOADS)}, got {workload!r}")


def run_child_workload(backend: str, workload: str, calls: int) -> None:
  """In this (fresh) process: selects `backend`, warms `workload` up, then makes `calls` calls
  inside one ``sorted()`` (the region callgrind counts), and checks the last result.

  Raises:
    AssertionError: the last result has the wrong value.
  """
  backends_lib.activate(backend)
  step, first, expected = make_step(workload)
  for i in range(WARMUP_CALLS):
    step(i)
  sorted(range(calls), key=step)
  got = first()
  if got != expected:
    raise AssertionError(f"{backend}/{workload}: the result starts with {got}, expected "
                         f"{expected}")


def parse_summary(text: str) -> int:
  """The ``summary:`` event total of a callgrind output file (its Ir count)."""
  match = _SUMMARY.search(text)
  if match is None:
    raise ValueError("no 'summary:' line in the callgrind output")
  return int(match.group(1))


def _collected(backend: str, workload: str, calls: int, env: dict[str, str], valgrind: str,
               timeout: float) -> int:
  """Instructions callgrind collected inside ``sorted()`` in one child making `calls` calls."""
  with tempfile.TemporaryDirectory(prefix="pjrtkit_instructions_") as tmp:
    out = Path(tmp) / "callgrind.out"
    cmd = [valgrind, "--tool=callgrind", "--collect-atstart=no",
           "--toggle-collect=builtin_sorted", f"--callgrind-out-file={out}",
           sys.executable, "-m", "tools.bench.instructions", "--child", backend, workload,
           "--calls", str(calls)]
    try:
      proc = subprocess.run(cmd, cwd=_ROOT, env=env, capture_output=True, text=True,
                            timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
      raise RuntimeError(f"{backend}/{workload}: the callgrind child ran past --timeout "
                         f"{timeout} s") from e
    if proc.returncode != 0 or not out.exists():
      raise RuntimeError(f"{backend}/{workload}: callgrind child failed (exit "
                         f"{proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    total = parse_summary(out.read_text())
    if total == 0:
      raise RuntimeError(f"{backend}/{workload}: callgrind counted nothing: this Python's "
                         "library has no symbol 'builtin_sorted' (stripped?); use a Python "
                         "built with symbols, as pyenv's are")
    return total


def count(backend: str, workload: str, calls: int, env: dict[str, str],
          valgrind: str, timeout: float) -> float:
  """Instructions per call of `workload` on `backend`: two callgrind children, making `calls`
  and 2 x `calls` calls, and the difference of their counts over `calls` (imports and tracing
  also call ``sorted()``; the same amount in both children, so it cancels)."""
  once = _collected(backend, workload, calls, env, valgrind, timeout)
  twice = _collected(backend, workload, 2 * calls, env, valgrind, timeout)
  return (twice - once) / calls


def report(counts: dict[str, dict[str, float]]) -> tuple[list[dict[str, Any]], str]:
  """Rows (per workload: counts, pjrtkit's ratios to each baseline, target and whether it is
  met) and the Markdown table printed for them. `counts` maps backend -> workload -> count."""
  rows = []
  lines = ["| workload | " + " | ".join(f"{b} (instructions/call)" for b in counts) +
           " | pjrtkit / direct | pjrtkit / cpu | target | met |",
           "| --- |" + " --- |" * (len(counts) + 4)]
  for workload in WORKLOADS:
    values = {b: c[workload] for b, c in counts.items() if workload in c}
    if not values:
      continue
    mine = values.get("pjrtkit")
    ratios = {b: mine / v for b, v in values.items()
              if mine is not None and b != "pjrtkit" and v > 0}
    target = TARGETS.get(workload)
    direct = ratios.get(backends_lib.DIRECT_PLATFORM)
    met = None if target is None or direct is None else direct <= target
    rows.append({"workload": workload, "instructions_per_call": values, "ratios": ratios,
                 "target": None if target is None else f"<={target}x direct in instructions",
                 "met": met})
    cells = [f"{values[b]:,.0f}" if b in values else "-" for b in counts]
    fmt = lambda r: "-" if r is None else f"{r:.3f}"  # noqa: E731
    lines.append(f"| {workload} | " + " | ".join(cells) +
                 f" | {fmt(direct)} | {fmt(ratios.get('cpu'))} | "
                 f"{'-' if target is None else f'<={target}x direct'} | "
                 f"{'-' if met is None else ('yes' if met else 'no')} |")
  return rows, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
  """Command-line entry point."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--calls", type=int, default=2000, help="counted calls per child")
  parser.add_argument("--backends", default=",".join(b.name for b in backends_lib.BACKENDS),
                      help="comma-separated backends (default: all three)")
  parser.add_argument("--only", default=",".join(WORKLOADS),
                      help=f"comma-separated workloads, of {','.join(WORKLOADS)}")
  parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                      help="folder for instructions.json")
  parser.add_argument("--timeout", type=float, default=1200, help="seconds per child")
  parser.add_argument("--child", nargs=2, metavar=("BACKEND", "WORKLOAD"),
                      help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  if args.calls < 1:
    parser.error(f"--calls must be at least 1, got {args.calls}")
  if args.timeout <= 0:
    parser.error(f"--timeout must be a positive number of seconds, got {args.timeout}")
  if args.child:
    run_child_workload(args.child[0], args.child[1], args.calls)
    return 0
  known = [b.name for b in backends_lib.BACKENDS]
  names = [n for n in args.backends.split(",") if n]
  unknown = [n for n in names if n not in known]
  if unknown or not names:
    parser.error(f"--backends must name some of {known}, got {args.backends!r}")
  workloads = [w for w in args.only.split(",") if w]
  if not workloads or any(w not in WORKLOADS for w in workloads):
    parser.error(f"--only must name some of {list(WORKLOADS)}, got {args.only!r}")
  valgrind = shutil.which("valgrind")
  if valgrind is None:
    print("tools.bench.instructions needs valgrind (Debian: apt-get install valgrind)",
          file=sys.stderr)
    return 2
  env = child.child_env(drop_jax_platforms=True)
  started = time.time()
  counts: dict[str, dict[str, float]] = {n: {} for n in names}
  for workload in workloads:
    for name in names:
      counts[name][workload] = count(name, workload, args.calls, env, valgrind, args.timeout)
      print(f"[instructions] {workload} on {name}: {counts[name][workload]:,.0f}", flush=True)
  rows, table = report(counts)
  print(table)
  args.out.mkdir(parents=True, exist_ok=True)
  record = {"date": time.strftime("%Y-%m-%d"), "calls": args.calls,
            "backends": names, "workloads": workloads,
            "method": "callgrind, (count at 2N calls - count at N) / N, N = calls",
            "warmup_calls": WARMUP_CALLS, "machine": os.uname().machine,
            "seconds": round(time.time() - started), "rows": rows}
  path = args.out / "instructions.json"
  path.write_text(json.dumps(record, indent=1) + "\n")
  print(f"wrote {path}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
