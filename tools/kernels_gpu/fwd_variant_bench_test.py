"""fwd_variant_bench's command line and contenders on the CPU (its kernels run on a GPU only)."""

from __future__ import annotations

import dataclasses
import sys
import types
from typing import Any

import pytest

from tools.kernels_gpu import fwd_variant_bench as bench


def _fake_variant(with_lse_field: bool, name: str = "fake_fwd",
                  post_init: Any = None) -> types.ModuleType:
  """A module shaped like mosaic_fwd whose `forward` records the geometry it was given (and
  whose FwdGeometry runs `post_init`, where given, as its __post_init__)."""
  fields = [("batch", int), ("heads", int), ("kv_heads", int), ("q_len_padded", int),
            ("kv_len", int), ("kv_len_padded", int), ("head_dim", int), ("block_q", int),
            ("block_kv", int), ("stages", int), ("scale", float), ("causal", bool),
            ("programs", int)]
  if with_lse_field:
    fields.append(("with_lse", bool, dataclasses.field(default=True)))
  module = types.ModuleType(name)
  namespace = {"__post_init__": post_init} if post_init else {}
  module.FwdGeometry = dataclasses.make_dataclass("FwdGeometry", fields, frozen=True,
                                                  namespace=namespace)
  module.seen = []
  module.forward = lambda q, k, v, g: module.seen.append(g) or (q, None)
  return module


def test_unknown_cases_are_refused_naming_the_accepted_ones(capsys):
  with pytest.raises(SystemExit):
    bench.main(["variant.py", "A2,A9"])
  err = capsys.readouterr().err
  assert "cases: unknown ['A9']" in err and "'A1', 'A2', 'A2p', 'A3', 'A5', 'S', 'P'" in err


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


def test_several_copies_are_named_and_each_built_with_and_without_lse():
  a, b = _fake_variant(True, "a"), _fake_variant(True, "b")
  contenders = bench._contenders({"a": a, "b": b}, "A2", without_lse=True, tokamax=False)
  assert list(contenders) == ["shipped", "a", "a without lse", "b", "b without lse"]
  for name in ("a", "a without lse", "b without lse"):
    contenders[name](1, 2, 3)
  assert [g.with_lse for g in a.seen] == [True, False]
  assert [g.with_lse for g in b.seen] == [False]
  # A2: causal 1x16384x16x128 on 2048 programs (one tile each).
  assert (b.seen[0].causal, b.seen[0].programs, b.seen[0].q_len_padded) == (True, 2048, 16384)


def test_copies_with_the_same_file_stem_are_refused(capsys):
  with pytest.raises(SystemExit):
    bench.main(["/x/fwd.py,/y/fwd.py", "A2"])
  assert "paths: the file stems must differ, got ['fwd', 'fwd']" in capsys.readouterr().err


def test_empty_paths_and_reserved_stems_are_refused(capsys):
  with pytest.raises(SystemExit):
    bench.main(["/x/a.py,", "A2"])
  assert "paths: an empty path in '/x/a.py,'" in capsys.readouterr().err
  with pytest.raises(SystemExit):
    bench.main(["/x/shipped.py,/y/b.py", "A2"])
  assert ("paths: file stems ['shipped'] name other contenders; rename the copies (reserved: "
          "['shipped', 'tokamax mosaic'])") in capsys.readouterr().err


def test_set_fields_build_the_copies_and_refusing_cases_leave_them_out(capsys):
  def refuse_at_one_tile_per_program(self):
    if self.programs == 2048:
      raise ValueError("no persistent launch")

  variant = _fake_variant(True, post_init=refuse_at_one_tile_per_program)
  contenders = bench._contenders(variant, "A2", without_lse=False, tokamax=False,
                                 fields={"programs": 2048})
  assert list(contenders) == ["shipped"]
  assert "A2 variant: left out (no persistent launch)" in capsys.readouterr().out
  contenders = bench._contenders(variant, "A2p", without_lse=True, tokamax=False,
                                 fields={"stages": 3})
  assert list(contenders) == ["shipped", "variant", "variant without lse"]
  contenders["variant without lse"](1, 2, 3)
  assert (variant.seen[0].stages, variant.seen[0].with_lse) == (3, False)


def test_set_needs_int_values_and_known_fields(capsys, tmp_path):
  with pytest.raises(SystemExit):
    bench.main(["v.py", "A2", "--set", "listed"])
  assert "--set: 'listed' is not FIELD=INT" in capsys.readouterr().err
  with pytest.raises(SystemExit):
    bench.main(["v.py", "A2", "--set", "with_lse=0"])
  assert "--set: with_lse is --without-lse's" in capsys.readouterr().err
  copy = tmp_path / "copy.py"
  copy.write_text("import dataclasses\n\n@dataclasses.dataclass(frozen=True)\n"
                  "class FwdGeometry:\n  programs: int\n")
  with pytest.raises(SystemExit):
    bench.main([str(copy), "A2", "--set", "listed=1,stages=3"])
  assert "--set: variant's FwdGeometry has no field ['listed', 'stages']" in (
      capsys.readouterr().err)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
