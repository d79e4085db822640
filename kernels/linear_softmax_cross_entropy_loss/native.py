"""linear_softmax_cross_entropy_loss "native": "chunked_xla"'s tiles (an online log-sum-exp over
vocabulary blocks forward, the tiles' logits recomputed backward) with each tile's three
products in ragged_dot's native C++ kernels on pjrtkit's CPU device: the logits and dx through
the rows product (one group of every row; the weights' block read as ``[1, h, bv]``, transposed
for dx), the weights' gradient through the groups product (``x_block^T s``).

Two bfloat16 operands are multiplied on AMX tiles where the CPU has them (`library.amx_bf16`),
which makes it faster than "chunked_xla" and "xla" for bfloat16 on such CPUs. float32 runs the
kernels' SIMD GEMM, whose gradient is slower than XLA's (docs/kernels.md). Products are summed
in float32 whatever `precision` says.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm.native import DTYPES, native_unsupported_reason
from pjrtkit.kernels.linear_softmax_cross_entropy_loss import base
from pjrtkit.kernels.linear_softmax_cross_entropy_loss.chunked_xla import (
    ChunkConfig, ChunkedXlaLinearSoftmaxCrossEntropyLoss)
from pjrtkit.kernels.ragged_dot import native as ragged_native


def _one_group(rows: int) -> Any:
  return jnp.full((1,), rows, jnp.int32)


class NativeLinearSoftmaxCrossEntropyLoss(ChunkedXlaLinearSoftmaxCrossEntropyLoss):
  """"chunked_xla"'s tiles with the products in C++ (see the module docstring)."""

  op_name = base.OP_NAME
  implementation = "native"
  portable = False
  carry_bits = True

  def default_config(self, spec: Spec) -> ChunkConfig:
    """Larger tiles than "chunked_xla"'s: each product call packs its operands and starts the
    library's threads, so fewer, larger calls run faster (2 cores, bfloat16 with AMX, forward
    and gradient: 0.82-0.90x the time of 1024 x 2048 tiles at 2048x1024x32768 and
    4096x512x16384; docs/kernels.md)."""
    del spec
    return ChunkConfig(block_b=2048, block_v=4096)

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    x, w = spec.arg("x"), spec.arg("weights")
    reason = native_unsupported_reason(device, "float32")  # the device and the library
    if reason:
      return reason
    if jnp.dtype(x.dtype) != jnp.dtype(w.dtype):
      return (f"x ({jnp.dtype(x.dtype).name}) and weights ({jnp.dtype(w.dtype).name}) must have "
              f"one dtype")
    dtype = jnp.dtype(x.dtype).name
    if dtype not in DTYPES:
      return f"x and weights dtype {dtype} is not supported (accepted: {', '.join(DTYPES)})"
    return None

  def logits(self, xb: Any, wj: Any, precision: Any) -> Any:
    del precision
    return ragged_native.rows_product(xb, wj[None], _one_group(xb.shape[0]), None, False,
                                      jnp.float32)

  def rows_grad(self, s: Any, wj: Any, precision: Any) -> Any:
    del precision
    # wj [h, bv] read as [groups=1, cols=h, depth=bv]: s @ wj^T.
    return ragged_native.rows_product(s, wj[None], _one_group(s.shape[0]), None, True,
                                      jnp.float32)

  def weights_grad(self, xb: Any, s: Any, precision: Any) -> Any:
    del precision
    return ragged_native.groups_product(xb, s, _one_group(xb.shape[0]), None, 1, jnp.float32)[0]
