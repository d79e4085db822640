"""Contenders of the GPU kernel comparison in alternating rounds beside `nvidia-smi`'s samples of
the SM clock, power and temperature: whether a kernel's time moves with the clock it runs at and
the power it draws (the H200's limit is 700 W; long attention kernels run near it).

  PYTHONPATH=KIT:KIT/python:KIT/.pydeps:KIT/tools/kernels_gpu/tokamax_shims \\
      python -m tools.kernels_gpu.power_bench A1,A2 [--rounds 6] [--iterations 40] \\
      [--contenders "pk mosaic,cuDNN,tokamax mosaic"] [--interval-ms 50] [--busy-watts 200]

Cases and contenders are the comparison's (`tools/bench/compare_cases`, `compare_contenders`;
``--quick`` takes its small shapes). Per case each contender is compiled once, then timed
`--rounds` times in turn (CUPTI median of `--iterations` runs per round, on JAX's default
device), each round's wall-clock window recorded; per contender the samples inside its windows
drawing more than `--busy-watts` (the kernel running, not the host between launches) give the
median and lowest SM clock, the median power and the highest temperature. ``--smi`` names the
sampler (another executable printing nvidia-smi's CSV lines, for tests).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Iterable, Sequence

QUERY = "timestamp,clocks.sm,power.draw,temperature.gpu"
TIME_FORMAT = "%Y/%m/%d %H:%M:%S.%f"
DEFAULT_CONTENDERS = ("pk mosaic", "cuDNN", "tokamax mosaic")


@dataclasses.dataclass(frozen=True)
class Sample:
  """One `nvidia-smi` line: when (seconds since the epoch, the host's clock), the SM clock
  (MHz), the power drawn (W) and the temperature (C)."""

  time: float
  sm_mhz: float
  power_w: float
  temp_c: float


def parse_samples(lines: Iterable[str]) -> list[Sample]:
  """The samples in `nvidia-smi --query-gpu=QUERY --format=csv,noheader,nounits` output; lines
  that are not samples (headers, ``[N/A]`` fields, a line cut off when the sampler stopped) are
  skipped. Timestamps are read in the host's time zone, as `nvidia-smi` prints them."""
  samples = []
  for line in lines:
    fields = [f.strip() for f in line.split(",")]
    if len(fields) != 4:
      continue
    try:
      when = datetime.datetime.strptime(fields[0], TIME_FORMAT).timestamp()
      samples.append(Sample(when, *(float(f) for f in fields[1:])))
    except ValueError:
      continue
  return samples


@dataclasses.dataclass(frozen=True)
class Summary:
  """The samples inside a contender's timing windows: how many, how many busy (above the busy
  power), and over the busy ones the SM clock's median and minimum, the power's median and the
  highest temperature."""

  samples: int
  busy: int
  sm_mhz_median: float
  sm_mhz_min: float
  power_w_median: float
  temp_c_max: float

  def describe(self) -> str:
    return (f"{self.busy} busy samples of {self.samples}; SM clock median "
            f"{self.sm_mhz_median:.0f} MHz (min {self.sm_mhz_min:.0f}), power median "
            f"{self.power_w_median:.0f} W, temperature max {self.temp_c_max:.0f} C")


def summarize(samples: Sequence[Sample], windows: Sequence[tuple[float, float]],
              busy_watts: float) -> Summary | None:
  """`samples` inside any of `windows` ((start, end) seconds), summarized over those drawing more
  than `busy_watts`; None when none does."""
  inside = [s for s in samples if any(a <= s.time <= b for a, b in windows)]
  busy = [s for s in inside if s.power_w > busy_watts]
  if not busy:
    return None
  return Summary(len(inside), len(busy), statistics.median(s.sm_mhz for s in busy),
                 min(s.sm_mhz for s in busy), statistics.median(s.power_w for s in busy),
                 max(s.temp_c for s in busy))


class Sampler:
  """Runs ``SMI --query-gpu=QUERY --format=csv,noheader,nounits -lms INTERVAL`` while in its
  `with` block; `samples()` reads what it printed."""

  def __init__(self, smi: str, interval_ms: int):
    self._command = [smi, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits",
                     "-lms", str(interval_ms)]
    self._out = tempfile.TemporaryFile(mode="w+")
    self._process: subprocess.Popen[Any] | None = None

  def __enter__(self) -> "Sampler":
    try:
      self._process = subprocess.Popen(self._command, stdout=self._out,
                                       stderr=subprocess.DEVNULL)
    except OSError as e:
      raise RuntimeError(f"--smi: cannot run {self._command[0]!r} ({e}); it samples the GPU's "
                         "clock and power (nvidia-smi on the GPU machine)") from e
    return self

  def __exit__(self, *exc: Any) -> None:
    assert self._process is not None
    self._process.terminate()
    self._process.wait()

  def samples(self) -> list[Sample]:
    self._out.seek(0)
    return parse_samples(self._out)


def time_case(case: Any, names: Sequence[str], rounds: int, iterations: int
              ) -> dict[str, tuple[list[float], list[tuple[float, float]]]]:
  """name -> (each round's median ms, each round's wall-clock window) for `case`'s contenders
  named in `names`, timed in turn round after round."""
  from pjrtkit import kernels as pk  # pylint: disable=g-import-not-at-top
  from tools.bench import compare_contenders as cc  # pylint: disable=g-import-not-at-top

  args = cc.make_inputs(case)
  runs = {}
  for contender in cc.contenders_for(case.op, names):
    if contender.name not in names:
      continue
    fn = cc.phase_function(contender.make(case), case)
    f_std, a = pk.benchmarking.standardize_function(fn, *args)
    runs[contender.name] = (pk.benchmarking.compile_benchmark(f_std, a), a, [], [])
  for _ in range(rounds):
    for run, a, times, windows in runs.values():
      start = time.time()
      times.append(run(a, iterations=iterations).median_evaluation_time_ms)
      windows.append((start, time.time()))
  return {name: (times, windows) for name, (_, _, times, windows) in runs.items()}


def main(argv: Sequence[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("cases", help="comma-separated ids of tools/bench/compare_cases")
  parser.add_argument("--rounds", type=int, default=6)
  parser.add_argument("--iterations", type=int, default=40)
  parser.add_argument("--contenders", default=",".join(DEFAULT_CONTENDERS),
                      help="comma-separated contender names of the comparison")
  parser.add_argument("--interval-ms", type=int, default=50)
  parser.add_argument("--busy-watts", type=float, default=200.0)
  parser.add_argument("--quick", action="store_true", help="the comparison's small shapes")
  parser.add_argument("--smi", default="nvidia-smi")
  args = parser.parse_args(argv)
  for flag in ("rounds", "iterations", "interval_ms"):
    if getattr(args, flag) < 1:
      parser.error(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
  from tools.bench import compare_cases  # pylint: disable=g-import-not-at-top
  from tools.bench import compare_contenders as cc  # pylint: disable=g-import-not-at-top

  try:
    cases = compare_cases.select(args.cases.split(","), quick=args.quick)
  except ValueError as e:
    parser.error(f"cases: {e}")
  names = [n.strip() for n in args.contenders.split(",") if n.strip()]
  for case in cases:
    known = [c.name for c in cc.contenders_for(case.op)]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
      parser.error(f"--contenders: {unknown or 'none given'} for {case.id}; accepted: {known}")
  with Sampler(args.smi, args.interval_ms) as sampler:
    timed = [(case, time_case(case, names, args.rounds, args.iterations)) for case in cases]
  samples = sampler.samples()
  print(f"{len(samples)} samples every {args.interval_ms} ms", flush=True)
  for case, by_name in timed:
    unit = compare_cases.throughput_unit(case.op)
    for name, (times, windows) in by_name.items():
      ms = statistics.median(times)
      summary = summarize(samples, windows, args.busy_watts)
      print(f"{case.id} {name}: {ms:.4f} ms {compare_cases.throughput(case, ms):.2f} {unit} "
            f"rounds {' '.join(f'{compare_cases.throughput(case, t):.2f}' for t in times)}; "
            f"{summary.describe() if summary else 'no busy samples in its windows'}", flush=True)
  return 0


if __name__ == "__main__":
  raise SystemExit(main(sys.argv[1:]))
