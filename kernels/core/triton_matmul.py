"""What the Pallas Triton matmul kernels ("triton" ragged_dot and gated_linear_unit) share:
launch parameters, the order programs visit output tiles in, masked tile loads, the in-kernel
dot, and which precisions and activations lower inside a kernel.

Operands stay in global memory as they are (no padding, no copies): a tile is read through
index arrays (rows ``[block, 1]``, columns ``[1, block]``) with the elements past an edge masked,
so they move no data. Tiles are powers of two of at least 16 on each side (Triton's ``tl.dot``
needs 16).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental.pallas import triton as plt

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core.interpret import interpret_enabled

FLOAT_DTYPES = ("bfloat16", "float16", "float32")
"""Operand dtypes the kernels take (products summed in float32)."""

NUM_WARPS = (1, 2, 4, 8, 16)

FUSABLE_ACTIVATIONS = frozenset(functions.KNOWN)
"""Activations (by `functions` name) that lower inside a Pallas Triton kernel on JAX 0.11.2 and
0.12 (every `functions.KNOWN` one: elementwise ``max``/``exp``/``log1p``/``tanh``/``logistic``;
checked by lowering for CUDA in the kernels' lowering tests). ``jax.nn.gelu(approximate=False)``
does not (``erfc`` has no Triton lowering), nor does a custom function as far as we can know, so
those are applied after the kernel, by XLA."""

_TRITON_PRESETS = frozenset({
    "DEFAULT", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F16_F16_F16", "F16_F16_F32",
    "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
    "BF16_BF16_F32_X9"})
"""``jax.lax.DotAlgorithmPreset`` names Pallas's Triton lowering of ``dot_general`` takes."""


@dataclasses.dataclass(frozen=True)
class MatmulConfig:
  """A tiled matmul's launch.

  Attributes:
    block_m: rows of an output tile (a power of two >= 16).
    block_n: columns of an output tile (a power of two >= 16).
    block_k: the contracted dimension's step (a power of two >= 16).
    num_warps: warps per program (1, 2, 4, 8 or 16).
    num_stages: Triton's software-pipelining depth of the k loop (>= 1).
    group_m: the output tiles are visited in bands of `group_m` row tiles, every column tile
      of a band before the next band (consecutive programs share rows of the left operand and
      columns of the right one in L2); 1: row tiles in order, column tile fastest.
  """

  block_m: int = 128
  block_n: int = 128
  block_k: int = 64
  num_warps: int = 8
  num_stages: int = 4
  group_m: int = 8

  def __post_init__(self) -> None:
    for name in ("block_m", "block_n", "block_k"):
      value = getattr(self, name)
      if not isinstance(value, int) or value < 16 or value & (value - 1):
        raise ValueError(f"{name} must be a power of two >= 16, got {value!r}")
    if self.num_warps not in NUM_WARPS:
      raise ValueError(f"num_warps must be one of {NUM_WARPS}, got {self.num_warps!r}")
    if not isinstance(self.num_stages, int) or self.num_stages < 1:
      raise ValueError(f"num_stages must be an int >= 1, got {self.num_stages!r}")
    if not isinstance(self.group_m, int) or self.group_m < 1:
      raise ValueError(f"group_m must be an int >= 1, got {self.group_m!r}")


SMEM_BUDGET = 160 * 1024
"""Shared memory the untuned configs' k-loop pipelines may hold (A100: 164 KiB a block; the
autotuning candidates may use the Hopper's `pallas.HOPPER_SMEM_LIMIT`)."""


def smem_bytes(config: MatmulConfig, itemsize: int, b_tiles: int = 1) -> int:
  """Shared memory the k loop's software pipeline holds (an upper bound): `num_stages` copies of
  a ``block_m x block_k`` tile and `b_tiles` ``block_k x block_n`` tiles."""
  per_stage = config.block_m * config.block_k + b_tiles * config.block_k * config.block_n
  return config.num_stages * per_stage * itemsize


def within_smem(config: MatmulConfig, itemsize: int, b_tiles: int, limit: int
                ) -> MatmulConfig:
  """`config` with block_k halved (down to 32), then fewer stages (down to 1), until
  `smem_bytes` fits `limit` (float32 operands need half the k step of 16-bit ones)."""
  while smem_bytes(config, itemsize, b_tiles) > limit and config.block_k > 32:
    config = dataclasses.replace(config, block_k=config.block_k // 2)
  while smem_bytes(config, itemsize, b_tiles) > limit and config.num_stages > 1:
    config = dataclasses.replace(config, num_stages=config.num_stages - 1)
  return config


def stages_within(stages: int, bytes_per_stage: int, limit: int = SMEM_BUDGET) -> int:
  """The most pipeline stages, at most `stages` and at least 1, whose buffers fit `limit`."""
  return max(1, min(stages, limit // max(bytes_per_stage, 1)))


def call_params(config: MatmulConfig) -> dict[str, Any]:
  """`pallas_call` keyword arguments: interpret mode where enabled, else Triton's launch."""
  if interpret_enabled():
    return {"interpret": True}
  return {"compiler_params": plt.CompilerParams(num_warps=config.num_warps,
                                                num_stages=config.num_stages)}


def block_for(size: int, block: int) -> int:
  """`block` shrunk to the next power of two >= `size` (at least 16): no tile wider than the
  dimension it covers needs to be."""
  p = 16
  while p < size:
    p *= 2
  return min(block, p)


def fit(config: MatmulConfig, m: int, n: int, k: int) -> MatmulConfig:
  """`config` with each block no larger than its (padded) dimension."""
  return dataclasses.replace(config, block_m=block_for(m, config.block_m),
                             block_n=block_for(n, config.block_n),
                             block_k=block_for(k, config.block_k))


def band_order(pid: Any, row_tiles: int, col_tiles: int, group_m: int) -> tuple[Any, Any]:
  """``(row tile, column tile)`` of program `pid` on a 1-D grid of ``row_tiles * col_tiles``
  programs, in bands of `group_m` row tiles (see `MatmulConfig.group_m`)."""
  if group_m == 1:
    return pid // col_tiles, pid % col_tiles
  per_band = group_m * col_tiles
  first = (pid // per_band) * group_m
  size = jnp.minimum(row_tiles - first, group_m)
  within = pid % per_band
  return first + within % size, within // size


def span(start: Any, size: int, axis: int) -> Any:
  """Indices ``start .. start + size - 1`` as a ``[size, 1]`` (axis 0) or ``[1, size]`` (axis 1)
  int32 array."""
  shape = (size, 1) if axis == 0 else (1, size)
  return start + lax.broadcasted_iota(jnp.int32, shape, axis)


def both(a: Any | None, b: Any | None) -> Any | None:
  """The conjunction of two masks (either may be None: no condition)."""
  if a is None:
    return b
  if b is None:
    return a
  return a & b


def below(index: Any, limit: int, block: int) -> Any | None:
  """``index < limit`` where a tile of `block` can pass `limit` (``limit % block``), else None."""
  return (index < limit) if limit % block else None


def load(ref: Any, rows: Any, cols: Any, mask: Any | None) -> Any:
  """The tile ``ref[rows, cols]`` (index arrays ``[r, 1]`` and ``[1, c]``), zero where `mask`
  is False."""
  if mask is None:
    return plt.load(ref.at[rows, cols])
  shape = jnp.broadcast_shapes(rows.shape, cols.shape)
  return plt.load(ref.at[rows, cols], mask=jnp.broadcast_to(mask, shape), other=0)


def store(ref: Any, rows: Any, cols: Any, value: Any, mask: Any | None) -> None:
  """``ref[rows, cols] = value`` where `mask` (everywhere when None)."""
  if mask is None:
    plt.store(ref.at[rows, cols], value)
  else:
    plt.store(ref.at[rows, cols], value, mask=jnp.broadcast_to(mask, value.shape))


def dot(a: Any, b: Any, precision: Any, contract: tuple[int, int] = (1, 0)) -> Any:
  """``a @ b`` summed in float32 (`contract`: the contracted dimension of each 2-D operand, so
  ``(0, 0)`` is ``a.T @ b`` and ``(1, 1)`` is ``a @ b.T``; Triton transposes in registers or
  shared memory)."""
  return lax.dot_general(a, b, (((contract[0],), (contract[1],)), ((), ())),
                         precision=precision, preferred_element_type=jnp.float32)


def precision_reason(name: str | None) -> str | None:
  """Why a call's precision (its `functions.precision_name`) cannot be served by the kernels'
  dot; None when it can."""
  if name is None or not name.startswith("preset:"):
    return None
  preset = name[len("preset:"):]
  if preset not in _TRITON_PRESETS:
    return (f"precision {preset} has no Pallas Triton lowering (accepted presets: "
            f"{', '.join(sorted(_TRITON_PRESETS))})")
  return None


def fusable(name: str | None) -> bool:
  """Whether the activation named `name` (None: none) is applied inside the kernels."""
  return name is None or name in FUSABLE_ACTIVATIONS


def activation_of(name: str | None) -> Callable[[Any], Any] | None:
  """The function of a `fusable` activation name (None for None)."""
  return functions.resolve(name)


def lowering_target() -> Any:
  """A context in which Pallas's Triton lowering targets an H200 (``jax.sharding.
  use_abstract_mesh`` with an abstract CUDA device): what ``jax.export(..., platforms=["cuda"])``
  of a kernel needs on a machine without a GPU (tests; without it the lowering asks for a GPU:
  "No supported GPU devices found")."""
  device = jax.sharding.AbstractDevice(device_kind="NVIDIA H200", num_cores=132,
                                       platform="cuda")
  return jax.sharding.use_abstract_mesh(
      jax.sharding.AbstractMesh((1,), ("pjrtkit_lowering",), abstract_device=device))
