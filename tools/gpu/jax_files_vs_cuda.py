"""JAX's own test files on pjrtkit's xla_gpu device and on JAX's CUDA backend, side by side.

  python3 -m tools.gpu.jax_files_vs_cuda --tests-dir JAXSRC/tests --out OUT [--workers N]
      [--cases N] FILE...

Each file runs once per backend in a fresh pytest session (pytest-xdist workers when it is
installed), with JAX's own pytest settings (its conftest.py and pyproject.toml beside
`--tests-dir`) and tools/jax_suite's child plugin (backends started before collection):

  cuda     JAX_PLATFORMS=cuda,cpu: JAX's CUDA backend, the reference;
  pjrtkit  JAX_PLATFORMS=pjrtkit,cpu, PJRTKIT_DEVICE=xla_gpu, jtu.device_under_test() "gpu".

It writes OUT/<backend>_<file>.xml (junit) and OUT/summary.md, prints the per-file table and every
test that passes on cuda but not on pjrtkit, and exits 1 when there is one (2 when a file ran no
test on a backend). The plugin is the kit's pjrtkit_plugin.so (or bazel-bin's) unless
PJRTKIT_PLUGIN_LIBRARY says. The GPU mode of
tools/jax_suite is the general tool; this script is what the PJRT uplift's check needs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tools.jax_suite import results  # noqa: E402  pylint: disable=g-import-not-at-top

BACKENDS = {
    "cuda": {"JAX_PLATFORMS": "cuda,cpu", "PJRTKIT_JAX_SUITE_BACKEND": "gpu"},
    "pjrtkit": {"JAX_PLATFORMS": "pjrtkit,cpu", "PJRTKIT_JAX_SUITE_BACKEND": "pjrtkit",
                "PJRTKIT_DEVICE": "xla_gpu", "PJRTKIT_JAX_TEST_DUT": "gpu"},
}


def run_file(tests_dir: Path, file: str, backend: str, out: Path, workers: int,
             cases: int) -> Path:
  """Runs one file on one backend; returns its junit XML path."""
  junit = out / f"{backend}_{Path(file).stem}.xml"
  env = dict(os.environ)
  env.update(BACKENDS[backend])
  library = next((p for p in (REPO / "pjrtkit_plugin.so",
                               REPO / "bazel-bin" / "xla_plugin" / "pjrtkit_plugin.so")
                  if p.exists()), None)
  if library is not None:
    env.setdefault("PJRTKIT_PLUGIN_LIBRARY", str(library))
  env.update({
      "JAX_NUM_GENERATED_CASES": str(cases),
      # Every worker shares the one GPU.
      "XLA_PYTHON_CLIENT_MEM_FRACTION": f"{min(0.8 / max(workers, 1), 0.3):.3f}",
      "PYTHONPATH": os.pathsep.join(
          [str(REPO / "tools" / "jax_suite" / "child"), str(REPO / "python"),
           env.get("PYTHONPATH", "")]),
  })
  command = [sys.executable, "-m", "pytest", "-p", "pjrtkit_jax_suite_plugin",
             "-p", "no:cacheprovider", "-p", "no:benchmark", "-q", "-rN", "--tb=line",
             f"--junitxml={junit}", str(tests_dir / file)]
  if workers > 1 and importlib.util.find_spec("xdist") is not None:
    command[3:3] = ["-n", str(workers)]
  log = out / f"{backend}_{Path(file).stem}.log"
  with open(log, "w", encoding="utf-8") as f:
    subprocess.run(command, env=env, cwd=tests_dir.parent, stdout=f, stderr=subprocess.STDOUT,
                   check=False)
  return junit


def main(argv: list[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--tests-dir", type=Path, required=True)
  parser.add_argument("--out", type=Path, required=True)
  parser.add_argument("--workers", type=int, default=8)
  parser.add_argument("--cases", type=int, default=1)
  parser.add_argument("files", nargs="+")
  args = parser.parse_args(argv)
  args.tests_dir = args.tests_dir.resolve()
  args.out = args.out.resolve()
  args.out.mkdir(parents=True, exist_ok=True)
  lines = ["| file | cuda passed / failed / skipped | pjrtkit passed / failed / skipped |"
           " pass on cuda, not on pjrtkit |", "| --- | --- | --- | --- |"]
  regressions: list[str] = []
  for file in args.files:
    got = {}
    for backend in BACKENDS:
      junit = run_file(args.tests_dir, file, backend, args.out, args.workers, args.cases)
      text = junit.read_text(encoding="utf-8") if junit.exists() else "<testsuites/>"
      got[backend] = results.parse_junit(text, Path(file).stem)
      if not got[backend]:
        print(f"jax_files_vs_cuda: no test of {file} ran on {backend}; see "
              f"{args.out / (backend + '_' + Path(file).stem + '.log')}", file=sys.stderr)
        return 2
    cells = []
    for backend in BACKENDS:
      counts = results.count(got[backend].values())
      cells.append(f"{counts.get('passed', 0)} / {counts.get('failed', 0) + counts.get('error', 0)}"
                   f" / {counts.get('skipped', 0)}")
    worse = sorted(test for test, result in got["cuda"].items()
                   if result.outcome == "passed" and
                   (test not in got["pjrtkit"] or got["pjrtkit"][test].outcome != "passed"))
    for test in worse:
      theirs = got["pjrtkit"].get(test)
      regressions.append(f"{test}: {theirs.outcome if theirs else 'not run'}"
                         f"{': ' + results.first_line(theirs.message) if theirs else ''}")
    lines.append(f"| {file} | {cells[0]} | {cells[1]} | {len(worse)} |")
  summary = "\n".join(lines + [""] + [f"- {r}" for r in regressions]) + "\n"
  (args.out / "summary.md").write_text(summary, encoding="utf-8")
  print(summary)
  return 1 if regressions else 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
