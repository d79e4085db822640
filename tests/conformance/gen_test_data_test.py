"""generated_test_data.cc is what gen_test_data.py produces with the pinned jax/jaxlib."""

from __future__ import annotations

import pathlib
import sys

import pytest

from tests.conformance import gen_test_data


def test_generated_file_is_up_to_date():
  committed = (pathlib.Path(__file__).parent / "generated_test_data.cc").read_text()
  assert gen_test_data.render() == committed, (
      "regenerate: .venv/bin/python tests/conformance/gen_test_data.py")


def test_compile_options_parse_back():
  # compile_options() checks itself through jaxlib; the 1x1 bytes are the documented ones.
  assert gen_test_data.compile_options(1, 1).hex() == "1a0f08ffffffffffffffffff0120012801"


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
