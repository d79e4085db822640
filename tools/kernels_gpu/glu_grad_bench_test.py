"""tools/kernels_gpu/glu_grad_bench.py on the CPU: shape parsing, and a whole run at a tiny shape
(every pjrtkit contender runs, the input-dtype variant's gradients within bfloat16 rounding of
pjrtkit "xla"'s, rows written to the output files)."""

from __future__ import annotations

import json
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import pytest  # noqa: E402

from tools.kernels_gpu import glu_grad_bench as gb  # noqa: E402


def test_shapes_parse_and_bad_entries_are_named():
  assert gb.parse_shapes("8x16x32,1x2x3") == [(8, 16, 32), (1, 2, 3)]
  with pytest.raises(ValueError, match="'8x16' is not MxKxN"):
    gb.parse_shapes("8x16")
  with pytest.raises(ValueError, match="'0x2x3' is not MxKxN"):
    gb.parse_shapes("0x2x3")
  with pytest.raises(ValueError, match="names no shape"):
    gb.parse_shapes(",")


def test_a_run_at_a_tiny_shape(tmp_path, capsys):
  rc = gb.main(["--shapes", "64x32x48", "--rounds", "2", "--iterations", "2", "--out",
                str(tmp_path)])
  printed = capsys.readouterr().out
  platform = printed.split("device: ")[1].split()[0]
  rows = json.loads((tmp_path / f"glu_grad_{platform}.json").read_text())
  by_name = {r["contender"]: r for r in rows}
  ours = ["pk xla", "pk None", "xla, gradient products in input dtype",
          "jnp autodiff (one einsum)"]
  assert list(by_name)[:4] == ours
  for name in ours:
    assert "error" not in by_name[name], by_name[name]
    assert len(by_name[name]["rounds"]) == 2
  assert by_name["pk xla"]["max|d|"] == 0.0 and by_name["pk xla"]["vs pk xla"] == 1.0
  # Off a GPU every product is summed in float32 and rounded once: None (the rule's "xla" at
  # this size) and the input-dtype variant give pjrtkit "xla"'s gradients bit for bit; JAX's
  # autodiff may round its intermediate cotangents elsewhere (XLA:CPU from xla-cpu-pjrt does
  # not; jaxlib's CPU backend does: bfloat16 rounding, at most a few 2**-8 relative).
  assert by_name["pk None"]["max|d|"] == 0.0
  assert by_name["xla, gradient products in input dtype"]["max|d|"] == 0.0
  assert by_name["jnp autodiff (one einsum)"]["max|d|"] <= 2e-2
  errors = [r["contender"] for r in rows if "error" in r]
  assert all(name.startswith("tokamax ") for name in errors), errors  # Tokamax's GPU kernels
  assert rc == (1 if errors else 0)
  assert "| 64x32x48 | pk xla | " in printed


def test_bad_arguments_exit_2(capsys):
  with pytest.raises(SystemExit) as e:
    gb.main(["--shapes", "8x16"])
  assert e.value.code == 2
  assert "'8x16' is not MxKxN" in capsys.readouterr().err
  with pytest.raises(SystemExit) as e:
    gb.main(["--iterations", "0"])
  assert e.value.code == 2


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
