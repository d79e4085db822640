"""hlo_test_data.cc is what gen_hlo_test_data.py produces with the pinned jax/jaxlib."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import sys

import pytest

os.environ["JAX_PLATFORMS"] = "cpu"  # Before jax is imported by the generator.

_HERE = pathlib.Path(__file__).parent


def _generator():
  spec = importlib.util.spec_from_file_location("gen_hlo_test_data",
                                                _HERE / "gen_hlo_test_data.py")
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_generated_file_is_up_to_date():
  committed = (_HERE / "hlo_test_data.cc").read_text()
  assert _generator().render() == committed, (
      "regenerate: .venv/bin/python xla_plugin/plugin_wrapper/testdata/gen_hlo_test_data.py")


def test_with_config_wraps_the_module_as_field_one():
  generator = _generator()
  assert generator.with_config(b"\x0a\x01x") == b"\x0a\x03\x0a\x01x"


def test_without_host_program_shape_drops_field_four_only():
  generator = _generator()
  # name = 1 "m", host_program_shape = 4 (empty), entry_computation_id = 6 = 2.
  assert generator.without_host_program_shape(b"\x0a\x01m\x22\x00\x30\x02") == b"\x0a\x01m\x30\x02"


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
