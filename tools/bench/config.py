"""Benchmark settings: sizes and repeat counts, full or quick."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

DEFAULT_OUT = Path(tempfile.gettempdir()) / "pjrtkit_bench"
"""Where the benchmarks write without ``--out``: outside the source tree (the figures the docs
cite are copied into ``docs/results/`` by hand)."""

KIB = 1 << 10
MIB = 1 << 20


@dataclasses.dataclass(frozen=True)
class BenchConfig:
  """How much work each workload does.

  Attributes:
    transfer_sizes: bytes per host<->device transfer (float32 arrays).
    dispatch_inner: calls per dispatch-latency sample.
    dispatch_repeats: dispatch-latency samples.
    matmul_size: n of the n x n float32 matmul.
    compute_repeats: samples of the matmul.
    mlp_repeats: samples of the MLP training step.
    compile_repeats: samples of each compile-time measurement.
    pmap_repeats: samples of the pmap/psum round trip.
  """

  transfer_sizes: tuple[int, ...] = (KIB, MIB, 64 * MIB, 512 * MIB)
  dispatch_inner: int = 200
  dispatch_repeats: int = 25
  matmul_size: int = 2048
  compute_repeats: int = 15
  mlp_repeats: int = 151
  compile_repeats: int = 3
  pmap_repeats: int = 101

  def transfer_repeats(self, nbytes: int) -> int:
    """Samples for a transfer of `nbytes`: many for small arrays, few for huge ones."""
    if nbytes <= 64 * KIB:
      return 201
    if nbytes <= 4 * MIB:
      return 51
    if nbytes <= 128 * MIB:
      return 9
    return 5


FULL = BenchConfig()
QUICK = BenchConfig(transfer_sizes=(KIB, MIB, 64 * MIB), dispatch_inner=50, dispatch_repeats=7,
                    matmul_size=512, compute_repeats=3, mlp_repeats=9, compile_repeats=1,
                    pmap_repeats=11)
"""A smoke-test configuration (seconds per backend); its numbers are not for reporting."""


def size_name(nbytes: int) -> str:
  """"1KiB", "64MiB", ... for an exact KiB/MiB multiple."""
  if nbytes % MIB == 0:
    return f"{nbytes // MIB}MiB"
  if nbytes % KIB == 0:
    return f"{nbytes // KIB}KiB"
  return f"{nbytes}B"
