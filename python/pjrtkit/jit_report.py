"""Runs a Python script on pjrtkit and reports, per jitted function, what JAX compiled and why.

Usage:
  python -m pjrtkit.jit_report [--platform pjrtkit] [--cache-dir DIR] [--json FILE] \\
      script.py [script args...]

For every ``jax.jit`` function the script calls, the report gives the number of calls and of
compilations, the reason for each compilation (first call, shape, dtype, weak type, sharding,
static argument, tree structure, trace context, argument placement), the compile time (tracing
+ lowering + backend) against the mean execution time, and the calls served by JAX's in-memory
cache and the executables loaded from the persistent cache (``--cache-dir`` turns that cache on
with no size or time threshold). While recording, each call waits for its outputs so that it
can be timed. See ``pjrtkit._jit_recorder`` for the hooks used.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import traceback
from typing import Sequence

from pjrtkit import _jit_records as records
from pjrtkit._jit_recorder import JitRecorder


def _ms(seconds: float | None) -> str:
  return "n/a" if seconds is None else f"{seconds * 1e3:.3f} ms"


def format_report(report: records.Report) -> str:
  """The human-readable report."""
  lines = [f"== pjrtkit jit report: {report.script} (platform {report.platform}, "
           f"jax {report.jax_version}) =="]
  for f in report.functions:
    lines.append("")
    lines.append(f"{f.name}  ({f.location})" if f.location else f.name)
    lines.append(f"  calls {f.calls} | compilations {len(f.compiles)} | in-memory cache hits "
                 f"{f.in_memory_hits} | persistent cache hits {f.persistent_cache_hits}")
    lines.append(f"  compile time {_ms(f.compile_s)} | mean execution {_ms(f.mean_execute_s)}")
    for i, c in enumerate(f.compiles, 1):
      what = ", ".join(c.reasons) + (f" ({c.detail})" if c.detail else "")
      source = " [persistent cache]" if c.persistent_cache_hit else ""
      lines.append(f"  #{i} at call {c.call}: {what}; {_ms(c.total_s)}{source}")
  if not report.functions:
    lines.append("(no jitted function was called)")
  lines.append("")
  lines.append(f"other compilations (eager ops, pmap, AOT): {report.other_compiles}, "
               f"{report.other_persistent_cache_hits} from the persistent cache")
  return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(
      prog="python -m pjrtkit.jit_report",
      description="Run a script on pjrtkit and report jit compilations and their reasons.")
  parser.add_argument("--platform", default="pjrtkit",
                      help="value for jax_platforms (default: pjrtkit)")
  parser.add_argument("--cache-dir", help="turn on JAX's persistent compilation cache here")
  parser.add_argument("--json", help="also write the report as JSON to this file")
  parser.add_argument("script", help="the Python script to run")
  parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
  return parser


def fence_problems(jax_version: str) -> list[str]:
  """Why the recompile reasons may read 'unknown' on this JAX (empty on a tested release).

  The reasons come from the text JAX logs (``_jit_explain`` parses it with regular
  expressions); ``jax_plugins.pjrtkit._jax_internals`` names that text and checks it is still
  what the expressions expect, on the releases pjrtkit tests (``_jax_compat.TESTED_JAX_RANGE``).
  """
  from jax_plugins.pjrtkit import _jax_compat  # pylint: disable=g-import-not-at-top
  from jax_plugins.pjrtkit import _jax_internals  # pylint: disable=g-import-not-at-top

  if not _jax_compat.is_tested_version(jax_version):
    return [f"jax {jax_version} is outside the range jit_report was checked on "
            f"({_jax_compat.tested_range_text()})"]
  return _jax_internals.problems([_jax_internals.JIT_REPORT])


def main(argv: Sequence[str] | None = None) -> int:
  """Runs the script under the recorder, prints the report; returns the script's exit code."""
  parser = _parser()
  args = parser.parse_args(argv)
  if not os.path.isfile(args.script):
    parser.error(f"no such script: {args.script}")
  import jax  # pylint: disable=g-import-not-at-top

  jax.config.update("jax_platforms", args.platform)
  problems = fence_problems(jax.__version__)
  if problems:
    print("pjrtkit.jit_report: warning: the recompile reasons may read 'unknown' (JAX's "
          f"explanations changed): {'; '.join(problems)}", file=sys.stderr)
  if args.cache_dir:
    jax.config.update("jax_compilation_cache_dir", args.cache_dir)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
  script = os.path.abspath(args.script)
  exit_code = 0
  saved_argv, saved_path = sys.argv, list(sys.path)
  sys.argv = [script, *args.args]
  sys.path.insert(0, os.path.dirname(script))
  with JitRecorder() as recorder:
    try:
      runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
      exit_code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception:  # pylint: disable=broad-except
      traceback.print_exc()  # the script failed: still report what it compiled so far
      exit_code = 1
    finally:
      sys.argv, sys.path[:] = saved_argv, saved_path
  report = recorder.report(args.script)
  sys.stdout.flush()
  print(format_report(report))
  if args.json:
    with open(args.json, "w", encoding="utf-8") as f:
      json.dump(report.to_json(), f, indent=1)
  return exit_code


if __name__ == "__main__":
  sys.exit(main())
