"""layer_norm "triton": Pallas ``pallas_call`` kernels lowered through Triton.

The input is viewed as ``[rows, channels]`` (a reshape when `axis` is last) and stays in global
memory as it is: no padding, no copies. A tile is `block_rows` rows by the channels rounded up
to a power of two; loads and stores are masked at the last tile and at the padded channels.

* Forward: writes only ``y``. The residual statistics are plain JAX reductions beside the
  kernel, so XLA drops them when the backward does not read them (this one does not), and
  drops the whole kernel when ``y`` itself is dead (``jax.grad`` of a loss that needs only the
  gradient).
* Backward: recomputes mean and rstd from ``x`` (cheaper than reading them: the row is in
  registers), writes ``dx``, and accumulates ``dscale``/``doffset`` in registers; each program
  writes one float32 row of partial sums at the end, and XLA adds those rows. Rows too wide to
  hold (a config with `chunk`) take the chunked backward instead (`triton_chunked.backward`):
  one kernel walks each row once in chunks for its statistics, a second writes ``dx`` and the
  partial sums from [block_rows, chunk] tiles over a grid of channel chunks x row groups.

The forward and the whole-row backward launch at most `programs` programs (a few per SM), each
looping over every programs-th tile, optionally loading the next tile before using the current
one (`prefetch`).
A forward config with `chunk` instead walks each row in chunks of `chunk` channels, three times
(the mean, the variance, then y; `triton_chunked.forward_kernel`): a program then needs the
registers of one chunk, not of a whole row, so more programs fit an SM on wide rows; the row's
second and third reads come from cache. (Candidates for rows wider than 2048 channels; on the
H200 at 8192x8192 bf16 they ran about 3.0 TB/s, slower than whole rows at 3.5-3.6.) Wide whole
rows read scale and offset per row (`reload_params`) rather than holding them, which frees
registers for more programs per SM.
The tile helpers all of them share are in `triton_tiles.py`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core.pallas import sm_count
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm import base, triton_chunked
from pjrtkit.kernels.layer_norm.triton_tiles import (call_params, load_vector, normalize, row_tiles,
                                                     tile_loop)

_MAX_CHANNELS = 1 << 16
_MAX_TILE = 1 << 17
"""Most elements in one tile (Triton's limit on a tensor is 2**20; registers run out long
before)."""
_DEFAULT_SMS = pallas_lib.DEFAULT_SMS
_NUM_WARPS = (1, 2, 4, 8, 16, 32)


@dataclasses.dataclass(frozen=True)
class TritonLayerNormConfig:
  """Attributes:
    block_rows: rows per tile (a power of two); a tile is block_rows x channels rounded up to a
      power of two, the same in both kernels.
    num_warps: warps per program (1, 2, 4, 8, 16 or 32).
    programs: the most programs the forward and the whole-row backward launch, each looping over
      every programs-th tile (a few per SM keep every SM busy without a tail); 0: one program
      per tile. The whole-row backward writes one float32 row of dscale/doffset partial sums per
      program. The chunked backward's row kernel launches as many (over row blocks), its tile
      kernel about as many over channel chunks x row groups (0: 4 per SM), one partial row per
      row group.
    prefetch: in the loop, load the next tile before using this one (its loads stay in flight
      while this tile is reduced and stored; costs the registers of one more tile).
    chunk: 0, or channels per chunk (a power of two >= 16; whole rows where the padded row is
      not wider): the forward's chunked kernel, one row at a time (`block_rows` and `prefetch`
      do not apply to it), and the chunked backward, its tiles `block_rows` x `chunk`.
    reload_params: the forward reads scale and offset again for each tile (from cache) rather
      than holding them in registers for the whole program: fewer registers per thread on wide
      rows, so more programs fit an SM (H200, 8192 bf16 channels, 8 warps: 64 registers
      instead of 80, 4 programs per SM instead of 3). The backward ignores it.
  """

  block_rows: int = 16
  num_warps: int = 4
  programs: int = 2 * _DEFAULT_SMS
  prefetch: bool = True
  chunk: int = 0
  reload_params: bool = False

  def __post_init__(self) -> None:
    if self.block_rows < 1 or self.block_rows & (self.block_rows - 1):
      raise ValueError(f"block_rows must be a power of two, got {self.block_rows}")
    if self.num_warps not in _NUM_WARPS:
      raise ValueError(f"num_warps must be one of {_NUM_WARPS}, got {self.num_warps}")
    if self.programs < 0:
      raise ValueError(f"programs must be >= 0 (0: one per tile), got {self.programs}")
    if not isinstance(self.prefetch, bool):
      raise ValueError(f"prefetch must be a bool, got {self.prefetch!r}")
    if not isinstance(self.reload_params, bool):
      raise ValueError(f"reload_params must be a bool, got {self.reload_params!r}")
    if self.chunk != 0 and (self.chunk < 16 or self.chunk & (self.chunk - 1)):
      raise ValueError(f"chunk must be 0 (whole rows) or a power of two >= 16, got {self.chunk}")


def _config(tile: int, cp: int, num_warps: int, per_sm: int, prefetch: bool = True,
            reload_params: bool = False) -> TritonLayerNormConfig:
  """About `tile` elements per tile (at least one row), `per_sm` programs per SM (0: one per
  tile)."""
  return TritonLayerNormConfig(max(1, tile // cp), num_warps, per_sm * sm_count(), prefetch,
                               reload_params=reload_params)


def _params_like_x(spec: Spec) -> bool:
  """Whether scale and offset (those given) have x's dtype, so that Triton loads them in the
  layout of x's tiles."""
  x_dtype = jnp.dtype(spec.arg("x").dtype)
  return all(jnp.dtype(spec.arg(n).dtype) == x_dtype for n in ("scale", "offset")
             if spec.arg(n) is not None)


def prefers_xla(spec: Spec, phase: str) -> bool:
  """Whether XLA's layer norm ran faster than these kernels' untuned configs for `phase` at the
  spec's width (H200, bf16 x, one process per shape;
  docs/results/kernels/layer_norm_triton_wide_h200.txt):

  * the backward of rows wider than 16384 channels where XLA also takes the forward (below), so
    that XLA's gradient runs after XLA's forward, whose statistics it fuses: 2.22 TB/s
    forward+backward at 1024x65536, against 1.71 for the Triton forward with the chunked
    backward. Elsewhere the gradient is the chunked backward (`phase_config`): after the Triton
    forward it ran 2.35 / 2.38 / 2.11 TB/s forward+backward at 4096x12288 / 4096x16384 /
    2048x32768, against XLA's 1.11 / 1.04 / 2.25 for both phases (faster at 16384 channels and
    below; at 2048x32768 XLA's pair is faster, but `None`'s forward there is Triton's, and the
    Triton forward with XLA's gradient ran 1.79);
  * the forward of rows of 257 to 2048 channels: XLA 3.06 / 2.84 / 3.19 TB/s at 65536x512 /
    32768x1024 / 16384x2048 with bf16 parameters against 2.93 / 2.86 / 2.71 (faster, or within
    1 %), within 2 % either way with float32 ones (at 256 channels "triton" ran 3.89 against
    3.47; the gradient stays "triton", 2x XLA's there);
  * the forward of rows wider than 32768 channels (1.69 and 1.33 TB/s at 1024x65536 with bf16
    and float32 parameters against 1.68), or wider than 16384 with parameters of another dtype
    than x (1.57 against 1.68 at 2048x32768 with float32 parameters).
  """
  c = spec.arg("x").shape[spec.param("axis")]
  if phase == "bwd":
    return c > 16384 and prefers_xla(spec, "fwd")
  return 256 < c <= 2048 or c > 32768 or (c > 16384 and not _params_like_x(spec))


def _wide_row_warps(cp: int) -> int:
  """Warps for one program per wide row: about 32 elements per thread, 4 to 32 warps."""
  return min(32, max(4, cp // 1024))


def _chunked(chunk: int, num_warps: int, per_sm: int) -> TritonLayerNormConfig:
  """A config of the chunked kernels: `chunk` channels at a time, one row per tile, `per_sm`
  programs per SM."""
  return TritonLayerNormConfig(1, num_warps, per_sm * sm_count(), True, chunk)


def _fwd_kernel(*refs, has_scale, has_offset, n, c, cp, block_rows, programs, steps, prefetch,
                reload_params, epsilon, subtract_mean):
  x_ref, *params, y_ref = refs
  scale_ref = params.pop(0) if has_scale else None
  offset_ref = params.pop(0) if has_offset else None

  def parameters() -> tuple[Any, Any]:
    return (load_vector(scale_ref, c, cp) if has_scale else 1.0,
            load_vector(offset_ref, c, cp) if has_offset else 0.0)

  held = None if reload_params else parameters()

  def body(rows, cols, mask, tiles, carry):
    y, _ = normalize(tiles[0], mask, c, epsilon, subtract_mean)
    scale, offset = parameters() if reload_params else held
    if has_scale:
      y = y * scale
    if has_offset:
      y = y + offset
    plt.store(y_ref.at[rows, cols], y.astype(y_ref.dtype), mask=mask)
    return carry

  tile_loop(steps, row_tiles(pl.program_id(0), programs, block_rows), block_rows, n, c, cp,
            [x_ref], body, (), prefetch)


def _bwd_kernel(*refs, has_scale, n, c, cp, block_rows, programs, steps, prefetch, epsilon,
                subtract_mean):
  if has_scale:
    x_ref, sc_ref, dy_ref, dx_ref, ds_ref, do_ref = refs
    scale = load_vector(sc_ref, c, cp)
  else:
    x_ref, dy_ref, dx_ref, ds_ref, do_ref = refs
    scale = 1.0
  pid = pl.program_id(0)

  def body(rows, cols, mask, tiles, carry):
    x, dy = tiles
    dscale, doffset = carry
    xhat, rstd = normalize(x, mask, c, epsilon, subtract_mean)
    g = dy * scale if has_scale else dy
    dx = g - xhat * (jnp.sum(g * xhat, axis=1, keepdims=True) * (1.0 / c))
    if subtract_mean:
      dx = dx - jnp.sum(g, axis=1, keepdims=True) * (1.0 / c)
    plt.store(dx_ref.at[rows, cols], (dx * rstd).astype(dx_ref.dtype), mask=mask)
    return dscale + jnp.sum(dy * xhat, axis=0), doffset + jnp.sum(dy, axis=0)

  zeros = jnp.zeros((cp,), jnp.float32)
  dscale, doffset = tile_loop(steps, row_tiles(pid, programs, block_rows), block_rows, n, c, cp,
                              [x_ref, dy_ref], body, (zeros, zeros), prefetch)
  cols = lax.iota(jnp.int32, cp)
  mask = (cols < c) if cp != c else None
  plt.store(ds_ref.at[pid, cols], dscale, mask=mask)
  plt.store(do_ref.at[pid, cols], doffset, mask=mask)


def _grid(n: int, config: "TritonLayerNormConfig") -> tuple[int, int]:
  """(programs, steps): programs launched and tiles each loops over."""
  tiles = pl.cdiv(n, config.block_rows)
  programs = tiles if config.programs == 0 else min(config.programs, tiles)
  return programs, pl.cdiv(tiles, programs)


class TritonLayerNorm(Op[TritonLayerNormConfig]):
  """Layer norm as Pallas Triton kernels."""

  op_name = base.OP_NAME
  implementation = "triton"
  config_cls = TritonLayerNormConfig

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = pallas_lib.gpu_unsupported_reason(device, "Triton", (8, 0))
    if reason:
      return reason
    if spec.arg("x").dtype not in base.FLOAT_DTYPES:
      return f"dtype {spec.arg('x').dtype} is not supported ({', '.join(base.FLOAT_DTYPES)})"
    if spec.arg("x").shape[spec.param("axis")] > _MAX_CHANNELS:
      return f"more than {_MAX_CHANNELS} channels are not supported"
    return None

  def default_config(self, spec: Spec) -> TritonLayerNormConfig:
    cp = pallas_lib.next_pow2(spec.arg("x").shape[spec.param("axis")])
    if cp <= 2048:
      return _config(8192, cp, 8, 2)
    return _config(cp, cp, 16, 1)

  def phase_config(self, spec: Spec, phase: str) -> TritonLayerNormConfig:
    """Untuned choice per phase, from H200 runs (bf16 x, CUPTI, one process per comparison).

    Up to 2048 channels: the forward one program per tile of 16384 elements with 16 warps (4.05
    TB/s at 1048576x64, xla 3.92); the backward up to 256 channels one program per 8192-element
    tile with 8 warps (3.21 TB/s counted as 5 passes, xla 2.10; its per-tile float32 partial sums
    grow with the channels, so wider rows keep `default_config`'s bounded programs, 2.99 TB/s at
    8192x8192, xla 2.07).
    Wider rows, the forward:
    * scale and offset of x's dtype (or none), up to 32768 channels: one program per row, about
      32 elements per thread (4 to 32 warps), the parameters read per row (`reload_params`):
      3.70 / 3.59 / 3.26 / 2.43 TB/s at 16384x4096 / 8192x8192 / 4096x16384 / 2048x32768,
      against 3.28 / 3.44 / 1.92 / 0.32 for two rows per program holding them, xla 3.23 / 3.32 /
      1.78 / 1.68;
    * parameters of another dtype (float32 with bf16 x: their loads change layout through shared
      memory, which a per-row read would repeat), up to 8192 channels: two rows per program, 16
      warps, one program per SM (3.23 / 3.41 TB/s at 16384x4096 / 8192x8192, xla 2.85 / 2.67);
    * wider still (both registers and spills grow with whole rows): the chunked kernel, 4096
      channels at a time, 8 warps, 4 programs per SM (1.95 / 1.57 TB/s at 4096x16384 /
      2048x32768 with float32 parameters, xla 1.57 / 1.68; 1.68 at 1024x65536 bf16, xla 1.68;
      16 warps on 2 programs per SM ran 1.75 / 1.76 there, an autotuning candidate); whole rows
      there ran 0.87 / 0.33 / 0.18.
    (All from one run of tools/kernels_gpu/ln_triton_bench.py; the rule takes "xla" where
    `prefers_xla` says.)
    Wider rows, the backward: above 8192 channels (padded) the chunked backward,
    one row by 1024 channels per tile, 4 warps, 8 programs per SM: forward+backward after the
    Triton forward 2.35 / 2.38 / 2.11 / 1.71 TB/s at 4096x12288 / 4096x16384 / 2048x32768 /
    1024x65536 (1.87 at 4096x16384 with float32 parameters), against 1.06 / 0.73 / 0.24 / 0.18
    for whole rows and XLA's 1.11 / 1.04 / 2.25 / 2.22 (0.96); of 12 tilings (1-2 rows, 512-4096
    channels, 2-8 warps, 4-16 programs per SM or one per row block, with and without prefetch)
    it was the fastest or within 2 % up to 32768 channels (at 1024x65536, where the rule takes
    XLA, six tilings ran 4-8 % faster, the same one without prefetch 1.84). Each tile program's count of
    real tiles as its trip count cost 3-4 %; with the static count it runs 2.40 at 4096x16384 and 2.18 at 2048x32768, 1.5 % and
    1.3 % ahead of the same tiling without prefetch (2.36, 2.15; XLA 1.06, 2.26). At 8192x8192
    whole rows stay: 2.98 against 2.45 (tools/kernels_gpu/ln_chunked_bwd_bench.py).
    """
    cp = pallas_lib.next_pow2(spec.arg("x").shape[spec.param("axis")])
    if cp <= 2048 and phase == "fwd":
      return _config(16384, cp, 16, 0)
    if cp <= 256 and phase == "bwd":
      # One program per tile writes a float32 partial row per tile: cheap for narrow rows only.
      return _config(8192, cp, 8, 0)
    if phase == "bwd" and cp > 8192:
      # The chunked backward: whole rows spill there (0.73 TB/s forward+backward at 4096x16384).
      return _chunked(1024, 4, 8)
    if phase == "fwd":
      like_x = _params_like_x(spec)
      if like_x and cp <= 32768:
        return _config(cp, cp, _wide_row_warps(cp), 0, reload_params=True)
      if not like_x and cp <= 8192:
        return _config(2 * cp, cp, 16, 1)
      return _chunked(4096, 8, 4)
    return self.default_config(spec)

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[TritonLayerNormConfig]:
    # Registers (ptxas for sm_90 on Triton 3.6 output) decide how many programs fit an SM; the
    # per-SM counts below are those fits for the backward (the forward needs fewer registers).
    cp = pallas_lib.next_pow2(spec.arg("x").shape[spec.param("axis")])
    if cp <= 2048:
      candidates = [_config(8192, cp, 8, 0), _config(8192, cp, 8, 2, False),
                    _config(4096, cp, 4, 4), _config(4096, cp, 8, 3),
                    _config(16384, cp, 16, 0), _config(32768, cp, 16, 0),
                    _config(16384, cp, 8, 0), _config(16384, cp, 16, 2)]
    else:
      candidates = [_config(cp, cp, 16, 0), _config(cp, cp, 16, 1, False),
                    _config(cp, cp, 32, 1), _config(cp, cp, 8, 2),
                    _config(2 * cp, cp, 16, 1), _config(2 * cp, cp, 16, 0),
                    _config(cp, cp, 8, 0), _config(4 * cp, cp, 32, 1),
                    _config(cp, cp, 8, 3), _config(cp, cp, 4, 4),
                    _chunked(1024, 4, 8), _chunked(2048, 8, 4)]
      # The forward's parameters per row (the backward runs these as their plain versions),
      # and chunks of 4096 channels.
      candidates += [_config(cp, cp, w, 0, reload_params=True)
                     for w in dict.fromkeys((_wide_row_warps(cp), 4, 16))]
      if cp > 4096:
        candidates += [_chunked(4096, 8, 4), _chunked(4096, 16, 2)]
    return tuple(cfg for cfg in candidates if cfg.block_rows * cp <= _MAX_TILE)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: TritonLayerNormConfig
              ) -> tuple[Any, Any]:
    x, scale, offset = args
    rows, restore = base.to_rows(x, spec.param("axis"))
    n, c = rows.shape
    cp, r = pallas_lib.next_pow2(c), config.block_rows
    eps, subtract_mean = spec.param("epsilon"), spec.param("subtract_mean")
    params = [v for v in (scale, offset) if v is not None]  # read in their own dtype
    if config.chunk and config.chunk < cp:
      programs = n if config.programs == 0 else min(config.programs, n)
      kernel = functools.partial(
          triton_chunked.forward_kernel, has_scale=scale is not None,
          has_offset=offset is not None, n=n, c=c, chunk=config.chunk, programs=programs,
          epsilon=eps, subtract_mean=subtract_mean)
    else:
      programs, steps = _grid(n, config)
      kernel = functools.partial(
          _fwd_kernel, has_scale=scale is not None, has_offset=offset is not None, n=n, c=c,
          cp=cp, block_rows=r, programs=programs, steps=steps, prefetch=config.prefetch,
          reload_params=config.reload_params, epsilon=eps, subtract_mean=subtract_mean)
    y = pl.pallas_call(
        kernel, grid=(programs,), out_shape=jax.ShapeDtypeStruct(rows.shape, x.dtype),
        name="pjrtkit_layer_norm_fwd", **call_params(config.num_warps),
    )(rows, *params)
    mean, rstd = base.statistics(x, spec)
    return restore(y), (x, scale, offset, mean, rstd)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: TritonLayerNormConfig
               ) -> tuple[Any, ...]:
    x, scale, _, _, _ = residuals  # mean and rstd are recomputed from x in the kernels.
    rows, restore = base.to_rows(x, spec.param("axis"))
    dy, _ = base.to_rows(dout, spec.param("axis"))  # read in its own dtype
    n, c = rows.shape
    cp, r = pallas_lib.next_pow2(c), config.block_rows
    programs, steps = _grid(n, config)
    if config.chunk and config.chunk < cp:
      # The row kernel over `programs` programs, the tile kernel over about as many (0: 4 per SM).
      dx, dscale, doffset = triton_chunked.backward(
          rows, scale, dy, spec, chunk=config.chunk, block_rows=r, programs=programs,
          tile_programs=config.programs or 4 * sm_count(), prefetch=config.prefetch,
          num_warps=config.num_warps)
    else:
      part = jax.ShapeDtypeStruct((programs, c), jnp.float32)
      dx, dscale, doffset = pl.pallas_call(
          functools.partial(_bwd_kernel, has_scale=scale is not None, n=n, c=c, cp=cp,
                            block_rows=r, programs=programs, steps=steps,
                            prefetch=config.prefetch, epsilon=spec.param("epsilon"),
                            subtract_mean=spec.param("subtract_mean")),
          grid=(programs,), out_shape=[jax.ShapeDtypeStruct(rows.shape, x.dtype), part, part],
          name="pjrtkit_layer_norm_bwd", **call_params(config.num_warps),
      )(rows, *([] if scale is None else [scale]), dy)
    return base.finish_grads(spec, restore(dx), jnp.sum(dscale, axis=0),
                             jnp.sum(doffset, axis=0))
