"""``q_sharding``: the attention under ``jax.shard_map``, each device on its share of the batch
and heads (Tokamax's argument of that name).

The query's ``NamedSharding`` may split its batch dimensions and its heads dimension over mesh
axes; its sequence and head_dim dimensions must be whole (every query needs every key, and the
head_dim is contracted). Key and value follow the query's batch split, and its heads split when
their head count divides by the split's size (each device's query heads then read the key/value
heads they read unsplit) or whole when there is one key/value head (multi-query). Bias and mask
are split like the query on each dimension they do not broadcast (size 1 stays whole); the
sequence lengths like the batch. Each device's share runs as a call of its own
(`batching.Call`), with the implementation chosen for the share's shape.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from pjrtkit.kernels.dot_product_attention import batching


def _axes_size(mesh: Any, entry: Any) -> int:
  """How many pieces a PartitionSpec entry (None, an axis name or a tuple of them) makes."""
  if entry is None:
    return 1
  names = entry if isinstance(entry, tuple) else (entry,)
  return math.prod(mesh.shape[n] for n in names)


def run_sharded(inputs: tuple[Any, ...], attend: Callable[..., Any], q_sharding: Any) -> Any:
  """Runs `attend` per device under ``shard_map`` (module docstring).

  `inputs`: the public call's query, key, value, bias, mask, query_seq_lengths and
  key_value_seq_lengths (checked by the caller with `batching.Call.make`).

  Raises:
    TypeError: `q_sharding` is not a ``NamedSharding``.
    ValueError: it splits the query's sequence or head_dim, or heads that key/value cannot
      follow, or a dimension its mesh axes do not divide.
  """
  if not isinstance(q_sharding, NamedSharding):
    raise TypeError(f"dot_product_attention: q_sharding must be None or a "
                    f"jax.sharding.NamedSharding, got {type(q_sharding).__name__}")
  query, key, value, bias, mask, qsl, kvsl = inputs
  nd = query.ndim
  batch = tuple(query.shape[:-3])
  qsl, kvsl = (None if a is None else jax.numpy.broadcast_to(jax.numpy.asarray(a), batch)
               for a in (qsl, kvsl))
  spec = tuple(q_sharding.spec) + (None,) * (nd - len(q_sharding.spec))
  if len(spec) != nd:
    raise ValueError(f"dot_product_attention: q_sharding's spec {q_sharding.spec} has more "
                     f"entries than the query's {nd} dimensions")
  mesh = q_sharding.mesh
  if spec[-3] is not None or spec[-1] is not None:
    raise ValueError(f"dot_product_attention: q_sharding may split the query's batch and heads "
                     f"dimensions only, not its sequence or head_dim, got {q_sharding.spec}")
  for dim, entry in enumerate(spec):
    pieces = _axes_size(mesh, entry)
    if query.shape[dim] % pieces:
      raise ValueError(f"dot_product_attention: q_sharding splits query dimension {dim} "
                       f"(size {query.shape[dim]}) into {pieces}, which does not divide it")
  batch_spec = spec[:-3]
  heads = spec[-2]
  kv_heads = key.shape[-2]
  pieces = _axes_size(mesh, heads)
  if pieces > 1 and kv_heads % pieces and kv_heads != 1:
    raise ValueError(f"dot_product_attention: q_sharding splits the {query.shape[-2]} query "
                     f"heads into {pieces}; the {kv_heads} key/value heads must split likewise "
                     f"(a multiple of {pieces}) or be one")
  kv_spec = PartitionSpec(*batch_spec, None, heads if kv_heads != 1 else None, None)

  def spec_of(a: Any, tail: tuple[Any, ...]) -> PartitionSpec | None:
    """Split like the query where `a` is not broadcast (`tail`: the entries after the batch)."""
    if a is None:
      return None
    entries = tuple(batch_spec) + tail
    return PartitionSpec(*(e if size != 1 else None for e, size in zip(entries, a.shape)))

  bm_tail = (heads, None, None)
  in_specs = (PartitionSpec(*spec), kv_spec, kv_spec, spec_of(bias, bm_tail),
              spec_of(mask, bm_tail), spec_of(qsl, ()), spec_of(kvsl, ()))

  def local(q: Any, k: Any, v: Any, b: Any, m: Any, ql: Any, kl: Any) -> Any:
    return batching.Call.make(q, k, v, b, m, ql, kl).run(attend)

  args = (query, key, value, bias, mask, qsl, kvsl)
  if any(t == AxisType.Explicit for t in mesh.axis_types):
    # Explicit axes: shard_map takes arrays already laid out as its in_specs say.
    args = tuple(a if a is None else jax.reshard(a, NamedSharding(mesh, s))
                 for a, s in zip(args, in_specs))
  sharded = jax.shard_map(local, mesh=mesh, in_specs=in_specs,
                          out_specs=PartitionSpec(*spec), check_vma=False)
  return sharded(*args)
