"""Any number of batch dimensions and the sequence-length arguments, on top of the four-dimension
layout the implementations take.

`Call.make` checks the public call's arrays, flattens the batch dimensions of query, key, value,
bias and mask into one (`Call.arrays`), and turns ``key_value_seq_lengths`` into a mask
(``[N, 1, 1, S]``, and-ed with the caller's). `Call.run` calls the four-dimension attention and
gives the output the call's batch dimensions back; a query past its ``query_seq_lengths`` entry
attends no key, so its row is the mean of every value (as every fully masked row in Tokamax and
``jax.nn``): `run` puts that mean there instead of the kernel's row, which also sends the row's
cotangent to value alone, without a ``[T, S]`` mask.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp

from pjrtkit.kernels.dot_product_attention import base


def _is_array(a: Any) -> bool:
  return hasattr(a, "shape") and hasattr(a, "dtype")


def _batch_of(name: str, a: Any, batch: tuple[int, ...], rest: int, layout: str) -> None:
  """Checks `a` has the call's batch dimensions and `rest` more (`layout` names them)."""
  if not _is_array(a):
    raise TypeError(f"dot_product_attention: {name} must be an array, got {type(a).__name__}")
  if a.ndim != len(batch) + rest:
    raise ValueError(f"dot_product_attention: {name} must be {layout} with the query's "
                     f"{len(batch)} batch dimension(s) {batch}, got shape {tuple(a.shape)}")


def _lengths(name: str, a: Any, batch: tuple[int, ...]) -> jax.Array | None:
  """A sequence-length argument as int32 ``[N]`` (broadcast over the batch dimensions)."""
  if a is None:
    return None
  if not _is_array(a):
    a = jnp.asarray(a)
  if not jnp.issubdtype(a.dtype, jnp.integer):
    raise TypeError(f"dot_product_attention: {name} must be an integer array, got "
                    f"{jnp.dtype(a.dtype).name}")
  try:
    full = jnp.broadcast_shapes(tuple(a.shape), batch)
  except ValueError:
    full = None
  if full != batch:
    raise ValueError(f"dot_product_attention: {name} must broadcast to the batch dimensions "
                     f"{batch}, got shape {tuple(a.shape)}")
  return jnp.broadcast_to(a, batch).reshape(-1).astype(jnp.int32)


def _flatten_broadcast(a: Any, batch: tuple[int, ...]) -> Any:
  """`a` (``[*#B, ...]``) with its batch dimensions as one: 1 when all are 1, else ``N``."""
  if a is None or len(batch) == 1:
    return a
  nb = len(batch)
  lead = tuple(a.shape[:nb])
  if all(x == 1 for x in lead):
    return a.reshape((1,) + tuple(a.shape[nb:]))
  return jnp.broadcast_to(a, batch + tuple(a.shape[nb:])).reshape((-1,) + tuple(a.shape[nb:]))


@dataclasses.dataclass(frozen=True)
class Call:
  """A public call's arrays in the implementations' layout, and its batch dimensions."""

  batch: tuple[int, ...]
  arrays: tuple[Any, Any, Any, Any, Any]  # query, key, value, bias, mask: [N, ...]
  query_lengths: Any = None  # int32 [N], or None

  @classmethod
  def make(cls, query: Any, key: Any, value: Any, bias: Any, mask: Any,
           query_seq_lengths: Any = None, key_value_seq_lengths: Any = None) -> "Call":
    """Checks the batch dimensions and lengths (base.make_spec checks the rest).

    Raises:
      TypeError: an argument that is not an array (lengths: not integer).
      ValueError: batch dimensions that differ from the query's, lengths of another shape.
    """
    if not _is_array(query):
      raise TypeError(f"dot_product_attention: query must be an array, got "
                      f"{type(query).__name__}")
    if query.ndim < 3:
      raise ValueError(f"dot_product_attention: query must be [*batch, seq, heads, head_dim] "
                       f"(at least 3 dimensions), got shape {tuple(query.shape)}")
    batch = tuple(query.shape[:-3])
    _batch_of("key", key, batch, 3, "[*batch, kv_seq, kv_heads, head_dim]")
    _batch_of("value", value, batch, 3, "[*batch, kv_seq, kv_heads, value_head_dim]")
    for name, a in (("key", key), ("value", value)):
      if tuple(a.shape[:-3]) != batch:
        raise ValueError(f"dot_product_attention: {name}'s batch dimensions must be the "
                         f"query's {batch}, got shape {tuple(a.shape)}")
    full = batch + (query.shape[-2], query.shape[-3], key.shape[-3])
    for name, a in (("bias", bias), ("mask", mask)):
      if a is None:
        continue
      if not _is_array(a):
        raise TypeError(f"dot_product_attention: {name} must be an array, got "
                        f"{type(a).__name__}")
      if a.ndim != len(full) or any(x not in (1, f) for x, f in zip(a.shape[:len(batch)], batch)):
        raise ValueError(f"dot_product_attention: {name} must broadcast to [*batch, heads, "
                         f"q_seq, kv_seq] = {full} ({len(full)} dimensions, each 1 or full), "
                         f"got {tuple(a.shape)}")
    q_len, kv_len = query.shape[-3], key.shape[-3]
    qsl = _lengths("query_seq_lengths", query_seq_lengths, batch)
    kvsl = _lengths("key_value_seq_lengths", key_value_seq_lengths, batch)
    n = math.prod(batch)
    if batch != (n,):
      query, key, value = (a.reshape((n,) + tuple(a.shape[-3:])) for a in (query, key, value))
      bias = _flatten_broadcast(bias, batch) if batch else (
          None if bias is None else bias[None])
      mask = _flatten_broadcast(mask, batch) if batch else (
          None if mask is None else mask[None])
    del q_len
    if kvsl is not None:
      cols = (jnp.arange(kv_len)[None, :] < kvsl[:, None])[:, None, None, :]
      mask = cols if mask is None else mask & cols
    return cls(batch, (query, key, value, bias, mask), qsl)

  def run(self, attend: Callable[..., Any]) -> Any:
    """``attend(query, key, value, bias, mask)`` on the flattened arrays, reshaped back, with the
    rows past `query_lengths` the mean of every value."""
    out = attend(*self.arrays)
    if self.query_lengths is not None:
      _, t, h, _ = out.shape
      mean = base.mean_of_values(self.arrays[2], h)
      rows = (jnp.arange(t)[None, :] < self.query_lengths[:, None])[:, :, None, None]
      out = jnp.where(rows, out, mean.astype(out.dtype))
    return out.reshape(self.batch + tuple(out.shape[1:]))
