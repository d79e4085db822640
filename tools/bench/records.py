"""What a workload reports: one median per measurement, plus what is needed to compare it."""

from __future__ import annotations

import dataclasses
from typing import Any, Optional


@dataclasses.dataclass(frozen=True)
class Measurement:
  """One measured quantity of one backend.

  Attributes:
    key: stable identifier, e.g. ``h2d_64MiB``.
    label: human-readable description for tables and plots.
    group: ``dispatch``, ``transfer``, ``memcpy``, ``compute``, ``compile`` or ``collective``.
    seconds: median seconds per operation; None when not available.
    nbytes: bytes moved per operation (transfers and memcpy), else 0.
    na_reason: why `seconds` is None.
    note: extra facts worth recording (alignment of the source array, cache hits, ...).
  """

  key: str
  label: str
  group: str
  seconds: Optional[float]
  nbytes: int = 0
  na_reason: Optional[str] = None
  note: Optional[str] = None

  @property
  def gbps(self) -> Optional[float]:
    """Throughput in GB/s (1e9 bytes per second) for byte-moving measurements."""
    if self.seconds is None or self.nbytes == 0 or self.seconds <= 0:
      return None
    return self.nbytes / self.seconds / 1e9

  def to_json(self) -> dict[str, Any]:
    """A JSON-serialisable dict (the dataclass fields plus `gbps`)."""
    out = dataclasses.asdict(self)
    out["gbps"] = self.gbps
    return out

  @staticmethod
  def from_json(data: dict[str, Any]) -> "Measurement":
    """The inverse of `to_json` (ignores derived fields)."""
    fields = {f.name for f in dataclasses.fields(Measurement)}
    return Measurement(**{k: v for k, v in data.items() if k in fields})
