"""tools.kernels_gpu.power_bench on the CPU: nvidia-smi lines parsed and summarized per timing
window, the command line refusing bad values by name, and a whole run at the comparison's --quick
shape on the CPU device beside a stand-in sampler that prints nvidia-smi's lines."""

from __future__ import annotations

import datetime
import sys
import textwrap
import time

from pjrtkit.kernels import testing

testing.setup_environment()

import pytest  # noqa: E402

from tools.kernels_gpu import power_bench as pb  # noqa: E402


def _line(when: float, mhz: str, watts: str, temp: str) -> str:
  stamp = datetime.datetime.fromtimestamp(when).strftime(pb.TIME_FORMAT)[:-3]
  return f"{stamp}, {mhz}, {watts}, {temp}\n"


def test_samples_are_parsed_and_other_lines_skipped():
  t0 = 1_790_000_000.25
  lines = [_line(t0, "1980", "650.50", "55"), "timestamp, clocks.sm [MHz], power.draw [W]\n",
           _line(t0 + 0.05, "1845", "[N/A]", "56"), "2026/12/01 22:43:48.1", "\n",
           _line(t0 + 0.1, "1830", "120.00", "57")]
  samples = pb.parse_samples(lines)
  assert [(s.sm_mhz, s.power_w, s.temp_c) for s in samples] == [(1980.0, 650.5, 55.0),
                                                                (1830.0, 120.0, 57.0)]
  assert samples[0].time == pytest.approx(t0, abs=1e-3)
  assert samples[1].time - samples[0].time == pytest.approx(0.1, abs=1e-3)


def test_summary_takes_busy_samples_inside_the_windows():
  samples = [pb.Sample(t, mhz, w, c) for t, mhz, w, c in [
      (1.0, 1980, 690, 50), (1.5, 1800, 680, 58), (2.0, 1900, 100, 40),  # window 1
      (3.0, 1500, 700, 70),  # outside every window
      (4.0, 1700, 650, 60)]]  # window 2
  summary = pb.summarize(samples, [(0.9, 2.1), (3.9, 4.1)], busy_watts=200)
  assert summary == pb.Summary(samples=4, busy=3, sm_mhz_median=1800, sm_mhz_min=1700,
                               power_w_median=680, temp_c_max=60)
  assert summary.describe() == ("3 busy samples of 4; SM clock median 1800 MHz (min 1700), "
                                "power median 680 W, temperature max 60 C")
  assert pb.summarize(samples, [(1.9, 2.1)], busy_watts=200) is None


@pytest.mark.parametrize("argv,message", [
    (["A9"], "cases: unknown case(s) ['A9']; known: A1, A2"),
    (["A3", "--rounds", "0"], "--rounds must be >= 1, got 0"),
    (["A3", "--interval-ms", "0"], "--interval-ms must be >= 1, got 0"),
    (["A3", "--contenders", "pk mosaic,cuDNN2"],
     "--contenders: ['cuDNN2'] for A3; accepted: ['pk mosaic', 'pk triton'"),
    (["L1", "--contenders", " , "], "--contenders: none given for L1; accepted: ['pk triton'"),
])
def test_bad_arguments_are_refused_by_name(capsys, argv, message):
  with pytest.raises(SystemExit):
    pb.main(argv)
  assert message in capsys.readouterr().err


def test_a_missing_sampler_is_named():
  with pytest.raises(RuntimeError, match="--smi: cannot run '/nonexistent/nvidia-smi'"):
    with pb.Sampler("/nonexistent/nvidia-smi", 50):
      pass


def test_a_whole_run_beside_a_stand_in_sampler(tmp_path, capsys):
  fake = tmp_path / "fake_smi"
  fake.write_text(textwrap.dedent(f"""\
      #!{sys.executable}
      import datetime, sys, time
      while True:
        stamp = datetime.datetime.now().strftime("{pb.TIME_FORMAT}")[:-3]
        print(f"{{stamp}}, 1500, 300.00, 40", flush=True)
        time.sleep(0.005)
      """))
  fake.chmod(0o755)
  start = time.time()
  assert pb.main(["A3", "--quick", "--contenders", "pk xla", "--rounds", "2", "--iterations", "2",
                  "--interval-ms", "5", "--smi", str(fake)]) == 0
  out = capsys.readouterr().out.splitlines()
  assert out[0].endswith("samples every 5 ms") and int(out[0].split()[0]) > 0
  (line,) = [l for l in out if l.startswith("A3 pk xla: ")]
  rounds = line.split(" TFLOP/s rounds ")[1].split(";")[0].split()
  assert len(rounds) == 2 and all(float(r) > 0 for r in rounds)
  assert line.endswith("SM clock median 1500 MHz (min 1500), power median 300 W, "
                       "temperature max 40 C")
  assert time.time() - start < 120


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
