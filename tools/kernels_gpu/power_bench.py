"""Contenders of the GPU kernel comparison in alternating rounds beside `nvidia-smi`'s samples of
the SM clock, power and temperature: whether a kernel's time moves with the clock it runs at and
the power it draws (the H200's limit is 700 W; long attention kernels run near it).

  PYTHONPATH=KIT:KIT/python:KIT/.pydeps:KIT/tools/kernels_gpu/tokamax_shims \\
      python -m tools.kernels_gpu.power_bench A1,A2 [--seq-len 16896] [--rounds 6] \\
      [--iterations 40] [--contenders "pk mosaic,cuDNN,tokamax mosaic"] [--interval-ms 50] \\
      [--busy-watts 200] [--power-field power.draw.instant] [--gpu 0]

Cases and contenders are the comparison's (each op folder's ``arg_specs.py`` and
``benchmark.py``, found by `tools/bench/compare_cases` and `compare_contenders`;
``--quick`` takes its small shapes, ``--seq-len`` another sequence length for attention cases).
Per case each contender is compiled once (one that cannot be made, compiled or run is skipped
with its reason), then timed `--rounds` times in turn, each round starting one contender later
(CUPTI median of `--iterations` runs per round, on JAX's default device), each round's
wall-clock window recorded. The samples inside a contender's windows that draw more than
`--busy-watts` (the kernel running, not the host between launches) give, per round and pooled,
the median SM clock, and pooled the lowest clock, the median power and the highest temperature.
The power field defaults to the instantaneous reading (the plain ``power.draw`` averages over a
second on recent GPUs, longer than a round). ``--smi`` names the sampler (another executable
printing nvidia-smi's CSV lines, for tests).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Iterable, Sequence

TIME_FORMAT = "%Y/%m/%d %H:%M:%S.%f"
ATTENTION = "attention"
"""The attention cases' op (``OP`` of kernels/dot_product_attention/arg_specs.py): --seq-len
applies to them only."""
DEFAULT_CONTENDERS = {ATTENTION: ("pk mosaic", "cuDNN", "tokamax mosaic"),
                      "layer_norm": ("pk triton", "pk mosaic", "XLA jnp")}
"""Per op, the contenders timed when --contenders is not given (another op's: all of them)."""


@dataclasses.dataclass(frozen=True)
class Sample:
  """One `nvidia-smi` line: when (seconds since the epoch), the SM clock (MHz), the power drawn
  (W) and the temperature (C)."""

  time: float
  sm_mhz: float
  power_w: float
  temp_c: float


def parse_samples(lines: Iterable[str]) -> tuple[list[Sample], list[str]]:
  """(samples, lines that are not samples) of `nvidia-smi --query-gpu=timestamp,clocks.sm,POWER,
  temperature.gpu --format=csv,noheader,nounits` output run with ``TZ=UTC``. Headers, fields such
  as ``[N/A]`` and a last line cut off without its newline are not samples."""
  samples, rejected = [], []
  for line in lines:
    fields = [f.strip() for f in line.split(",")]
    try:
      if not line.endswith("\n") or len(fields) != 4:
        raise ValueError("not a whole line of four fields")
      when = datetime.datetime.strptime(fields[0], TIME_FORMAT).replace(
          tzinfo=datetime.timezone.utc).timestamp()
      samples.append(Sample(when, *(float(f) for f in fields[1:])))
    except ValueError:
      if line.strip():
        rejected.append(line.rstrip("\n"))
  return samples, rejected


@dataclasses.dataclass(frozen=True)
class Summary:
  """A contender's samples pooled over its timing windows: how many, how many busy (above the
  busy power), and over the busy ones the SM clock's median and minimum, the power's median and
  the highest temperature."""

  samples: int
  busy: int
  sm_mhz_median: float
  sm_mhz_min: float
  power_w_median: float
  temp_c_max: float

  def describe(self) -> str:
    """One line, e.g. ``12 busy samples of 14; SM clock median 1845 MHz (min 1650), ...``."""
    return (f"{self.busy} busy samples of {self.samples}; SM clock median "
            f"{self.sm_mhz_median:.0f} MHz (min {self.sm_mhz_min:.0f}), power median "
            f"{self.power_w_median:.0f} W, temperature max {self.temp_c_max:.0f} C")


def _busy(samples: Sequence[Sample], window: tuple[float, float], busy_watts: float
          ) -> tuple[list[Sample], list[Sample]]:
  inside = [s for s in samples if window[0] <= s.time <= window[1]]
  return inside, [s for s in inside if s.power_w > busy_watts]


def summarize(samples: Sequence[Sample], windows: Sequence[tuple[float, float]],
              busy_watts: float) -> Summary | None:
  """`samples` inside any of `windows` ((start, end) seconds), summarized over those drawing more
  than `busy_watts`; None when none does."""
  inside, busy = [], []
  for window in windows:
    i, b = _busy(samples, window, busy_watts)
    inside += i
    busy += b
  if not busy:
    return None
  return Summary(len(inside), len(busy), statistics.median(s.sm_mhz for s in busy),
                 min(s.sm_mhz for s in busy), statistics.median(s.power_w for s in busy),
                 max(s.temp_c for s in busy))


def round_clocks(samples: Sequence[Sample], windows: Sequence[tuple[float, float]],
                 busy_watts: float) -> list[float | None]:
  """Per window, the busy samples' median SM clock (None where none is busy)."""
  out = []
  for window in windows:
    busy = _busy(samples, window, busy_watts)[1]
    out.append(statistics.median(s.sm_mhz for s in busy) if busy else None)
  return out


class Sampler:
  """Runs ``SMI -i GPU --query-gpu=timestamp,clocks.sm,POWER,temperature.gpu
  --format=csv,noheader,nounits -lms INTERVAL`` (with ``TZ=UTC``) while in its `with` block,
  into a file of its own, read inside the block. Entering waits for its first sample; leaving
  waits for a sample taken after the block ended, then stops it (SIGINT, then SIGKILL after 5 s)
  and removes the file."""

  def __init__(self, smi: str, interval_ms: int, power_field: str, gpu: int,
               startup_s: float = 10.0) -> None:
    self._command = [smi, "-i", str(gpu),
                     f"--query-gpu=timestamp,clocks.sm,{power_field},temperature.gpu",
                     "--format=csv,noheader,nounits", "-lms", str(interval_ms)]
    self._interval_s = interval_ms / 1e3
    self._startup_s = startup_s
    self._dir = tempfile.TemporaryDirectory()
    self._path = os.path.join(self._dir.name, "samples.csv")
    self._err_path = os.path.join(self._dir.name, "stderr.txt")
    self._process: subprocess.Popen[Any] | None = None

  def read(self) -> tuple[list[Sample], list[str]]:
    """(samples so far, lines that are not samples) of the sampler's output."""
    with open(self._path) as f:
      return parse_samples(f)

  def _fail(self, what: str) -> RuntimeError:
    with open(self._err_path) as f:
      err = f.read().strip()
    rejected = self.read()[1]
    return RuntimeError(
        f"--smi: {' '.join(self._command)} {what}"
        f"{'; stderr: ' + err if err else ''}"
        f"{'; first line that is no sample: ' + repr(rejected[0]) if rejected else ''} "
        "(--power-field: try power.draw where the driver lacks power.draw.instant)")

  def _wait_for(self, done: Callable[[list[Sample]], bool], seconds: float) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
      if done(self.read()[0]):
        return True
      assert self._process is not None
      if self._process.poll() is not None:
        return done(self.read()[0])
      time.sleep(self._interval_s / 2)
    return False

  def __enter__(self) -> "Sampler":
    with open(self._path, "w") as out, open(self._err_path, "w") as err:
      try:
        self._process = subprocess.Popen(self._command, stdout=out, stderr=err,
                                         env={**os.environ, "TZ": "UTC"})
      except OSError as e:
        raise RuntimeError(f"--smi: cannot run {self._command[0]!r} ({e}); it samples the "
                           "GPU's clock and power (nvidia-smi on the GPU machine)") from e
    if not self._wait_for(bool, self._startup_s):
      self._stop()
      error = self._fail(f"gave no sample in {self._startup_s:.0f} s")
      self._dir.cleanup()
      raise error
    return self

  def _stop(self) -> None:
    assert self._process is not None
    if self._process.poll() is None:
      self._process.send_signal(signal.SIGINT)
      try:
        self._process.wait(timeout=5)
      except subprocess.TimeoutExpired:
        self._process.kill()
        self._process.wait()

  def wait_past(self, when: float) -> None:
    """Waits (at most 2 s and 5 intervals) for a sample taken after `when`."""
    self._wait_for(lambda s: bool(s) and s[-1].time > when, 2.0 + 5 * self._interval_s)

  def __exit__(self, *exc: Any) -> None:
    self.wait_past(time.time())
    self._stop()
    self._dir.cleanup()


def time_case(case: Any, names: Sequence[str], rounds: int, iterations: int
              ) -> tuple[dict[str, tuple[list[float], list[tuple[float, float]]]],
                         dict[str, str]]:
  """({name: (each round's median ms, each round's wall-clock window)}, {name: why skipped}) for
  `case`'s contenders named in `names`, timed in turn round after round, round r starting with
  the r-th contender. One that fails to build, compile or run is skipped with its reason."""
  from pjrtkit import kernels as pk  # pylint: disable=g-import-not-at-top
  from tools.bench import compare_contenders as cc  # pylint: disable=g-import-not-at-top

  args = cc.make_inputs(case)
  runs, skipped = {}, {}
  for contender in cc.contenders_for(case.op, names):
    if contender.name not in names:
      continue
    try:
      fn = cc.phase_function(contender.make(case), case)
      f_std, a = pk.benchmarking.standardize_function(fn, *args)
      run = pk.benchmarking.compile_benchmark(f_std, a)
      run(a, iterations=1)  # a warm-up that also surfaces run-time failures
    except Exception as e:  # pylint: disable=broad-except
      skipped[contender.name] = cc.reason_of(e)
      continue
    runs[contender.name] = (run, a, [], [])
  order = list(runs)
  for r in range(rounds):
    for name in order[r % len(order):] + order[:r % len(order)] if order else ():
      if name in skipped:
        continue
      run, a, times, windows = runs[name]
      start = time.time()
      try:
        times.append(run(a, iterations=iterations).median_evaluation_time_ms)
      except Exception as e:  # pylint: disable=broad-except
        skipped[name] = f"round {r + 1}: {cc.reason_of(e)}"
        continue
      windows.append((start, time.time()))
  return ({n: (t, w) for n, (_, _, t, w) in runs.items() if n not in skipped}, skipped)


def _positive(flag: str, value: float, parser: argparse.ArgumentParser) -> None:
  if not value >= 1:
    parser.error(f"{flag} must be >= 1, got {value}")


def main(argv: Sequence[str]) -> int:
  """Command line: see the module docstring."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("cases", help="comma-separated case ids of the comparison "
                      "(kernels/<op>/arg_specs.py)")
  parser.add_argument("--seq-len", type=int, help="attention cases at this sequence length")
  parser.add_argument("--rounds", type=int, default=6, help="alternating rounds (>= 1)")
  parser.add_argument("--iterations", type=int, default=40,
                      help="runs per round, its median timed (>= 1)")
  parser.add_argument("--contenders", help="comma-separated contender names of the comparison "
                      f"(default per op: {DEFAULT_CONTENDERS})")
  parser.add_argument("--interval-ms", type=int, default=50, help="sampling interval (>= 1)")
  parser.add_argument("--busy-watts", type=float, default=200.0,
                      help="samples above this power count as the kernel running (>= 0)")
  parser.add_argument("--power-field", default="power.draw.instant",
                      help="nvidia-smi's power field (power.draw on older drivers)")
  parser.add_argument("--gpu", type=int, default=0, help="nvidia-smi's GPU index (-i)")
  parser.add_argument("--quick", action="store_true", help="the comparison's small shapes")
  parser.add_argument("--smi", default="nvidia-smi", help="the sampler executable")
  args = parser.parse_args(argv)
  for flag in ("rounds", "iterations", "interval_ms"):
    _positive(f"--{flag.replace('_', '-')}", getattr(args, flag), parser)
  if args.seq_len is not None:
    _positive("--seq-len", args.seq_len, parser)
  if not (args.busy_watts >= 0 and math.isfinite(args.busy_watts)):
    parser.error(f"--busy-watts must be a finite number >= 0, got {args.busy_watts}")
  from tools.bench import compare_cases  # pylint: disable=g-import-not-at-top
  from tools.bench import compare_contenders as cc  # pylint: disable=g-import-not-at-top

  ids = [i for i in args.cases.split(",") if i.strip()]
  if not ids:
    parser.error(f"cases: none given in {args.cases!r}; known: "
                 f"{', '.join(c.id for c in compare_cases.cases())}")
  try:
    cases = compare_cases.select(ids, quick=args.quick)
  except ValueError as e:
    parser.error(f"cases: {e}")
  if args.seq_len is not None:
    if any(c.op != ATTENTION for c in cases):
      parser.error("--seq-len: attention cases only, got "
                   f"{[c.id for c in cases if c.op != ATTENTION]}")
    cases = [c.with_shape((c.shape[0], args.seq_len, *c.shape[2:])) for c in cases]
  given = None if args.contenders is None else [
      n.strip() for n in args.contenders.split(",") if n.strip()]
  names_of = {}
  for case in cases:
    known = [c.name for c in cc.contenders_for(case.op)]
    names = (list(DEFAULT_CONTENDERS.get(case.op, known)) if given is None
             else [n for n in given if n in known])
    if not names:
      parser.error(f"--contenders: none of {given} for {case.id}; accepted: {known}")
    names_of[case.id] = names
  if given is not None:
    everything = {c.name for case in cases for c in cc.contenders_for(case.op)}
    unknown = [n for n in given if n not in everything]
    if unknown:
      parser.error(f"--contenders: unknown {unknown}; accepted: {sorted(everything)}")

  with Sampler(args.smi, args.interval_ms, args.power_field, args.gpu) as sampler:
    for case in cases:
      timed, skipped = time_case(case, names_of[case.id], args.rounds, args.iterations)
      sampler.wait_past(time.time())
      samples = sampler.read()[0]
      unit = compare_cases.throughput_unit(case.op)
      print(f"{case.label}: {len(samples)} samples so far, every {args.interval_ms} ms",
            flush=True)
      for name, reason in skipped.items():
        print(f"{case.id} {name}: skipped: {reason}", flush=True)
      for name, (times, windows) in timed.items():
        ms = statistics.median(times)
        summary = summarize(samples, windows, args.busy_watts)
        clocks = round_clocks(samples, windows, args.busy_watts)
        print(f"{case.id} {name}: {ms:.4f} ms {compare_cases.throughput(case, ms):.4g} {unit} "
              f"rounds {' '.join(f'{compare_cases.throughput(case, t):.4g}' for t in times)}; "
              f"round clocks {' '.join('-' if c is None else f'{c:.0f}' for c in clocks)}; "
              f"{summary.describe() if summary else 'no busy samples in its windows'}",
              flush=True)
  return 0


if __name__ == "__main__":
  raise SystemExit(main(sys.argv[1:]))
