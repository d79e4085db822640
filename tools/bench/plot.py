"""The benchmark's figure: pjrtkit's time ratio to each baseline, one pair of bars per
measurement, drawn with tools.bench.png (no plotting library)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.bench.backends import DIRECT_PLATFORM
from tools.bench.png import GLYPH_HEIGHT, Canvas

_BAR_COLORS = {"cpu": (120, 144, 180), DIRECT_PLATFORM: (226, 128, 44)}
_AXIS_MAX = 2.0          # Ratios above it are drawn clipped, with their value written out.
_LEFT = 330              # Width of the label column.
_PLOT_WIDTH = 560        # Width of the bars' area.
_ROW_HEIGHT = 26
_TOP = 70


def draw(report: dict[str, Any], path: Path, subtitle: str) -> None:
  """Writes the ratio chart of `report` (tools.bench.report.combine) to `path` as a PNG.

  Memcpy rows are left out (they measure the host, not a backend).
  """
  rows = [r for r in report["rows"] if r["group"] != "memcpy"]
  height = _TOP + _ROW_HEIGHT * len(rows) + 50
  canvas = Canvas(_LEFT + _PLOT_WIDTH + 110, height)
  canvas.text(10, 10, "pjrtkit time / baseline time (lower is faster; 1 = same)", scale=2)
  canvas.text(10, 34, subtitle)
  x = 10
  for name, color in _BAR_COLORS.items():
    canvas.fill_rect(x, 50, 12, 10, color)
    x = canvas.text(x + 16, 52, f"vs {name}") + 20

  def x_of(ratio: float) -> int:
    return _LEFT + int(_PLOT_WIDTH * min(ratio, _AXIS_MAX) / _AXIS_MAX)

  for tick in (0.0, 0.5, 1.0, 1.5, 2.0):
    canvas.fill_rect(x_of(tick), _TOP - 4, 1, _ROW_HEIGHT * len(rows) + 4,
                     (0, 0, 0) if tick == 1.0 else (215, 215, 215))
    canvas.text(x_of(tick) - 8, _TOP + _ROW_HEIGHT * len(rows) + 6, f"{tick:.1f}")
  for i, row in enumerate(rows):
    y = _TOP + i * _ROW_HEIGHT
    label = row["label"] if len(row["label"]) <= 52 else row["label"][:50] + ".."
    canvas.text(10, y + 8, label)
    for j, (name, color) in enumerate(_BAR_COLORS.items()):
      ratio = row["ratios"].get(name)
      bar_y = y + 3 + j * 10
      if ratio is None:
        canvas.text(_LEFT + 4, bar_y, "n/a", (150, 0, 0))
        continue
      canvas.fill_rect(_LEFT, bar_y, x_of(ratio) - _LEFT, 9, color)
      canvas.text(x_of(ratio) + 4, bar_y + (9 - GLYPH_HEIGHT) // 2 + 1, f"{ratio:.2f}")
  canvas.save(path)
