"""tools.kernels_gpu.sweep on pjrtkit's CPU device: the tiny grid end to end (the JSON's exact keys,
ratios, the cache's entries, the table), the grids, --budget-s and --check."""

from __future__ import annotations

import json
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import pytest  # noqa: E402

from pjrtkit.kernels.core import autotune_cache  # noqa: E402
from pjrtkit.kernels.dot_product_attention import arg_specs  # noqa: E402
from tools.kernels_gpu import sweep  # noqa: E402

TOP_KEYS = {"format", "device_kind", "platform", "jax", "jaxlib", "library_version", "dtype",
            "grid", "iterations", "cache_iterations", "cache_dir", "points", "total_s",
            "all_within_5pct", "part"}
POINT_KEYS = {"point", "label", "candidates", "best", "none_cached", "none_uncached", "ratio",
              "within_5pct", "ratio_uncached", "within_5pct_uncached", "seconds"}


def test_cpu_grid_end_to_end(tmp_path, capsys):
  cache_dir = tmp_path / "cache"
  assert sweep.main(["--grid", "cpu", "--iterations", "1", "--cache-iterations", "1",
                     "--out", str(tmp_path), "--cache-dir", str(cache_dir)]) == 0
  doc = json.loads((tmp_path / "sweep_pjrtkit.json").read_text())
  assert set(doc) == TOP_KEYS
  assert (doc["format"], doc["device_kind"], doc["platform"], doc["dtype"], doc["grid"],
          doc["iterations"], doc["cache_iterations"], doc["cache_dir"]) == (
              1, "pjrtkit_cpu", "pjrtkit", "bfloat16", "cpu", 1, 1, str(cache_dir))
  assert [p["label"] for p in doc["points"]] == ["fwd 1x64x2x32 kv1",
                                                 "fwd+bwd 1x64x4x32 kv2 causal"]
  assert doc["part"] == "1/1"
  assert doc["points"][1]["point"] == {"batch": 1, "seq": 64, "heads": 4, "kv_heads": 2,
                                       "head_dim": 32, "causal": True, "phase": "fwd+bwd",
                                       "dtype": "bfloat16"}
  for p in doc["points"]:
    assert set(p) == POINT_KEYS
    # xla 1 config, xla_chunked 2 (64 and 128 keys), native 9; every one matched xla's output.
    assert sorted((c["implementation"], c["status"]) for c in p["candidates"]).count(
        ("native", "ok")) == 9
    assert sorted({c["implementation"] for c in p["candidates"]}) == ["native", "xla",
                                                                        "xla_chunked"]
    assert len(p["candidates"]) == 12 and {c["status"] for c in p["candidates"]} == {"ok"}
    assert [c["implementation"] for c in p["candidates"] if c.get("reference")] == ["xla"]
    best = min(p["candidates"], key=lambda c: c["time_ms"])
    assert p["best"] == {k: best[k] for k in ("implementation", "config", "time_ms")}
    for suffix, none in (("", p["none_cached"]), ("_uncached", p["none_uncached"])):
      assert set(none) == {"status", "time_ms", "measure_s", "choices"}
      assert p["ratio" + suffix] == round(none["time_ms"] / best["time_ms"], 4)
      assert p["within_5pct" + suffix] is (p["ratio" + suffix] <= 1.05)
    phases = ["fwd"] if p["point"]["phase"] == "fwd" else ["fwd", "bwd"]
    assert sorted(p["none_cached"]["choices"]) == sorted(phases)
    assert {c["source"] for c in p["none_cached"]["choices"].values()} == {"cache"}
    # The CPU rule: xla below 2**15 logits (both points: 8192 and 16384).
    assert p["none_uncached"]["choices"] == {
        phase: {"implementation": "xla", "config": {}, "source": "rule"} for phase in phases}
  assert doc["all_within_5pct"] is all(p["within_5pct"] for p in doc["points"])
  assert sorted(e.key["mode"] for e in autotune_cache.entries(cache_dir)) == ["fwd", "fwd+bwd"]
  table = (tmp_path / "sweep_pjrtkit.md").read_text().splitlines()
  assert table[2].startswith("| point | best candidate | best | None (cache) |")
  assert [row.split(" | ")[0] for row in table[4:6]] == ["| fwd 1x64x2x32 kv1",
                                                         "| fwd+bwd 1x64x4x32 kv2 causal"]
  assert "fwd+bwd 1x64x4x32 kv2 causal: best" in capsys.readouterr().out


def _record(point: sweep.Point, within: bool) -> dict:
  return {"point": point.to_json(), "label": point.label, "candidates": [],
          "best": {"implementation": "xla", "config": {}, "time_ms": 1.0},
          "none_cached": {"status": "ok", "time_ms": 1.0 if within else 2.0, "measure_s": 0.0,
                          "choices": {"fwd": {"implementation": "xla", "config": {},
                                              "source": "cache"}}},
          "none_uncached": {"status": "error", "error": "RuntimeError: x"},
          "ratio": 1.0 if within else 2.0, "within_5pct": within, "ratio_uncached": None,
          "within_5pct_uncached": False, "seconds": 0.0}


def test_check_exits_1_only_with_a_point_outside(monkeypatch, tmp_path, capsys):
  outside = {"fwd 1x64x4x32 kv2 causal"}
  monkeypatch.setattr(sweep, "run_point",
                      lambda point, *a: _record(point, point.label not in outside))
  argv = ["--grid", "fwd:1x64x2x1x32,fwd:1x64x4x2x32:causal", "--out", str(tmp_path)]
  assert sweep.main(argv) == 0
  assert sweep.main(argv + ["--check"]) == 1
  assert capsys.readouterr().err == "--check: 1 point(s) outside 5 %: fwd 1x64x4x32 kv2 causal\n"
  outside.clear()
  assert sweep.main(argv + ["--check"]) == 0
  table = (tmp_path / "sweep_pjrtkit.md").read_text()
  assert "| fwd 1x64x4x32 kv2 causal | xla | 1.0000 | fwd xla [cache] | 1.0 | 1.0 | yes | " \
         "error: RuntimeError: x |  |  |" in table


def test_budget_skips_the_points_after_it(monkeypatch, tmp_path):
  clock = iter([0.0, 0.0, 0.0, 10.0, 10.0, 10.0, 10.0])
  monkeypatch.setattr(sweep.time, "perf_counter", lambda: next(clock))
  monkeypatch.setattr(sweep, "run_point", lambda point, *a: _record(point, True))
  assert sweep.main(["--grid", "fwd:1x64x2x1x32,fwd:1x128x2x1x32", "--budget-s", "5",
                     "--out", str(tmp_path), "--check"]) == 1
  doc = json.loads((tmp_path / "sweep_pjrtkit.json").read_text())
  assert doc["points"][1] == {"point": sweep.parse_grid("fwd:1x128x2x1x32")[0].to_json(),
                              "label": "fwd 1x128x2x32 kv1", "skipped": "time budget 5 s",
                              "within_5pct": False, "within_5pct_uncached": False}


def test_parts_split_the_grid_and_refuse_bad_values():
  points = sweep.parse_grid("default")
  halves = sweep.select_part(points, "1/2"), sweep.select_part(points, "2/2")
  assert halves == (points[0::2], points[1::2])
  assert sorted(halves[0] + halves[1], key=points.index) == list(points)
  assert sweep.select_part(points, "") == sweep.select_part(points, "1/1") == points
  assert sweep.select_part(points, "3/3") == (points[2], points[5])
  for bad in ("0/2", "3/2", "1", "a/b", "1/0", "1/2/3"):
    with pytest.raises(SystemExit, match=rf"--part: '{bad}' is not K/N with 1 <= K <= N"):
      sweep.select_part(points, bad)


def test_grids():
  assert sweep.parse_grid("fwdbwd:4x4096x32x8x128,fwd:1x16384x16x16x128:causal",
                          "float16") == (
      sweep.Point(4, 4096, 32, 8, 128, False, "fwd+bwd", "float16"),
      sweep.Point(1, 16384, 16, 16, 128, True, "fwd", "float16"))
  with pytest.raises(SystemExit, match=r"--grid: 'fwd:1x2x3' is not PHASE:BxTxHxKxD\[xS\]\[:causal\]"):
    sweep.parse_grid("fwd:1x2x3")
  with pytest.raises(SystemExit, match="'bwd:1x2x3x4x5' is not"):
    sweep.parse_grid("bwd:1x2x3x4x5")
  for name, size in (("default", 8), ("full", 80), ("classes", 13), ("cpu", 2)):
    points = sweep.parse_grid(name)
    assert len(points) == len(set(points)) == size
  for name in ("default", "full"):
    points = sweep.GRIDS[name]
    assert {p.head_dim for p in points} == {64, 128}
    assert {p.phase for p in points} == {"fwd", "fwd+bwd"}
    assert {p.causal for p in points} == {False, True}
    assert any(p.kv_heads < p.heads for p in points)
    assert min(p.seq for p in points) == 1024 and max(p.seq for p in points) == 16384


def test_the_classes_grid_is_the_shape_classes():
  """One point per `arg_specs.SHAPE_CLASSES` entry, in their dtype, with their key length."""
  points = sweep.parse_grid("classes")
  assert [p.label for p in points] == [
      "fwd+bwd 16x1024x32x80", "fwd 16x1024x32x96", "fwd 8x2048x16x192", "fwd 8x2048x16x256",
      "fwd+bwd 8x2048x16x256", "fwd+bwd 16x1000x32x128", "fwd+bwd 4x2000x32x128 kv8 causal",
      "fwd+bwd 4x4096x32x128 kv4 causal", "fwd+bwd 4x4096x32x128 kv2",
      "fwd+bwd 4x4096x32x128 kv1", "fwd+bwd 16x1024x32x128 float16",
      "fwd 128x1x32x128 kv8 s4096", "fwd 32x16x32x128 kv8 s4096"]
  assert len(points) == len(arg_specs.SHAPE_CLASSES)
  for point, case in zip(points, arg_specs.SHAPE_CLASSES):
    assert ((point.batch, point.seq, point.heads, point.head_dim), point.causal, point.phase,
            point.dtype) == (case.shape, case.causal, case.phase, case.dtype)
    assert (point.batch, point.keys, point.kv_heads, point.head_dim) == case.kv_shape
  assert {p.head_dim for p in points} == {80, 96, 128, 192, 256}
  assert {p.heads // p.kv_heads for p in points} == {1, 4, 8, 16, 32}
  assert {p.dtype for p in points} == {"bfloat16", "float16"}
  assert any(p.seq % 128 for p in points) and any(p.keys != p.seq for p in points)
  # --dtype overrides every point's dtype.
  assert {p.dtype for p in sweep.parse_grid("classes", "bfloat16")} == {"bfloat16"}
  decode = points[11]
  assert decode.to_json() == {"batch": 128, "seq": 1, "heads": 32, "kv_heads": 8,
                              "head_dim": 128, "causal": False, "phase": "fwd",
                              "dtype": "bfloat16", "kv_seq": 4096}
  assert "kv_seq" not in points[0].to_json()
  spec = sweep.point_spec(decode)
  assert (spec.arg("query").shape, spec.arg("key").shape) == ((128, 1, 32, 128),
                                                             (128, 4096, 8, 128))
  shapes = [a.shape for a in jax.eval_shape(lambda: sweep.make_inputs(points[10]))]
  assert shapes == [(16, 1024, 32, 128)] * 4
  assert [str(a.dtype) for a in jax.eval_shape(lambda: sweep.make_inputs(points[10]))] == [
      "float16"] * 4


def test_a_spec_names_the_key_length():
  decode, same = sweep.parse_grid("fwd:2x1x8x2x64x300,fwdbwd:1x64x4x2x32x64:causal")
  assert decode == sweep.Point(2, 1, 8, 2, 64, False, "fwd", "bfloat16", 300)
  assert decode.label == "fwd 2x1x8x64 kv2 s300" and decode.keys == 300
  assert same == sweep.Point(1, 64, 4, 2, 32, True, "fwd+bwd") and same.kv_seq is None
  with pytest.raises(SystemExit, match="'fwd:1x2x3x4x5x6x7' is not"):
    sweep.parse_grid("fwd:1x2x3x4x5x6x7")


def test_a_decode_point_end_to_end(tmp_path):
  """T=1 against 48 keys, float16 (the point's own dtype): every candidate matches "xla"."""
  assert sweep.main(["--grid", "fwd:1x1x4x2x32x48", "--dtype", "float16", "--iterations", "1",
                     "--cache-iterations", "1", "--out", str(tmp_path), "--cache-dir",
                     str(tmp_path / "cache")]) == 0
  doc = json.loads((tmp_path / "sweep_pjrtkit.json").read_text())
  assert doc["dtype"] == "float16"
  (point,) = doc["points"]
  assert point["label"] == "fwd 1x1x4x32 kv2 s48 float16"
  assert point["point"]["kv_seq"] == 48
  assert {c["status"] for c in point["candidates"]} == {"ok"}
  assert sorted({c["implementation"] for c in point["candidates"]}) == ["xla", "xla_chunked"]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
