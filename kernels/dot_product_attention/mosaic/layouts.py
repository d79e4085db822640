"""How "mosaic" attention maps a call onto its kernels: head dims zero-padded to the ones the
kernels are built for (`kernel_head_dim`), and short grouped calls without a causal mask run with
each group's query heads folded into the query rows (`folds_groups`). Used by ``attention.py``;
the layout changes are plain XLA around the kernels."""

from __future__ import annotations

import dataclasses
from typing import Any

from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.dot_product_attention import base
from pjrtkit.kernels.dot_product_attention.mosaic.launch import BLOCK_Q

KERNEL_HEAD_DIMS = (64, 128)
"""The head dims the kernels are built for; `kernel_head_dim` maps the others onto them."""


def kernel_head_dim(d: int) -> int:
  """The head dim the kernels run a call of head dim `d` at: 64 up to 64, else 128 (`d` a
  multiple of 8 up to 128; query, key and value are zero-padded to it)."""
  if d % 8 or not 0 < d <= KERNEL_HEAD_DIMS[-1]:
    raise ValueError(f"head_dim must be a multiple of 8 up to {KERNEL_HEAD_DIMS[-1]}, got {d}")
  return next(k for k in KERNEL_HEAD_DIMS if d <= k)


def with_head_dim(spec: Spec, d: int) -> Spec:
  """`spec` with query, key and value of head dim `d` (the call the padded kernels run)."""
  args = tuple(a if a is None or name not in ("query", "key", "value")
               else dataclasses.replace(a, shape=a.shape[:3] + (d,))
               for name, a in zip(spec.arg_names, spec.args))
  return dataclasses.replace(spec, args=args)


def folds_groups(spec: Spec) -> bool:
  """Whether the kernels run `spec` with each group's query heads folded into the query rows
  (`fold`): no causal mask (row ``t * group + j`` is query ``t``, which a row-index mask would
  not see), query heads sharing key/value heads, and fewer than the forward's 128 rows per
  program of queries, where folding fills rows padding would waste (for longer queries it
  saves only the last block's padding, and the measured launches are kept)."""
  _, t, h, _, _, k = base.dims(spec)
  return not spec.param("is_causal") and h != k and t < 2 * BLOCK_Q


def fold(x: Any, kv_heads: int) -> Any:
  """``[B, T, H, D]`` query-shaped -> ``[B, T * G, K, D]``: query head ``kv * G + j`` at time
  ``t`` becomes row ``t * G + j`` of key/value head ``kv`` (G = H / K)."""
  b, t, h, d = x.shape
  g = h // kv_heads
  return x.reshape(b, t, kv_heads, g, d).transpose(0, 1, 3, 2, 4).reshape(b, t * g, kv_heads, d)


def unfold(x: Any, q_len: int, heads: int) -> Any:
  """The inverse of `fold`: ``[B, T * G, K, D]`` -> ``[B, T, H, D]``."""
  b, _, k, d = x.shape
  g = heads // k
  return x.reshape(b, q_len, g, k, d).transpose(0, 1, 3, 2, 4).reshape(b, q_len, heads, d)


def fold_rows(x: Any, kv_heads: int) -> Any:
  """`fold` for a per-row array (the log-sum-exp): ``[B, H, T]`` -> ``[B, K, T * G]``."""
  b, h, t = x.shape
  g = h // kv_heads
  return x.reshape(b, kv_heads, g, t).transpose(0, 1, 3, 2).reshape(b, kv_heads, t * g)


def unfold_rows(x: Any, q_len: int, heads: int) -> Any:
  """The inverse of `fold_rows`: ``[B, K, T * G]`` -> ``[B, H, T]``."""
  b, k, _ = x.shape
  g = heads // k
  return x.reshape(b, k, q_len, g).transpose(0, 1, 3, 2).reshape(b, heads, q_len)


def with_query_shape(spec: Spec, shape: tuple[int, ...]) -> Spec:
  """`spec` with a query of `shape` (the folded call)."""
  args = tuple(dataclasses.replace(a, shape=tuple(shape)) if name == "query" else a
               for name, a in zip(spec.arg_names, spec.args))
  return dataclasses.replace(spec, args=args)
