"""Op coverage of pjrtkit against jaxlib's cpu backend (see op_coverage.py).

One child interpreter (JAX_PLATFORMS=pjrtkit,cpu, x64) runs every op on every dtype on both
backends; the set of passing (op, dtype) pairs must equal the committed
``op_coverage_expected.txt`` (regenerate it with ``op_coverage.py --expected`` when coverage
changes on purpose). The comparison helpers are unit-tested here too.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.jax import op_cases
from tests.jax import op_coverage
from tests.testing.plugin_env import plugin_env
from tests.testing.plugin_env import plugin_library
from tests.testing.plugin_env import runfiles_root

_EXPECTED = Path(__file__).resolve().with_name("op_coverage_expected.txt")


@pytest.fixture(scope="module")
def outcomes() -> list[op_coverage.Outcome]:
  return op_coverage.run_child(plugin_env())


def test_passing_pairs_equal_the_committed_expectation(outcomes):
  want = set(_EXPECTED.read_text().split("\n")) - {""}
  got = op_coverage.passing(outcomes)
  why = {f"{o.op} {o.dtype}": f"{o.status}: {o.reason}" for o in outcomes}
  lost = sorted(want - got)
  gained = sorted(got - want)
  assert not lost, "no longer passing on pjrtkit:\n" + "\n".join(f"{p}: {why[p]}" for p in lost)
  assert not gained, ("newly passing (update op_coverage_expected.txt):\n" + "\n".join(gained))


def test_every_op_and_dtype_has_one_outcome(outcomes):
  assert len(outcomes) == len(op_cases.CASES) * len(op_cases.DTYPES)
  assert {(o.op, o.dtype) for o in outcomes} == {
      (c.name, d) for c in op_cases.CASES for d in op_cases.DTYPES}
  assert all(o.reason for o in outcomes if o.status != "pass")


def test_required_families_pass_on_their_main_dtypes(outcomes):
  passed = op_coverage.passing(outcomes)
  for pair in ["sin float32", "exp bfloat16", "add int8", "add uint64", "eq bool",
               "reduce_sum float16", "dot_general complex128", "conv_general_dilated float64",
               "gather int64", "scatter_add uint32", "dynamic_slice bfloat16", "sort float64",
               "cumsum int16", "cumprod float32", "cummax uint8", "fft complex64",
               "irfft float64", "cholesky float32", "qr complex128", "svd float64",
               "eigh complex64", "lu float32", "triangular_solve float64", "eig float64",
               "random_threefry uint32", "random_rbg float32", "cond int32",
               "while_loop float16", "scan complex64", "switch bool"]:
    assert pair in passed, pair


def test_markdown_table(outcomes):
  table = op_coverage.to_markdown(outcomes)
  out_dir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
  if out_dir:
    Path(out_dir, "op_coverage.md").write_text(table)
  rows = [l for l in table.splitlines()
          if l.startswith("| ") and not l.startswith(("| group", "| ---"))]
  assert len(rows) == len(op_cases.CASES)
  counts = {s: sum(o.status == s for o in outcomes) for s in ("pass", "n/s", "fail")}
  assert (f"**{counts['pass']} pass, {counts['n/s']} not supported (by JAX, on cpu too), "
          f"{counts['fail']} fail on pjrtkit.**") in table
  assert "| elementwise unary | sin | - |" in table


def test_the_docs_table_is_current(outcomes):
  """docs/reference/op-coverage.md's generated section is what --write would write now.

  Exactly on the newest supported JAX (the table is generated there); on the oldest, every cell
  but the reasons column, whose text is JAX's own error messages.
  """
  info = json.loads(plugin_library().with_name("build_info.json").read_text(encoding="utf-8"))
  exact = importlib.metadata.version("jax") == info["jax_tested"][1]
  doc = (runfiles_root() / op_coverage.DOCS).read_text(encoding="utf-8")
  assert not op_coverage.doc_problems(doc, outcomes, exact=exact)


def test_compare_is_exact_for_integers_and_bools():
  assert op_coverage.compare(np.array([1, 2], np.int8), np.array([1, 2], np.int8), "plain") == ""
  assert op_coverage.compare(np.array([1, 3], np.int8), np.array([1, 2], np.int8),
                             "plain") == "output 0: integer values differ"
  assert op_coverage.compare(np.array([True]), np.array([False]),
                             "plain") == "output 0: integer values differ"
  assert op_coverage.compare(np.array([1], np.int32), np.array([1], np.int64),
                             "plain") == "output 0: int32[1], cpu int64[1]"


def test_compare_uses_the_dtype_tolerance():
  a = np.array([1.0], np.float32)
  assert op_coverage.compare(a * (1 + 1e-6), a, "plain") == ""
  assert op_coverage.compare(a * (1 + 1e-4), a, "plain").startswith("output 0: max |diff| 0.0001")
  assert op_coverage.compare(a * (1 + 1e-4), a, "linalg") == ""
  assert op_coverage.compare(np.array([np.nan]), np.array([np.nan]), "plain") == ""
  c = np.array([1 + 1j], np.complex64)
  assert op_coverage.compare(c, c + 1e-3j, "plain").startswith("output 0: max |diff|")
  assert op_coverage.compare((a, a), (a,), "plain") == "2 outputs, cpu has 1"


def test_inputs_are_deterministic_and_in_domain():
  rng = lambda: np.random.default_rng(7)  # pylint: disable=unnecessary-lambda-assignment
  arg = op_cases.Arg((5,), "positive")
  np.testing.assert_array_equal(op_coverage.make_input(arg, "float32", rng()),
                                op_coverage.make_input(arg, "float32", rng()))
  assert (op_coverage.make_input(arg, "float64", rng()) > 0).all()
  assert (op_coverage.make_input(arg, "uint8", rng()) >= 1).all()
  shift = op_coverage.make_input(op_cases.Arg((50,), "shift"), "int8", rng())
  assert shift.min() >= 0 and shift.max() <= 7
  spd = op_coverage.make_input(op_cases.Arg((1, 3, 3), "spd"), "complex64", rng())
  assert (np.linalg.eigvalsh(spd) > 0).all()
  assert op_coverage.make_input(op_cases.Arg((), "seed"), "float16", rng()).dtype == np.uint32


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
