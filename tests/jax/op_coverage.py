"""Op coverage of pjrtkit against jaxlib's cpu backend: runner, comparison, table, CLI.

In a child interpreter with ``JAX_PLATFORMS=pjrtkit,cpu`` and ``jax_enable_x64``, every case of
``op_cases.CASES`` is run under ``jax.jit`` on a pjrtkit device and on a cpu device, for every dtype
of ``op_cases.DTYPES``, on the same inputs. Outcome per (op, dtype):

* ``pass``: both ran and agree (integers and bools exactly; floats within ``TOLERANCES``);
* ``n/s``: not supported for this dtype by JAX itself (the cpu backend raises too; the reason is
  cpu's error);
* ``fail``: cpu runs it but pjrtkit raises or disagrees.

Regenerate the committed expectation and the generated section of ``DOCS``
(docs/reference/op-coverage.md; needs a built plugin)::

  PJRTKIT_PLUGIN_LIBRARY=<bazel-bin>/xla_plugin/pjrtkit_plugin.so .venv/bin/python \\
      tests/jax/op_coverage.py --expected tests/jax/op_coverage_expected.txt --write
  # The sim device (TARGETS["sim"]):
  ... tests/jax/op_coverage.py --device sim --expected tests/jax/op_coverage_sim_expected.txt --write

``//tests/jax:op_coverage_test`` checks both (``doc_problems``).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # Run as a script: make `tests` importable.
  sys.path.insert(0, str(Path(os.path.abspath(__file__)).parents[2]))

from tests.jax import op_cases  # pylint: disable=g-import-not-at-top
from tools.pjrt_headers import docs_section  # pylint: disable=g-import-not-at-top

REPO = Path(os.path.abspath(__file__)).parents[2]
DOCS = Path("docs") / "reference" / "op-coverage.md"
"""The doc whose generated section ``SECTION`` holds the coverage table (relative to the repo)."""
SECTION = "op-coverage"


@dataclasses.dataclass(frozen=True)
class Target:
  """A device the coverage runs on: its own expectation file, test and generated section."""
  device: str | None  # PJRTKIT_DEVICE for the child; None: the plugin's own choice (auto).
  label: str          # How the table names the device.
  section: str        # The generated section of DOCS.
  expected: str       # The committed passing pairs (relative to the repo).
  test: str           # The Bazel test that checks both.


TARGETS: dict[str, Target] = {
    "auto": Target(None, "pjrtkit", SECTION, "tests/jax/op_coverage_expected.txt",
                   "//tests/jax:op_coverage_test"),
    "sim": Target("sim", "pjrtkit's sim device (its own compiler and runtime)",
                  "op-coverage-sim", "tests/jax/op_coverage_sim_expected.txt",
                  "//tests/jax:op_coverage_sim_test"),
}
"""``auto``: the device a machine without a GPU gets (xla_cpu); ``sim``: the reference device with
its own StableHLO compiler, whose refusals are the op families it does not compile."""

TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (4e-3, 4e-3),
    "bfloat16": (3e-2, 3e-2),
    "float32": (2e-5, 2e-6),
    "float64": (1e-12, 1e-13),
}
"""(rtol, atol) per floating dtype (complex: per component). XLA:CPU inside pjrtkit is a different
XLA build from jaxlib's, so transcendental approximations may differ by a few ulps."""

LINALG_TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-5),
    "float64": (1e-10, 1e-11),
}
"""(rtol, atol) for linalg results (same LAPACK kernels; surrounding XLA code may reorder)."""

SHORT_DTYPE = {"bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
               "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
               "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
               "complex64": "c64", "complex128": "c128"}


@dataclasses.dataclass(frozen=True)
class Outcome:
  """The result of one (op, dtype).

  Attributes:
    op: the case name.
    group: the case's table section.
    dtype: the dtype name.
    status: "pass", "n/s" or "fail".
    reason: why it is not "pass" (empty for "pass").
  """

  op: str
  group: str
  dtype: str
  status: str
  reason: str = ""


def numpy_dtype(name: str) -> np.dtype:
  """The numpy dtype of a DTYPES name (bfloat16 from ml_dtypes)."""
  if name == "bfloat16":
    import ml_dtypes  # pylint: disable=g-import-not-at-top
    return np.dtype(ml_dtypes.bfloat16)
  return np.dtype(name)


def _real_values(shape: tuple[int, ...], domain: str, dt: np.dtype,
                 rng: np.random.Generator) -> np.ndarray:
  """Values of `domain` for a real (or bool) dtype."""
  if dt == np.bool_:
    return rng.random(shape) > 0.5
  if dt.kind in "iu":
    bits = dt.itemsize * 8
    low = {"any": -20, "positive": 1, "nonzero": 1, "small": 0, "shift": 0, "unit": 0,
           "ge1": 1}[domain]
    high = {"any": 20, "positive": 20, "nonzero": 9, "small": 3, "shift": bits - 1, "unit": 1,
            "ge1": 9}[domain]
    if dt.kind == "u":
      low = max(low, 0)
      high = high if domain != "any" else 40
    values = rng.integers(low, high + 1, size=shape)
    if domain == "nonzero" and dt.kind == "i":
      values *= rng.choice([-1, 1], size=shape)
    return values.astype(dt)
  low, high = {"any": (-3.0, 3.0), "positive": (0.5, 4.0), "unit": (-0.9, 0.9),
               "ge1": (1.1, 4.0), "nonzero": (0.5, 3.0), "small": (0.0, 3.0),
               "shift": (0.0, 3.0)}[domain]
  values = rng.uniform(low, high, size=shape)
  if domain == "nonzero":
    values *= rng.choice([-1.0, 1.0], size=shape)
  if domain == "small":
    values = np.round(values)
  return values.astype(dt)


def _matrices(shape: tuple[int, ...], domain: str, dt: np.dtype,
              rng: np.random.Generator) -> np.ndarray:
  """Well-conditioned square matrices (batched): spd, hermitian or lower triangular."""
  n = shape[-1]
  a = rng.uniform(-1, 1, size=shape)
  if dt.kind == "c":
    a = a + 1j * rng.uniform(-1, 1, size=shape)
  eye = np.eye(n)
  if domain == "spd":
    a = a @ np.conj(np.swapaxes(a, -1, -2)) + n * eye
  elif domain == "hermitian":
    a = a + np.conj(np.swapaxes(a, -1, -2))
  else:  # lower
    a = np.tril(a) + n * eye
  return (a if dt.kind == "c" else np.real(a)).astype(dt)


def make_input(arg: op_cases.Arg, dtype: str, rng: np.random.Generator) -> np.ndarray:
  """Deterministic operand values for `arg` in `dtype`."""
  if arg.domain == "seed":
    return np.uint32(rng.integers(0, 2**31))
  if arg.domain == "bool":
    return rng.random(arg.shape) > 0.5
  if arg.domain.startswith("index:"):
    return rng.integers(0, int(arg.domain.split(":")[1]), size=arg.shape).astype(np.int32)
  dt = numpy_dtype(dtype)
  if arg.domain in ("spd", "hermitian", "lower"):
    return _matrices(arg.shape, arg.domain, dt, rng)
  if dt.kind == "c":
    part = np.float32 if dt == np.complex64 else np.float64
    real = _real_values(arg.shape, arg.domain, np.dtype(part), rng)
    imag = _real_values(arg.shape, arg.domain, np.dtype(part), rng)
    return (real + 1j * imag).astype(dt)
  return _real_values(arg.shape, arg.domain, dt, rng)


def _leaves(value: Any) -> list[np.ndarray]:
  import jax  # pylint: disable=g-import-not-at-top
  return [np.asarray(leaf) for leaf in jax.tree.leaves(value)]


def compare(got: Any, want: Any, kind: str) -> str:
  """'' when `got` (pjrtkit) agrees with `want` (cpu); otherwise what differs."""
  got_leaves, want_leaves = _leaves(got), _leaves(want)
  if len(got_leaves) != len(want_leaves):
    return f"{len(got_leaves)} outputs, cpu has {len(want_leaves)}"
  for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
    if g.shape != w.shape or g.dtype != w.dtype:
      return f"output {i}: {g.dtype}{list(g.shape)}, cpu {w.dtype}{list(w.shape)}"
    if g.dtype.kind in "biu":
      if not np.array_equal(g, w):
        return f"output {i}: integer values differ"
      continue
    name = {"complex64": "float32", "complex128": "float64"}.get(g.dtype.name, g.dtype.name)
    table = LINALG_TOLERANCES if kind == "linalg" and name in LINALG_TOLERANCES else TOLERANCES
    rtol, atol = table[name]
    wide = np.complex128 if g.dtype.kind == "c" else np.float64
    g64, w64 = g.astype(wide), w.astype(wide)
    if not np.allclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True):
      err = np.nanmax(np.abs(g64 - w64))
      return f"output {i}: max |diff| {err:.3g} > rtol {rtol:g} / atol {atol:g}"
  return ""


def _reason(error: BaseException) -> str:
  """The error's type and first sentence (the table's reason)."""
  first = (str(error).strip().splitlines() or [type(error).__name__])[0].split(". ")[0]
  return f"{type(error).__name__}: {first}"[:140]


def run_case(case: op_cases.OpCase, dtype: str, devices: dict[str, Any]) -> Outcome:
  """Runs `case` for `dtype` on the pjrtkit and cpu devices and compares."""
  import jax  # pylint: disable=g-import-not-at-top

  fn, args = _case_inputs(case, dtype)
  results: dict[str, Any] = {}
  for backend, device in devices.items():
    try:
      placed = [jax.device_put(a, device) for a in args]
      results[backend] = jax.tree.map(np.asarray, jax.jit(fn)(*placed))
    except Exception as e:  # pylint: disable=broad-except
      results[backend] = e
  if isinstance(results["cpu"], BaseException):
    return Outcome(case.name, case.group, dtype, "n/s", _reason(results["cpu"]))
  if isinstance(results["pjrtkit"], BaseException):
    return Outcome(case.name, case.group, dtype, "fail", "pjrtkit: " + _reason(results["pjrtkit"]))
  mismatch = compare(results["pjrtkit"], results["cpu"], case.kind)
  if mismatch:
    return Outcome(case.name, case.group, dtype, "fail", "mismatch: " + mismatch)
  return Outcome(case.name, case.group, dtype, "pass")


def _case_inputs(case: op_cases.OpCase, dtype: str) -> tuple[Any, list[np.ndarray]]:
  """The function to jit for `dtype` and its inputs (deterministic per op and dtype)."""
  import functools  # pylint: disable=g-import-not-at-top

  rng = np.random.default_rng(zlib.crc32(f"{case.name}/{dtype}".encode()))
  args = [make_input(arg, dtype, rng) for arg in case.args]
  fn = functools.partial(case.fn, dtype=numpy_dtype(dtype)) if case.kind == "random" else case.fn
  return fn, args


def run_op(case: op_cases.OpCase, devices: dict[str, Any]) -> list[Outcome]:
  """Every dtype of `case`: dtypes JAX rejects while tracing are "n/s"; the others run as ONE
  jitted program per backend (compiles dominate the suite's time), falling back to one program
  per dtype when that batch fails on either backend."""
  import jax  # pylint: disable=g-import-not-at-top

  outcomes: dict[str, Outcome] = {}
  batch: list[tuple[str, Any, list[np.ndarray]]] = []
  for dtype in op_cases.DTYPES:
    fn, args = _case_inputs(case, dtype)
    try:
      jax.eval_shape(fn, *args)
      batch.append((dtype, fn, args))
    except Exception as e:  # pylint: disable=broad-except  (a dtype JAX does not support)
      outcomes[dtype] = Outcome(case.name, case.group, dtype, "n/s", _reason(e))

  def batched(*flat: Any) -> list[Any]:
    out, offset = [], 0
    for _, fn, args in batch:
      out.append(fn(*flat[offset:offset + len(args)]))
      offset += len(args)
    return out

  flat_args = [a for _, _, args in batch for a in args]
  results: dict[str, Any] = {}
  try:
    for backend, device in devices.items():
      placed = [jax.device_put(a, device) for a in flat_args]
      results[backend] = jax.tree.map(np.asarray, jax.jit(batched)(*placed))
  except Exception:  # pylint: disable=broad-except  (find the dtype(s) one by one)
    results = {}
  for i, (dtype, _, _) in enumerate(batch):
    if not results:
      outcomes[dtype] = run_case(case, dtype, devices)
      continue
    mismatch = compare(results["pjrtkit"][i], results["cpu"][i], case.kind)
    outcomes[dtype] = (Outcome(case.name, case.group, dtype, "fail", "mismatch: " + mismatch)
                       if mismatch else Outcome(case.name, case.group, dtype, "pass"))
  return [outcomes[d] for d in op_cases.DTYPES]


def run_all() -> list[Outcome]:
  """Runs every case on every dtype (call in a process with pjrtkit and cpu, x64 on)."""
  import jax  # pylint: disable=g-import-not-at-top

  jax.config.update("jax_enable_x64", True)
  devices = {"pjrtkit": jax.devices("pjrtkit")[0], "cpu": jax.devices("cpu")[0]}
  return [outcome for case in op_cases.CASES for outcome in run_op(case, devices)]


def passing(outcomes: list[Outcome]) -> set[str]:
  """The "op dtype" lines of the passing pairs."""
  return {f"{o.op} {o.dtype}" for o in outcomes if o.status == "pass"}


def _reasons_cell(outcomes: list[Outcome]) -> str:
  by_reason: dict[str, list[str]] = collections.defaultdict(list)
  for o in outcomes:
    if o.status != "pass":
      by_reason[o.reason].append(SHORT_DTYPE[o.dtype])
  parts = [f"{','.join(d)}: {r}" for r, d in by_reason.items()]
  return "; ".join(parts).replace("|", "\\|")


def to_markdown(outcomes: list[Outcome], target: Target = TARGETS["auto"]) -> str:
  """The coverage table: one row per op, one column per dtype, reasons in the last column."""
  counts = collections.Counter(o.status for o in outcomes)
  on = "pjrtkit" if target.device is None else f"pjrtkit ({target.device})"
  lines = [
      f"### Op coverage: {target.label} vs jaxlib's cpu backend",
      "",
      f"Generated by `tests/jax/op_coverage.py` ({len(op_cases.CASES)} ops x "
      f"{len(op_cases.DTYPES)} dtypes, jax_enable_x64 on): every op is jitted on {on} and on "
      "jaxlib's `cpu` backend with the same inputs and compared (integers/bools exactly, floats "
      "within the tolerances below). `ok` = pass; `-` = not supported for that dtype by JAX "
      "itself (cpu raises too); `FAIL` = cpu runs it, pjrtkit does not (or differs).",
      "",
      f"**{counts['pass']} pass, {counts['n/s']} not supported (by JAX, on cpu too), "
      f"{counts['fail']} fail on pjrtkit.** `{target.test}` asserts the passing "
      f"set equals `{target.expected}`.",
      "",
      "Tolerances (rtol, atol): " + ", ".join(f"{k} {v}" for k, v in TOLERANCES.items()) +
      "; linalg " + ", ".join(f"{k} {v}" for k, v in LINALG_TOLERANCES.items()) +
      "; complex per component.",
      "",
      "| group | op | " + " | ".join(SHORT_DTYPE[d] for d in op_cases.DTYPES) +
      " | not supported because |",
      "| --- | --- | " + " | ".join("---" for _ in op_cases.DTYPES) + " | --- |",
  ]
  by_op: dict[str, list[Outcome]] = collections.defaultdict(list)
  for o in outcomes:
    by_op[o.op].append(o)
  mark = {"pass": "ok", "n/s": "-", "fail": "FAIL"}
  for case in op_cases.CASES:
    row = sorted(by_op[case.name], key=lambda o: op_cases.DTYPES.index(o.dtype))
    cells = " | ".join(mark[o.status] for o in row)
    lines.append(f"| {case.group} | {case.name} | {cells} | {_reasons_cell(row)} |")
  return "\n".join(lines) + "\n"


def _status_cells(table: str) -> list[str]:
  """The table's rows without the reasons column (the only text a JAX release may word anew)."""
  return [line.rsplit(" | ", 1)[0] for line in table.splitlines() if line.startswith("| ")]


def doc_problems(doc_text: str, outcomes: list[Outcome], exact: bool,
                 target: Target = TARGETS["auto"]) -> list[str]:
  """What is stale in the generated section of ``DOCS`` against ``outcomes``; empty: none.

  ``exact``: the whole section must be ``to_markdown(outcomes)`` (on the JAX release the table is
  generated with, the newest supported); otherwise every line but the reasons column must match.
  """
  try:
    body = docs_section.extract(doc_text, target.section)
  except docs_section.SectionError as e:
    return [f"{DOCS}: {e}"]
  want = to_markdown(outcomes, target)
  if body == want:
    return []
  if not exact and _status_cells(body) == _status_cells(want) and (
      [l for l in body.splitlines() if not l.startswith("| ")] ==
      [l for l in want.splitlines() if not l.startswith("| ")]):
    return []
  return [f"{DOCS}: the {target.section} table differs from what op_coverage.py writes now; "
          f"regenerate it with `tests/jax/op_coverage.py --device {target.device or 'auto'} "
          "--write`"]


def run_child(env: dict[str, str], timeout: float = 900) -> list[Outcome]:
  """Runs `run_all` in a child interpreter (JAX_PLATFORMS=pjrtkit,cpu) and returns its outcomes."""
  env = dict(env, JAX_PLATFORMS="pjrtkit,cpu", JAX_ENABLE_X64="1")
  root = str(Path(os.path.abspath(__file__)).parents[2])
  env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(
      os.pathsep) if p])
  proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env,
                        capture_output=True, text=True, timeout=timeout, check=False)
  if proc.returncode != 0:
    raise RuntimeError(f"op coverage child failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n"
                       f"{proc.stderr[-8000:]}")
  payload = proc.stdout.strip().splitlines()[-1]
  return [Outcome(**o) for o in json.loads(payload)]


def main(argv: list[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--child", action="store_true", help="run the cases here, print JSON")
  parser.add_argument("--expected", help="write the passing pairs to this file")
  parser.add_argument("--markdown", help="write the coverage table to this file")
  parser.add_argument("--write", action="store_true",
                      help=f"rewrite the device's generated section of {DOCS}")
  parser.add_argument("--device", choices=sorted(TARGETS), default="auto",
                      help="the device to cover (default: auto, the plugin's own choice)")
  args = parser.parse_args(argv)
  target = TARGETS[args.device]
  if args.child:
    print(json.dumps([dataclasses.asdict(o) for o in run_all()]))
    return 0
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  if target.device is not None:
    env["PJRTKIT_DEVICE"] = target.device
  outcomes = run_child(env)
  if args.expected:
    Path(args.expected).write_text("\n".join(sorted(passing(outcomes))) + "\n")
  if args.markdown:
    Path(args.markdown).write_text(to_markdown(outcomes, target))
  if args.write:
    doc = REPO / DOCS
    doc.write_text(docs_section.replace(doc.read_text(), target.section,
                                        to_markdown(outcomes, target)))
    print(f"wrote {DOCS} ({target.section})")
  counts = collections.Counter(o.status for o in outcomes)
  print(f"pass {counts['pass']}, n/s {counts['n/s']}, fail {counts['fail']}")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
