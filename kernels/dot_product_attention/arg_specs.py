"""The calls dot_product_attention is benchmarked and tested on: the kernel comparison's cases
(A1..., H1...), the shape classes models use (S1...), and their small CPU stand-ins.

Cases are in layout ``[batch, seq, heads, head_dim]``, bfloat16 with query and key/value of the
same length unless a case says otherwise (`AttentionCase.dtype`, `AttentionCase.kv_seq`); a
grouped-query (GQA) case's key and value have ``kv_heads`` heads (a divisor of the query's).
Held-out cases (H1...) have shapes that no tuned file (``kernels/tuned``) has choices for: what
``implementation=None`` does on shapes nobody tuned.

``CALL_SPECS`` names every comparison case twice: ``A1`` at its full shape (tags ``primary``, and
``held_out`` for H1...) and ``A1-quick`` at its quick shape (tag ``ci``). ``SHAPE_CLASS_CALL_SPECS``
does the same for `SHAPE_CLASSES` (``S1``, ``S1-quick``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from pjrtkit.kernels.core.call_specs import CallSpec
from pjrtkit.kernels.core.comparison import FWD, FWD_BWD, Case

OP = "attention"
"""The op's name in case labels and tables."""
DTYPES = ("bfloat16", "float16", "float32")
"""The dtypes a case may have."""
SEED = 13
"""The seed of the comparison's inputs."""
WINDOW_CASES: tuple[tuple[int, int, dict[str, Any]], ...] = (
    (40, 40, dict(local_window_size=(7, 3))),
    (40, 40, dict(local_window_size=(20, 0), is_causal=True)),
    (33, 57, dict(local_window_size=(0, 19), logits_soft_cap=2.5)),
    (57, 33, dict(local_window_size=(30, 5))),
    (40, 40, dict(local_window_size=0)),
    (24, 40, dict(logits_soft_cap=1.0, is_causal=True)),
)
"""(query length, key length, options) of the window and soft-cap tests of the block kernels
("triton", "native"): windows across several 16-row blocks, shorter and longer key sequences, a
window of 0 (each query its own key), causal windows, soft caps."""


@dataclasses.dataclass(frozen=True)
class AttentionCase(Case):
  """An attention case: `Case` plus a causal mask, the key's and value's heads and length, and
  the dtype.

  Attributes:
    causal: attention with a causal mask (top-left aligned, as the library defines it: query
      ``t`` attends keys ``s <= t``, also when the key length differs).
    kv_heads: the key's and value's heads (None: the query's, ``shape[2]``).
    kv_seq: the key's and value's length (None: the query's, ``shape[1]``); another length is a
      decode or prefill call (``T != S``).
    dtype: the arrays' dtype (``bfloat16``, ``float16`` or ``float32``).

  Raises:
    ValueError: kv_heads not a divisor of the query's heads, kv_seq below 1, or a dtype
      attention does not take.
  """

  causal: bool = False
  kv_heads: int | None = None
  kv_seq: int | None = None
  dtype: str = "bfloat16"

  def __post_init__(self) -> None:
    super().__post_init__()
    if self.dtype not in DTYPES:
      raise ValueError(f"{self.id}: dtype must be one of {DTYPES}, got {self.dtype!r}")
    if self.kv_seq is not None and self.kv_seq < 1:
      raise ValueError(f"{self.id}: kv_seq must be >= 1, got {self.kv_seq}")
    if self.kv_heads is None:
      return
    if self.kv_heads < 1 or self.shape[2] % self.kv_heads:
      raise ValueError(f"{self.id}: kv_heads={self.kv_heads} does not divide the query's "
                       f"{self.shape[2]} heads")

  @property
  def grouped(self) -> bool:
    """Grouped-query attention: key/value have fewer heads than the query."""
    return self.kv_heads is not None and self.kv_heads != self.shape[2]

  @property
  def kv_shape(self) -> tuple[int, ...]:
    """The key/value shape ``(batch, kv_seq, kv_heads, head_dim)``."""
    b, t, h, d = self.shape
    return (b, t if self.kv_seq is None else self.kv_seq,
            h if self.kv_heads is None else self.kv_heads, d)

  def details(self) -> tuple[str, str]:
    """``" causal"`` after the phase; after the shape GQA's key/value heads (``" kv8"``), another
    key length (``" s4096"``) and another dtype than bfloat16 (``" float16"``)."""
    after_shape = f" kv{self.kv_heads}" if self.grouped else ""
    if self.kv_seq is not None and self.kv_seq != self.shape[1]:
      after_shape += f" s{self.kv_seq}"
    if self.dtype != "bfloat16":
      after_shape += f" {self.dtype}"
    return " causal" if self.causal else "", after_shape

  def record(self) -> dict[str, Any]:
    """`Case.record` plus the key/value shape; `kv_seq` and `dtype` only where a case sets them
    (the comparison's records stay as they were)."""
    info = super().record()
    for name, default in (("kv_seq", None), ("dtype", "bfloat16")):
      if info[name] == default:
        del info[name]
    info["kv_shape"] = self.kv_shape
    return info

  def with_shape(self, shape: tuple[int, ...], kv_seq: int | None = None) -> AttentionCase:
    """The same case at another shape; a GQA case keeps its group size (query heads per
    key/value head), so its kv_heads follow the new query heads. `kv_seq`: the new key length of
    a case with its own (None keeps it); a case whose key length is the query's keeps that.

    Raises:
      ValueError: the new heads are not a multiple of the group size, or `kv_seq` given for a
        case without a key length of its own.
    """
    if kv_seq is not None and self.kv_seq is None:
      raise ValueError(f"{self.id}: kv_seq given for a case whose key length is the query's")
    changes: dict[str, Any] = {"shape": tuple(shape)}
    if kv_seq is not None:
      changes["kv_seq"] = kv_seq
    if self.kv_heads is not None:
      group = self.shape[2] // self.kv_heads
      if shape[2] % group:
        raise ValueError(f"{self.id}: {shape[2]} heads do not keep groups of {group} query heads")
      changes["kv_heads"] = shape[2] // group
    return dataclasses.replace(self, **changes)


def _case(case_id: str, shape: tuple[int, int, int, int], phase: str, **kwargs: Any
          ) -> AttentionCase:
  return AttentionCase(case_id, OP, shape, phase, **kwargs)


CASES: tuple[AttentionCase, ...] = (
    _case("A1", (1, 16384, 16, 128), FWD),
    _case("A2", (1, 16384, 16, 128), FWD, causal=True),
    _case("A3", (32, 2048, 16, 64), FWD),
    _case("A4", (32, 2048, 16, 64), FWD_BWD),
    _case("A5", (32, 2048, 16, 64), FWD_BWD, causal=True, extra=True),
    _case("A6", (1, 16384, 16, 128), FWD_BWD, extra=True),
    _case("A7", (16, 1024, 32, 128), FWD_BWD, extra=True),
    _case("A8", (4, 4096, 32, 128), FWD_BWD, extra=True, kv_heads=8),
    _case("A9", (1, 16384, 16, 128), FWD_BWD, causal=True, extra=True),
    _case("A10", (4, 4096, 32, 128), FWD_BWD, causal=True, extra=True, kv_heads=8),
    _case("H1", (8, 1536, 24, 64), FWD, extra=True, held_out=True),
    _case("H2", (2, 6144, 16, 128), FWD_BWD, extra=True, held_out=True),
    _case("H3", (2, 3072, 16, 64), FWD_BWD, causal=True, extra=True, kv_heads=4, held_out=True),
    _case("H4", (3, 2560, 12, 128), FWD_BWD, extra=True, held_out=True),
    _case("H5", (4, 5120, 8, 128), FWD, causal=True, extra=True, held_out=True),
)
"""The comparison's attention cases in the order they run: the issue's rows (A1-A4), the extra
rows, the held-out rows (H1..., shapes nobody tuned) last."""

QUICK_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {
    (1, 16384, 16, 128): (1, 256, 2, 128),
    (32, 2048, 16, 64): (2, 128, 2, 64),
    (16, 1024, 32, 128): (2, 128, 4, 128),
    (4, 4096, 32, 128): (1, 256, 8, 128),
    (8, 1536, 24, 64): (2, 96, 3, 64),
    (2, 6144, 16, 128): (1, 192, 2, 128),
    (2, 3072, 16, 64): (1, 96, 8, 64),
    (3, 2560, 12, 128): (1, 160, 3, 128),
    (4, 5120, 8, 128): (1, 160, 2, 128),
}
"""``--quick``: each full shape's small stand-in (same head_dim; a GQA case's kv_heads follow
with its group size kept, `AttentionCase.with_shape`: A8/A10 kv 2, H3 kv 2)."""


SHAPE_CLASSES: tuple[AttentionCase, ...] = (
    _case("S1", (16, 1024, 32, 80), FWD_BWD, extra=True),
    _case("S2", (16, 1024, 32, 96), FWD, extra=True),
    _case("S3", (8, 2048, 16, 192), FWD, extra=True),
    _case("S4", (8, 2048, 16, 256), FWD, extra=True),
    _case("S5", (8, 2048, 16, 256), FWD_BWD, extra=True),
    _case("S6", (16, 1000, 32, 128), FWD_BWD, extra=True),
    _case("S7", (4, 2000, 32, 128), FWD_BWD, causal=True, extra=True, kv_heads=8),
    _case("S8", (4, 4096, 32, 128), FWD_BWD, causal=True, extra=True, kv_heads=4),
    _case("S9", (4, 4096, 32, 128), FWD_BWD, extra=True, kv_heads=2),
    _case("S10", (4, 4096, 32, 128), FWD_BWD, extra=True, kv_heads=1),
    _case("S11", (16, 1024, 32, 128), FWD_BWD, extra=True, dtype="float16"),
    _case("S12", (128, 1, 32, 128), FWD, extra=True, kv_heads=8, kv_seq=4096),
    _case("S13", (32, 16, 32, 128), FWD, extra=True, kv_heads=8, kv_seq=4096),
)
"""The shape classes models use beyond the comparison's rows (issue 50), at H200 sizes: head_dim
80 (S1), 96 (S2), 192 (S3), 256 (S4, S5); lengths that are not a multiple of 128 (S6, S7 causal
and grouped); query heads per key/value head 8 (S8, causal), 16 (S9) and 32, multi-query (S10, key/value heads 1);
float16 (S11); decode, one query against 4096 keys (S12), and 16 queries against 4096 keys
(S13), both grouped 32/8 as in Llama-style models and without a causal mask (the library's causal
mask is top-left aligned: with ``T < S`` query ``t`` would see keys ``0..t`` only, not the cache).
Not part of `CASES` (whose ids tuning and the tuned file follow): rows of the kernel comparison
after the extra rows (``benchmark.BENCHMARK``), the sweep's ``classes`` grid
(``tools/kernels_gpu/sweep.py``) and ``SHAPE_CLASS_CALL_SPECS``."""

SHAPE_CLASS_QUICK: dict[str, tuple[tuple[int, int, int, int], int | None]] = {
    "S1": ((2, 128, 4, 80), None),
    "S2": ((2, 128, 4, 96), None),
    "S3": ((1, 128, 2, 192), None),
    "S4": ((1, 128, 2, 256), None),
    "S5": ((1, 128, 2, 256), None),
    "S6": ((2, 100, 4, 128), None),
    "S7": ((1, 200, 8, 128), None),
    "S8": ((1, 256, 16, 128), None),
    "S9": ((1, 256, 16, 128), None),
    "S10": ((1, 128, 32, 128), None),
    "S11": ((2, 128, 4, 128), None),
    "S12": ((2, 1, 8, 128), 256),
    "S13": ((2, 16, 8, 128), 256),
}
"""Each shape class's small stand-in: (query shape, key length or None); the same head_dim,
dtype, causality and group size (`AttentionCase.with_shape`: S7 kv 2, S8 kv 2, S9 kv 1, S10 kv 1 of 32, S12 and
S13 kv 2)."""


def quick_case(case: AttentionCase) -> AttentionCase:
  """`case` at its small stand-in: `QUICK_SHAPES` for the comparison's cases, `SHAPE_CLASS_QUICK`
  for the shape classes.

  Raises:
    KeyError: a case with no stand-in.
  """
  if case.id in SHAPE_CLASS_QUICK:
    shape, kv_seq = SHAPE_CLASS_QUICK[case.id]
    return case.with_shape(shape, kv_seq)
  return case.with_shape(QUICK_SHAPES[case.shape])


def make_inputs(case: AttentionCase, seed: int = SEED) -> list[jax.Array]:
  """The case's arrays on JAX's default device (random normal, of the case's dtype): q of the
  case's shape, k and v of `AttentionCase.kv_shape` (fewer heads for GQA, another length for
  decode or prefill), plus the output cotangent (the query's shape) for fwd+bwd."""
  keys = jax.random.split(jax.random.key(seed), 4)
  dtype = jnp.dtype(case.dtype)
  arrays = [jax.random.normal(keys[0], case.shape, dtype)] + [
      jax.random.normal(k, case.kv_shape, dtype) for k in keys[1:3]]
  if case.phase != FWD:
    arrays.append(jax.random.normal(keys[3], case.shape, dtype))
  return arrays


def _call_spec(case: AttentionCase, name: str, tags: tuple[str, ...]) -> CallSpec:
  def build(seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    q, k, v = make_inputs(dataclasses.replace(case, phase=FWD), seed)[:3]
    return (q, k, v), {"is_causal": case.causal}
  return CallSpec(name, build, tags, doc=case.label)


CALL_SPECS: tuple[CallSpec, ...] = tuple(
    _call_spec(c, c.id, ("primary", "held_out") if c.held_out else ("primary",))
    for c in CASES) + tuple(
        _call_spec(c.with_shape(QUICK_SHAPES[c.shape]), f"{c.id}-quick", ("ci",))
        for c in CASES)
"""Every case at its full shape (``A1``; ``primary``, ``held_out``) and at its quick shape
(``A1-quick``; ``ci``)."""

SHAPE_CLASS_CALL_SPECS: tuple[CallSpec, ...] = tuple(
    _call_spec(c, c.id, ("primary",)) for c in SHAPE_CLASSES) + tuple(
        _call_spec(quick_case(c), f"{c.id}-quick", ("ci",)) for c in SHAPE_CLASSES)
"""Every shape class at its H200 size (``S1``; ``primary``: a row of the sweep's ``classes``
grid) and at its small stand-in (``S1-quick``; ``ci``)."""
