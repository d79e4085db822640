"""Tests of the benchmark's own logic (no JAX): PNG encoding, combining records, targets."""

from __future__ import annotations

import struct
import tempfile
import unittest
import zlib
from pathlib import Path

from tools.bench import contenders, plot, report
from tools.bench.config import size_name
from tools.bench.png import Canvas
from tools.bench.records import Measurement
from tools.bench.timing import median_of_calls, median_seconds


def _pixels(png: bytes) -> bytes:
  """The decompressed IDAT bytes of a one-IDAT PNG (filter bytes included)."""
  idat_length = struct.unpack(">I", png[33:37])[0]
  return zlib.decompress(png[41:41 + idat_length])


def _record(backend: str, values: dict[str, float]) -> dict:
  measurements = []
  for key, seconds in values.items():
    group = "memcpy" if key.startswith("memcpy") else (
        "transfer" if key.startswith(("h2d", "d2h")) else "dispatch")
    nbytes = 64 << 20 if group != "dispatch" else 0
    measurements.append(Measurement(key, key, group, seconds, nbytes=nbytes).to_json())
  return {"backend": backend, "platform": backend, "measurements": measurements}


class PngTest(unittest.TestCase):

  def test_png_structure_and_pixels(self):
    canvas = Canvas(3, 2)
    canvas.fill_rect(1, 0, 1, 2, (10, 20, 30))
    data = canvas.png_bytes()
    self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
    length, kind = struct.unpack(">I4s", data[8:16])
    self.assertEqual((length, kind), (13, b"IHDR"))
    self.assertEqual(struct.unpack(">IIBBBBB", data[16:29]), (3, 2, 8, 2, 0, 0, 0))
    self.assertEqual(struct.unpack(">I", data[29:33])[0], zlib.crc32(data[12:29]))
    self.assertEqual(data[37:41], b"IDAT")
    raw = _pixels(data)
    white, blue = b"\xff\xff\xff", b"\x0a\x14\x1e"
    self.assertEqual(raw, (b"\x00" + white + blue + white) * 2)
    self.assertEqual(data[-12:], b"\x00\x00\x00\x00IEND\xaeB`\x82")

  def test_text_draws_glyph_pixels(self):
    canvas = Canvas(12, 7)
    end = canvas.text(0, 0, "-1")
    self.assertEqual(end, 12)
    raw = _pixels(canvas.png_bytes())
    row3 = raw[3 * 37 + 1:4 * 37]  # '-' is the middle row of its glyph.
    self.assertEqual(row3[:15], b"\x00" * 15)  # Five black pixels.
    self.assertEqual(Canvas.text_width("abc", scale=2), 36)


class ReportTest(unittest.TestCase):

  def test_combine_takes_medians_and_ratios(self):
    records = [
        _record("cpu", {"dispatch_async": 4.0, "memcpy_64MiB": 4.0, "h2d_64MiB": 40.0}),
        _record("xla_cpu_direct", {"dispatch_async": 4.0, "memcpy_64MiB": 4.0, "h2d_64MiB": 40.0}),
        _record("pjrtkit", {"dispatch_async": 4.1, "memcpy_64MiB": 4.0, "h2d_64MiB": 4.4}),
        _record("pjrtkit", {"dispatch_async": 4.3, "memcpy_64MiB": 4.0, "h2d_64MiB": 4.8}),
        _record("pjrtkit", {"dispatch_async": 5.0, "memcpy_64MiB": 4.0, "h2d_64MiB": 5.0}),
    ]
    combined = report.combine(records)
    self.assertEqual(combined["rounds"], 3)
    rows = {row["key"]: row for row in combined["rows"]}
    self.assertAlmostEqual(rows["dispatch_async"]["seconds"]["pjrtkit"], 4.3)
    self.assertAlmostEqual(rows["dispatch_async"]["ratios"]["xla_cpu_direct"], 4.3 / 4.0)
    self.assertEqual(rows["dispatch_async"]["target"], "<=1.05x direct")
    self.assertFalse(rows["dispatch_async"]["met"])
    self.assertAlmostEqual(rows["h2d_64MiB"]["ratios"]["cpu"], 4.8 / 40.0)
    self.assertAlmostEqual(rows["h2d_64MiB"]["memcpy_fraction"], 4.0 / 4.8)
    self.assertTrue(rows["h2d_64MiB"]["met"])
    self.assertAlmostEqual(rows["h2d_64MiB"]["gbps"]["pjrtkit"], (64 << 20) / 4.8 / 1e9)
    table = report.format_table(combined)
    self.assertIn("pjrtkit/direct", table)
    self.assertIn("1.075", table)
    with tempfile.TemporaryDirectory() as tmp:
      path = Path(tmp) / "bench.png"
      plot.draw(combined, path, "test")
      self.assertEqual(path.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")

  def test_not_available_measurements_carry_their_reason(self):
    na = Measurement("compile_cached", "cached", "compile", None, na_reason="no cache").to_json()
    combined = report.combine([{"backend": "pjrtkit", "measurements": [na]}])
    row = combined["rows"][0]
    self.assertIsNone(row["seconds"]["pjrtkit"])
    self.assertEqual(row["na_reasons"], {"pjrtkit": "no cache"})
    self.assertIn("n/a: cached on pjrtkit: no cache", report.format_table(combined))

  def test_targets(self):
    self.assertIsNone(report.target_for("h2d_1MiB", 1 << 20))
    self.assertIsNone(report.target_for("h2d_64MiB_aligned64", 64 << 20))
    self.assertEqual(report.target_for("d2h_512MiB", 512 << 20).describe(),
                     "<=0.5x direct, >=80% memcpy")
    self.assertEqual(report.target_for("matmul_2048", 0).describe(), "<=1.02x direct")
    self.assertEqual(report.format_value(None, None), "n/a")
    self.assertEqual(report.format_value(2.5e-6, None), "2.50 us")
    self.assertEqual(report.format_value(0.004, 16.0), "4.00 ms (16 GB/s)")


class HelpersTest(unittest.TestCase):

  def test_size_names_and_timing(self):
    self.assertEqual([size_name(1 << 10), size_name(64 << 20), size_name(1000)],
                     ["1KiB", "64MiB", "1000B"])
    calls = []
    seconds = median_seconds(lambda: calls.append(1), repeats=3, warmup=2, inner=4)
    self.assertEqual(len(calls), 20)
    self.assertGreaterEqual(seconds, 0.0)
    seen = []
    self.assertGreaterEqual(median_of_calls(seen.append, [1, 2, 3]), 0.0)
    self.assertEqual(seen, [1, 2, 3])
    with self.assertRaises(ValueError):
      median_seconds(lambda: None, repeats=0)


class ContendersTest(unittest.TestCase):

  def test_parse_shapes(self):
    self.assertEqual(contenders.parse_shapes("8x2048x1024:float32,1x4x2x2x8:bfloat16"),
                     [((8, 2048, 1024), "float32"), ((1, 4, 2, 2, 8), "bfloat16")])
    for bad in ("8x2048", "8xax2:float32", ":float32", "8x2:"):
      with self.assertRaisesRegex(ValueError, "--shapes: .* is not AxBx...:dtype"):
        contenders.parse_shapes(bad)

  def test_arguments_are_the_shared_options(self):
    parser = contenders.arguments("doc", "1x2:float32", "AxB:dtype")
    a = parser.parse_args([])
    self.assertEqual((a.shapes, a.iterations, a.rounds), ("1x2:float32", 3, 2))
    a = parser.parse_args(["--shapes", "3x4:bfloat16", "--rounds", "5", "--iterations", "7"])
    self.assertEqual((a.shapes, a.iterations, a.rounds), ("3x4:bfloat16", 7, 5))
    self.assertIn("AxB:dtype,...", parser.format_help())

  def test_medians_alternate_the_order_and_take_medians(self):
    order: list[str] = []

    class Result:
      def __init__(self, ms: float) -> None:
        self.median_evaluation_time_ms = ms

    def run(name: str, times: list[float]):
      def call(args, iterations):
        self.assertEqual((args, iterations), (["x"], 3))
        order.append(name)
        return Result(times.pop(0))
      return call

    got = contenders.medians({"a": run("a", [5.0, 1.0, 3.0]), "b": run("b", [2.0, 9.0, 4.0])},
                             ["x"], rounds=3, iterations=3)
    self.assertEqual(got, {"a": 3.0, "b": 4.0})
    self.assertEqual(order, ["a", "b", "b", "a", "a", "b"])


if __name__ == "__main__":
  unittest.main()
