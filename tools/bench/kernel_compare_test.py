"""tools.bench.kernel_compare on the CPU (pjrtkit's CPU device and JAX's cpu backend), --quick:
GPU-only contenders skip with their reasons, the outputs are written, the throughput arithmetic is
exact, the correctness guard flags a wrong contender, and the pjrtkit / other-platform merge works
in one process; the grouped-query cases' labels, FLOPs and inputs, the held-out cases' selection,
marks and absence from the shipped tuned file, and a quick shape for every case."""

from __future__ import annotations

import dataclasses
import json
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import pytest  # noqa: E402

from pjrtkit.kernels.core import tuned as tuned_lib  # noqa: E402
from pjrtkit.kernels.core import call_specs  # noqa: E402
from pjrtkit.kernels.core import comparison  # noqa: E402
from pjrtkit.kernels.dot_product_attention import arg_specs as attention_specs  # noqa: E402
from pjrtkit.kernels.dot_product_attention import benchmark as attention_bench  # noqa: E402
from pjrtkit.kernels.layer_norm import arg_specs as layer_norm_specs  # noqa: E402
from pjrtkit.kernels.layer_norm import benchmark as layer_norm_bench  # noqa: E402
from tools.bench import compare_cases  # noqa: E402
from tools.bench import compare_contenders as cc  # noqa: E402
from tools.bench import compare_measure as cm  # noqa: E402
from tools.bench import compare_merge  # noqa: E402
from tools.bench import compare_report  # noqa: E402
from tools.bench import kernel_compare  # noqa: E402

_WRONG = cc.Contender("wrong fast", "test", attention_specs.OP,
                      lambda case: (lambda q, k, v: q * 1.5))


def test_throughput_arithmetic_is_exact_for_the_issue_shapes():
  a1, a2, a3, a4, l1, l2, l3, l4 = compare_cases.select(["A1", "A2", "A3", "A4", "L1", "L2",
                                                        "L3", "L4"])
  assert attention_bench.flops(a1) == 4 * 16 * 16384 * 16384 * 128 == 2199023255552
  assert attention_bench.flops(a2) == 1099511627776       # causal: half
  assert attention_bench.flops(a3) == 4 * 32 * 16 * 2048 * 2048 * 64 == 549755813888
  assert attention_bench.flops(a4) == 3.5 * 549755813888 == 1924145348608
  assert compare_cases.throughput(a1, 1.0) == pytest.approx(2199.023255552, rel=1e-12)
  assert compare_cases.throughput(a4, 2.0) == pytest.approx(962.072674304, rel=1e-12)
  assert layer_norm_bench.bytes_moved(l1) == 2 * 1048576 * 64 * 2 == 268435456
  assert layer_norm_bench.bytes_moved(l2) == 2 * 8192 * 8192 * 2 == 268435456
  assert layer_norm_bench.bytes_moved(l3) == layer_norm_bench.bytes_moved(l4) == 671088640
  assert compare_cases.throughput(l4, 0.5) == pytest.approx(1.34217728, rel=1e-12)
  two = (attention_specs.OP, layer_norm_specs.OP)
  assert [c.id for c in compare_cases.select() if c.op in two] == [
      "A1", "A2", "A3", "A4", "L1", "L2", "L3", "L4", "A5", "A6", "A7", "A8", "A9", "A10"] + [
          f"S{i}" for i in range(1, 14)] + ["H1", "H2", "H3", "H4", "H5"]
  # The shape classes' stand-ins keep their group sizes where a comparison case of the same
  # shape has another (S8: 8 query heads per key/value head; A8 at that shape: 4).
  a8, s8 = compare_cases.select(["S8", "A8"], quick=True)  # in the comparison's order
  assert (s8.shape, s8.kv_heads, a8.shape, a8.kv_heads) == ((1, 256, 16, 128), 2,
                                                            (1, 256, 8, 128), 2)
  s12 = compare_cases.select(["S12"])[0]
  assert attention_bench.flops(s12) == 4 * 128 * 32 * 1 * 4096 * 128
  ids = [c.id for c in compare_cases.select()]
  assert ids.index("RD1") < ids.index("RD7") < ids.index("RD9")  # first, extra, held out
  assert compare_cases.select(["a6"], quick=True)[0].shape == (1, 256, 2, 128)
  with pytest.raises(ValueError, match="unknown case"):
    compare_cases.select(["A11"])


def test_the_ops_are_found_in_their_folders():
  benches = compare_cases.op_benchmarks()
  assert [b.name for b in benches] == [   # folder-name order
      "attention", "gated_linear_unit", "layer_norm", "linear_softmax_cross_entropy_loss",
      "ragged_dot", "triangle_multiplication"]
  assert benches[0] is attention_bench.BENCHMARK and benches[2] is layer_norm_bench.BENCHMARK
  assert compare_cases.throughput_unit("attention") == "TFLOP/s"
  assert compare_cases.throughput_unit("layer_norm") == "TB/s"
  with pytest.raises(KeyError, match="no op benchmark 'softmax'; known: "
                                     r"\['attention', 'gated_linear_unit', 'layer_norm'"):
    compare_cases.benchmark_of("softmax")
  # Every op's cases are its arg_specs' CALL_SPECS: full shape (primary, held_out) and quick (ci);
  # attention's then its shape classes (SHAPE_CLASS_CALL_SPECS).
  assert attention_bench.BENCHMARK.cases == attention_specs.CASES + attention_specs.SHAPE_CLASSES
  assert [s.name for s in attention_specs.SHAPE_CLASS_CALL_SPECS] == [
      c.id for c in attention_specs.SHAPE_CLASSES] + [
          f"{c.id}-quick" for c in attention_specs.SHAPE_CLASSES]
  for bench, specs in ((attention_bench.BENCHMARK, attention_specs),
                       (layer_norm_bench.BENCHMARK, layer_norm_specs)):
    cases = specs.CASES
    assert bench.cases[:len(cases)] == cases
    names = [s.name for s in specs.CALL_SPECS]
    assert names == [c.id for c in cases] + [f"{c.id}-quick" for c in cases]
    held = [s.name for s in call_specs.tagged(specs.CALL_SPECS, "held_out")]
    assert held == [c.id for c in cases if c.held_out]
    assert len(call_specs.tagged(specs.CALL_SPECS, "ci")) == len(cases)
  assert [s.name for s in call_specs.tagged(attention_specs.CALL_SPECS, "held_out")] == [
      "H1", "H2", "H3", "H4", "H5"]


def test_ci_call_specs_run_the_public_functions():
  from pjrtkit import kernels as pk  # pylint: disable=g-import-not-at-top
  h3 = call_specs.by_name(attention_specs.CALL_SPECS, "H3-quick")
  args, kwargs = h3.arguments(seed=1)
  assert [a.shape for a in args] == [(1, 96, 8, 64), (1, 96, 2, 64), (1, 96, 2, 64)]
  assert kwargs == {"is_causal": True} and h3.doc == "H3 attention fwd+bwd causal 1x96x8x64 kv2"
  out = pk.dot_product_attention(*args, **kwargs, implementation="xla")
  assert out.shape == args[0].shape and str(out.dtype) == "bfloat16"
  l2 = call_specs.by_name(layer_norm_specs.CALL_SPECS, "L2-quick")
  args, kwargs = l2.arguments()
  assert [a.shape for a in args] == [(64, 512), (512,), (512,)] and kwargs == {"epsilon": 1e-6}
  y = pk.layer_norm(*args, **kwargs, implementation="xla")
  want = layer_norm_bench.jnp_layer_norm(*args)
  assert float(jax.numpy.max(jax.numpy.abs(y.astype("float32") - want.astype("float32")))) < 5e-2


def test_an_op_benchmark_checks_its_cases():
  bench = layer_norm_bench.BENCHMARK
  with pytest.raises(ValueError, match=r"layer_norm: cases \['A1'\] belong to another op"):
    dataclasses.replace(bench, cases=bench.cases + attention_specs.CASES[:1])
  with pytest.raises(ValueError, match=r"layer_norm: no quick shape for \[\(4, 64\)\]"):
    dataclasses.replace(bench, cases=(comparison.Case("L9", "layer_norm", (4, 64), "fwd"),))
  with pytest.raises(ValueError, match="L9: phase must be one of"):
    comparison.Case("L9", "layer_norm", (4, 64), "bwd")
  assert bench.throughput(bench.cases[0], 0.0) == float("inf")


def test_gqa_and_held_out_cases_labels_flops_and_selection():
  a7, a8, a9, a10, h3 = compare_cases.select(["A7", "A8", "A9", "A10", "H3"])
  assert a8.label == "A8 attention fwd+bwd 4x4096x32x128 kv8"
  assert a10.label == "A10 attention fwd+bwd causal 4x4096x32x128 kv8"
  assert h3.label == "H3 attention fwd+bwd causal 2x3072x16x64 kv4"
  assert a7.label == "A7 attention fwd+bwd 16x1024x32x128" and not a7.grouped
  assert (a8.kv_heads, a8.kv_shape, a8.grouped) == (8, (4, 4096, 8, 128), True)
  assert a9.kv_shape == a9.shape == (1, 16384, 16, 128)
  # Query heads count, GQA or not: A8's FLOPs are those of 4x4096x32x128 without grouping.
  assert attention_bench.flops(a8) == 3.5 * 4 * 4 * 32 * 4096 * 4096 * 128 == 3848290697216
  assert attention_bench.flops(a10) == 1924145348608                 # causal: half
  assert (attention_bench.flops(h3) == 3.5 * 4 * 2 * 16 * 3072 * 3072 * 64 / 2 ==
          135291469824)
  assert attention_bench.flops(a7) == 3.5 * 2**38 == 962072674304
  assert "h = query heads (GQA too" in compare_cases.convention(attention_specs.OP)
  held = compare_cases.select(["h1", "H3", "h5"])
  assert [(c.id, c.held_out, c.extra) for c in held] == [("H1", True, True), ("H3", True, True),
                                                         ("H5", True, True)]
  assert [c.label for c in held] == ["H1 attention fwd 8x1536x24x64",
                                     "H3 attention fwd+bwd causal 2x3072x16x64 kv4",
                                     "H5 attention fwd causal 4x5120x8x128"]
  attention = [c for c in compare_cases.cases() if c.op == attention_specs.OP]
  assert [c.id for c in attention if c.held_out] == ["H1", "H2", "H3", "H4", "H5"]
  assert all(c.extra for c in attention[4:])
  with pytest.raises(ValueError, match="kv_heads=5 does not divide the query's 32 heads"):
    attention_specs.AttentionCase("X", attention_specs.OP, (1, 8, 32, 64), comparison.FWD,
                                  kv_heads=5)
  with pytest.raises(TypeError, match="kv_heads"):  # attention cases only
    comparison.Case("X", layer_norm_specs.OP, (8, 64), comparison.FWD, kv_heads=1)
  with pytest.raises(ValueError, match="6 heads do not keep groups of 4 query heads"):
    a8.with_shape((1, 256, 6, 128))


def test_every_case_has_a_quick_shape_keeping_head_dim_and_group():
  quick = {c.id: c for c in compare_cases.select(quick=True)}
  assert set(quick) == {c.id for c in compare_cases.cases()}
  for case in compare_cases.cases():
    small = quick[case.id]
    assert small == compare_cases.benchmark_of(case.op).quick(case)
    assert small.shape != case.shape
    if case.op == attention_specs.OP:
      assert small.shape[-1] == case.shape[-1]
    assert ((getattr(small, "causal", None), small.phase, small.held_out) ==
            (getattr(case, "causal", None), case.phase, case.held_out))
    if case.op == attention_specs.OP:
      assert small.shape[2] // small.kv_shape[2] == case.shape[2] // case.kv_shape[2]
  assert [(quick[i].label, quick[i].kv_heads) for i in ("A8", "A10", "H3")] == [
      ("A8 attention fwd+bwd 1x256x8x128 kv2", 2),
      ("A10 attention fwd+bwd causal 1x256x8x128 kv2", 2),
      ("H3 attention fwd+bwd causal 1x96x8x64 kv2", 2)]


def test_make_inputs_gives_gqa_key_and_value_the_kv_heads():
  a8, h3 = compare_cases.select(["A8", "H3"])
  shapes = [(a.shape, str(a.dtype)) for a in jax.eval_shape(lambda: cc.make_inputs(a8))]
  assert shapes == [((4, 4096, 32, 128), "bfloat16"), ((4, 4096, 8, 128), "bfloat16"),
                    ((4, 4096, 8, 128), "bfloat16"), ((4, 4096, 32, 128), "bfloat16")]
  q, k, v, cotangent = cc.make_inputs(h3.with_shape((1, 96, 8, 64)))
  assert (q.shape, k.shape, v.shape, cotangent.shape) == (
      (1, 96, 8, 64), (1, 96, 2, 64), (1, 96, 2, 64), (1, 96, 8, 64))
  h1 = compare_cases.select(["H1"])[0]
  assert [a.shape for a in jax.eval_shape(lambda: cc.make_inputs(h1))] == [(8, 1536, 24, 64)] * 3


def test_held_out_shapes_are_not_in_the_shipped_h200_tuned_file():
  shipped = json.loads(tuned_lib.shipped_path("NVIDIA H200").read_text())
  tuned = {tuple(arg[1][0]) for choice in shipped["choices"] for arg in choice["spec"]["args"]
           if arg[1] is not None}
  assert (1, 16384, 16, 128) in tuned and (32, 2048, 16, 64) in tuned   # The file is read.
  for case in compare_cases.cases():
    if case.held_out:
      assert case.shape not in tuned and getattr(case, "kv_shape", None) not in tuned, case.label


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


def test_contenders_are_chosen_by_group_or_by_name_with_underscores(tmp_path):
  names = lambda op, only: [c.name for c in cc.contenders_for(op, only)]
  attention, layer_norm = attention_specs.OP, layer_norm_specs.OP
  assert names(attention, ["pk_None", "cuDNN", "tokamax_mosaic"]) == [
      "pk None", "cuDNN", "tokamax mosaic"]
  assert names(attention, ["pk None", "tokamax"]) == [
      "pk None", "tokamax mosaic", "tokamax triton", "tokamax xla"]
  assert names(layer_norm, ["pk_None", "cuDNN", "XLA_jnp"]) == ["pk None", "XLA jnp"]
  cc.check_selection(["pk_None", "cudnn", "XLA jnp"])  # no error
  with pytest.raises(ValueError, match=r"--contenders: unknown 'pk_mosiac', 'tokamax mosaic2'; "
                     r"accepted: the groups ours, cudnn, jax, tokamax, xla or the names .*"
                     r"pk_None, .*pk_mosaic"):
    cc.check_selection(["pk_mosiac", "cuDNN", "tokamax mosaic2"])
  with pytest.raises(ValueError, match="unknown 'nobody'"):
    kernel_compare.run(["--quick", "--cases", "A3", "--contenders", "cuDNN,nobody",
                        "--out", str(tmp_path)])


def test_rounds_interleave_the_contenders_and_take_the_median_of_round_medians(monkeypatch):
  """Each round times every contender in turn (after all were compiled and checked), starting one
  contender later each round; a time is the median of the round medians, every call is kept, and a contender failing in a later round
  becomes a skip with its reason."""
  from pjrtkit import kernels as pk  # pylint: disable=g-import-not-at-top
  calls, real = [], pk.benchmarking.compile_benchmark
  medians = {"XLA jnp": [3.0, 1.0, 2.0], "pk xla": [5.0, 4.0, 9.0], "pk None": [1.0, None, 1.0]}
  names = iter(["XLA jnp", "pk xla", "pk None"])  # compile order: the reference first

  class Runner:
    def __init__(self, inner, name):
      self.inner, self.name = inner, name
      calls.append(f"compile {name}")
      self.compiled = inner.compiled
      self.lowering_time_ms, self.compile_time_ms = 1.0, 2.0

    def __call__(self, args, method=None, iterations=10):
      del args
      ms = medians[self.name][sum(c == self.name for c in calls)]
      calls.append(self.name)
      if ms is None:
        raise RuntimeError("lost the device")
      return pk.benchmarking.BenchmarkData(0.0, 0.0, (ms - 0.5, ms, ms + 0.5) * iterations,
                                           None, method)

  monkeypatch.setattr(pk.benchmarking, "compile_benchmark",
                      lambda f, args: Runner(real(f, args), next(names)))
  case = compare_cases.select(["L1"], quick=True)[0]
  contenders = cc.contenders_for(case.op, ["pk_xla", "pk_None", "XLA_jnp"])
  lines = []
  results = cm.measure_case(case, contenders, jax.devices()[0], 1, "wallclock", lines.append,
                            rounds=3)
  # Every contender compiled first; each round starts one contender later.
  assert calls == ["compile XLA jnp", "compile pk xla", "compile pk None",
                   "XLA jnp", "pk xla", "pk None", "pk xla", "pk None", "XLA jnp",
                   "XLA jnp", "pk xla"]
  by_name = {r.contender: r for r in results}
  assert [r.contender for r in results] == ["pk xla", "pk None", "XLA jnp"]
  assert (by_name["XLA jnp"].ms, by_name["pk xla"].ms) == (2.0, 5.0)
  assert by_name["pk xla"].times_ms == (4.5, 5.0, 5.5, 3.5, 4.0, 4.5, 8.5, 9.0, 9.5)
  assert by_name["pk xla"].check == "ok" and by_name["XLA jnp"].check == "reference"
  assert by_name["pk xla"].compile_ms == 3.0
  assert by_name["pk None"].status == "skip"
  assert by_name["pk None"].reason == "RuntimeError: lost the device"
  assert 'raise RuntimeError("lost the device")' in by_name["pk None"].trace
  assert [line.split(":")[0] for line in lines] == ["L1 XLA jnp", "L1 pk xla", "L1 pk None"]
  with pytest.raises(ValueError, match="rounds must be at least 1, got 0"):
    cm.measure_case(case, contenders, jax.devices()[0], 1, "wallclock", rounds=0)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory):
  out = tmp_path_factory.mktemp("kernel_compare")
  lines = []
  doc = kernel_compare.run(["--quick", "--out", str(out), "--cases", "A3,A4,L1,L3,A8,H3",
                            "--iterations", "2", "--rounds", "2"], extra_contenders=[_WRONG],
                           log=lines.append)
  return doc, out, lines


def _rows(doc, case):
  return {r["contender"]: r for r in doc["runs"][0]["rows"] if r["case"] == case}


def test_quick_run_skips_gpu_only_contenders_with_their_reasons(quick_run):
  doc, _, _ = quick_run
  assert doc["runs"][0]["platform"] == "pjrtkit" and doc["meta"]["quick"]
  for case in ("A3", "A4", "A8", "H3"):
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
  # The CPU rule: native from 2**15 logits (A3/A4 have 2**16, A8 2**19, H3 73728).
  assert _rows(doc, "A3")["pk None"]["chosen"] == "fwd=native (rule)"
  assert _rows(doc, "A4")["pk None"]["chosen"] == "fwd=native (rule), bwd=native (rule)"
  assert len(_rows(doc, "A4")["pk xla"]["errors"]) == 4      # the output and 3 gradients
  for case in ("A8", "H3"):  # GQA: k and v (and their gradients) with kv_heads heads
    assert _rows(doc, case)["pk None"]["chosen"] == "fwd=native (rule), bwd=native (rule)"
    assert [n for n, _ in _rows(doc, case)["pk xla_chunked"]["errors"]] == [
        "out", "grad0", "grad1", "grad2"]
  ln = _rows(doc, "L3")
  assert ln["XLA jnp"]["check"] == "reference" and ln["XLA jnp"]["ratio"] == 1.0
  assert ln["pk triton"]["status"] == "skip" and ln["pk xla"]["check"] == "ok"


def test_the_guard_flags_a_wrong_contender_in_the_run(quick_run):
  doc, out, lines = quick_run
  for case in ("A3", "A4", "A8", "H3"):
    wrong = _rows(doc, case)["wrong fast"]
    assert wrong["status"] == "ok" and wrong["check"] == "mismatch" and not wrong["best"]
    assert dict(wrong["errors"])["out"] > cm.TOLERANCE_FWD
    assert sum(r["best"] for r in _rows(doc, case).values()) == 1
  assert "**MISMATCH**" in (out / "kernel_compare_pjrtkit.md").read_text()
  assert any(line.startswith("A3 wrong fast:") and "check mismatch" in line for line in lines)


def test_outputs_are_written(quick_run):
  doc, out, _ = quick_run
  saved = json.loads((out / "kernel_compare_pjrtkit.json").read_text())
  assert saved["cases"]["A4"]["flops"] == attention_bench.flops(
      compare_cases.select(["A4"], quick=True)[0])
  assert [r["contender"] for r in saved["runs"][0]["rows"]] == [
      r["contender"] for r in doc["runs"][0]["rows"]]
  cases = saved["cases"]
  assert [(cases[i]["kv_heads"], cases[i]["kv_shape"], cases[i]["held_out"])
          for i in ("A3", "A8", "H3")] == [(None, [2, 128, 2, 64], False),
                                          (2, [1, 256, 2, 128], False), (2, [1, 96, 2, 64], True)]
  assert saved["meta"]["rounds"] == 2
  assert len(_rows(doc, "A3")["pk xla"]["times_ms"]) == 2 * 2   # rounds x iterations
  md = (out / "kernel_compare_pjrtkit.md").read_text()
  assert "(median of 2 interleaved rounds' medians, 2 calls each)" in md
  assert "| A3 attention fwd 2x128x2x64 | pk triton | skip |" in md
  assert "| A8 attention fwd+bwd 1x256x8x128 kv2 | pk triton | skip |" in md
  assert "| H3 attention fwd+bwd causal 1x96x8x64 kv2 (held out) | pk triton | skip |" in md
  assert md.count(compare_report.HELD_OUT_NOTE) == 1        # attention's table only
  assert "fwd+bwd = 3.5x forward" in md and "fwd 2 passes (read x, write y), fwd+bwd 5" in md
  assert (out / "kernel_compare_pjrtkit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_two_platforms_in_one_process_and_the_merge(tmp_path):
  doc = kernel_compare.run(["--quick", "--out", str(tmp_path), "--cases", "A3,H1",
                            "--iterations", "2", "--platforms", "pjrtkit,cpu",
                            "--ours-only", "pjrtkit,cpu", "--no-png", "--method", "wallclock"],
                           log=lambda s: None)
  assert [r["platform"] for r in doc["runs"]] == ["pjrtkit", "cpu"]
  cpu_rows = {r["contender"]: r for r in doc["runs"][1]["rows"] if r["case"] == "A3"}
  assert set(cpu_rows) == {"pk mosaic", "pk triton", "pk xla_chunked", "pk xla", "pk None"}
  assert cpu_rows["pk None"]["chosen"].startswith("fwd=xla")   # no native kernels on cpu
  assert cpu_rows["pk xla"]["check"] == "reference"            # ours only: pk xla is reference
  assert not (tmp_path / "kernel_compare_pjrtkit-cpu.png").exists()
  assert kernel_compare.main(["merge", str(tmp_path / "kernel_compare_pjrtkit-cpu.json"),
                              "--out", str(tmp_path), "--denominator", "cpu"]) == 0
  merged = json.loads((tmp_path / "kernel_compare_platforms.json").read_text())
  assert merged["same_process"]
  by_name = {r["contender"]: r for r in merged["rows"] if r["case"] == "A3"}
  assert [(r["case"], r["held_out"]) for r in merged["rows"] if r["contender"] == "pk xla"] == [
      ("A3", False), ("H1", True)]
  xla = by_name["pk xla"]
  assert xla["ratio"] == pytest.approx(xla["pjrtkit_ms"] / xla["cpu_ms"])
  assert by_name["pk triton"]["ratio"] is None and len(by_name["pk triton"]["skipped"]) == 2
  merged_md = (tmp_path / "kernel_compare_platforms.md").read_text()
  assert "| A3 attention fwd 2x128x2x64 | pk xla |" in merged_md
  assert "| H1 attention fwd 2x96x3x64 (held out) | pk xla |" in merged_md
  assert compare_report.HELD_OUT_NOTE in merged_md
  with pytest.raises(ValueError, match=r"no run of platform\(s\) \['cuda'\]"):
    compare_merge.merge([doc])



def test_the_cpu_kernel_table_times_ragged_dot_against_xla(tmp_path):
  """tools.bench.kernels (the CPU table of docs/kernels.md) at its ci size: the ragged_dot rows
  time every implementation that serves them and write them to the JSON."""
  from tools.bench import kernels as kernel_table  # pylint: disable=g-import-not-at-top
  assert kernel_table.main(["--size", "ci", "--ops", "ragged_dot", "--iterations", "1",
                            "--out", str(tmp_path)]) == 0
  (path,) = tmp_path.glob("kernels_ci_*_ragged_dot.json")
  rows = json.loads(path.read_text())["rows"]
  assert [r["label"] for r in rows] == ["ragged_dot 8x256x64x64 float32 fwd",
                                        "ragged_dot 8x256x64x64 float32 fwd+bwd"]
  for r in rows:
    assert r["ratio"]["xla"] == 1.0 and r["ms"]["xla_grouped"] > 0 and r["ms"]["native"] > 0
    assert r["ms"]["triton"] is None   # no GPU: refused, reported as n/a

if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
