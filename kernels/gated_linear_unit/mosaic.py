"""gated_linear_unit "mosaic": the forward of a call that is not differentiated as one Pallas
Mosaic GPU kernel (Hopper, sm_90: wgmma); a differentiated call takes "xla"'s forward and
gradient (the residual `y` is what XLA's product writes anyway).

The kernel (`glu_forward`): persistent, one program per SM, each walking output tiles in bands
of `band` row tiles (``plgpu.planar_snake``) so that programs running at the same time share
rows of x and columns of the weights in L2. A tile is ``2 * block_m`` rows (one compute
warpgroup per ``block_m``) by `block_n` columns; a third warpgroup copies x's rows and the gate's
and up projection's columns for each `block_k` step into shared memory by TMA, `stages` steps in
flight (``plgpu.emit_pipeline_warp_specialized``). Each compute warpgroup keeps two float32
accumulators, ``x @ w_gate`` and ``x @ w_up``, rounds both to x's dtype (the values "xla"'s
products have), then writes ``activation(gate) * up``, computed in float32, through shared
memory to the output by TMA. Fused weights ``[k, 2, n]`` are read as ``[k, 2n]`` (gate columns
``j``, up columns ``n + j``: a reshape, no copy); a pair is read as it is.

Serves bfloat16/float16 x and weights of the same dtype, n a multiple of `block_n`, k a multiple of
`block_k` (rows are padded to the tile), no activation or one that lowers in the kernel
(`IN_KERNEL_ACTIVATIONS`), a precision that leaves 16-bit products summed in float32 (None, any
``jax.lax.Precision``: for 16-bit operands they are all the same products; the presets DEFAULT and
BF16_BF16_F32 / F16_F16_F32; the others are refused). Compiled only: Pallas's Mosaic GPU interpreter
cannot run the warp-specialised pipeline, so CPU tests check the kernel's lowering for CUDA
(``mosaic_test.py``) and the H200 runs check its values (tools/gpu/open_issue_checks.sh).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
import jax.experimental.pallas.mosaic_gpu as plgpu

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.gated_linear_unit import base
from pjrtkit.kernels.gated_linear_unit.xla import XlaGatedLinearUnit

DTYPES = ("bfloat16", "float16")
"""x and weight dtypes the kernel takes (wgmma's 16-bit operands)."""

IN_KERNEL_ACTIVATIONS = frozenset({"sigmoid", "silu", "gelu", "tanh"})
"""Activations (by `functions` name) applied inside the kernel: their lowering for CUDA is
checked by ``mosaic_test.py`` on JAX 0.11.2 and 0.12 (``jax.nn.relu``, a ``custom_jvp``, does
not lower on 0.11.2). A call with any other activation is refused (``implementation=None`` then
takes another implementation)."""


_COMPUTE_WGS = 2
_MEMORY_REGISTERS = 40
_SMEM_RESERVE = 1024
"""Shared memory kept free for the pipeline's barriers."""


@dataclasses.dataclass(frozen=True)
class MosaicGatedLinearUnitConfig:
  """The kernel's tiling: `block_m` rows per compute warpgroup (a tile has two), `block_n`
  output columns (each a gate and an up column), `block_k` columns of x per pipeline step,
  `stages` steps in flight (fewer where they do not fit in shared memory), `band` row tiles per
  band of the tile order.

  The default, 64 x 128 per warpgroup with k steps of 64 and 4 stages, is a Hopper bf16 matmul's
  128 x 256 tile with its columns split into gate and up (128 float32 accumulator registers per
  thread; 192 KiB of operands in flight and 32 KiB for the output tile).
  """

  block_m: int = 64
  block_n: int = 128
  block_k: int = 64
  stages: int = 4
  band: int = 8

  def __post_init__(self) -> None:
    for name in ("block_m", "block_n", "block_k"):
      value = getattr(self, name)
      if value not in (64, 128):
        raise ValueError(f"MosaicGatedLinearUnitConfig: {name} must be 64 or 128, got {value}")
    if self.block_m * self.block_n > 8192:
      raise ValueError(f"MosaicGatedLinearUnitConfig: block_m * block_n must be at most 8192 "
                       f"(two float32 accumulators per warpgroup), got "
                       f"{self.block_m} * {self.block_n}")
    if self.stages < 1 or self.band < 1:
      raise ValueError(f"MosaicGatedLinearUnitConfig: stages and band must be >= 1, got "
                       f"{self.stages} and {self.band}")


@dataclasses.dataclass(frozen=True)
class Geometry:
  """The static shape of one launch."""

  m: int  # rows of x, padded to a multiple of 2 * block_m
  k: int
  n: int
  fused: bool
  config: MosaicGatedLinearUnitConfig
  stages: int  # config.stages fitted to shared memory
  programs: int

  @property
  def tile_m(self) -> int:
    return _COMPUTE_WGS * self.config.block_m

  @property
  def tiles(self) -> tuple[int, int]:
    return self.m // self.tile_m, self.n // self.config.block_n


def stage_bytes(config: MosaicGatedLinearUnitConfig, itemsize: int) -> int:
  """Shared memory of one pipeline step: x's rows and the two weight blocks."""
  return (_COMPUTE_WGS * config.block_m + 2 * config.block_n) * config.block_k * itemsize


def epilogue_bytes(config: MosaicGatedLinearUnitConfig, itemsize: int) -> int:
  """Shared memory of the output tiles (one per compute warpgroup)."""
  return _COMPUTE_WGS * config.block_m * config.block_n * itemsize


def fitted_stages(config: MosaicGatedLinearUnitConfig, itemsize: int) -> int:
  """`config.stages`, fewer where they do not fit in a Hopper block's shared memory (at least
  one)."""
  free = pallas_lib.HOPPER_SMEM_LIMIT - _SMEM_RESERVE - epilogue_bytes(config, itemsize)
  return max(1, min(config.stages, free // stage_bytes(config, itemsize)))


def geometry(m: int, k: int, n: int, fused: bool, config: MosaicGatedLinearUnitConfig,
             itemsize: int, sms: int) -> Geometry:
  """The launch for x ``[m, k]`` and weights with `n` output columns.

  Raises:
    ValueError: k or n not a positive multiple of the config's block, naming both.
  """
  if k <= 0 or k % config.block_k:
    raise ValueError(f"gated_linear_unit mosaic: k ({k}) must be a positive multiple of "
                     f"block_k ({config.block_k})")
  if n <= 0 or n % config.block_n:
    raise ValueError(f"gated_linear_unit mosaic: n ({n}) must be a positive multiple of "
                     f"block_n ({config.block_n})")
  tile_m = _COMPUTE_WGS * config.block_m
  padded = -(-m // tile_m) * tile_m
  tiles = (padded // tile_m) * (n // config.block_n)
  return Geometry(m=padded, k=k, n=n, fused=fused, config=config,
                  stages=fitted_stages(config, itemsize), programs=max(1, min(sms, tiles)))


def _smem_transforms(dtype: Any) -> tuple[Any, ...]:
  swizzle = 128
  elems = swizzle // jnp.dtype(dtype).itemsize
  return (plgpu.TilingTransform((8, elems)), plgpu.SwizzleTransform(swizzle))


def _kernel(x_g: Any, gate_g: Any, up_g: Any, out_g: Any, out_s: Any, *, g: Geometry,
            activation: Callable[[Any], Any] | None) -> None:
  """The persistent program (see the module docstring)."""
  cfg = g.config
  bm, bn, bk = cfg.block_m, cfg.block_n, cfg.block_k
  dtype = x_g.dtype
  transforms = _smem_transforms(dtype)
  m_tiles, n_tiles = g.tiles
  up_shift = g.n if g.fused else 0  # fused weights: the up columns follow the gate's

  def pipeline(body: Callable[..., Any], context: Callable[..., Any]) -> Any:
    specs = [plgpu.BlockSpec((g.tile_m, bk), lambda kk: (0, kk), transforms=transforms,
                             memory_space=plgpu.SMEM)]
    specs += [plgpu.BlockSpec((bk, bn), lambda kk: (kk, 0), transforms=transforms,
                              memory_space=plgpu.SMEM)] * 2
    return plgpu.emit_pipeline_warp_specialized(
        body, grid=(g.k // bk,), memory_registers=_MEMORY_REGISTERS, in_specs=specs,
        wg_axis="wg", num_compute_wgs=_COMPUTE_WGS, max_concurrent_steps=g.stages,
        compute_context=context)

  unused = lambda *_, **__: None  # noqa: E731  (allocations do not depend on the functions)

  @functools.partial(pl.run_scoped,
                     allocations=pipeline(unused, unused).get_allocations(x_g, gate_g, up_g),
                     collective_axes="wg")
  def _scope(allocations: Any) -> None:
    wg = lax.axis_index("wg")

    @plgpu.nd_loop((m_tiles * n_tiles,), collective_axes=pallas_lib.MOSAIC_GRID_AXIS)
    def _tile(info: Any) -> None:
      (index,) = info.index
      mi, ni = plgpu.planar_snake(index, (m_tiles, n_tiles), 0, cfg.band)
      rows = pl.ds(mi * g.tile_m, g.tile_m)
      my_rows = pl.ds(wg * bm, bm)

      def step(_: Any, x_s: Any, gate_s: Any, up_s: Any, accs: Any) -> Any:
        acc_gate, acc_up = accs
        plgpu.wgmma(acc_gate, x_s.at[my_rows], gate_s)
        plgpu.wgmma(acc_up, x_s.at[my_rows], up_s)
        plgpu.wgmma_wait(0)
        return accs

      def context(run: Callable[[Any], Any]) -> None:
        @functools.partial(pl.run_scoped, acc_gate=plgpu.ACC((bm, bn), jnp.float32),
                           acc_up=plgpu.ACC((bm, bn), jnp.float32))
        def _accumulate(acc_gate: Any, acc_up: Any) -> None:
          run((acc_gate, acc_up))
          gate = acc_gate[...].astype(dtype).astype(jnp.float32)
          up = acc_up[...].astype(dtype).astype(jnp.float32)
          if activation is not None:
            gate = activation(gate)
          plgpu.wait_smem_to_gmem(0, wait_read_only=True)  # the last tile's store read out_s
          out_s[wg] = (gate * up).astype(dtype)
          plgpu.commit_smem()
          plgpu.copy_smem_to_gmem(
              out_s.at[wg], out_g.at[pl.ds(mi * g.tile_m + wg * bm, bm), pl.ds(ni * bn, bn)])

      pipeline(step, context)(
          x_g.at[rows, :], gate_g.at[:, pl.ds(ni * bn, bn)],
          up_g.at[:, pl.ds(up_shift + ni * bn, bn)], allocations=allocations)

  plgpu.wait_smem_to_gmem(0, wait_read_only=True)


def glu_forward(x2d: jax.Array, w_gate: jax.Array, w_up: jax.Array, *, n: int, fused: bool,
                config: MosaicGatedLinearUnitConfig,
                activation: Callable[[Any], Any] | None) -> jax.Array:
  """``activation(x2d @ w_gate) * (x2d @ w_up)`` ``[m, n]``: `w_gate` and `w_up` ``[k, n]``, or
  (`fused`) both the ``[k, 2n]`` view of fused weights."""
  m, k = x2d.shape
  g = geometry(m, k, n, fused, config, x2d.dtype.itemsize, pallas_lib.gpu_sm_count())
  xp = pallas_lib.pad_axis(x2d, 0, g.m)
  out_s = plgpu.SMEM((_COMPUTE_WGS, config.block_m, config.block_n), x2d.dtype,
                     transforms=_smem_transforms(x2d.dtype))
  out = plgpu.kernel(
      functools.partial(_kernel, g=g, activation=activation),
      out_type=jax.ShapeDtypeStruct((g.m, n), x2d.dtype), scratch_types=[out_s],
      grid=(g.programs,), grid_names=(pallas_lib.MOSAIC_GRID_AXIS,),
      num_threads=_COMPUTE_WGS + 1, thread_name="wg",
      kernel_name="pjrtkit_gated_linear_unit_fwd_mosaic")(xp, w_gate, w_up)
  return out[:m]


class MosaicGatedLinearUnit(Op[MosaicGatedLinearUnitConfig]):
  """The Hopper forward kernel for calls that are not differentiated; "xla"'s forward and
  gradient for those that are."""

  op_name = base.OP_NAME
  implementation = "mosaic"
  config_cls = MosaicGatedLinearUnitConfig
  # Not taken by implementation=None (nor autotuned for it) until an H200 run has checked its
  # values and measured it: a call must name it.
  automatic = False

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = pallas_lib.compiled_wgmma_reason(device, "gated linear unit")
    if reason:
      return reason
    x = jnp.dtype(spec.arg("x").dtype).name
    w = spec.arg("fused") if spec.arg("fused") is not None else spec.arg("w_gate")
    if x not in DTYPES:
      return f"x dtype {x} is not supported ({', '.join(DTYPES)})"
    if jnp.dtype(w.dtype).name != x:
      return f"weights ({jnp.dtype(w.dtype).name}) of another dtype than x ({x}) (use 'xla')"
    name = spec.param("activation")
    if name is not None and name not in IN_KERNEL_ACTIVATIONS:
      return (f"activation {name} is not applied in the kernel (accepted: None, "
              f"{', '.join(sorted(IN_KERNEL_ACTIVATIONS))})")
    reason = pallas_lib.wgmma_precision_reason(spec.param("precision"), x)
    if reason:
      return reason
    _, n, k = base.sizes(spec)
    if n % 64 or k % 64 or n == 0 or k == 0:
      return f"n ({n}) and k ({k}) must be positive multiples of 64"
    return None

  def default_config(self, spec: Spec) -> MosaicGatedLinearUnitConfig:
    """The class default; 128 x 64 per warpgroup where n is not a multiple of 128."""
    _, n, _ = base.sizes(spec)
    config = MosaicGatedLinearUnitConfig()
    if n % config.block_n:
      config = dataclasses.replace(config, block_n=64, block_m=128)
    return config

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[MosaicGatedLinearUnitConfig]:
    _, n, k = base.sizes(spec)
    c = MosaicGatedLinearUnitConfig
    candidates = [c(64, 128, 64, 4, 8), c(64, 128, 64, 3, 8), c(128, 64, 64, 4, 8),
                  c(64, 128, 128, 2, 8), c(128, 64, 128, 2, 8), c(64, 64, 64, 6, 8),
                  c(64, 128, 64, 4, 1), c(64, 128, 64, 4, 16), c(128, 64, 64, 4, 16)]
    return tuple(cfg for cfg in candidates if n % cfg.block_n == 0 and k % cfg.block_k == 0)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: MosaicGatedLinearUnitConfig
              ) -> tuple[Any, Any]:
    """A differentiated call: "xla"'s forward, whose product is the residual `y`."""
    del config
    return XlaGatedLinearUnit().forward(args, spec, NoConfig())

  def forward_output(self, args: tuple[Any, ...], spec: Spec,
                     config: MosaicGatedLinearUnitConfig) -> Any:
    x, fused, gate, up = args
    m, n, k = base.sizes(spec)
    if m == 0:  # no rows: nothing for the kernel to do
      return XlaGatedLinearUnit().forward_output(args, spec, NoConfig())
    x2d = x.reshape(m, k)
    if fused is not None:
      w = fused.reshape(k, 2 * n)
      gate = up = w
    out = glu_forward(x2d, gate, up, n=n, fused=fused is not None, config=config,
                      activation=functions.resolve(spec.param("activation")))
    return out.reshape(x.shape[:-1] + (n,))

  def backward(self, residuals: Any, dout: Any, spec: Spec,
               config: MosaicGatedLinearUnitConfig) -> tuple[Any, ...]:
    """"xla"'s gradient from the shared residuals."""
    del config
    return XlaGatedLinearUnit().backward(residuals, dout, spec, NoConfig())
