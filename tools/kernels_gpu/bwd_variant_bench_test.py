"""bwd_variant_bench's command line and geometry on the CPU (its kernels run on a GPU only)."""

from __future__ import annotations

import sys

import types

import jax
import jax.numpy as jnp
import pytest

from pjrtkit.kernels.dot_product_attention.mosaic import attention as mosaic_attention
from pjrtkit.kernels.dot_product_attention.mosaic import bwd as mosaic_bwd
from tools.kernels_gpu import bwd_variant_bench as bench


def test_unknown_cases_are_refused_naming_the_accepted_ones(capsys):
  with pytest.raises(SystemExit):
    bench.main(["-", "B1,B11"])
  err = capsys.readouterr().err
  assert "cases: unknown ['B11']" in err
  assert "'B1', 'B2', 'B3', 'B4', 'B5', 'B6', 'B7', 'B8', 'B9', 'B10'" in err


def test_rounds_must_be_positive(capsys):
  with pytest.raises(SystemExit):
    bench.main(["-", "B1", "--rounds", "0"])
  assert "--rounds must be >= 1, got 0" in capsys.readouterr().err


def test_set_must_be_field_equals_int(capsys):
  with pytest.raises(SystemExit):
    bench.main(["-", "B1", "--set", "stages=two"])
  assert "--set: 'stages=two' is not FIELD=INT" in capsys.readouterr().err
  assert bench.parse_fields("stages=3,ds_slots=1") == {"stages": 3, "ds_slots": 1}
  with pytest.raises(ValueError, match="'=3' is not FIELD=INT"):
    bench.parse_fields("=3")


def test_copies_with_reserved_or_equal_stems_are_refused(capsys):
  with pytest.raises(SystemExit):
    bench.main(["/x/cudnn.py", "B1"])
  assert "file stems ['cudnn'] name other contenders" in capsys.readouterr().err
  with pytest.raises(SystemExit):
    bench.main(["/x/bwd.py,/y/bwd.py", "B1"])
  assert "the file stems must differ, got ['bwd', 'bwd']" in capsys.readouterr().err


def test_parts_time_the_forward_and_delta_apart(capsys):
  """--parts adds the forward and delta rows after the backward-alone ones; delta is counted in
  bytes (the dO and O it reads), the forward in the forward's FLOPs. Small stand-in arrays: the
  functions are built, not run (their kernels run on a GPU only), except delta's reference."""
  q = jnp.ones((1, 8, 2, 4), jnp.bfloat16)
  out, do = jnp.full_like(q, 0.5), jnp.full_like(q, 2.0)
  x = dict(q=q, k=q, v=q, do=do, out=out, lse=jnp.zeros((1, 2, 8), jnp.float32))
  rows = bench.contenders({}, "B2", None, False, False, x, parts=True)
  assert list(rows) == ["shipped", "forward", "delta"]
  f, args, amount, module = rows["delta"]
  assert amount == 2 * 8 * 2 * 4 * 2 and module is None
  assert jnp.array_equal(f(*args), jnp.full((1, 2, 8), 4.0, jnp.float32))
  assert rows["forward"][2] == bench.CASES["B2"].fwd_flops and len(rows["forward"][1]) == 3
  forward = rows["forward"][0]
  assert forward.func is bench.forward_residuals and forward.args == (bench.CASES["B2"],)
  shape = jax.ShapeDtypeStruct((16, 1024, 32, 128), jnp.bfloat16)
  out_shape, lse_shape = jax.eval_shape(forward, shape, shape, shape)
  assert (out_shape.shape, out_shape.dtype) == ((16, 1024, 32, 128), jnp.bfloat16)
  assert (lse_shape.shape, lse_shape.dtype) == ((16, 32, 1024), jnp.float32)
  assert list(bench.contenders({}, "B2", None, False, False, x)) == ["shipped"]
  for stem in ("delta", "forward"):
    with pytest.raises(SystemExit):
      bench.main([f"/x/{stem}.py", "B1"])
    assert f"file stems ['{stem}'] name other contenders" in capsys.readouterr().err


def test_run_case_prints_delta_in_gb_per_s_without_a_difference(monkeypatch, capsys):
  """The delta row: bytes / ms as GB/s, and no gradient difference (it has no gradients)."""
  x = dict(out=jnp.ones((1, 256, 4, 256), jnp.bfloat16), do=jnp.ones((1, 256, 4, 256),
                                                                      jnp.bfloat16))
  monkeypatch.setattr(bench, "inputs", lambda case: x)
  monkeypatch.setattr(bench, "contenders", lambda *a: {
      "delta": (bench.base.delta, [x["out"], x["do"]], 1e6, None)})

  class Run:
    def __call__(self, args, iterations):
      return types.SimpleNamespace(median_evaluation_time_ms=0.5)

  monkeypatch.setattr(bench.pk.benchmarking, "compile_benchmark", lambda f, a: Run())
  bench.run_case({}, "B2", 2, None, False, False, parts=True)
  line = [l for l in capsys.readouterr().out.splitlines() if l.startswith("B2 delta:")][0]
  assert line == "B2 delta: 0.5000 ms 2.0 GB/s rounds 2.0 2.0"  # 1e6 bytes in 0.5 ms


def test_cases_count_query_heads_and_halve_causal():
  assert bench.CASES["B3"].fwd_flops == 4.0 * 4 * 32 * 4096 * 4096 * 128
  assert bench.CASES["B5"].fwd_flops == bench.CASES["B3"].fwd_flops / 2


def test_geometry_is_chosen_as_the_op_chooses_it():
  # head_dim 128: 64-row steps, 2 in flight, 2 dS^T slots (what fits in 227 KiB).
  g = bench.geometry(mosaic_bwd, bench.CASES["B3"])
  assert (g.block_q, g.stages, g.ds_slots, g.group, g.programs) == (64, 2, 2, 4, 32 * 4 * 8)
  # head_dim 64: 4 steps without a mask; causal takes 128-row steps first.
  g = bench.geometry(mosaic_bwd, bench.CASES["B6"])
  assert (g.block_q, g.stages, g.ds_slots) == (64, 4, 2)
  g = bench.geometry(mosaic_bwd, bench.CASES["B7"])
  assert (g.block_q, g.stages, g.ds_slots, g.causal) == (128, 2, 1, True)
  g = bench.geometry(mosaic_bwd, bench.CASES["B6"], {"stages": 3})
  assert g.stages == 3
  with pytest.raises(ValueError, match="stages must be at least 2, got 1"):
    bench.geometry(mosaic_bwd, bench.CASES["B1"], {"stages": 1})
  # B3 takes lag_dq, which a persistent launch or one dS^T slot refuses unless --set turns it off.
  assert bench.geometry(mosaic_bwd, bench.CASES["B3"]).lag_dq
  with pytest.raises(ValueError, match="lag_dq needs ds_slots 2 and persistent_programs 0"):
    bench.geometry(mosaic_bwd, bench.CASES["B3"], {"ds_slots": 1})
  g = bench.geometry(mosaic_bwd, bench.CASES["B3"], {"ds_slots": 1, "lag_dq": 0})
  assert (g.ds_slots, g.lag_dq) == (1, 0)
  assert bench.geometry(mosaic_bwd, bench.CASES["B1"]).lag_dq  # 256 steps, one head per kv
  # --set turns biased_accumulators off where choose takes it (head_dim 128).
  assert bench.geometry(mosaic_bwd, bench.CASES["B1"]).biased_accumulators
  assert not bench.geometry(mosaic_bwd, bench.CASES["B1"],
                            {"biased_accumulators": 0}).biased_accumulators
  # --set turns loop_descriptors off where choose takes it (head_dim 128).
  assert bench.geometry(mosaic_bwd, bench.CASES["B9"]).loop_descriptors
  assert not bench.geometry(mosaic_bwd, bench.CASES["B9"], {"loop_descriptors": 0}).loop_descriptors


def test_backward_module_is_swapped_only_inside_the_scope():
  seen = []
  fake = types.SimpleNamespace(
      LOG2E=mosaic_bwd.LOG2E, backward=lambda *a: None,
      choose=lambda **kw: seen.append(kw) or mosaic_bwd.choose(**kw))
  with bench.backward_module(fake, {"stages": 3}):
    g = mosaic_attention.mosaic_bwd.choose(batch=1, q_len=1024, heads=2, kv_heads=2, kv_len=1024,
                                 head_dim=64, scale=0.125, causal=False, itemsize=2,
                                 max_stages=4)
    assert mosaic_attention.mosaic_bwd.backward is fake.backward
  assert g.stages == 3 and len(seen) == 1
  assert mosaic_attention.mosaic_bwd is mosaic_bwd


def test_a_copy_without_lse_input_gets_the_log_sum_exp_in_base_2():
  """At head_dim 128 (biased accumulators) the shipped `lse_input` gives lse / scale; a copy
  written before it took lse * log2(e) whatever its geometry, and gets that."""
  g = bench.geometry(mosaic_bwd, bench.CASES["B9"])
  assert g.biased_accumulators
  old = types.SimpleNamespace(LOG2E=mosaic_bwd.LOG2E, backward=lambda *a: None,
                              choose=mosaic_bwd.choose)
  assert bench.lse_input(old)(2.0, g) == 2.0 * mosaic_bwd.LOG2E
  assert bench.lse_input(mosaic_bwd)(2.0, g) == 2.0 / g.scale
  with bench.backward_module(old, None):
    assert mosaic_attention.mosaic_bwd.lse_input(2.0, g) == 2.0 * mosaic_bwd.LOG2E


def test_breakdown_lines_name_each_kernel_and_the_sum(capsys):
  bench.print_breakdown("B2 cudnn fwd+bwd", [("fmha_fwd", 0.5), ("dot_do_o", 0.125)])
  assert capsys.readouterr().out.splitlines() == [
      "B2 cudnn fwd+bwd kernel 1/2: 0.5000 ms fmha_fwd",
      "B2 cudnn fwd+bwd kernel 2/2: 0.1250 ms dot_do_o",
      "B2 cudnn fwd+bwd kernels: 0.6250 ms in 2"]


def test_scaling_cases_have_equal_work_and_equal_wave_tails():
  flops = {bench.CASES[c].fwd_flops for c in bench.SCALING_CASES}
  assert flops == {bench.CASES["B2"].fwd_flops}
  points = [bench.fit_point(c, 132) for c in bench.SCALING_CASES]
  assert points == [(32, 16), (16, 32), (8, 64), (4, 128), (2, 256)]
  programs = [bench.geometry(mosaic_bwd, bench.CASES[c]).programs for c in bench.SCALING_CASES]
  assert programs == [4096, 2048, 1024, 512, 256]
  # Grouped heads: a program walks its 4 heads' 64 steps each.
  assert bench.fit_point("B3", 132) == (8, 256)
  with pytest.raises(ValueError, match="--fit takes non-causal cases .*, got B4"):
    bench.fit_point("B4", 132)


def test_fit_recovers_per_program_and_per_step_costs():
  points = [(r, s, r * (0.005 + s * 0.0023)) for r, s in [(32, 16), (16, 32), (8, 64), (2, 256)]]
  program, step = bench.fit_costs(points)
  assert program == pytest.approx(0.005, rel=1e-9) and step == pytest.approx(0.0023, rel=1e-9)
  with pytest.raises(ValueError, match=r"at least two step counts per program, got \[16\]"):
    bench.fit_costs([(32, 16, 1.0), (16, 16, 0.5)])


def test_fit_needs_kernels_and_non_causal_cases(capsys):
  with pytest.raises(SystemExit):
    bench.main(["-", "C16,C32", "--fit"])
  assert "--fit needs --kernels" in capsys.readouterr().err
  with pytest.raises(SystemExit):
    bench.main(["-", "C16,B4", "--fit", "--kernels"])
  assert "--fit: --fit takes non-causal cases (programs of equal steps), got B4" in (
      capsys.readouterr().err)
  with pytest.raises(SystemExit):
    bench.main(["-", "C16", "--fit", "--kernels"])
  assert "--fit: a fit needs cases of at least two step counts per program, got [16]" in (
      capsys.readouterr().err)


def test_main_prints_each_contenders_fit(monkeypatch, capsys):
  """Each case's longest-kernel medians (run_case's return) go into one fit per contender."""
  steps = {"C16": 16, "C64": 64, "C256": 256}
  rounds = {"C16": 32, "C64": 8, "C256": 2}
  monkeypatch.setattr(bench, "run_case", lambda variants, case, *a: {
      "shipped": rounds[case] * (0.005 + steps[case] * 0.0023),
      "cudnn": rounds[case] * (0.0036 + steps[case] * 0.00216),
      "delta": 0.01})  # --parts rows are not fitted
  assert bench.main(["-", "C16,C64,C256", "--fit", "--kernels", "--cudnn", "--parts"]) == 0
  out = capsys.readouterr().out.splitlines()
  assert out == [
      "fit shipped: 5.00 us per program, 2.300 us per query step (3 cases, rounds x (program + "
      "steps x step))",
      "fit cudnn: 3.60 us per program, 2.160 us per query step (3 cases, rounds x (program + "
      "steps x step))"]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
