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
  hold (a config with `chunk`) take the chunked backward instead: one kernel walks each row once
  in chunks for its statistics (`_bwd_rows_kernel`), a second writes ``dx`` and the partial sums
  from [block_rows, chunk] tiles over a grid of channel chunks x row groups
  (`_bwd_tiles_kernel`).

The forward and the whole-row backward launch at most `programs` programs (a few per SM), each
looping over every programs-th tile, optionally loading the next tile before using the current
one (`prefetch`).
A forward config with `chunk` instead walks each row in chunks of `chunk` channels, three times
(the mean, the variance, then y): a program then needs the registers of one chunk, not of a
whole row, so more programs fit an SM on wide rows; the row's second and third reads come from
cache. (Candidates for rows wider than 2048 channels; on the H200 at 8192x8192 bf16 they ran
about 3.0 TB/s, slower than whole rows at 3.5-3.6.) Wide whole rows read scale and offset per
row (`reload_params`) rather than holding them, which frees registers for more programs per SM.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core.pallas import sm_count
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.interpret import interpret_enabled
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm import base

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
  spec's width (H200, bf16 x, eighth and ninth sessions, one process per shape;
  tools/bench/results/layer_norm_triton_wide_h200.txt):

  * the backward of rows wider than 16384 channels where XLA also takes the forward (below), so
    that XLA's gradient runs after XLA's forward, whose statistics it fuses: 2.22 TB/s
    forward+backward at 1024x65536, against 1.71 for the Triton forward with the chunked
    backward. Elsewhere the gradient is the chunked backward (`phase_config`): after the Triton
    forward it ran 2.35 / 2.38 / 2.11 TB/s forward+backward at 4096x12288 / 4096x16384 /
    2048x32768, against XLA's 1.11 / 1.04 / 2.25 for both phases (faster at 16384 channels and
    below; at 2048x32768 XLA's pair is faster, but `None`'s forward there is Triton's, and the
    Triton forward with XLA's gradient ran 1.79, `None`'s choice in the eighth session);
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


def _params(config: TritonLayerNormConfig) -> dict[str, Any]:
  if interpret_enabled():
    return {"interpret": True}
  # num_stages: Triton's pipeliner leaves these loops' loads alone (no dot); `prefetch` does it.
  return {"compiler_params": plt.CompilerParams(num_warps=config.num_warps, num_stages=1)}


def _tile(first_row: Any, block_rows: int, n: int, c: int, width: int, first_col: Any = 0
          ) -> tuple[Any, Any, Any]:
  """Row indices [block_rows, 1], channel indices [1, width] from `first_col`, and the mask of
  real elements (`width` is the padded row, or a chunk that divides it; c % width != 0 exactly
  when some tile reaches past channel c)."""
  rows = first_row + lax.broadcasted_iota(jnp.int32, (block_rows, 1), 0)
  cols = first_col + lax.broadcasted_iota(jnp.int32, (1, width), 1)
  mask = rows < n
  if c % width:
    mask = mask & (cols < c)
  return rows, cols, jnp.broadcast_to(mask, (block_rows, width))


def _load(ref: Any, mask: Any) -> Any:
  return plt.load(ref, mask=mask, other=0).astype(jnp.float32)


def _load_vector(ref: Any, c: int, width: int, first_col: Any = 0) -> Any:
  """A [1, width] float32 slice of a parameter vector from channel `first_col` (zero past c),
  read in its own dtype (`width`: the padded row, or a chunk that divides it)."""
  cols = first_col + lax.iota(jnp.int32, width)
  v = _load(ref.at[cols], cols < c) if c % width else plt.load(ref.at[cols]).astype(jnp.float32)
  return v[None, :]


def _normalize(x: Any, mask: Any, c: int, epsilon: float, subtract_mean: bool
               ) -> tuple[Any, Any]:
  """(xhat, rstd) of a float32 tile whose masked entries are 0; xhat is 0 where masked."""
  if subtract_mean:
    mean = jnp.sum(x, axis=1, keepdims=True) * (1.0 / c)
    xc = jnp.where(mask, x - mean, 0.0)
  else:
    xc = x
  rstd = lax.rsqrt(jnp.sum(xc * xc, axis=1, keepdims=True) * (1.0 / c) + epsilon)
  # Masked rows have rstd = rsqrt(epsilon) (inf for epsilon = 0): keep them out of xhat.
  return jnp.where(mask, xc * rstd, 0.0), rstd


def _tile_loop(steps: Any, origin: Callable[[Any], tuple[Any, Any]], block_rows: int, n: int,
               c: int, width: int, refs: Sequence[Any], body: Any, init: Any, prefetch: bool
               ) -> Any:
  """Runs ``body(rows, cols, mask, tiles, carry) -> carry`` for step < `steps` over the
  [block_rows, width] tile whose first row and channel are ``origin(step)``, with ``tiles`` the
  float32 tiles of `refs` there (masked past row n and channel c: such elements move no data).

  With `prefetch`, the tiles of the next step are loaded before this step's are used: their
  loads are in flight while this step reduces and stores. ``origin(steps)`` (the last step's
  prefetch, never used) must be in bounds or fully masked.
  """

  def tile(step: Any) -> tuple[Any, Any, Any]:
    first_row, first_col = origin(step)
    return _tile(first_row, block_rows, n, c, width, first_col)

  def load(step: Any) -> tuple[Any, ...]:
    rows, cols, mask = tile(step)
    return tuple(plt.load(ref.at[rows, cols], mask=mask, other=0) for ref in refs)

  def run(step: Any, tiles: tuple[Any, ...], carry: Any) -> Any:
    rows, cols, mask = tile(step)
    return body(rows, cols, mask, tuple(t.astype(jnp.float32) for t in tiles), carry)

  if isinstance(steps, int) and steps == 1:
    return run(0, load(0), init)
  if not prefetch:
    return lax.fori_loop(0, steps, lambda step, carry: run(step, load(step), carry), init)

  def step_fn(step: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
    tiles, carry = state
    following = load(step + 1)
    return following, run(step, tiles, carry)

  return lax.fori_loop(0, steps, step_fn, (load(0), init))[1]


def _row_tiles(pid: Any, programs: int, block_rows: int) -> Callable[[Any], tuple[Any, Any]]:
  """`_tile_loop`'s origin for a program looping over whole-row tiles pid, pid + programs, ...
  (tiles past the last row are fully masked)."""
  def origin(step: Any) -> tuple[Any, Any]:
    return (step * programs + pid) * block_rows, 0

  return origin


def _fwd_kernel(*refs, has_scale, has_offset, n, c, cp, block_rows, programs, steps, prefetch,
                reload_params, epsilon, subtract_mean):
  x_ref, *params, y_ref = refs
  scale_ref = params.pop(0) if has_scale else None
  offset_ref = params.pop(0) if has_offset else None

  def parameters() -> tuple[Any, Any]:
    return (_load_vector(scale_ref, c, cp) if has_scale else 1.0,
            _load_vector(offset_ref, c, cp) if has_offset else 0.0)

  held = None if reload_params else parameters()

  def body(rows, cols, mask, tiles, carry):
    y, _ = _normalize(tiles[0], mask, c, epsilon, subtract_mean)
    scale, offset = parameters() if reload_params else held
    if has_scale:
      y = y * scale
    if has_offset:
      y = y + offset
    plt.store(y_ref.at[rows, cols], y.astype(y_ref.dtype), mask=mask)
    return carry

  _tile_loop(steps, _row_tiles(pl.program_id(0), programs, block_rows), block_rows, n, c, cp,
             [x_ref], body, (), prefetch)


def _fwd_chunked_kernel(*refs, has_scale, has_offset, n, c, chunk, programs, epsilon,
                        subtract_mean):
  """The forward one row at a time in chunks of `chunk` channels: the row's sum, then the sum of
  squared deviations, then y (three reads of the row, two of them from cache)."""
  x_ref, *params, y_ref = refs
  scale_ref = params.pop(0) if has_scale else None
  offset_ref = params.pop(0) if has_offset else None
  pid = pl.program_id(0)
  chunks = pl.cdiv(c, chunk)

  def columns(k: Any) -> tuple[Any, Any]:
    cols = k * chunk + lax.iota(jnp.int32, chunk)
    return cols, (cols < c) if c % chunk else None

  def load(ref: Any, index: Any, mask: Any) -> Any:
    if mask is None:
      return plt.load(ref.at[index]).astype(jnp.float32)
    return _load(ref.at[index], mask)

  def row_body(i: Any, _: Any) -> None:
    row = pid + i * programs

    def total(k: Any, acc: Any) -> Any:
      cols, mask = columns(k)
      return acc + jnp.sum(load(x_ref, (row, cols), mask))

    mean = (lax.fori_loop(0, chunks, total, jnp.float32(0)) * (1.0 / c) if subtract_mean
            else jnp.float32(0))

    def squares(k: Any, acc: Any) -> Any:
      cols, mask = columns(k)
      d = load(x_ref, (row, cols), mask) - mean
      if mask is not None:
        d = jnp.where(mask, d, 0.0)
      return acc + jnp.sum(d * d)

    rstd = lax.rsqrt(lax.fori_loop(0, chunks, squares, jnp.float32(0)) * (1.0 / c) + epsilon)

    def write(k: Any, _: Any) -> None:
      cols, mask = columns(k)
      y = (load(x_ref, (row, cols), mask) - mean) * rstd
      if has_scale:
        y = y * load(scale_ref, cols, mask)
      if has_offset:
        y = y + load(offset_ref, cols, mask)
      if mask is None:
        plt.store(y_ref.at[row, cols], y.astype(y_ref.dtype))
      else:
        plt.store(y_ref.at[row, cols], y.astype(y_ref.dtype), mask=mask)

    lax.fori_loop(0, chunks, write, None)

  # Rows pid, pid + programs, ... below n.
  lax.fori_loop(0, lax.div(n - pid + programs - 1, programs), row_body, None)


def _bwd_kernel(*refs, has_scale, n, c, cp, block_rows, programs, steps, prefetch, epsilon,
                subtract_mean):
  if has_scale:
    x_ref, sc_ref, dy_ref, dx_ref, ds_ref, do_ref = refs
    scale = _load_vector(sc_ref, c, cp)
  else:
    x_ref, dy_ref, dx_ref, ds_ref, do_ref = refs
    scale = 1.0
  pid = pl.program_id(0)

  def body(rows, cols, mask, tiles, carry):
    x, dy = tiles
    dscale, doffset = carry
    xhat, rstd = _normalize(x, mask, c, epsilon, subtract_mean)
    g = dy * scale if has_scale else dy
    dx = g - xhat * (jnp.sum(g * xhat, axis=1, keepdims=True) * (1.0 / c))
    if subtract_mean:
      dx = dx - jnp.sum(g, axis=1, keepdims=True) * (1.0 / c)
    plt.store(dx_ref.at[rows, cols], (dx * rstd).astype(dx_ref.dtype), mask=mask)
    return dscale + jnp.sum(dy * xhat, axis=0), doffset + jnp.sum(dy, axis=0)

  zeros = jnp.zeros((cp,), jnp.float32)
  dscale, doffset = _tile_loop(steps, _row_tiles(pid, programs, block_rows), block_rows, n, c, cp,
                               [x_ref, dy_ref], body, (zeros, zeros), prefetch)
  cols = lax.iota(jnp.int32, cp)
  mask = (cols < c) if cp != c else None
  plt.store(ds_ref.at[pid, cols], dscale, mask=mask)
  plt.store(do_ref.at[pid, cols], doffset, mask=mask)


def _bwd_rows_kernel(*refs, has_scale, n, c, chunk, block_rows, programs, blocks, prefetch,
                     epsilon, subtract_mean):
  """The chunked backward's first kernel: the row statistics dx needs, in one walk over
  [block_rows, chunk] tiles of x and dy, never a whole row at once.

  A program takes row blocks pid, pid + programs, ... below `blocks`; per chunk it reduces its
  tile about the chunk's own mean (the count, mean and sum of squared deviations, the sums of g
  and of g * (x - chunk mean), g = dy * scale) and merges that into the row's running values
  about the running mean (Chan et al.'s pairwise update, exact in exact arithmetic; no
  E[x^2] - mean^2 cancellation). It writes per row mean, rstd,
  u = rstd^3 * sum(g * (x - mean)) / c and w = rstd * sum(g) / c (0 for RMS norm), so that
  dx = rstd * g - (x - mean) * u - w.
  """
  if has_scale:
    x_ref, sc_ref, dy_ref, mean_ref, rstd_ref, u_ref, w_ref = refs
  else:
    x_ref, dy_ref, mean_ref, rstd_ref, u_ref, w_ref = refs
  pid = pl.program_id(0)
  chunks = pl.cdiv(c, chunk)
  zeros = jnp.zeros((block_rows,), jnp.float32)

  def merge(rows, cols, mask, tiles, acc):
    x, dy = tiles
    k, count, mean, squares, g_sum, gd_sum = acc  # k: this chunk's index
    g = dy * _load_vector(sc_ref, c, chunk, k * chunk) if has_scale else dy
    if not subtract_mean:  # sums about 0
      return (k + 1, count, mean, squares + jnp.sum(x * x, axis=1), g_sum + jnp.sum(g, axis=1),
              gd_sum + jnp.sum(g * x, axis=1))
    here = jnp.minimum(c - k * chunk, chunk).astype(jnp.float32)  # channels in this chunk
    chunk_mean = jnp.sum(x, axis=1) * (1.0 / here)
    d = jnp.where(mask, x - chunk_mean[:, None], 0.0)
    chunk_g = jnp.sum(g, axis=1)
    total = count + here
    delta = chunk_mean - mean
    # The mean moves by `step`; both sums of g * (x - mean) are re-centred by exact differences
    # (not by subtracting the nearly equal means themselves).
    step = delta * (here / total)
    return (k + 1, total, mean + step,
            squares + jnp.sum(d * d, axis=1) + delta * delta * (count * here / total),
            g_sum + chunk_g,
            gd_sum - step * g_sum + jnp.sum(g * d, axis=1) + (delta - step) * chunk_g)

  def block(i: Any, _: Any) -> None:
    first_row = (pid + i * programs) * block_rows

    def origin(k: Any) -> tuple[Any, Any]:
      # The prefetch after the last chunk reloads that chunk (from cache) rather than reading
      # past the row. (Pointing it at fully masked rows instead measured the same on the H200:
      # 2.33 against 2.32 TB/s forward+backward at 4096x16384.)
      return first_row, jnp.minimum(k, chunks - 1) * chunk

    _, _, mean, squares, g_sum, gd_sum = _tile_loop(
        chunks, origin, block_rows, n, c, chunk, [x_ref, dy_ref], merge,
        (jnp.int32(0), jnp.float32(0), zeros, zeros, zeros, zeros), prefetch)
    rstd = lax.rsqrt(squares * (1.0 / c) + epsilon)
    rows = first_row + lax.iota(jnp.int32, block_rows)
    valid = rows < n
    plt.store(mean_ref.at[rows], mean, mask=valid)
    plt.store(rstd_ref.at[rows], rstd, mask=valid)
    plt.store(u_ref.at[rows], rstd * rstd * rstd * gd_sum * (1.0 / c), mask=valid)
    plt.store(w_ref.at[rows], rstd * g_sum * (1.0 / c) if subtract_mean else zeros, mask=valid)

  lax.fori_loop(0, lax.div(blocks - pid + programs - 1, programs), block, None)


def _bwd_tiles_kernel(*refs, has_scale, n, c, chunk, block_rows, groups, blocks, prefetch):
  """The chunked backward's second kernel: program (k, j) takes channels [k * chunk,
  (k + 1) * chunk) of row tiles j, j + groups, ... below `blocks`; it writes dx there from the
  first kernel's row statistics, and one float32 row of dscale/doffset partial sums (row j of
  the partials)."""
  if has_scale:
    x_ref, sc_ref, dy_ref, mean_ref, rstd_ref, u_ref, w_ref, dx_ref, ds_ref, do_ref = refs
  else:
    x_ref, dy_ref, mean_ref, rstd_ref, u_ref, w_ref, dx_ref, ds_ref, do_ref = refs
  k, j = pl.program_id(0), pl.program_id(1)
  first_col = k * chunk
  scale = _load_vector(sc_ref, c, chunk, first_col) if has_scale else 1.0

  def body(rows, cols, mask, tiles, carry):
    x, dy = tiles
    dscale, doffset = carry
    index = rows[:, 0]
    valid = index < n
    # Rows past n read 0 for every statistic: their xhat is 0, and so is their dy.
    mean, rstd, u, w = (_load(ref.at[index], valid)[:, None]
                        for ref in (mean_ref, rstd_ref, u_ref, w_ref))
    d = x - mean
    g = dy * scale if has_scale else dy
    plt.store(dx_ref.at[rows, cols], (rstd * g - d * u - w).astype(dx_ref.dtype), mask=mask)
    return dscale + jnp.sum(dy * (d * rstd), axis=0), doffset + jnp.sum(dy, axis=0)

  def origin(step: Any) -> tuple[Any, Any]:
    return (step * groups + j) * block_rows, first_col

  zeros = jnp.zeros((chunk,), jnp.float32)
  dscale, doffset = _tile_loop(lax.div(blocks - j + groups - 1, groups), origin, block_rows, n,
                               c, chunk, [x_ref, dy_ref], body, (zeros, zeros), prefetch)
  index = first_col + lax.iota(jnp.int32, chunk)
  valid = (index < c) if c % chunk else None
  plt.store(ds_ref.at[j, index], dscale, mask=valid)
  plt.store(do_ref.at[j, index], doffset, mask=valid)


def _chunked_backward(rows: Any, scale: Any, dy: Any, spec: Spec, config: TritonLayerNormConfig
                      ) -> tuple[Any, Any, Any]:
  """(dx, dscale partials, doffset partials) of the chunked backward: `_bwd_rows_kernel` over
  `programs` programs (one per row block for 0), then `_bwd_tiles_kernel` over a grid of
  channel chunks x row groups, about `programs` programs in all (0: 4 per SM), each group
  writing one row of partial sums."""
  n, c = rows.shape
  chunk, r = config.chunk, config.block_rows
  blocks = pl.cdiv(n, r)
  programs, _ = _grid(n, config)
  params = [] if scale is None else [scale]
  stat = jax.ShapeDtypeStruct((n,), jnp.float32)
  mean, rstd, u, w = pl.pallas_call(
      functools.partial(_bwd_rows_kernel, has_scale=scale is not None, n=n, c=c, chunk=chunk,
                        block_rows=r, programs=programs, blocks=blocks,
                        prefetch=config.prefetch, epsilon=spec.param("epsilon"),
                        subtract_mean=spec.param("subtract_mean")),
      grid=(programs,), out_shape=[stat] * 4, name="pjrtkit_layer_norm_bwd_rows",
      **_params(config),
  )(rows, *params, dy)
  chunks = pl.cdiv(c, chunk)
  wanted = config.programs or 4 * sm_count()
  groups = min(blocks, max(1, pl.cdiv(wanted, chunks)))
  part = jax.ShapeDtypeStruct((groups, c), jnp.float32)
  return pl.pallas_call(
      functools.partial(_bwd_tiles_kernel, has_scale=scale is not None, n=n, c=c, chunk=chunk,
                        block_rows=r, groups=groups, blocks=blocks, prefetch=config.prefetch),
      grid=(chunks, groups), out_shape=[jax.ShapeDtypeStruct(rows.shape, rows.dtype), part, part],
      name="pjrtkit_layer_norm_bwd_tiles", **_params(config),
  )(rows, *params, dy, mean, rstd, u, w)


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
    Wider rows, the forward (eighth session, 2026-12-01):
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
    Wider rows, the backward (ninth session): above 8192 channels (padded) the chunked backward,
    one row by 1024 channels per tile, 4 warps, 8 programs per SM: forward+backward after the
    Triton forward 2.35 / 2.38 / 2.11 / 1.71 TB/s at 4096x12288 / 4096x16384 / 2048x32768 /
    1024x65536 (1.87 at 4096x16384 with float32 parameters), against 1.06 / 0.73 / 0.24 / 0.18
    for whole rows and XLA's 1.11 / 1.04 / 2.25 / 2.22 (0.96); of 12 tilings (1-2 rows, 512-4096
    channels, 2-8 warps, 4-16 programs per SM or one per row block, with and without prefetch)
    it was the fastest or within 2 % up to 32768 channels (at 1024x65536, where the rule takes
    XLA, six tilings ran 4-8 % faster, the same one without prefetch 1.84). The final code, after
    a review's changes, ran 2.32 at 4096x16384 and 2.11 at 2048x32768 (1.4 % and 1.8 % behind
    the same tiling without prefetch). At 8192x8192 whole rows stay: 2.98 against 2.45
    (tools/kernels_gpu/ln_chunked_bwd_bench.py).
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
          _fwd_chunked_kernel, has_scale=scale is not None, has_offset=offset is not None, n=n,
          c=c, chunk=config.chunk, programs=programs, epsilon=eps, subtract_mean=subtract_mean)
    else:
      programs, steps = _grid(n, config)
      kernel = functools.partial(
          _fwd_kernel, has_scale=scale is not None, has_offset=offset is not None, n=n, c=c,
          cp=cp, block_rows=r, programs=programs, steps=steps, prefetch=config.prefetch,
          reload_params=config.reload_params, epsilon=eps, subtract_mean=subtract_mean)
    y = pl.pallas_call(
        kernel, grid=(programs,), out_shape=jax.ShapeDtypeStruct(rows.shape, x.dtype),
        name="pjrtkit_layer_norm_fwd", **_params(config),
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
    if config.chunk and config.chunk < cp:
      dx, dscale, doffset = _chunked_backward(rows, scale, dy, spec, config)
      return base.finish_grads(spec, restore(dx), jnp.sum(dscale, axis=0),
                               jnp.sum(doffset, axis=0))
    programs, steps = _grid(n, config)
    part = jax.ShapeDtypeStruct((programs, c), jnp.float32)
    dx, dscale, doffset = pl.pallas_call(
        functools.partial(_bwd_kernel, has_scale=scale is not None, n=n, c=c, cp=cp,
                          block_rows=r, programs=programs, steps=steps, prefetch=config.prefetch,
                          epsilon=spec.param("epsilon"), subtract_mean=spec.param("subtract_mean")),
        grid=(programs,), out_shape=[jax.ShapeDtypeStruct(rows.shape, x.dtype), part, part],
        name="pjrtkit_layer_norm_bwd", **_params(config),
    )(rows, *([] if scale is None else [scale]), dy)
    return base.finish_grads(spec, restore(dx), jnp.sum(dscale, axis=0),
                             jnp.sum(doffset, axis=0))
