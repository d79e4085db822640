"""What the Pallas implementations ("triton", "mosaic") share: when they can run, and padding."""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from pjrtkit.kernels.core import device as device_lib
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.interpret import interpret_enabled


def gpu_unsupported_reason(device: DeviceInfo, backend: str, min_capability: tuple[int, int],
                           only_major: int | None = None) -> str | None:
  """Why a Pallas `backend` kernel cannot run on `device` (None under `pallas_interpret`).
  `only_major`: the one compute capability major the kernels target (wgmma kernels: 9, Hopper;
  later GPUs do not have wgmma)."""
  if interpret_enabled():
    return None
  if not device.is_gpu:
    return (f"Pallas {backend} kernels need an NVIDIA GPU; this is {device.describe()} (no GPU). "
            f"Use implementation=None, 'xla' or 'native' here")
  if device.compute_capability < min_capability:
    return (f"Pallas {backend} kernels need compute capability "
            f"{min_capability[0]}.{min_capability[1]}+, this GPU ({device.kind}) has "
            f"{device.compute_capability[0]}.{device.compute_capability[1]}")
  if only_major is not None and device.compute_capability[0] != only_major:
    return (f"Pallas {backend} kernels here use wgmma, which only compute capability "
            f"{only_major}.x has; this GPU ({device.kind}) has "
            f"{device.compute_capability[0]}.{device.compute_capability[1]}")
  return None


def compiled_wgmma_reason(device: DeviceInfo, kernel: str) -> str | None:
  """Why a compiled-only warp-specialised Mosaic GPU `kernel` (named in the message: "ragged_dot",
  "gated linear unit") cannot run: under `pallas_interpret` (Pallas's interpreter cannot run a
  warp-specialised pipeline), or off Hopper (`gpu_unsupported_reason` with wgmma's 9.x)."""
  if interpret_enabled():
    return (f"the Mosaic GPU {kernel} kernel is compiled only (Pallas's interpreter cannot run "
            f"its warp-specialised pipeline)")
  return gpu_unsupported_reason(device, "Mosaic GPU", (9, 0), only_major=9)


_WGMMA_PRESETS = {"bfloat16": "BF16_BF16_F32", "float16": "F16_F16_F32"}
"""The dot algorithm preset of wgmma's products per 16-bit operand dtype."""


def wgmma_precision_reason(precision: str | None, dtype: str) -> str | None:
  """Why a call's precision (its `functions.precision_name`) is not what a wgmma kernel's
  products of 16-bit `dtype` operands compute (summed in float32): None, any
  ``jax.lax.Precision`` (for 16-bit operands they are all the same products), DEFAULT and the
  dtype's own preset are; None when it is."""
  preset = _WGMMA_PRESETS[dtype]
  if precision is None or not precision.startswith("preset:") or precision in (
      f"preset:{preset}", "preset:DEFAULT"):
    return None
  return (f"precision {precision[len('preset:'):]} is not the kernel's products (accepted: "
          f"None, a jax.lax.Precision, DEFAULT or {preset})")


HOPPER_SMEM_LIMIT = 227 * 1024
"""Shared memory one Hopper block may use (sm_90: 227 KiB)."""


def wgmma_smem(shape: tuple[int, ...], dtype: Any) -> Any:
  """A Mosaic GPU shared-memory tile wgmma and TMA read: (8, 64) tiles, 128-byte swizzle (rows of
  64 16-bit elements)."""
  import jax.experimental.pallas.mosaic_gpu as plgpu  # pylint: disable=g-import-not-at-top
  return plgpu.SMEM(shape, dtype, transforms=(plgpu.TilingTransform((8, 64)),
                                              plgpu.SwizzleTransform(128)))


FIRST_FREE_NAMED_BARRIER = 8
"""Hardware named barriers (``bar.sync``/``bar.arrive``, ids 0-15) from this id up are free for
kernels: Mosaic GPU takes id 0 (``gpu.barrier``) and 1 + warpgroup index for its warpgroup
barriers (at most 4 warpgroups in our kernels: ids 1-4)."""


def named_barrier(op: str, barrier_id: Any, threads: int) -> None:
  """``bar.<op> barrier_id, threads`` from each thread of the calling warpgroup (inside a Mosaic
  GPU kernel). ``op`` "arrive" counts this warpgroup's 128 threads towards `threads` and goes on;
  "sync" counts them and waits until `threads` threads arrived. Unlike an mbarrier wait this does
  not poll: the hardware parks the warps. `barrier_id`: a traced int32 scalar or an int, at least
  `FIRST_FREE_NAMED_BARRIER`."""
  if op not in ("arrive", "sync"):
    raise ValueError(f"op must be 'arrive' or 'sync', got {op!r}")
  if isinstance(barrier_id, int) and not FIRST_FREE_NAMED_BARRIER <= barrier_id <= 15:
    raise ValueError(f"barrier_id must be in [{FIRST_FREE_NAMED_BARRIER}, 15], got {barrier_id}")
  if threads % 32 or not 0 < threads <= 1024:
    raise ValueError(f"threads must be a positive multiple of 32 up to 1024, got {threads}")
  import jax.experimental.pallas.mosaic_gpu as plgpu  # pylint: disable=g-import-not-at-top
  from jax.experimental.mosaic import gpu as mgpu  # pylint: disable=g-import-not-at-top

  @plgpu.inline_mgpu(arg_types=(plgpu.Layout.WG_SPLAT,))
  def emit(_: Any, index: Any) -> None:
    mgpu.utils.inline_ptx(f"bar.{op} $0, {threads};", index.registers[()],
                          has_side_effects=True)

  emit(jnp.asarray(barrier_id, jnp.int32))


DEFAULT_SMS = 132
"""SM count assumed where the device does not report one (H100 SXM and H200 have 132)."""


def sm_count() -> int:
  """Streaming multiprocessors of the default device (`DEFAULT_SMS` where it does not say)."""
  try:
    dev = jax.config.jax_default_device
    if dev is None or isinstance(dev, str):
      dev = jax.devices(dev)[0] if isinstance(dev, str) else jax.devices()[0]
    count = int(getattr(dev, "core_count", 0) or 0)
  except Exception:  # pylint: disable=broad-except
    count = 0
  return count if count > 0 else DEFAULT_SMS


def gpu_sm_count() -> int:
  """`sm_count()` where the default device is an NVIDIA GPU, else `DEFAULT_SMS` (a CPU device's
  core count says nothing about the GPU a program exported for CUDA will run on)."""
  try:
    is_gpu = device_lib.current_device().is_gpu
  except Exception:  # pylint: disable=broad-except
    is_gpu = False
  return sm_count() if is_gpu else DEFAULT_SMS


_DETERMINISM_FLAGS = ("--xla_gpu_deterministic_ops", "--xla_gpu_exclude_nondeterministic_ops")


def deterministic_ops_requested() -> bool:
  """Whether ``XLA_FLAGS`` asks XLA:GPU for deterministic results
  (``--xla_gpu_deterministic_ops`` or ``--xla_gpu_exclude_nondeterministic_ops``, given alone or
  ``=true``/``=1``): kernels whose floating-point sums depend on the order of atomic adds then
  take a deterministic path. Read when a call is traced: set the flag before the first call (as
  XLA itself needs), since functions already traced and cached keep the path they took."""
  for flag in os.environ.get("XLA_FLAGS", "").split():
    name, _, value = flag.partition("=")
    if name in _DETERMINISM_FLAGS and value.lower() in ("", "true", "1"):
      return True
  return False


def next_pow2(n: int, minimum: int = 16) -> int:
  """Smallest power of two >= max(n, minimum)."""
  p = minimum
  while p < n:
    p *= 2
  return p


def round_up(n: int, m: int) -> int:
  """n rounded up to a multiple of m."""
  return -(-n // m) * m


def pad_axis(x: Any, axis: int, size: int) -> Any:
  """x zero-padded along `axis` to `size` (unchanged when already that long)."""
  if x.shape[axis] == size:
    return x
  widths = [(0, 0)] * x.ndim
  widths[axis] = (0, size - x.shape[axis])
  return jnp.pad(x, widths)


MOSAIC_GRID_AXIS = "pjrtkit_program"
"""The grid axis name of compiled Mosaic GPU kernels (`mosaic_program_id` reads it)."""


def mosaic_call(body: Callable[..., None], *, grid: int, out_shape: Any, num_inputs: int,
                name: str, reduction_scratch_bytes: int | None = None) -> Callable[..., Any]:
  """A Mosaic GPU kernel over a 1-D grid whose operands all stay in GMEM (the kernels copy tiles
  themselves): ``body(*input_refs, *output_refs)``.

  Compiled, it is ``plgpu.kernel`` (Pallas's Mosaic GPU entry point: in JAX 0.11.2 and 0.12
  ``pl.pallas_call`` has no compiled Mosaic GPU lowering, seen on the H200 as an AssertionError in
  ``pallas_call``'s gpu lowering). Under `pallas_interpret` it is ``pl.pallas_call`` with Pallas's
  Mosaic GPU interpreter. Inside `body`, `mosaic_program_id` gives the program index either way.
  `reduction_scratch_bytes`: shared memory for reductions across warps (None: Pallas's default).
  """
  import jax.experimental.pallas.mosaic_gpu as plgpu  # pylint: disable=g-import-not-at-top
  if interpret_enabled():
    gmem = plgpu.BlockSpec(memory_space=plgpu.GMEM)
    outs = len(out_shape) if isinstance(out_shape, (list, tuple)) else None
    return pl.pallas_call(
        body, grid=(grid,), in_specs=[gmem] * num_inputs,
        out_specs=gmem if outs is None else [gmem] * outs, out_shape=out_shape, name=name,
        compiler_params=plgpu.CompilerParams(), interpret=plgpu.InterpretGPUParams())
  params = ({} if reduction_scratch_bytes is None
            else {"reduction_scratch_bytes": reduction_scratch_bytes})
  return plgpu.kernel(body, out_type=out_shape, grid=(grid,), grid_names=(MOSAIC_GRID_AXIS,),
                      compiler_params=plgpu.CompilerParams(**params))


def mosaic_program_id() -> Any:
  """This program's index on a `mosaic_call` grid."""
  if interpret_enabled():
    return pl.program_id(0)
  return lax.axis_index(MOSAIC_GRID_AXIS)

