"""tools.kernels_gpu.power_bench on the CPU: nvidia-smi lines parsed and summarized per timing
window, the command line refusing bad values by name, the sampler's failures named, and whole runs
at the comparison's --quick shapes on the CPU device beside a stand-in sampler that prints
nvidia-smi's lines (one contender failing, the others still reported)."""

from __future__ import annotations

import sys
import textwrap

from pjrtkit.kernels import testing

testing.setup_environment()

import pytest  # noqa: E402

from tools.bench import compare_contenders as cc  # noqa: E402
from tools.kernels_gpu import power_bench as pb  # noqa: E402


def test_samples_are_parsed_as_utc_and_other_lines_kept_apart():
  lines = ["2026/12/01 22:43:48.123, 1980, 650.50, 55\n",
           "timestamp, clocks.sm [MHz], power.draw.instant [W]\n",
           "2026/12/01 22:43:48.173, 1845, [N/A], 56\n",
           "2026/12/01 22:43:48.223, 1830, 120.00, 57\n",
           "\n",
           "2026/12/01 22:43:48.273, 1830, 650.50, 5"]  # cut off: no newline
  samples, rejected = pb.parse_samples(lines)
  assert samples == [pb.Sample(1796165028.123, 1980.0, 650.5, 55.0),
                     pb.Sample(1796165028.223, 1830.0, 120.0, 57.0)]
  assert rejected == ["timestamp, clocks.sm [MHz], power.draw.instant [W]",
                      "2026/12/01 22:43:48.173, 1845, [N/A], 56",
                      "2026/12/01 22:43:48.273, 1830, 650.50, 5"]


def test_summary_and_round_clocks_take_busy_samples_inside_the_windows():
  samples = [pb.Sample(t, mhz, w, c) for t, mhz, w, c in [
      (1.0, 1980, 690, 50), (1.5, 1800, 680, 58), (2.0, 1900, 100, 40),  # window 1
      (3.0, 1500, 700, 70),  # outside every window
      (4.0, 1700, 650, 60), (4.05, 1600, 200, 61)]]  # window 2 (200 W: not above the busy power)
  windows = [(0.9, 2.1), (3.9, 4.1), (5.0, 6.0)]
  summary = pb.summarize(samples, windows, busy_watts=200)
  assert summary == pb.Summary(samples=5, busy=3, sm_mhz_median=1800, sm_mhz_min=1700,
                               power_w_median=680, temp_c_max=60)
  assert summary.describe() == ("3 busy samples of 5; SM clock median 1800 MHz (min 1700), "
                                "power median 680 W, temperature max 60 C")
  assert pb.round_clocks(samples, windows, busy_watts=200) == [1890, 1700, None]
  assert pb.summarize(samples, [(1.9, 2.1)], busy_watts=200) is None


@pytest.mark.parametrize("argv,message", [
    (["A11"], "cases: unknown case(s) ['A11']; known: A1, A2"),
    ([" , "], "cases: none given in ' , '; known: A1, A2"),
    (["A3", "--rounds", "0"], "--rounds must be >= 1, got 0"),
    (["A3", "--iterations", "0"], "--iterations must be >= 1, got 0"),
    (["A3", "--interval-ms", "0"], "--interval-ms must be >= 1, got 0"),
    (["A3", "--seq-len", "0"], "--seq-len must be >= 1, got 0"),
    (["A3", "--busy-watts", "nan"], "--busy-watts must be a finite number >= 0, got nan"),
    (["A3,L1", "--seq-len", "4096"], "--seq-len: attention cases only, got ['L1']"),
    (["A3", "--contenders", "pk mosaic,cuDNN2"], "--contenders: unknown ['cuDNN2']; accepted: "),
    (["L1", "--contenders", "cuDNN"],
     "--contenders: none of ['cuDNN'] for L1; accepted: ['pk triton'"),
])
def test_bad_arguments_are_refused_by_name(capsys, argv, message):
  with pytest.raises(SystemExit):
    pb.main(argv)
  assert message in capsys.readouterr().err


def _stand_in(tmp_path, body: str) -> str:
  script = tmp_path / "fake_smi.py"
  script.write_text(textwrap.dedent(body))
  wrapper = tmp_path / "fake_smi"
  wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
  wrapper.chmod(0o755)
  return str(wrapper)


# Prints a sample every millisecond (UTC, nvidia-smi's format), after checking its arguments.
_SAMPLES = """\
    import datetime, sys, time
    assert sys.argv[1:] == ["-i", "0", "--query-gpu=timestamp,clocks.sm,power.draw.instant,"
                            "temperature.gpu", "--format=csv,noheader,nounits", "-lms", "1"]
    while True:
      stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y/%m/%d %H:%M:%S.%f")
      print(f"{stamp[:-3]}, 1500, 300.00, 40", flush=True)
      time.sleep(0.001)
    """


def test_whole_runs_beside_a_stand_in_sampler(tmp_path, capsys, monkeypatch):
  smi = _stand_in(tmp_path, _SAMPLES)
  # 200 iterations: every round lasts tens of ms, so the 1 ms stand-in lands samples in each
  # round's window even when a loaded 2-core machine holds it back for a few ms (20 did not).
  base = ["--contenders", "pk xla,XLA jnp", "--rounds", "3", "--iterations", "200",
          "--interval-ms", "1", "--smi", smi, "--quick"]
  assert pb.main(["A3,L1"] + base) == 0
  out = capsys.readouterr().out.splitlines()
  assert [l.split(":")[0] for l in out] == [
      "A3 attention fwd 2x128x2x64", "A3 pk xla", "L1 layer_norm fwd 2048x64", "L1 pk xla",
      "L1 XLA jnp"]
  for line, unit in ((out[1], "TFLOP/s"), (out[3], "TB/s"), (out[4], "TB/s")):
    rounds = line.split(f" {unit} rounds ")[1].split(";")[0].split()
    assert len(rounds) == 3 and all(float(r) > 0 for r in rounds)
    assert "; round clocks 1500 1500 1500; " in line
    assert line.endswith("SM clock median 1500 MHz (min 1500), power median 300 W, "
                         "temperature max 40 C")
  # Another sequence length, and a contender that cannot be made: skipped with its reason.
  real = cc.contenders_for

  def failing(op, only=()):
    return [c if c.name != "pk triton" else cc.Contender(
        "pk triton", c.group, c.op, lambda case: (_ for _ in ()).throw(ImportError("no triton")))
            for c in real(op, only)]

  monkeypatch.setattr(cc, "contenders_for", failing)
  assert pb.main(["A3", "--seq-len", "384", "--contenders", "pk triton,pk xla"] + base[2:]) == 0
  out = capsys.readouterr().out.splitlines()
  assert out[0].startswith("A3 attention fwd 2x384x2x64: ")
  assert out[1] == "A3 pk triton: skipped: ImportError: no triton"
  assert out[2].startswith("A3 pk xla: ")


def test_sampler_failures_are_named(tmp_path):
  with pytest.raises(RuntimeError, match="--smi: cannot run '/nonexistent/nvidia-smi'"):
    with pb.Sampler("/nonexistent/nvidia-smi", 50, "power.draw.instant", 0):
      pass
  smi = _stand_in(tmp_path, """\
      import sys
      print('Field "power.draw.instant" is not a valid field to query.', file=sys.stderr)
      sys.exit(2)
      """)
  with pytest.raises(RuntimeError) as e:
    with pb.Sampler(smi, 50, "power.draw.instant", 0, startup_s=3):
      pass
  assert ('gave no sample in 3 s; stderr: Field "power.draw.instant" is not a valid'
          in str(e.value))
  assert "(--power-field: try power.draw" in str(e.value)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
