"""The layer norm kernel bodies shared by "triton" and "mosaic" (one [rows, channels] tile per
program), and the wrapper that pads, calls `pallas_call` and unpads."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm import base


@dataclasses.dataclass(frozen=True)
class PallasLayerNormConfig:
  """Attributes: block_rows: rows per program (a power of two)."""

  block_rows: int = 16

  def __post_init__(self) -> None:
    if self.block_rows < 1 or self.block_rows & (self.block_rows - 1):
      raise ValueError(f"block_rows must be a power of two, got {self.block_rows}")


def _valid(shape: tuple[int, int], channels: int) -> Any:
  return lax.broadcasted_iota(jnp.int32, shape, 1) < channels


def fwd_kernel(x_ref, scale_ref, offset_ref, y_ref, mean_ref, rstd_ref, *, channels, epsilon,
               subtract_mean):
  x = x_ref[...].astype(jnp.float32)
  valid = _valid(x.shape, channels)
  mean = jnp.sum(x, axis=1) / channels if subtract_mean else jnp.zeros(x.shape[:1], jnp.float32)
  xc = jnp.where(valid, x - mean[:, None], 0.0)
  rstd = lax.rsqrt(jnp.sum(xc * xc, axis=1) / channels + epsilon)
  y = xc * rstd[:, None] * scale_ref[...][None, :] + offset_ref[...][None, :]
  y_ref[...] = y.astype(y_ref.dtype)
  mean_ref[...] = mean
  rstd_ref[...] = rstd


def bwd_kernel(x_ref, scale_ref, mean_ref, rstd_ref, dy_ref, dx_ref, dscale_ref, doffset_ref, *,
               channels, subtract_mean):
  x = x_ref[...].astype(jnp.float32)
  dy = dy_ref[...].astype(jnp.float32)
  valid = _valid(x.shape, channels)
  rstd = rstd_ref[...]
  xhat = jnp.where(valid, (x - mean_ref[...][:, None]) * rstd[:, None], 0.0)
  g = dy * scale_ref[...][None, :]
  mgx = jnp.sum(g * xhat, axis=1) / channels
  dx = g - xhat * mgx[:, None]
  if subtract_mean:
    dx = dx - (jnp.sum(g, axis=1) / channels)[:, None]
  dx_ref[...] = (dx * rstd[:, None]).astype(dx_ref.dtype)
  dscale_ref[...] = jnp.sum(dy * xhat, axis=0)
  doffset_ref[...] = jnp.sum(dy, axis=0)


def _prepare(x: Any, scale: Any, offset: Any, spec: Spec, block_rows: int,
             channel_multiple: Callable[[int], int]) -> tuple[Any, ...]:
  rows, restore = base.to_rows(x, spec.param("axis"))
  n, c = rows.shape
  cp, np_ = channel_multiple(c), pallas_lib.round_up(n, block_rows)
  rows_p = pallas_lib.pad_axis(pallas_lib.pad_axis(rows, 0, np_), 1, cp)
  sc = jnp.ones((c,), jnp.float32) if scale is None else scale.astype(jnp.float32)
  of = jnp.zeros((c,), jnp.float32) if offset is None else offset.astype(jnp.float32)
  return rows_p, pallas_lib.pad_axis(sc, 0, cp), pallas_lib.pad_axis(of, 0, cp), restore, n, c, cp


def forward(args: tuple[Any, ...], spec: Spec, block_rows: int, call_params: dict[str, Any],
            channel_multiple: Callable[[int], int], block_spec: Callable[..., Any]
            ) -> tuple[Any, Any]:
  """The forward through `pallas_call` with `call_params` (backend-specific)."""
  x, scale, offset = args
  rows_p, sc, of, restore, n, c, cp = _prepare(x, scale, offset, spec, block_rows,
                                                channel_multiple)
  nb = rows_p.shape[0] // block_rows
  y, mean, rstd = pl.pallas_call(
      functools.partial(fwd_kernel, channels=c, epsilon=spec.param("epsilon"),
                        subtract_mean=spec.param("subtract_mean")),
      grid=(nb,),
      in_specs=[block_spec((block_rows, cp), lambda i: (i, 0)),
                block_spec((cp,), lambda i: (0,)), block_spec((cp,), lambda i: (0,))],
      out_specs=[block_spec((block_rows, cp), lambda i: (i, 0)),
                 block_spec((block_rows,), lambda i: (i,)),
                 block_spec((block_rows,), lambda i: (i,))],
      out_shape=[jax.ShapeDtypeStruct(rows_p.shape, x.dtype),
                 jax.ShapeDtypeStruct((rows_p.shape[0],), jnp.float32),
                 jax.ShapeDtypeStruct((rows_p.shape[0],), jnp.float32)],
      name="pjrtkit_layer_norm_fwd", **call_params,
  )(rows_p, sc, of)
  shape = base.stats_shape(spec)
  return restore(y[:n, :c]), (x, scale, offset, mean[:n].reshape(shape), rstd[:n].reshape(shape))


def backward(residuals: Any, dout: Any, spec: Spec, block_rows: int, call_params: dict[str, Any],
             channel_multiple: Callable[[int], int], block_spec: Callable[..., Any]
             ) -> tuple[Any, ...]:
  """The backward through `pallas_call`: dx per tile, per-tile parameter sums added after."""
  x, scale, offset, mean, rstd = residuals
  rows_p, sc, _, restore, n, c, cp = _prepare(x, scale, None, spec, block_rows, channel_multiple)
  dy_rows, _ = base.to_rows(dout.astype(x.dtype), spec.param("axis"))
  dy_p = pallas_lib.pad_axis(pallas_lib.pad_axis(dy_rows, 0, rows_p.shape[0]), 1, cp)
  mean_p = pallas_lib.pad_axis(mean.reshape(n), 0, rows_p.shape[0])
  rstd_p = pallas_lib.pad_axis(rstd.reshape(n), 0, rows_p.shape[0])
  nb = rows_p.shape[0] // block_rows
  dx, dscale, doffset = pl.pallas_call(
      functools.partial(bwd_kernel, channels=c, subtract_mean=spec.param("subtract_mean")),
      grid=(nb,),
      in_specs=[block_spec((block_rows, cp), lambda i: (i, 0)), block_spec((cp,), lambda i: (0,)),
                block_spec((block_rows,), lambda i: (i,)),
                block_spec((block_rows,), lambda i: (i,)),
                block_spec((block_rows, cp), lambda i: (i, 0))],
      out_specs=[block_spec((block_rows, cp), lambda i: (i, 0)),
                 block_spec((None, cp), lambda i: (i, 0)),
                 block_spec((None, cp), lambda i: (i, 0))],
      out_shape=[jax.ShapeDtypeStruct(rows_p.shape, x.dtype),
                 jax.ShapeDtypeStruct((nb, cp), jnp.float32),
                 jax.ShapeDtypeStruct((nb, cp), jnp.float32)],
      name="pjrtkit_layer_norm_bwd", **call_params,
  )(rows_p, sc, mean_p, rstd_p, dy_p)
  return base.finish_grads(spec, restore(dx[:n, :c]), jnp.sum(dscale, 0)[:c],
                           jnp.sum(doffset, 0)[:c])
