"""gated_linear_unit "triton": the forward as one Pallas ``pallas_call`` kernel lowered through
Triton; the gradient is the "xla" one.

x ``[..., k]`` is read as rows ``[m, k]`` (a reshape) and the weights as they are (fused
``[k, 2, n]`` read as ``[k, 2n]``, gate columns ``j`` and up columns ``n + j``; or the pair
``w_gate``, ``w_up``). A 1-D grid of ``row tiles x column tiles`` programs, visited in bands of
`group_m` row tiles (`triton_matmul.band_order`): a program holds two float32 accumulators,
``x @ w_gate`` and ``x @ w_up`` over one ``block_m x block_n`` tile, loops over k in
``block_k`` steps, then rounds both products to x's dtype (the residual `y`'s values, as
"xla" computes them) and stores ``activation(gate) * up`` computed in float32. Only
`forward` also stores `y` (``[..., 2, n]``); `forward_output` (a call that is not
differentiated) writes the output alone.

Activations that lower in Triton (`triton_matmul.FUSABLE_ACTIVATIONS`: every named jax.nn one
`pjrtkit.kernels.core.functions` knows) run in the kernel; any other (a custom function,
``jax.nn.gelu(approximate=False)``) is applied after it by XLA on `y` (`base.combine`), so the
kernel then writes `y` alone.

Backward: `XlaGatedLinearUnit.backward` (XLA's einsums for dx and the weights' gradients from
the residual `y`), so the "triton" forward pairs with the same gradient as "xla".

On the CPU it runs under ``pallas_interpret()`` only (Pallas's HLO interpreter).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core import triton_matmul as tm
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.gated_linear_unit import base
from pjrtkit.kernels.gated_linear_unit.xla import XlaGatedLinearUnit


@dataclasses.dataclass(frozen=True)
class TritonGatedLinearUnitConfig(tm.MatmulConfig):
  """The forward kernel's tiles and launch (`triton_matmul.MatmulConfig`): output tiles of
  `block_m` rows by `block_n` columns (each program holds two such float32 accumulators),
  `block_k` steps over k. Blocks larger than a dimension are shrunk to it (at least 16).

  The default, 128 x 128 tiles with k steps of 64, 8 warps and 3 stages, is a Hopper bf16
  matmul's 128 x 256 tile split into gate and up (128 KiB of accumulators per program, 144 KiB
  of shared memory in flight); not measured on a GPU yet.
  """

  num_stages: int = 3


@dataclasses.dataclass(frozen=True)
class _Geometry:
  """The static geometry of one launch."""

  m: int
  k: int
  n: int
  block_m: int
  block_n: int
  block_k: int
  group_m: int


def _glu_kernel(*refs: Any, geo: _Geometry, fused: bool, with_out: bool, with_y: bool,
                precision: Any, activation: Callable[[Any], Any] | None) -> None:
  """One output tile: both products, then `y` and/or ``activation(gate) * up``."""
  if fused:
    x_ref, w_ref, *outs = refs
    gate_ref, up_ref, up_shift = w_ref, w_ref, geo.n
  else:
    x_ref, gate_ref, up_ref, *outs = refs
    up_shift = 0
  o_ref = outs.pop(0) if with_out else None
  y_ref = outs.pop(0) if with_y else None
  bm, bn, bk = geo.block_m, geo.block_n, geo.block_k
  row_tile, col_tile = tm.band_order(pl.program_id(0), pl.cdiv(geo.m, bm), pl.cdiv(geo.n, bn),
                                     geo.group_m)
  rows = tm.span(row_tile * bm, bm, 0)
  cols = tm.span(col_tile * bn, bn, 1)
  row_ok, col_ok = tm.below(rows, geo.m, bm), tm.below(cols, geo.n, bn)

  def body(step, accs):
    gate, up = accs
    k_row, k_col = tm.span(step * bk, bk, 1), tm.span(step * bk, bk, 0)
    a = tm.load(x_ref, rows, k_row, tm.both(row_ok, tm.below(k_row, geo.k, bk)))
    w_mask = tm.both(tm.below(k_col, geo.k, bk), col_ok)
    b_gate = tm.load(gate_ref, k_col, cols, w_mask)
    b_up = tm.load(up_ref, k_col, cols + up_shift, w_mask)
    return gate + tm.dot(a, b_gate, precision), up + tm.dot(a, b_up, precision)

  zero = jnp.zeros((bm, bn), jnp.float32)
  gate, up = lax.fori_loop(0, pl.cdiv(geo.k, bk), body, (zero, zero))
  # The products as the residual holds them (x's dtype), as "xla" computes the output from.
  gate, up = gate.astype(x_ref.dtype), up.astype(x_ref.dtype)
  mask = tm.both(row_ok, col_ok)
  if y_ref is not None:
    tm.store(y_ref, rows, cols, gate, mask)
    tm.store(y_ref, rows, cols + geo.n, up, mask)
  if o_ref is not None:
    g = gate.astype(jnp.float32)
    if activation is not None:
      g = activation(g)
    tm.store(o_ref, rows, cols, (g * up.astype(jnp.float32)).astype(o_ref.dtype), mask)


def glu_forward(x: jax.Array, fused: Any, gate: Any, up: Any, config: tm.MatmulConfig,
                precision: Any, activation: Callable[[Any], Any] | None, with_out: bool,
                with_y: bool) -> tuple[jax.Array | None, jax.Array | None]:
  """``(out [..., n], y [..., 2, n])`` (each None unless asked for) of x ``[..., k]``;
  `activation` must lower in Triton (`triton_matmul.fusable`)."""
  lead, k = x.shape[:-1], x.shape[-1]
  m = math.prod(lead)
  n = (fused if fused is not None else gate).shape[-1]
  config = tm.fit(config, m, n, k)
  geo = _Geometry(m=m, k=k, n=n, block_m=config.block_m, block_n=config.block_n,
                  block_k=config.block_k, group_m=config.group_m)
  weights = [fused.reshape(k, 2 * n)] if fused is not None else [gate, up]
  out_shape = []
  if with_out:
    out_shape.append(jax.ShapeDtypeStruct((m, n), x.dtype))
  if with_y:
    out_shape.append(jax.ShapeDtypeStruct((m, 2 * n), x.dtype))
  kernel = functools.partial(_glu_kernel, geo=geo, fused=fused is not None, with_out=with_out,
                             with_y=with_y, precision=precision, activation=activation)
  grid = pl.cdiv(m, geo.block_m) * pl.cdiv(n, geo.block_n)
  results = list(pl.pallas_call(
      kernel, grid=(grid,), out_shape=out_shape,
      name="pjrtkit_glu_fwd" + ("_res" if with_y else ""), **tm.call_params(config),
  )(x.reshape(m, k), *weights))
  out = results.pop(0).reshape(*lead, n) if with_out else None
  y = results.pop(0).reshape(*lead, 2, n) if with_y else None
  return out, y


class TritonGatedLinearUnit(Op[TritonGatedLinearUnitConfig]):
  """The gated linear unit's forward as one Pallas Triton kernel; the "xla" gradient (see the
  module docstring)."""

  op_name = base.OP_NAME
  implementation = "triton"
  config_cls = TritonGatedLinearUnitConfig

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = pallas_lib.gpu_unsupported_reason(device, "Triton", (8, 0))
    if reason:
      return reason
    x = spec.arg("x").dtype
    if x not in tm.FLOAT_DTYPES:
      return f"x dtype {x} is not supported ({', '.join(tm.FLOAT_DTYPES)})"
    w = (spec.arg("fused") or spec.arg("w_gate")).dtype
    if w != x:
      return f"weights ({w}) of another dtype than x ({x}) (use 'xla')"
    return tm.precision_reason(spec.param("precision"))

  def default_config(self, spec: Spec) -> TritonGatedLinearUnitConfig:
    """The class default fitted to the shapes, within `triton_matmul.SMEM_BUDGET` (float32
    operands: k steps of 32)."""
    config = tm.fit(TritonGatedLinearUnitConfig(), *base.sizes(spec))
    return tm.within_smem(config, jnp.dtype(spec.arg("x").dtype).itemsize, 2, tm.SMEM_BUDGET)

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[TritonGatedLinearUnitConfig]:
    c = TritonGatedLinearUnitConfig
    candidates = [c(128, 128, 64, 8, 3), c(128, 128, 64, 8, 4), c(128, 64, 64, 4, 4),
                  c(128, 64, 64, 8, 4), c(64, 128, 64, 4, 4), c(64, 64, 64, 4, 3),
                  c(128, 128, 32, 8, 4), c(64, 256, 64, 8, 3), c(256, 64, 64, 8, 3),
                  c(32, 128, 64, 4, 4), c(16, 128, 128, 4, 4),
                  c(128, 128, 64, 8, 3, group_m=1)]
    itemsize = jnp.dtype(spec.arg("x").dtype).itemsize
    return tuple(dict.fromkeys(
        tm.within_smem(tm.fit(cfg, *base.sizes(spec)), itemsize, 2,
                       pallas_lib.HOPPER_SMEM_LIMIT) for cfg in candidates))

  def _run(self, args: tuple[Any, ...], spec: Spec, config: TritonGatedLinearUnitConfig,
           with_y: bool) -> tuple[jax.Array, jax.Array | None]:
    """``(out, y or None)``."""
    x, fused, gate, up = args
    m, n, k = base.sizes(spec)
    precision = functions.precision_of(spec.param("precision"))
    if m == 0 or n == 0 or k == 0:
      y = base.products(x, fused, gate, up, precision)
      return base.combine(y, spec, x.dtype), y
    name = spec.param("activation")
    if tm.fusable(name):
      return glu_forward(x, fused, gate, up, config, precision, tm.activation_of(name), True,
                         with_y)
    _, y = glu_forward(x, fused, gate, up, config, precision, None, False, True)
    return base.combine(y, spec, x.dtype), y

  def forward(self, args: tuple[Any, ...], spec: Spec, config: TritonGatedLinearUnitConfig
              ) -> tuple[Any, Any]:
    x, fused, gate, up = args
    out, y = self._run(args, spec, config, with_y=True)
    return out, (x, fused, gate, up, y)

  def forward_output(self, args: tuple[Any, ...], spec: Spec,
                     config: TritonGatedLinearUnitConfig) -> Any:
    return self._run(args, spec, config, with_y=False)[0]

  def backward(self, residuals: Any, dout: Any, spec: Spec,
               config: TritonGatedLinearUnitConfig) -> tuple[Any, ...]:
    """The "xla" gradient (`XlaGatedLinearUnit.backward`) from the shared residuals."""
    del config
    return XlaGatedLinearUnit().backward(residuals, dout, spec, NoConfig())
