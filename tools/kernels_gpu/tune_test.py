"""tools.kernels_gpu.tune and profile_cases on the CPU (pjrtkit's CPU device), at the comparison's
--quick shapes: the tuned file's choices per request, merging, the device-kind guard, and the
profiled phase functions against jax.vjp."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import tuned as tuned_lib  # noqa: E402
from tools.bench import compare_cases  # noqa: E402
from tools.bench import compare_contenders as cc  # noqa: E402
from tools.kernels_gpu import profile_cases  # noqa: E402
from tools.kernels_gpu import tune  # noqa: E402

_SELECT = compare_cases.select


@pytest.fixture(name="quick")
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
  monkeypatch.setattr(tune.compare_cases, "select",
                      lambda ids=None, quick=False: _SELECT(ids, quick=True))


def _choices(path: Path) -> dict[tuple[str, str, str, str], dict]:
  data = json.loads(path.read_text())
  return {(c["op"], c["phase"], c["requested"], json.dumps(c["spec"], sort_keys=True)): c
          for c in data["choices"]}


def test_tune_writes_auto_and_per_implementation_choices_and_merges(quick, tmp_path, capsys):
  del quick
  out = tmp_path / "kind.json"
  assert tune.main(["--cases", "L3", "--iterations", "1", "--out", str(out), "--no-snippet"]) == 0
  first = _choices(out)
  assert json.loads(out.read_text())["device_kind"] == pk.current_device().kind == "pjrtkit_cpu"
  autos = [c for c in first.values() if c["requested"] == "auto"]
  assert sorted(c["phase"] for c in autos) == ["bwd", "fwd"]
  for auto in autos:
    names = {c["implementation"] for c in auto["candidates"]}
    assert names == {"native", "xla"}  # What serves layer norm on the CPU device.
    assert auto["implementation"] == auto["candidates"][0]["implementation"]
    for name in names:
      mine = [c for c in auto["candidates"] if c["implementation"] == name]
      named = first[(auto["op"], auto["phase"], name, json.dumps(auto["spec"], sort_keys=True))]
      assert (named["implementation"], named["config"], named["time_ms"]) == (
          name, mine[0]["config"], mine[0]["time_ms"])
      assert named["candidates"] == mine
  assert len(first) == 6
  # A second run adds the attention case and keeps the layer norm choices.
  assert tune.main(["--cases", "A3", "--iterations", "1", "--out", str(out), "--no-snippet"]) == 0
  second = _choices(out)
  assert {k: second[k] for k in first} == first
  assert {c["requested"] for c in second.values() if c["op"] == "dot_product_attention"} == {
      "auto", "native", "xla", "xla_chunked"}
  assert "A3 attention fwd 2x128x2x64: tuned at" in capsys.readouterr().out


def test_tune_refuses_a_file_of_another_device_kind(quick, tmp_path):
  del quick
  out = tmp_path / "other.json"
  out.write_text(pk.AutotuningResult("NVIDIA H200", ()).dumps())
  with pytest.raises(SystemExit, match="holds choices for 'NVIDIA H200', not 'pjrtkit_cpu'"):
    tune.main(["--cases", "L1", "--out", str(out), "--no-snippet"])


def test_tune_never_tunes_the_held_out_cases(tmp_path):
  out = tmp_path / "kind.json"
  with pytest.raises(SystemExit, match=r"^H1, H3: held out \(the comparison's shapes nobody "
                     r"tuned\); tuning them would end that$"):
    tune.main(["--cases", "A3,H1,h3", "--out", str(out), "--no-snippet"])
  assert not out.exists()
  every = tune.cases_to_tune([])
  assert [c.id for c in every if c.op in ("attention", "layer_norm")] == [
      "A4", "L3", "L4", "A5", "A6", "A7", "A8", "A9", "A10", "S1", "S5", "S6", "S7", "S8", "S9",
      "S10", "S11", "A1", "A2", "A3", "L1", "L2", "S2", "S3", "S4", "S12", "S13"]
  assert not any(c.held_out for c in every) and {"RD1", "GL4", "CE2", "TM1"} <= {
      c.id for c in every}   # the other ops' cases are tuned too, their held-out ones not
  assert [c.id for c in tune.cases_to_tune(["A1", "A8"])] == ["A8", "A1"]


def test_the_shipped_h200_file_is_where_tune_writes_and_what_pk_reads():
  path = tuned_lib.shipped_path("NVIDIA H200")
  assert path == Path(tune.__file__).resolve().parents[2] / "kernels" / "tuned" / "NVIDIA_H200.json"
  shipped = pk.AutotuningResult.loads(path.read_text())
  assert shipped == tuned_lib.shipped_result("NVIDIA H200")
  assert shipped.dumps() + "\n" == path.read_text()  # As tune.py writes it: stable text.


def _close_bf16(got: jax.Array, want: jax.Array) -> None:
  """Jitted as a whole against run op by op: bfloat16 roundings may differ by one unit in the
  last place (2**-7 relative)."""
  assert got.shape == want.shape and got.dtype == want.dtype
  np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                             rtol=2**-7, atol=2**-7)


def test_profile_targets_run_one_phase_each():
  case = _SELECT(["L3"], quick=True)[0]
  fwd, fwd_args = profile_cases.target_function(case, "xla", "fwd")
  assert len(fwd_args) == 3
  forward = cc.pk_forward(case, "xla")
  _close_bf16(fwd(*fwd_args), forward(*fwd_args))
  bwd, bwd_args = profile_cases.target_function(case, "xla", "bwd")
  arrays = cc.make_inputs(case)
  _, pullback = jax.vjp(forward, *arrays[:3])
  for got, want in zip(bwd(*bwd_args), pullback(arrays[3]), strict=True):
    _close_bf16(got, want)
  with pytest.raises(ValueError, match="phase must be 'fwd' or 'bwd', got 'both'"):
    profile_cases.target_function(case, "xla", "both")
  with pytest.raises(SystemExit, match="target must be CASE:IMPLEMENTATION:PHASE"):
    profile_cases.main(["Z9:xla:fwd"])
  with pytest.raises(ValueError, match="implementation 'cudnn' is for attention cases, got L3"):
    profile_cases.target_function(case, "cudnn", "fwd")
  with pytest.raises(SystemExit, match="target 'L3:cudnn:fwd': implementation 'cudnn' is for "
                                       "attention cases, got L3"):
    profile_cases.main(["L3:cudnn:fwd"])


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
