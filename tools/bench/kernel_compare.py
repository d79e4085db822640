"""GPU kernel comparison (issue 13): pjrtkit.kernels' implementations against cuDNN, XLA and
Tokamax on the same device in one process, timed with CUPTI kernel time (medians).

  python -m tools.bench.kernel_compare --out DIR [--cases A1,L3] [--iterations N] [--rounds R]
      [--quick]
      [--contenders ours,cudnn,jax,tokamax,xla or names: pk_None,tokamax_mosaic,...]
      [--platforms pjrtkit,cuda]
      [--ours-only pjrtkit] [--method cupti|wallclock|profiler]
  python -m tools.bench.kernel_compare merge A.json [B.json] --out DIR   (pjrtkit / cuda times)

Cases, contenders and throughput conventions come from the op folders: each
``kernels/<op>/benchmark.py`` declares its ``BENCHMARK`` (`pjrtkit.kernels.core.comparison`), its
cases listed in ``kernels/<op>/arg_specs.py``; `compare_cases` and `compare_contenders` find them.
The correctness guard: `compare_measure`. Writes ``kernel_compare_<platforms>.{md,json,png}`` into
--out after every case (a run cut by a time limit keeps what it measured).

Without --platforms the comparison runs on JAX's default device (choose it with JAX_PLATFORMS).
``--platforms pjrtkit,cuda`` measures each platform's first device in this one process (run with
``JAX_PLATFORMS=pjrtkit,cuda XLA_PYTHON_CLIENT_PREALLOCATE=false``; inputs are made on, and
kernels traced for, each device through ``jax.default_device``); ``--ours-only pjrtkit`` runs only
pjrtkit.kernels' implementations there (all that the pjrtkit / cuda ratio needs).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.metadata
import platform as platform_lib
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import jax

from pjrtkit import kernels as pk
from pjrtkit.kernels.core import device as device_lib
from tools.bench import compare_cases
from tools.bench import compare_contenders as cc
from tools.bench import compare_measure as cm
from tools.bench import compare_merge
from tools.bench import compare_report
from tools.bench.config import DEFAULT_OUT


def platform_label(device: jax.Device) -> str:
  """``cuda`` for JAX's CUDA backend (whose devices say ``gpu``), else the device's platform."""
  return "cuda" if device.platform in ("gpu", "cuda") else device.platform


def resolve_devices(platforms: Sequence[str]) -> list[jax.Device]:
  """The first device of each named backend, or JAX's default device when none is named."""
  if not platforms:
    return [jax.devices()[0]]
  return [jax.devices(p)[0] for p in platforms]


def _version(dist: str) -> str:
  try:
    return importlib.metadata.version(dist)
  except importlib.metadata.PackageNotFoundError:
    return "not installed"


def _tokamax_version() -> str:
  try:
    return importlib.import_module("tokamax").__version__
  except Exception as e:  # pylint: disable=broad-except
    return f"not importable ({cc.reason_of(e)})"


def method_for(device: jax.Device, requested: str | None) -> str:
  """`requested`, else pjrtkit.kernels' default for `device`: CUPTI kernel time on NVIDIA GPUs
  (JAX's profiler trace where jaxlib has no CUPTI extension; the tables name the method)."""
  if requested:
    return requested
  with jax.default_device(device):
    return pk.benchmarking.default_method()


def _parser() -> argparse.ArgumentParser:
  p = argparse.ArgumentParser(prog="python -m tools.bench.kernel_compare", description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("--out", type=Path, default=DEFAULT_OUT)
  p.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
  p.add_argument("--iterations", type=int, default=None, help="timed calls (default 10; 3 quick)")
  p.add_argument("--rounds", type=int, default=3,
                 help="interleaved timing rounds per case (default 3): each times every "
                      "contender in turn; a contender's time is the median of its round medians")
  p.add_argument("--quick", action="store_true", help="small shapes: a smoke test, not numbers")
  p.add_argument("--contenders", default="", help="groups or names to run (default: all)")
  p.add_argument("--platforms", default="", help="backends measured in this process, in turn")
  p.add_argument("--ours-only", default="", help="platforms where only pjrtkit.kernels runs")
  p.add_argument("--method", default=None, choices=pk.benchmarking.METHODS)
  p.add_argument("--no-png", action="store_true")
  return p


def _split(text: str) -> list[str]:
  return [t.strip() for t in text.split(",") if t.strip()]


def run(argv: Sequence[str] | None = None,
        extra_contenders: Sequence[cc.Contender] = (),
        log: Callable[[str], None] = lambda s: print(s, flush=True)) -> dict[str, Any]:
  """Runs the comparison; returns the document it wrote (see compare_report).

  Args:
    argv: the command line (without the program name).
    extra_contenders: contenders appended to the built-in ones of their op (tests).
    log: receives one line per measurement.
  """
  a = _parser().parse_args(argv)
  cases = compare_cases.select(_split(a.cases), a.quick)
  iterations = a.iterations or (3 if a.quick else 10)
  if a.rounds < 1:
    raise ValueError(f"--rounds must be at least 1, got {a.rounds}")
  devices = resolve_devices(_split(a.platforms))
  only, ours_only = _split(a.contenders), set(_split(a.ours_only))
  cc.check_selection(only)
  runs = [{"platform": platform_label(d), "device": device_lib.describe_device(d).describe(),
           "method": method_for(d, a.method), "rows": []} for d in devices]
  doc = {"meta": {
      "date": datetime.datetime.now().isoformat(timespec="seconds"), "argv": list(argv or []),
      "jax": jax.__version__, "jaxlib": _version("jaxlib"), "tokamax": _tokamax_version(),
      "triton": _version("triton"), "python": platform_lib.python_version(),
      "method": ", ".join(sorted({r["method"] for r in runs})), "iterations": iterations,
      "rounds": a.rounds,
      "quick": a.quick,
      "conventions": {b.name: b.convention for b in compare_cases.op_benchmarks()},
      "tolerances": {"fwd": cm.TOLERANCE_FWD, "grad": cm.TOLERANCE_GRAD}},
      "cases": {}, "runs": runs}
  stem = "kernel_compare_" + "-".join(r["platform"] for r in runs)
  log(f"kernel_compare: {', '.join(r['device'] for r in runs)}; tokamax "
      f"{doc['meta']['tokamax']}; {len(cases)} cases, {iterations} iterations")
  for case in cases:
    doc["cases"][case.id] = compare_report.case_info(case)
    for device, run_doc in zip(devices, runs):
      groups = [cc.OURS] if run_doc["platform"] in ours_only else only
      contenders = cc.contenders_for(case.op, groups) + [
          c for c in extra_contenders if c.op == case.op]
      results = cm.measure_case(case, contenders, device, iterations, run_doc["method"], log,
                                rounds=a.rounds)
      run_doc["rows"] += compare_report.annotate(case, results)
    compare_report.write(doc, a.out, stem, png=not a.no_png)
  log(f"wrote {a.out / stem}.{{json,md{'' if a.no_png else ',png'}}}")
  return doc


def main(argv: Sequence[str] | None = None) -> int:
  """The command line: the comparison, or ``merge ...`` (see compare_merge)."""
  argv = list(sys.argv[1:] if argv is None else argv)
  if argv[:1] == ["merge"]:
    return compare_merge.main(argv[1:])
  doc = run(argv)
  print(compare_report.markdown(doc), flush=True)
  return 0


if __name__ == "__main__":
  sys.exit(main())
