"""The "mosaic" layer norm's forward for wide rows (more than 256 channels, a multiple of 1024).

Why: the Triton forward at (8192, 8192) bf16 holds a whole row per program in registers (254 per
thread), so 2 programs of 4 warps fit an SM and DRAM runs at 68 % (3.50 TB/s on the H200;
``docs/results/kernels/ncu_fwd_h200.txt``). Here the rows in flight sit in shared memory instead:
each program (one warpgroup; `programs_per_sm` of them per SM) runs rows pid, pid + programs, ...
through ``plgpu.emit_pipeline``, whose TMA loads keep `stages` rows in flight while the warpgroup
normalises one, and whose TMA stores write the results back. A row of `c` channels is viewed as a
``(c // 128, 128)`` tile (TMA boxes are at most 256 elements per dimension) and loaded in Mosaic
GPU's warpgroup-strided layout (8 consecutive channels per thread), in which a sum over the whole
tile is one reduction across the warpgroup. Scale and offset are copied to shared memory once per
program, in their own dtype.

On the H200 (2026-12-01, bf16, CUPTI): 3.88 TB/s at (8192, 8192) with 4 stages and one program
per SM, against 3.48 for the tuned Triton forward and 3.21 for XLA in the same process
(``tools/kernels_gpu/ln_wide_bench.py``). Compiled only: ``plgpu.emit_pipeline`` has no Pallas
interpreter path, so CI checks that it lowers for CUDA (``mosaic_wide_test.py``).
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
import jax.experimental.pallas.mosaic_gpu as plgpu

from pjrtkit.kernels.core import pallas as pallas_lib

_SPLIT = 128
"""Channels per row of the shared-memory tile a row is viewed as."""

_VECTOR = 8
"""Consecutive channels per thread in the warpgroup-strided layout (16 bytes of bfloat16)."""

_MAX_TMA_BOX = 256
"""Elements a TMA copy moves at most along one dimension: rows of up to 256 x `_SPLIT` channels."""

_WARPGROUP_THREADS = 128
_GRID_AXIS = "rows"


def smem_bytes(channels: int, itemsize: int, param_itemsizes: Sequence[int], stages: int) -> int:
  """Shared memory of one program: `stages` input and output rows, and the parameter vectors."""
  return 2 * stages * channels * itemsize + sum(param_itemsizes) * channels


def unsupported_reason(channels: int, itemsize: int, param_itemsizes: Sequence[int],
                       stages: int = 1, programs_per_sm: int = 1) -> str | None:
  """Why this kernel cannot take rows of `channels` with `stages` and `programs_per_sm` (None
  when it can)."""
  if channels % (_SPLIT * _VECTOR) or channels < _SPLIT * _VECTOR:
    return (f"channels must be a positive multiple of {_SPLIT * _VECTOR} (a warpgroup's "
            f"{_WARPGROUP_THREADS} threads x {_VECTOR} per load) for rows wider than 256, got "
            f"{channels}")
  if channels > _MAX_TMA_BOX * _SPLIT:
    return (f"channels must be at most {_MAX_TMA_BOX * _SPLIT} (a row is copied as a "
            f"(channels / {_SPLIT}, {_SPLIT}) TMA box of at most {_MAX_TMA_BOX} rows), got "
            f"{channels}")
  need = smem_bytes(channels, itemsize, param_itemsizes, stages) * programs_per_sm
  if need > pallas_lib.HOPPER_SMEM_LIMIT:
    return (f"stages={stages}, programs_per_sm={programs_per_sm} need {need} bytes of shared "
            f"memory per SM at {channels} channels, more than the {pallas_lib.HOPPER_SMEM_LIMIT} "
            f"an SM has")
  return None


def forward(x: Any, scale: Any | None, offset: Any | None, *, epsilon: float,
            subtract_mean: bool, stages: int, programs_per_sm: int) -> Any:
  """Layer norm (RMS norm without `subtract_mean`) of the rows of a 2-D `x` [n, c].

  Args:
    x: [n, c] rows; scale, offset: [c] or None (read in their own dtypes).
    stages: rows in flight per program (loads and stores each keep that many row buffers).
    programs_per_sm: programs launched per SM (each one warpgroup).

  Raises:
    ValueError: for rows this kernel cannot take (`unsupported_reason`) or bad counts.
  """
  for name, value in (("stages", stages), ("programs_per_sm", programs_per_sm)):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
      raise ValueError(f"layer_norm mosaic: {name} must be an int >= 1, got {value!r}")
  n, c = x.shape
  params = [v for v in (scale, offset) if v is not None]
  reason = unsupported_reason(c, x.dtype.itemsize, [v.dtype.itemsize for v in params], stages,
                              programs_per_sm)
  if reason:
    raise ValueError(f"layer_norm mosaic: {reason}")
  tile = (c // _SPLIT, _SPLIT)
  layout = plgpu.Layout.WG_STRIDED(tile, _VECTOR)
  programs = min(n, programs_per_sm * pallas_lib.sm_count())
  params = [v.reshape(tile) for v in params]

  def kernel(x_g, *refs):
    param_g = refs[:len(params)]
    y_g = refs[len(params)]
    param_s = refs[len(params) + 1:2 * len(params) + 1]
    bars = refs[-1]
    pid = lax.axis_index(_GRID_AXIS)
    for k, (src, dst) in enumerate(zip(param_g, param_s)):
      plgpu.copy_gmem_to_smem(src, dst, bars.at[k])
    for k in range(len(params)):
      plgpu.barrier_wait(bars.at[k])
    param_iter = iter(param_s)
    scale_s = next(param_iter) if scale is not None else None
    offset_s = next(param_iter) if offset is not None else None

    def body(_, x_s, y_s):
      v = plgpu.load(x_s.at[0], layout=layout).astype(jnp.float32)
      if subtract_mean:
        v = v - jnp.sum(v) * (1.0 / c)
      v = v * lax.rsqrt(jnp.sum(v * v) * (1.0 / c) + epsilon)
      if scale_s is not None:
        v = v * plgpu.load(scale_s, layout=layout).astype(jnp.float32)
      if offset_s is not None:
        v = v + plgpu.load(offset_s, layout=layout).astype(jnp.float32)
      y_s.at[0][...] = v.astype(y_s.dtype)

    spec = pl.BlockSpec((1, *tile), lambda i: (pid + i * programs, 0, 0))
    plgpu.emit_pipeline(body, grid=(lax.div(n - pid + programs - 1, programs),),
                        in_specs=[spec], out_specs=[spec],
                        max_concurrent_steps=stages)(x_g, y_g)

  scratch = [plgpu.SMEM(tile, v.dtype) for v in params]
  scratch.append(plgpu.Barrier(num_barriers=max(1, len(params))))
  y = plgpu.kernel(
      kernel, out_type=jax.ShapeDtypeStruct((n, *tile), x.dtype), grid=(programs,),
      grid_names=(_GRID_AXIS,), scratch_types=scratch,
      compiler_params=plgpu.CompilerParams(approx_math=True),
      kernel_name="pjrtkit_layer_norm_fwd_mosaic_wide")(x.reshape(n, *tile), *params)
  return y.reshape(n, c)
