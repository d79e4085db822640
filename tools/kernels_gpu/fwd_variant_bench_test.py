"""fwd_variant_bench's command line and contenders on the CPU (its kernels run on a GPU only)."""

from __future__ import annotations

import dataclasses
import sys
import types

import pytest

from tools.kernels_gpu import fwd_variant_bench as bench


def _fake_variant(with_lse_field: bool) -> types.ModuleType:
  """A module shaped like mosaic_fwd whose `forward` records the geometry it was given."""
  fields = [("batch", int), ("heads", int), ("kv_heads", int), ("q_len_padded", int),
            ("kv_len", int), ("kv_len_padded", int), ("head_dim", int), ("block_q", int),
            ("block_kv", int), ("stages", int), ("scale", float), ("causal", bool),
            ("programs", int)]
  if with_lse_field:
    fields.append(("with_lse", bool, dataclasses.field(default=True)))
  module = types.ModuleType("fake_fwd")
  module.FwdGeometry = dataclasses.make_dataclass("FwdGeometry", fields, frozen=True)
  module.seen = []
  module.forward = lambda q, k, v, g: module.seen.append(g) or (q, None)
  return module


def test_unknown_cases_are_refused_naming_the_accepted_ones(capsys):
  with pytest.raises(SystemExit):
    bench.main(["variant.py", "A2,A9"])
  err = capsys.readouterr().err
  assert "cases: unknown ['A9']" in err and "'A1', 'A2', 'A3', 'A5', 'P', 'S'" in err


def test_rounds_must_be_positive(capsys):
  with pytest.raises(SystemExit):
    bench.main(["variant.py", "A2", "--rounds", "0"])
  assert "--rounds must be >= 1, got 0" in capsys.readouterr().err


def test_without_lse_needs_the_field():
  with pytest.raises(SystemExit, match="has no with_lse field"):
    bench._contenders(_fake_variant(False), "S", without_lse=True, tokamax=False)


def test_contenders_build_the_case_geometry_with_and_without_lse():
  variant = _fake_variant(True)
  contenders = bench._contenders(variant, "S", without_lse=True, tokamax=False)
  assert list(contenders) == ["shipped", "variant", "variant without lse"]
  contenders["variant"](1, 2, 3)
  contenders["variant without lse"](1, 2, 3)
  g, g_no_lse = variant.seen
  # S: 3x1024x4x64, 128-key steps, 2 stages, 5 programs.
  assert (g.batch, g.q_len_padded, g.heads, g.head_dim, g.block_kv, g.stages, g.programs,
          g.causal) == (3, 1024, 4, 64, 128, 2, 5, False)
  assert g.with_lse and not g_no_lse.with_lse


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
