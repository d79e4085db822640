"""linear_softmax_cross_entropy_loss "chunked_xla": the logits one ``[block_b, block_v]`` tile
at a time, so the largest temporary does not grow with the vocabulary (nor the batch).

Forward: for each row block, a loop over vocabulary blocks keeps a running maximum and sum of
exponentials (an online log-sum-exp) and picks each row's label logit from the block holding
it. Backward: for each vocabulary block, a loop over row blocks recomputes the tile's logits,
forms ``(softmax - one_hot) * dloss`` and adds its products into ``dx`` and that block's
``dw`` columns.

Nothing is padded or copied: a last block that would run past the end starts earlier instead
(``dynamic_slice`` clamps it) and masks the rows or columns an earlier block already covered.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core.device import current_device
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.linear_softmax_cross_entropy_loss import base


@dataclasses.dataclass(frozen=True)
class ChunkConfig:
  """Tile of the logits computed at a time."""

  block_b: int = 1024
  block_v: int = 2048


def _blocks(size: int, block: int) -> tuple[int, int]:
  """(block actually used, number of blocks): a block no larger than the size."""
  block = max(1, min(block, size))
  return block, -(-size // block)


def _start(j: jax.Array, block: int, size: int) -> jax.Array:
  """Where block `j` starts: ``j * block``, moved back so it ends at `size` at most."""
  return jnp.minimum(j * block, size - block)


class ChunkedXlaLinearSoftmaxCrossEntropyLoss(Op[ChunkConfig]):
  """Memory-efficient: temporaries of ``block_b * block_v`` logits (see the module docstring)."""

  op_name = base.OP_NAME
  implementation = "chunked_xla"
  portable = True
  config_cls = ChunkConfig

  carry_bits: bool | None = None
  """Whether the weights and their gradient are sliced and carried through the vocabulary loop
  as uint16 when they are 16-bit floats; None: on pjrtkit's CPU device (see `_to_bits`)."""

  def _to_bits(self, a: jax.Array) -> jax.Array:
    """`a` as the loop slices and carries it: as itself, or a 16-bit float's bits as uint16.
    pjrtkit's XLA:CPU widens a bfloat16 array to float32 around a dynamic slice or update of it
    (a whole-array conversion per block, an ``h x v x 4``-byte temporary) where it slices and
    updates a uint16 one in place; jaxlib's XLA:CPU keeps bfloat16 in place but copies at a
    bitcast, so by default the bits are carried on pjrtkit's CPU device only."""
    carry = self.carry_bits
    if carry is None:
      carry = current_device().is_pjrtkit_cpu
    if carry and jnp.dtype(a.dtype).itemsize == 2:
      return jax.lax.bitcast_convert_type(a, jnp.uint16)
    return a

  @staticmethod
  def _from_bits(a: jax.Array, dtype: Any) -> jax.Array:
    return a if a.dtype == jnp.dtype(dtype) else jax.lax.bitcast_convert_type(a, dtype)

  # The three products of a tile, float32 results; "native" overrides them.
  def logits(self, xb: Any, wj: Any, precision: Any) -> Any:
    """``xb [bb, h] @ wj [h, bv]``."""
    return jnp.matmul(xb, wj, precision=precision, preferred_element_type=jnp.float32)

  def rows_grad(self, s: Any, wj: Any, precision: Any) -> Any:
    """``s [bb, bv] @ wj^T``: a tile's part of dx."""
    return jnp.matmul(s, wj.T, precision=precision, preferred_element_type=jnp.float32)

  def weights_grad(self, xb: Any, s: Any, precision: Any) -> Any:
    """``xb^T @ s``: a tile's part of the weights' gradient, ``[h, bv]``."""
    return jnp.matmul(xb.T, s, precision=precision, preferred_element_type=jnp.float32)

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[ChunkConfig]:
    return tuple(ChunkConfig(b, v) for b in (256, 1024, 4096) for v in (1024, 2048, 8192))

  def example_args(self, spec: Spec, seed: int = 0) -> tuple[Any, ...]:
    return base.example_args(spec, seed)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: ChunkConfig) -> tuple[Any, Any]:
    x, labels, w = args
    precision = functions.precision_of(spec.param("precision"))
    b = x.shape[0]
    v = w.shape[1]
    bb, nb = _blocks(b, config.block_b)
    bv, nv = _blocks(v, config.block_v)
    w_bits = self._to_bits(w)
    labels = labels.astype(jnp.int32)

    def row_block(i: jax.Array, both: jax.Array) -> jax.Array:
      r0 = _start(i, bb, b)
      xb = jax.lax.dynamic_slice_in_dim(x, r0, bb, axis=0)
      lb = jax.lax.dynamic_slice_in_dim(labels, r0, bb, axis=0)

      def vocab_block(j: jax.Array, carry: tuple) -> tuple:
        run_max, run_sum, picked = carry
        c0 = _start(j, bv, v)
        wj = self._from_bits(jax.lax.dynamic_slice_in_dim(w_bits, c0, bv, axis=1), w.dtype)
        logits = self.logits(xb, wj, precision)
        cols = c0 + jnp.arange(bv)
        new_cols = cols >= j * bv  # False: a column an earlier block covered
        logits = jnp.where(new_cols, logits, -jnp.inf)
        new_max = jnp.maximum(run_max, jnp.max(logits, axis=-1))
        run_sum = (run_sum * jnp.exp(run_max - new_max)
                   + jnp.sum(jnp.exp(logits - new_max[:, None]), axis=-1))
        hit = (cols == lb[:, None]) & new_cols
        picked = picked + jnp.sum(jnp.where(hit, logits, 0.0), axis=-1)
        return new_max, run_sum, picked

      init = (jnp.full((bb,), -jnp.inf, jnp.float32), jnp.zeros((bb,), jnp.float32),
              jnp.zeros((bb,), jnp.float32))
      run_max, run_sum, picked = jax.lax.fori_loop(0, nv, vocab_block, init)
      row = jnp.stack([run_max + jnp.log(run_sum), picked])
      # Rows an earlier block wrote keep their values (the same ones).
      return jax.lax.dynamic_update_slice_in_dim(both, row, r0, axis=1)

    both = jax.lax.fori_loop(0, nb, row_block, jnp.zeros((2, b), jnp.float32))
    lse, picked = both[0], both[1]
    loss = base.reduce(lse - picked, spec.param("reduction"))
    return loss, (x, labels, w, lse)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: ChunkConfig
               ) -> tuple[Any, ...]:
    x, labels, w, lse = residuals
    precision = functions.precision_of(spec.param("precision"))
    b, h = x.shape
    v = w.shape[1]
    bb, nb = _blocks(b, config.block_b)
    bv, nv = _blocks(v, config.block_v)
    w_bits = self._to_bits(w)
    drow = base.row_cotangent(dout, spec.param("reduction"), b)
    labels = labels.astype(jnp.int32)

    def vocab_block(j: jax.Array, carry: tuple) -> tuple:
      dx, dw = carry
      c0 = _start(j, bv, v)
      wj = self._from_bits(jax.lax.dynamic_slice_in_dim(w_bits, c0, bv, axis=1), w.dtype)
      cols = c0 + jnp.arange(bv)
      new_cols = cols >= j * bv

      def row_block(i: jax.Array, inner: tuple) -> tuple:
        dx, dwj = inner
        r0 = _start(i, bb, b)
        xb = jax.lax.dynamic_slice_in_dim(x, r0, bb, axis=0)
        lb = jax.lax.dynamic_slice_in_dim(labels, r0, bb, axis=0)
        lseb = jax.lax.dynamic_slice_in_dim(lse, r0, bb, axis=0)
        # Rows of an earlier row block were added already: a zero cotangent here.
        db = jnp.where(r0 + jnp.arange(bb) >= i * bb,
                       jax.lax.dynamic_slice_in_dim(drow, r0, bb, axis=0), 0.0)
        logits = self.logits(xb, wj, precision)
        p = jnp.where(new_cols, jnp.exp(logits - lseb[:, None]), 0.0)
        hit = (cols == lb[:, None]) & new_cols
        s = ((p - hit) * db[:, None]).astype(x.dtype)
        dxb = self.rows_grad(s, wj, precision)
        cur = jax.lax.dynamic_slice_in_dim(dx, r0, bb, axis=0)
        dx = jax.lax.dynamic_update_slice_in_dim(dx, cur + dxb, r0, axis=0)
        dwj = dwj + self.weights_grad(xb, s, precision)
        return dx, dwj

      dx, dwj = jax.lax.fori_loop(0, nb, row_block, (dx, jnp.zeros((h, bv), jnp.float32)))
      # Columns an earlier block covered keep what that block wrote.
      old = jax.lax.dynamic_slice_in_dim(dw, c0, bv, axis=1)
      new = self._to_bits(dwj.astype(w.dtype))
      dw = jax.lax.dynamic_update_slice_in_dim(dw, jnp.where(new_cols, new, old), c0, axis=1)
      return dx, dw

    dw = self._to_bits(jnp.zeros((h, v), w.dtype))
    dx, dw = jax.lax.fori_loop(0, nv, vocab_block, (jnp.zeros((b, h), jnp.float32), dw))
    return dx, None, self._from_bits(dw, w.dtype)
