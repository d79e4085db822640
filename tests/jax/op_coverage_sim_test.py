"""Op coverage of pjrtkit's sim device against jaxlib's cpu backend (see op_coverage.py).

The same run as op_coverage_test with ``PJRTKIT_DEVICE=sim``: every op of ``op_cases`` on every
dtype, compiled by the sim device's own StableHLO compiler and run by its runtime. The passing set
must equal ``op_coverage_sim_expected.txt``, what fails must be refused by name (never a wrong
answer), and docs/reference/op-coverage.md's sim section must be current.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import pytest

from tests.jax import op_coverage
from tests.testing.plugin_env import plugin_env
from tests.testing.plugin_env import plugin_library
from tests.testing.plugin_env import runfiles_root

_TARGET = op_coverage.TARGETS["sim"]
_EXPECTED = Path(__file__).resolve().with_name(Path(_TARGET.expected).name)


@pytest.fixture(scope="module")
def outcomes() -> list[op_coverage.Outcome]:
  return op_coverage.run_child(plugin_env(PJRTKIT_DEVICE="sim"))


def test_passing_pairs_equal_the_committed_expectation(outcomes):
  want = set(_EXPECTED.read_text().split("\n")) - {""}
  got = op_coverage.passing(outcomes)
  why = {f"{o.op} {o.dtype}": f"{o.status}: {o.reason}" for o in outcomes}
  lost = sorted(want - got)
  gained = sorted(got - want)
  assert not lost, "no longer passing on sim:\n" + "\n".join(f"{p}: {why[p]}" for p in lost)
  assert not gained, ("newly passing (update op_coverage_sim_expected.txt):\n" +
                      "\n".join(gained))


def test_every_failure_is_a_named_refusal_not_a_wrong_answer(outcomes):
  failures = [o for o in outcomes if o.status == "fail"]
  assert failures  # FFT, the linear-algebra custom calls and complex atan2 and clamp are refused.
  # Refused by the sim compiler (UNIMPLEMENTED naming the op and the device), or by JAX before
  # the plugin sees the program (no lowering rule for platform pjrtkit: eigh, svd, ...).
  def refused(reason: str) -> bool:
    return (("UNIMPLEMENTED" in reason and "sim device" in reason) or
            ("NotImplementedError" in reason and "for platform pjrtkit" in reason))

  wrong = [f"{o.op} {o.dtype}: {o.reason}" for o in failures if not refused(o.reason)]
  assert not wrong, "\n".join(wrong)
  assert {o.op for o in failures} <= {
      "fft", "ifft", "rfft", "irfft", "fft2", "cholesky", "qr", "qr_pivoting", "svd", "eigh",
      "eig", "lu", "solve", "triangular_solve", "tridiagonal", "tridiagonal_solve", "schur",
      "hessenberg", "atan2", "clamp"}


def test_the_docs_table_is_current(outcomes):
  info = json.loads(plugin_library().with_name("build_info.json").read_text(encoding="utf-8"))
  exact = importlib.metadata.version("jax") == info["jax_tested"][1]
  doc = (runfiles_root() / op_coverage.DOCS).read_text(encoding="utf-8")
  assert not op_coverage.doc_problems(doc, outcomes, exact=exact, target=_TARGET)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
