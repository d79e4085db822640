"""The GPU mode's report logic (no GPU, no JAX): medians over rounds, ratios, goals, table."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from tools.bench import gpu


def _record(backend: str, scale: float) -> dict:
  results = {"device": "d", "device_kind": "NVIDIA H200"}
  for key, seconds in [("dispatch_async", 30e-6), ("matmul_bf16_8192", 1.7e-3),
                       ("h2d_64MiB", 12e-3), ("h2d_64MiB_from_pinned_host", 1.7e-3),
                       ("d2h_1024MiB", 0.56)]:
    entry = {"seconds": seconds * scale}
    if key.startswith(("h2d", "d2h")):
      entry["GBps"] = (64 << 20 if "64MiB" in key else 1 << 30) / entry["seconds"] / 1e9
    if key.startswith("matmul"):
      entry["TFLOPs"] = 2 * 8192 ** 3 / entry["seconds"] / 1e12
    results[key] = entry
  return {"backend": backend, "results": results}


class GpuReportTest(unittest.TestCase):

  def test_medians_ratios_and_goals(self):
    records = [_record("cuda", 1.0), _record("cuda", 1.2), _record("cuda", 0.9),
               _record("pjrtkit", 1.03), _record("pjrtkit", 1.5), _record("pjrtkit", 1.0)]
    report = gpu.combine(records)
    self.assertEqual(report["rounds"], 3)
    rows = {row["key"]: row for row in report["rows"]}
    self.assertAlmostEqual(rows["dispatch_async"]["cuda"]["seconds"], 30e-6)
    self.assertAlmostEqual(rows["dispatch_async"]["pjrtkit"]["seconds"], 30e-6 * 1.03)
    self.assertAlmostEqual(rows["dispatch_async"]["ratio"], 1.03)
    self.assertEqual(rows["dispatch_async"]["cuda"]["per_round"],
                     [30e-6, 30e-6 * 1.2, 30e-6 * 0.9])
    self.assertTrue(rows["dispatch_async"]["meets_target"])  # <= 1.05
    self.assertFalse(rows["matmul_bf16_8192"]["meets_target"])  # 1.03 > 1/0.98
    self.assertTrue(rows["h2d_64MiB"]["meets_target"])  # <= 1/0.95
    self.assertNotIn("target", rows["h2d_64MiB_from_pinned_host"])  # Reported, no goal.
    # Reads into numpy also need 10 GB/s on pjrtkit: at parity with 1.9 GB/s direct, not met.
    self.assertEqual(rows["d2h_1024MiB"]["min_gbps"], 10.0)
    self.assertLess(rows["d2h_1024MiB"]["ratio"], 1.0 / 0.95)
    self.assertFalse(rows["d2h_1024MiB"]["meets_target"])
    fast = gpu.combine([_record("cuda", 1.0), _record("pjrtkit", 0.1)])
    self.assertTrue({r["key"]: r for r in fast["rows"]}["d2h_1024MiB"]["meets_target"])
    d2h_line = [line for line in gpu.format_table(fast).splitlines() if "device to host" in line]
    self.assertEqual(d2h_line, ["| device to host 1024MiB (numpy) | 560.00 ms (1.9 GB/s) | "
                                "56.00 ms (19.2 GB/s) | 0.100 | <= 1.05, pjrtkit >= 10 GB/s (met) |"])
    self.assertEqual(gpu.label("h2d_64MiB_from_pinned_host"),
                     "host to device 64MiB (from pinned_host)")
    self.assertEqual(gpu.label("d2h_1024MiB"), "device to host 1024MiB (numpy)")
    self.assertEqual(gpu.label("matmul_bf16_8192"), "matmul bf16 8192^3")
    table = gpu.format_table(report).splitlines()
    self.assertEqual(table[0], "| workload | CUDA plugin direct | pjrtkit xla_gpu | "
                               "pjrtkit / direct | goal |")
    self.assertEqual(table[2], "| jit dispatch, async (f32[8] x+1) | 30.0 us | 30.9 us | 1.030 | "
                               "<= 1.05 (met) |")
    with tempfile.TemporaryDirectory() as tmp:
      gpu.draw(report, Path(tmp) / "b.png", "test")
      self.assertEqual((Path(tmp) / "b.png").read_bytes()[:8], b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
  unittest.main()
