"""tools.bench.kernel_compare on the CPU (pjrtkit's CPU device and JAX's cpu backend), --quick:
GPU-only contenders skip with their reasons, the outputs are written, the throughput arithmetic is
exact, the correctness guard flags a wrong contender, and the pjrtkit / other-platform merge works
in one process."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import pytest  # noqa: E402

from tools.bench import compare_cases  # noqa: E402
from tools.bench import compare_contenders as cc  # noqa: E402
from tools.bench import compare_measure as cm  # noqa: E402
from tools.bench import compare_merge  # noqa: E402
from tools.bench import compare_report  # noqa: E402
from tools.bench import kernel_compare  # noqa: E402

_WRONG = cc.Contender("wrong fast", "test", compare_cases.ATTENTION,
                      lambda case: (lambda q, k, v: q * 1.5))


def test_throughput_arithmetic_is_exact_for_the_issue_shapes():
  a1, a2, a3, a4, l1, l2, l3, l4 = compare_cases.select(["A1", "A2", "A3", "A4", "L1", "L2",
                                                        "L3", "L4"])
  assert compare_cases.attention_flops(a1) == 4 * 16 * 16384 * 16384 * 128 == 2199023255552
  assert compare_cases.attention_flops(a2) == 1099511627776       # causal: half
  assert compare_cases.attention_flops(a3) == 4 * 32 * 16 * 2048 * 2048 * 64 == 549755813888
  assert compare_cases.attention_flops(a4) == 3.5 * 549755813888 == 1924145348608
  assert compare_cases.throughput(a1, 1.0) == pytest.approx(2199.023255552, rel=1e-12)
  assert compare_cases.throughput(a4, 2.0) == pytest.approx(962.072674304, rel=1e-12)
  assert compare_cases.layer_norm_bytes(l1) == 2 * 1048576 * 64 * 2 == 268435456
  assert compare_cases.layer_norm_bytes(l2) == 2 * 8192 * 8192 * 2 == 268435456
  assert compare_cases.layer_norm_bytes(l3) == compare_cases.layer_norm_bytes(l4) == 671088640
  assert compare_cases.throughput(l4, 0.5) == pytest.approx(1.34217728, rel=1e-12)
  assert [c.id for c in compare_cases.select()] == ["A1", "A2", "A3", "A4", "L1", "L2", "L3",
                                                    "L4", "A5", "A6"]
  assert compare_cases.select(["a6"], quick=True)[0].shape == (1, 256, 2, 128)
  with pytest.raises(ValueError, match="unknown case"):
    compare_cases.select(["A9"])


def test_a_fast_wrong_contender_is_never_best():
  case = compare_cases.select(["A3"])[0]
  results = [cm.Result("A3", "cuDNN", cc.CUDNN, cm.OK, ms=2.0, check="reference"),
             cm.Result("A3", "pk triton", cc.OURS, cm.OK, ms=1.5, check="ok"),
             cm.Result("A3", "wrong", cc.OURS, cm.OK, ms=0.1, check="mismatch"),
             cm.Result("A3", "tokamax mosaic", cc.TOKAMAX, cm.SKIP, reason="NotImplementedError")]
  rows = compare_report.annotate(case, results)
  assert [r["best"] for r in rows] == [False, True, False, False]
  assert [r["ratio"] for r in rows] == [1.0, 0.75, 0.05, None]
  assert cm.check_of([("out", 0.01, 0.02), ("grad0", float("nan"), 0.125)]) == "mismatch"
  assert cm.check_of([("out", 0.02, 0.02), ("grad0", 0.1, 0.125)]) == "ok"


@pytest.fixture(scope="module")
def quick_run():
  out = Path(tempfile.mkdtemp(prefix="kernel_compare_test_"))
  lines = []
  doc = kernel_compare.run(["--quick", "--out", str(out), "--cases", "A3,A4,L1,L3",
                            "--iterations", "2"], extra_contenders=[_WRONG], log=lines.append)
  return doc, out, lines


def _rows(doc, case):
  return {r["contender"]: r for r in doc["runs"][0]["rows"] if r["case"] == case}


def test_quick_run_skips_gpu_only_contenders_with_their_reasons(quick_run):
  doc, _, _ = quick_run
  assert doc["runs"][0]["platform"] == "pjrtkit" and doc["meta"]["quick"]
  for case in ("A3", "A4"):
    rows = _rows(doc, case)
    for impl in ("triton", "mosaic"):
      assert rows[f"pk {impl}"]["status"] == "skip"
      assert rows[f"pk {impl}"]["reason"].startswith(
          f"UnsupportedImplementationError: dot_product_attention: implementation='{impl}' "
          "cannot serve this call: Pallas ")
      assert "need an NVIDIA GPU" in rows[f"pk {impl}"]["reason"]
    assert rows["cuDNN"]["status"] == "skip" and rows["cuDNN"]["reason"]
    for impl in ("mosaic", "triton"):
      reason = rows[f"tokamax {impl}"]["reason"]
      assert rows[f"tokamax {impl}"]["status"] == "skip"
      assert "No module named 'tokamax'" in reason or "Not supported on" in reason, reason
    assert rows["jax.nn xla"]["check"] == "reference"      # cuDNN did not run
    for name in ("pk xla", "pk xla_chunked", "pk None"):
      assert rows[name]["status"] == "ok" and rows[name]["check"] == "ok", rows[name]
      assert rows[name]["throughput"] == pytest.approx(
          compare_cases.throughput(compare_cases.select([case], True)[0], rows[name]["ms"]))
  assert _rows(doc, "A3")["pk None"]["chosen"] == "fwd=native (rule)"
  assert _rows(doc, "A4")["pk None"]["chosen"] == "fwd=native (rule), bwd=native (rule)"
  assert len(_rows(doc, "A4")["pk xla"]["errors"]) == 4      # the output and 3 gradients
  ln = _rows(doc, "L3")
  assert ln["XLA jnp"]["check"] == "reference" and ln["XLA jnp"]["ratio"] == 1.0
  assert ln["pk triton"]["status"] == "skip" and ln["pk xla"]["check"] == "ok"


def test_the_guard_flags_a_wrong_contender_in_the_run(quick_run):
  doc, out, lines = quick_run
  for case in ("A3", "A4"):
    wrong = _rows(doc, case)["wrong fast"]
    assert wrong["status"] == "ok" and wrong["check"] == "mismatch" and not wrong["best"]
    assert dict(wrong["errors"])["out"] > cm.TOLERANCE_FWD
    assert sum(r["best"] for r in _rows(doc, case).values()) == 1
  assert "**MISMATCH**" in (out / "kernel_compare_pjrtkit.md").read_text()
  assert any(line.startswith("A3 wrong fast:") and "check mismatch" in line for line in lines)


def test_outputs_are_written(quick_run):
  doc, out, _ = quick_run
  saved = json.loads((out / "kernel_compare_pjrtkit.json").read_text())
  assert saved["cases"]["A4"]["flops"] == compare_cases.attention_flops(
      compare_cases.select(["A4"], quick=True)[0])
  assert [r["contender"] for r in saved["runs"][0]["rows"]] == [
      r["contender"] for r in doc["runs"][0]["rows"]]
  md = (out / "kernel_compare_pjrtkit.md").read_text()
  assert "| A3 attention fwd 2x128x2x64 | pk triton | skip |" in md
  assert "fwd+bwd = 3.5x forward" in md and "fwd 2 passes (read x, write y), fwd+bwd 5" in md
  assert (out / "kernel_compare_pjrtkit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_two_platforms_in_one_process_and_the_merge(tmp_path):
  doc = kernel_compare.run(["--quick", "--out", str(tmp_path), "--cases", "A3",
                            "--iterations", "2", "--platforms", "pjrtkit,cpu",
                            "--ours-only", "pjrtkit,cpu", "--no-png", "--method", "wallclock"],
                           log=lambda s: None)
  assert [r["platform"] for r in doc["runs"]] == ["pjrtkit", "cpu"]
  cpu_rows = {r["contender"]: r for r in doc["runs"][1]["rows"]}
  assert set(cpu_rows) == {"pk mosaic", "pk triton", "pk xla_chunked", "pk xla", "pk None"}
  assert cpu_rows["pk None"]["chosen"].startswith("fwd=xla")   # no native kernels on cpu
  assert cpu_rows["pk xla"]["check"] == "reference"            # ours only: pk xla is reference
  assert not (tmp_path / "kernel_compare_pjrtkit-cpu.png").exists()
  assert kernel_compare.main(["merge", str(tmp_path / "kernel_compare_pjrtkit-cpu.json"),
                              "--out", str(tmp_path), "--denominator", "cpu"]) == 0
  merged = json.loads((tmp_path / "kernel_compare_platforms.json").read_text())
  assert merged["same_process"]
  by_name = {r["contender"]: r for r in merged["rows"]}
  xla = by_name["pk xla"]
  assert xla["ratio"] == pytest.approx(xla["pjrtkit_ms"] / xla["cpu_ms"])
  assert by_name["pk triton"]["ratio"] is None and len(by_name["pk triton"]["skipped"]) == 2
  assert "| A3 attention fwd 2x128x2x64 | pk xla |" in (
      tmp_path / "kernel_compare_platforms.md").read_text()
  with pytest.raises(ValueError, match=r"no run of platform\(s\) \['cuda'\]"):
    compare_merge.merge([doc])


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
