"""What the "mosaic" layer norm keeps beside its kernels: its config and the padding of its
operands to whole tiles ("triton" reads x unpadded, with masks)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax.numpy as jnp

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm import base


@dataclasses.dataclass(frozen=True)
class PallasLayerNormConfig:
  """Attributes:
    block_rows: rows per program (a power of two) of the tile kernels (at most 256 channels).
    stages: rows in flight per program of the wide-row forward (more than 256 channels).
    programs_per_sm: programs per SM of the wide-row forward.
  """

  block_rows: int = 16
  stages: int = 4
  programs_per_sm: int = 1

  def __post_init__(self) -> None:
    if self.block_rows < 1 or self.block_rows & (self.block_rows - 1):
      raise ValueError(f"block_rows must be a power of two, got {self.block_rows}")
    for name in ("stages", "programs_per_sm"):
      value = getattr(self, name)
      if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")


def _prepare(x: Any, scale: Any, offset: Any, spec: Spec, block_rows: int,
             channel_multiple: Callable[[int], int]) -> tuple[Any, ...]:
  """(rows padded to whole tiles and channels, scale, offset as padded float32 vectors,
  restore, rows, channels, padded channels)."""
  rows, restore = base.to_rows(x, spec.param("axis"))
  n, c = rows.shape
  cp, np_ = channel_multiple(c), pallas_lib.round_up(n, block_rows)
  rows_p = pallas_lib.pad_axis(pallas_lib.pad_axis(rows, 0, np_), 1, cp)
  sc = jnp.ones((c,), jnp.float32) if scale is None else scale.astype(jnp.float32)
  of = jnp.zeros((c,), jnp.float32) if offset is None else offset.astype(jnp.float32)
  return rows_p, pallas_lib.pad_axis(sc, 0, cp), pallas_lib.pad_axis(of, 0, cp), restore, n, c, cp
