"""tools.kernels_gpu.determinism_bench on pjrtkit's CPU device: shapes parsed and refused by name,
XLA_FLAGS set only while tracing, bitwise comparison, and a whole run at tiny shapes (the XLA
implementations' two variants identical and bitwise reproducible; an implementation the device
cannot run reported with its reason and the exit status 1)."""

from __future__ import annotations

import json
import os
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax.numpy as jnp  # noqa: E402
import pytest  # noqa: E402

from tools.kernels_gpu import determinism_bench as db  # noqa: E402


def test_shapes_are_parsed_with_grouped_heads_and_causal():
  assert db.parse_shapes("32x2048x16x64, 1x4096x32x8x128:causal") == [
      db.Shape(32, 2048, 16, 16, 64, False), db.Shape(1, 4096, 32, 8, 128, True)]
  assert db.Shape(1, 4096, 32, 8, 128, True).label == "1x4096x32/8x128 causal"
  assert db.Shape(2, 64, 4, 4, 32, False).label == "2x64x4x32"


@pytest.mark.parametrize("text, message", [
    ("32x2048x16", r"--shapes entry '32x2048x16': accepted BxTxHxD or BxTxHxKxD"),
    ("2x64x4x0x32", r"--shapes entry '2x64x4x0x32': accepted BxTxHxD or BxTxHxKxD"),
    ("2x64x4x32:sliding", r"--shapes entry '2x64x4x32:sliding': the suffix must be ':causal'"),
    ("2x64x6x4x32", r"query heads 6 are not a multiple of key-value heads 4"),
    (" , ", r"--shapes: no shape given"),
])
def test_bad_shapes_are_refused_by_name(text, message):
  with pytest.raises(ValueError, match=message):
    db.parse_shapes(text)


def test_the_flag_is_appended_while_tracing_and_restored(monkeypatch):
  monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
  with db.xla_flags_with(db.DETERMINISTIC_FLAG):
    assert os.environ["XLA_FLAGS"] == "--xla_dump_to=/tmp/x --xla_gpu_deterministic_ops=true"
  assert os.environ["XLA_FLAGS"] == "--xla_dump_to=/tmp/x"
  monkeypatch.delenv("XLA_FLAGS")
  with db.xla_flags_with(db.DETERMINISTIC_FLAG):
    assert os.environ["XLA_FLAGS"] == "--xla_gpu_deterministic_ops=true"
  assert "XLA_FLAGS" not in os.environ
  with db.xla_flags_with(None):
    assert "XLA_FLAGS" not in os.environ


def test_each_variant_is_traced_in_its_environment(monkeypatch):
  monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
  monkeypatch.delenv(db.DQ_SUM_VARIABLE, raising=False)
  seen = {}
  for variant in db.VARIANTS:
    with db.variant_environment(variant):
      seen[variant] = (os.environ["XLA_FLAGS"], os.environ.get(db.DQ_SUM_VARIABLE))
  assert seen == {
      "order-free": ("--xla_force_host_platform_device_count=2", "float32"),
      "fixed-order": ("--xla_force_host_platform_device_count=2 "
                      "--xla_gpu_deterministic_ops=true", "split"),
      "fixed-point": ("--xla_force_host_platform_device_count=2", "fixed_point")}
  assert os.environ["XLA_FLAGS"] == "--xla_force_host_platform_device_count=2"
  assert db.DQ_SUM_VARIABLE not in os.environ
  monkeypatch.setenv(db.DQ_SUM_VARIABLE, "fixed_point")  # the shell's value neither leaks in
  with db.variant_environment("order-free"):
    assert os.environ[db.DQ_SUM_VARIABLE] == "float32"
  assert os.environ[db.DQ_SUM_VARIABLE] == "fixed_point"  # nor is lost


def test_bitwise_equality_sees_one_ulp_and_nan_bits():
  a = jnp.array([1.0, 2.0], jnp.bfloat16)
  b = jnp.array([1.0, 2.015625], jnp.bfloat16)  # 2.0 plus one bfloat16 ulp (2 ** -6)
  assert db.bitwise_equal([a], [a])
  assert not db.bitwise_equal([a], [b])
  assert db.relative_difference([a], [b]) == pytest.approx(0.015625 / 2.0)
  nan = jnp.array([jnp.nan], jnp.float32)
  assert db.bitwise_equal([nan], [nan])


def test_a_run_on_the_cpu_device(tmp_path, capsys):
  rc = db.main(["--shapes", "2x64x4x2x32:causal",
                "--implementations", "xla,xla_chunked,None,mosaic",
                "--rounds", "2", "--repeats", "3", "--iterations", "2", "--out", str(tmp_path)])
  assert rc == 1  # mosaic cannot run here
  printed = capsys.readouterr().out
  assert "| 2x64x4/2x32 causal | xla | " in printed
  rows = json.loads((tmp_path / "determinism_pjrtkit.json").read_text())
  assert [r["implementation"] for r in rows] == ["xla", "xla_chunked", "None", "mosaic"]
  for row in rows[:3]:
    assert all(row[f"{v} bitwise"] is True for v in db.VARIANTS)
    assert row["max|d|"] == 0.0 and row["fixed-point max|d|"] == 0.0
    assert len(row["order-free rounds"]) == 2 and row["method"] == "wallclock"
    assert row["cost"] == pytest.approx(row["fixed-order ms"] / row["order-free ms"] - 1)
    assert row["fixed-point cost"] == pytest.approx(
        row["fixed-point ms"] / row["order-free ms"] - 1)
  assert rows[3]["error"].startswith("UnsupportedImplementationError: dot_product_attention: "
                                     "implementation='mosaic' cannot serve this call")
  assert (tmp_path / "determinism_pjrtkit.md").read_text().count("\n| 2x64x4/2x32 causal") == 4


def test_bad_arguments_exit_2(capsys):
  with pytest.raises(SystemExit) as e:
    db.main(["--shapes", "2x64"])
  assert e.value.code == 2
  assert "--shapes entry '2x64'" in capsys.readouterr().err
  with pytest.raises(SystemExit) as e:
    db.main(["--rounds", "0"])
  assert e.value.code == 2
  with pytest.raises(SystemExit) as e:
    db.main(["--repeats", "1"])
  assert e.value.code == 2
  assert "--repeats >= 2" in capsys.readouterr().err


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
