"""layer_norm "mosaic": Pallas kernels lowered through Mosaic GPU (``plgpu.CompilerParams``).

Each program copies a tile of `block_rows` rows (a multiple of 64; channels padded to a multiple
of 64) from global to shared memory with TMA, normalises it in registers laid out explicitly
(WGMMA tile layout; Mosaic GPU's layout inference finds no layout for the plain body), and
copies the results back; the backward recomputes mean and rstd from x. Hopper (sm_90) and newer.
Rows wider than 256 channels (a multiple of 1024) take the wide-row forward of `mosaic_wide`
(rows streamed through a shared-memory TMA ring; compiled only, no interpret path) and the
"triton" backward, with the config tuned for "triton" at that call where there is one, else its
per-phase default (the chunked backward above 8192 channels; `implementation=None` chooses the
gradient's implementation and config separately anyway).
Verified compiled on the H200 (2026-12-01: forward and gradient at 4096x256 and 65536x64,
with and without scale/offset; `ENABLED_ON_GPU` switches GPUs off again). These tile kernels read
their inputs from global memory (no BlockSpec pipelining), which is also what Pallas's Mosaic GPU
interpret mode needs (it accepts only whole-array blocks), so CI runs them under
``pallas_interpret()``; the wide-row forward pipelines and runs compiled only.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
import jax.experimental.pallas.mosaic_gpu as plgpu

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core import op as op_lib
from pjrtkit.kernels.core.device import DeviceInfo, current_device
from pjrtkit.kernels.core.interpret import interpret_enabled
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm import base, mosaic_wide, pallas_common
from pjrtkit.kernels.layer_norm.pallas_common import PallasLayerNormConfig

_MAX_CHANNELS = 256
"""A 64-row tile of x, dy and dx in shared memory and x, dy, xhat, g, dx in registers (the WGMMA
layout spreads 64 rows over one warpgroup): 256 channels keep both within bounds. Wider rows take
the wide-row forward (`mosaic_wide`)."""

_BLOCK_ROWS = 64
"""Rows per program: the WGMMA register layout covers 64-row multiples."""

ENABLED_ON_GPU = True
"""Whether the compiled kernels may run on a GPU (an H200 run on 2026-12-01 showed them compiling
and correct; False sends them back to pallas_interpret() only)."""


def _copy_in(pairs: list[tuple[Any, Any]], bars: Any) -> None:
  for n, (src, dst) in enumerate(pairs):
    plgpu.copy_gmem_to_smem(src, dst, bars.at[n])
  for n in range(len(pairs)):
    plgpu.barrier_wait(bars.at[n])


def _copy_out(pairs: list[tuple[Any, Any]]) -> None:
  plgpu.commit_smem()
  for src, dst in pairs:
    plgpu.copy_smem_to_gmem(src, dst)
  plgpu.wait_smem_to_gmem(0)


def _scoped(body: Any, scratch: list[Any]) -> Any:
  """Runs `body` with shared-memory scratch and barriers allocated by ``pl.run_scoped`` (Pallas's
  Mosaic GPU interpreter does not take barriers in ``scratch_shapes``)."""

  def kernel(*refs: Any) -> None:
    pl.run_scoped(lambda *scr: body(*refs, *scr), *scratch)

  return kernel


# Explicit register layouts (Mosaic GPU's layout inference found none for the plain body on the
# H200, jax 0.11.2): tiles in the WGMMA layout (64-row multiples), per-row vectors in its
# reduce(1) layout, per-channel vectors in its reduce(0) layout.
_TILE = plgpu.Layout.WGMMA
_ROW = plgpu.Layout.WGMMA.reduce(1)
_COL = plgpu.Layout.WGMMA.reduce(0)


def _rows(v: Any, shape: tuple[int, int]) -> Any:
  return lax.broadcast_in_dim(v, shape, [0])


def _cols(v: Any, shape: tuple[int, int]) -> Any:
  return lax.broadcast_in_dim(v, shape, [1])


def _normalize(x: Any, row0: Any, num_rows: int, channels: int, epsilon: float,
               subtract_mean: bool) -> tuple[Any, Any, Any]:
  """(xhat, mean, rstd) of a float32 tile in the WGMMA layout whose first row is `row0` (xhat 0
  at padded channels and at padded rows, whose rstd is inf when epsilon is 0)."""
  shape = x.shape
  valid = ((plgpu.broadcasted_iota(jnp.int32, shape, 1, layout=_TILE) < channels)
           & (row0 + plgpu.broadcasted_iota(jnp.int32, shape, 0, layout=_TILE) < num_rows))
  if subtract_mean:
    mean = jnp.sum(x, axis=1) / channels
  else:
    mean = plgpu.layout_cast(jnp.zeros(shape[:1], jnp.float32), _ROW)
  xc = jnp.where(valid, x - _rows(mean, shape), 0.0)
  rstd = lax.rsqrt(jnp.sum(xc * xc, axis=1) / channels + epsilon)
  return jnp.where(valid, xc * _rows(rstd, shape), 0.0), mean, rstd


def _fwd_body(x_s, sc_s, of_s, y_s, m_s, r_s, *, row0, num_rows, channels, epsilon,
              subtract_mean):
  x = plgpu.load(x_s, layout=_TILE).astype(jnp.float32)
  xhat, mean, rstd = _normalize(x, row0, num_rows, channels, epsilon, subtract_mean)
  y = (xhat * _cols(plgpu.load(sc_s, layout=_COL), x.shape)
       + _cols(plgpu.load(of_s, layout=_COL), x.shape))
  y_s[...] = y.astype(y_s.dtype)
  m_s[...] = mean
  r_s[...] = rstd


def _bwd_body(x_s, sc_s, dy_s, dx_s, ds_s, do_s, *, row0, num_rows, channels, epsilon,
              subtract_mean):
  x = plgpu.load(x_s, layout=_TILE).astype(jnp.float32)
  dy = plgpu.load(dy_s, layout=_TILE).astype(jnp.float32)
  shape = x.shape
  xhat, _, rstd = _normalize(x, row0, num_rows, channels, epsilon, subtract_mean)
  g = dy * _cols(plgpu.load(sc_s, layout=_COL), shape)
  dx = g - xhat * _rows(jnp.sum(g * xhat, axis=1) / channels, shape)
  if subtract_mean:
    dx = dx - _rows(jnp.sum(g, axis=1) / channels, shape)
  dx_s[...] = (dx * _rows(rstd, shape)).astype(dx_s.dtype)
  ds_s[...] = jnp.sum(dy * xhat, axis=0)
  do_s[...] = jnp.sum(dy, axis=0)


def _fwd(x_g, sc_g, of_g, y_g, m_g, r_g, x_s, sc_s, of_s, y_s, m_s, r_s, bars, *, block_rows,
         **kw):
  row0 = pallas_lib.mosaic_program_id() * block_rows
  rows = pl.ds(row0, block_rows)
  _copy_in([(x_g.at[rows], x_s), (sc_g, sc_s), (of_g, of_s)], bars)
  _fwd_body(x_s, sc_s, of_s, y_s, m_s, r_s, row0=row0, **kw)
  _copy_out([(y_s, y_g.at[rows]), (m_s, m_g.at[rows]), (r_s, r_g.at[rows])])


def _bwd(x_g, sc_g, dy_g, dx_g, ds_g, do_g, x_s, sc_s, dy_s, dx_s, ds_s, do_s, bars, *,
         block_rows, **kw):
  i = pallas_lib.mosaic_program_id()
  rows = pl.ds(i * block_rows, block_rows)
  _copy_in([(x_g.at[rows], x_s), (sc_g, sc_s), (dy_g.at[rows], dy_s)], bars)
  _bwd_body(x_s, sc_s, dy_s, dx_s, ds_s, do_s, row0=i * block_rows, **kw)
  _copy_out([(dx_s, dx_g.at[rows]), (ds_s, ds_g.at[i]), (do_s, do_g.at[i])])


_WIDE_CANDIDATES = ((1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6), (2, 2), (2, 3), (3, 2),
                    (4, 2))
"""(programs_per_sm, stages) the wide-row forward is tuned over (those that fit shared memory)."""


def prefers_wide_forward(spec: Spec) -> bool:
  """Whether the layer norm rule should try this implementation's wide-row forward first: rows
  of 4096 channels or more in a multiple of 1024 that the kernel takes with at least 2 rows in
  flight (the H200 measured it faster than "triton" there; 1 stage was not measured)."""
  channels = spec.arg("x").shape[spec.param("axis")]
  if channels < 4096 or channels % 1024:
    return False
  return mosaic_wide.unsupported_reason(*_wide_sizes(spec), 2) is None


def _is_wide(spec: Spec) -> bool:
  return spec.arg("x").shape[spec.param("axis")] > _MAX_CHANNELS


def _wide_sizes(spec: Spec) -> tuple[int, int, list[int]]:
  """(channels, x's itemsize, the parameters' itemsizes) for `mosaic_wide`."""
  params = [spec.arg(n) for n in ("scale", "offset") if spec.arg(n) is not None]
  return (spec.arg("x").shape[spec.param("axis")], jnp.dtype(spec.arg("x").dtype).itemsize,
          [jnp.dtype(p.dtype).itemsize for p in params])


def _block_rows(config: PallasLayerNormConfig) -> int:
  if config.block_rows % _BLOCK_ROWS:
    raise ValueError(f"layer_norm 'mosaic': block_rows must be a multiple of {_BLOCK_ROWS} (the "
                     f"WGMMA register layout), got {config.block_rows}")
  return config.block_rows


class MosaicLayerNorm(Op[PallasLayerNormConfig]):
  """Layer norm as Pallas Mosaic GPU kernels."""

  op_name = base.OP_NAME
  implementation = "mosaic"
  config_cls = PallasLayerNormConfig

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = pallas_lib.gpu_unsupported_reason(device, "Mosaic GPU", (9, 0), only_major=9)
    if reason:
      return reason
    if not interpret_enabled() and not ENABLED_ON_GPU:
      return ("not verified on a GPU: on the H200 (jax 0.11.2, 2026-12-01) every compiled test of "
              "this kernel that ran failed, so it runs only under pallas_interpret() for now; use "
              "'triton' or 'xla' on GPUs")
    if spec.arg("x").dtype not in base.FLOAT_DTYPES:
      return f"dtype {spec.arg('x').dtype} is not supported ({', '.join(base.FLOAT_DTYPES)})"
    if _is_wide(spec):
      if interpret_enabled():
        return (f"more than {_MAX_CHANNELS} channels take the wide-row kernel, which has no "
                f"Pallas interpreter path (plgpu.emit_pipeline); it runs compiled only")
      if math.prod(spec.arg("x").shape) == 0:
        return "x has no rows: the wide-row kernel launches one program per row at most"
      return mosaic_wide.unsupported_reason(*_wide_sizes(spec))
    return None

  def default_config(self, spec: Spec) -> PallasLayerNormConfig:
    if _is_wide(spec):
      # The H200's best (bf16, 2026-12-01, tools/kernels_gpu/ln_wide_bench.py): 2 programs of 3
      # stages per SM up to 4096 channels (3.82 TB/s at 16384x4096), one of 4 stages above (3.91
      # at 8192x8192; 2 stages, all that fit, 3.73 at 4096x16384); fewer stages where those do
      # not fit shared memory.
      sizes = _wide_sizes(spec)
      per_sm = 2 if sizes[0] <= 4096 else 1
      for p, stages in ((per_sm, 4 if per_sm == 1 else 3), (per_sm, 2), (1, 2)):
        if mosaic_wide.unsupported_reason(*sizes, stages, p) is None:
          return PallasLayerNormConfig(_BLOCK_ROWS, stages, p)
      return PallasLayerNormConfig(_BLOCK_ROWS, 1, 1)
    return PallasLayerNormConfig(_BLOCK_ROWS)

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[PallasLayerNormConfig]:
    if _is_wide(spec):
      sizes = _wide_sizes(spec)
      return tuple(PallasLayerNormConfig(_BLOCK_ROWS, stages, per_sm)
                   for per_sm, stages in _WIDE_CANDIDATES
                   if mosaic_wide.unsupported_reason(*sizes, stages, per_sm) is None)
    c = pallas_lib.round_up(spec.arg("x").shape[spec.param("axis")], 64)
    return (PallasLayerNormConfig(64),) + ((PallasLayerNormConfig(128),) if c <= 128 else ())

  def forward(self, args: tuple[Any, ...], spec: Spec, config: PallasLayerNormConfig
              ) -> tuple[Any, Any]:
    x, scale, offset = args
    if _is_wide(spec):
      rows, restore = base.to_rows(x, spec.param("axis"))
      y = mosaic_wide.forward(rows, scale, offset, epsilon=spec.param("epsilon"),
                              subtract_mean=spec.param("subtract_mean"), stages=config.stages,
                              programs_per_sm=config.programs_per_sm)
      mean, rstd = base.statistics(x, spec)  # dropped by XLA when no backward reads them
      return restore(y), (x, scale, offset, mean, rstd)
    r = _block_rows(config)
    rows_p, sc, of, restore, n, c, cp = pallas_common._prepare(  # pylint: disable=protected-access
        x, scale, offset, spec, r, lambda c: pallas_lib.round_up(c, 64))
    npad = rows_p.shape[0]
    f32 = jnp.float32
    y, mean, rstd = pallas_lib.mosaic_call(
        _scoped(functools.partial(_fwd, block_rows=r, num_rows=n, channels=c,
                                  epsilon=spec.param("epsilon"),
                                  subtract_mean=spec.param("subtract_mean")),
                [plgpu.SMEM((r, cp), x.dtype), plgpu.SMEM((cp,), f32), plgpu.SMEM((cp,), f32),
                 plgpu.SMEM((r, cp), x.dtype), plgpu.SMEM((r,), f32), plgpu.SMEM((r,), f32),
                 plgpu.Barrier(num_barriers=3)]),
        grid=npad // r, num_inputs=3,
        out_shape=[jax.ShapeDtypeStruct(rows_p.shape, x.dtype),
                   jax.ShapeDtypeStruct((npad,), f32), jax.ShapeDtypeStruct((npad,), f32)],
        name="pjrtkit_layer_norm_fwd_mosaic",
    )(rows_p, sc, of)
    shape = base.stats_shape(spec)
    return restore(y[:n, :c]), (x, scale, offset, mean[:n].reshape(shape),
                                rstd[:n].reshape(shape))

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: PallasLayerNormConfig
               ) -> tuple[Any, ...]:
    if _is_wide(spec):
      # The Triton backward, chosen as `implementation="triton"` would be (its tuned config for
      # this call where there is one, else its per-phase default: the chunked backward above
      # 8192 channels, which after a forward other than XLA's ran faster than XLA's gradient).
      chosen = op_lib.family(base.OP_NAME).choose(spec, "triton", "bwd", current_device())
      return chosen.op.backward(residuals, dout, spec, chosen.config)
    x, scale, _, _, _ = residuals  # mean and rstd are recomputed from x in the kernel
    r = _block_rows(config)
    rows_p, sc, _, restore, n, c, cp = pallas_common._prepare(  # pylint: disable=protected-access
        x, scale, None, spec, r, lambda c: pallas_lib.round_up(c, 64))
    npad = rows_p.shape[0]
    dy_rows, _ = base.to_rows(dout.astype(x.dtype), spec.param("axis"))
    dy_p = pallas_lib.pad_axis(pallas_lib.pad_axis(dy_rows, 0, npad), 1, cp)
    f32 = jnp.float32
    nb = npad // r
    dx, dscale, doffset = pallas_lib.mosaic_call(
        _scoped(functools.partial(_bwd, block_rows=r, num_rows=n, channels=c,
                                  epsilon=spec.param("epsilon"),
                                  subtract_mean=spec.param("subtract_mean")),
                [plgpu.SMEM((r, cp), x.dtype), plgpu.SMEM((cp,), f32),
                 plgpu.SMEM((r, cp), x.dtype), plgpu.SMEM((r, cp), x.dtype),
                 plgpu.SMEM((cp,), f32), plgpu.SMEM((cp,), f32),
                 plgpu.Barrier(num_barriers=3)]),
        grid=nb, num_inputs=3,
        # dscale/doffset sum the tile's rows across the warpgroup's 4 warps.
        reduction_scratch_bytes=max(2048, 8 * 4 * cp),
        out_shape=[jax.ShapeDtypeStruct(rows_p.shape, x.dtype),
                   jax.ShapeDtypeStruct((nb, cp), f32), jax.ShapeDtypeStruct((nb, cp), f32)],
        name="pjrtkit_layer_norm_bwd_mosaic",
    )(rows_p, sc, dy_p)
    return base.finish_grads(spec, restore(dx[:n, :c]), jnp.sum(dscale, 0)[:c],
                             jnp.sum(doffset, 0)[:c])
