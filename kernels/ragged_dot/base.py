"""ragged_dot: the call's checks and Spec, group sizes, dimension numbers, the reference, and the
residuals every implementation shares.

``ragged_dot_general`` has ``jax.lax.ragged_dot_general``'s three modes, told apart by where
the lhs ragged dimension sits:

* "rows" (a non-contracting dimension; rhs has a group dimension): each run of rows uses its
  group's rhs matrix; ``ragged_dot`` is this mode with lhs ``[m, k]``, rhs ``[g, k, n]``.
* "contracting" (rhs has no group dimension): the result gains a leading group dimension, each
  group's slice contracting only its run of the ragged dimension (the rhs gradient of "rows").
* "batch": the ragged dimension is a batch dimension; as ``jax.lax`` defines this mode the
  result is the plain batched product (the group sizes do not change it).

Rows past the sum of the group sizes (or of groups outside ``[group_offset, group_offset + g)``
when rhs holds only the local groups) have a zero product: the result there is the epilogue of
zero (zero without `activation`; ``activation(0)`` with one, as in Tokamax). `group_offset` is
clamped to ``[0, len(group_sizes) - g_local]`` (`clamped_offset`), as ``jax.lax.dynamic_slice``
clamps its start.

Group sizes are counts, >= 0: concrete ones with a negative entry are refused; traced ones
(under ``jit``) are read with negative entries as 0 by every implementation
(`non_negative_sizes`; ``jax.lax.ragged_dot`` does not define them, and gives other values).

Residuals (what every forward returns and every backward takes):
``(lhs, rhs, group_sizes, group_offset, pre)`` where `pre` is the accumulator-dtype product
before ``fuse_gateup_activation`` and `activation` (None when neither is set).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit.kernels.core import functions
from pjrtkit.kernels.core.spec import Spec

OP_NAME = "ragged_dot"
ROWS, CONTRACTING, BATCH = "rows", "contracting", "batch"
GATEUP_ACTIVATIONS = ("silu", "gelu", "gelu_tanh")
"""Accepted ``fuse_gateup_activation`` names."""

DEFAULT_RAGGED_DOT_DIM_NUMS = jax.lax.RaggedDotDimensionNumbers(
    dot_dimension_numbers=(([1], [1]), ([], [])), lhs_ragged_dimensions=[0],
    rhs_group_dimensions=[0])
"""``ragged_dot``'s dimension numbers: lhs ``[m, k]``, rhs ``[g, k, n]``."""


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, init=False, eq=False)
class GroupSizes:
  """Group sizes with a representative distribution for benchmarking and autotuning.

  Speed depends on how rows fall into groups, but the sizes themselves are only known when the
  program runs. A GroupSizes carries the array and a representative value (a sequence of sizes,
  or the total number of rows, split by `generate_group_sizes`) that autotuning and benchmarks
  use in its place. Two GroupSizes are equal (and hash alike) when their shapes and
  representatives are: the array's values are runtime data.

  Attributes:
    value: the group sizes array (integer, ``[g]``).
    repr_value_or_total_size: a tuple of ``g`` sizes, or an int (the total).
  """

  value: Any
  repr_value_or_total_size: tuple[int, ...] | int = dataclasses.field(
      metadata={"static": True})

  def __init__(self, value: Any, repr_value_or_total_size: Sequence[int] | int) -> None:
    if not hasattr(value, "shape") or not hasattr(value, "dtype"):
      raise TypeError(f"GroupSizes: value must be an array or jax.ShapeDtypeStruct, got "
                      f"{type(value).__name__}")
    if not jnp.issubdtype(value.dtype, jnp.integer):
      raise ValueError(f"GroupSizes: value must have an integer dtype, got "
                       f"{jnp.dtype(value.dtype).name}")
    if len(value.shape) != 1:
      raise ValueError(f"GroupSizes: value must have shape (g,), got {tuple(value.shape)}")
    rep = repr_value_or_total_size
    if isinstance(rep, (bool, np.bool_)) or not isinstance(rep, (int, np.integer, Sequence)):
      raise TypeError(f"GroupSizes: repr_value_or_total_size must be an int (the total) or a "
                      f"sequence of {value.shape[0]} ints, got {type(rep).__name__}")
    if isinstance(rep, (int, np.integer)):
      rep = int(rep)
      if rep < 0:
        raise ValueError(f"GroupSizes: repr_value_or_total_size must be >= 0, got {rep}")
    else:
      if len(rep) != value.shape[0]:
        raise ValueError(f"GroupSizes: repr_value_or_total_size has {len(rep)} sizes for "
                         f"{value.shape[0]} groups")
      if any(not isinstance(r, (int, np.integer)) or isinstance(r, bool) or r < 0 for r in rep):
        raise ValueError(f"GroupSizes: repr_value_or_total_size must hold ints >= 0, got "
                         f"{list(rep)}")
      rep = tuple(int(r) for r in rep)
    if isinstance(value, jax.ShapeDtypeStruct):
      sizes = (generate_group_sizes(m=rep, num_groups=value.shape[0])
               if isinstance(rep, int) else rep)
      value = np.asarray(sizes, value.dtype)
    object.__setattr__(self, "value", value)
    object.__setattr__(self, "repr_value_or_total_size", rep)

  @property
  def representative_value(self) -> tuple[int, ...]:
    """The representative sizes."""
    if isinstance(self.repr_value_or_total_size, int):
      return generate_group_sizes(m=self.repr_value_or_total_size,
                                  num_groups=self.value.shape[0])
    return self.repr_value_or_total_size

  def __jax_array__(self) -> jax.Array:
    return jnp.asarray(self.value)

  def __eq__(self, other: object) -> bool:
    return (isinstance(other, GroupSizes)
            and tuple(self.value.shape) == tuple(other.value.shape)
            and self.repr_value_or_total_size == other.repr_value_or_total_size)

  def __hash__(self) -> int:
    return hash((tuple(self.value.shape), self.repr_value_or_total_size))


def clamped_offset(group_offset: jax.Array, num_groups: int, local: int) -> jax.Array:
  """`group_offset`'s value (int32 scalar) clamped to ``[0, num_groups - local]``: every
  implementation reads the local groups ``[offset, offset + local)`` of `group_sizes` through
  this."""
  return jnp.clip(group_offset.astype(jnp.int32)[0], 0, max(num_groups - local, 0))


def generate_group_sizes(*, m: int, num_groups: int, p: Sequence[float] | None = None,
                         seed: int = 0) -> tuple[int, ...]:
  """Random group sizes summing to `m`: `m` rows each drawn into a group with probabilities `p`
  (uniform when None). Uneven, with empty groups likely when `m` is small against
  `num_groups`, as routers produce.

  Raises:
    ValueError: m < 0, num_groups < 1, or `p` of the wrong length.
  """
  if m < 0 or num_groups < 1:
    raise ValueError(f"generate_group_sizes: need m >= 0 and num_groups >= 1, got m={m}, "
                     f"num_groups={num_groups}")
  if p is not None and len(p) != num_groups:
    raise ValueError(f"generate_group_sizes: p has {len(p)} entries for {num_groups} groups")
  rng = np.random.default_rng(seed)
  ids = rng.choice(num_groups, size=(m,), p=p, replace=True)
  return tuple(int(c) for c in np.bincount(ids, minlength=num_groups))


# --- dimension numbers ----------------------------------------------------------------------

def dims_to_text(dn: jax.lax.RaggedDotDimensionNumbers) -> str:
  """Stable JSON text of dimension numbers (the Spec parameter)."""
  (lc, rc), (lb, rb) = dn.dot_dimension_numbers
  return json.dumps([[list(lc), list(rc)], [list(lb), list(rb)], list(dn.lhs_ragged_dimensions),
                     list(dn.rhs_group_dimensions)], separators=(",", ":"))


def dims_from_text(text: str) -> jax.lax.RaggedDotDimensionNumbers:
  """Inverse of `dims_to_text`."""
  (lc, rc), (lb, rb), ragged, group = json.loads(text)
  return jax.lax.RaggedDotDimensionNumbers(
      dot_dimension_numbers=((lc, rc), (lb, rb)), lhs_ragged_dimensions=ragged,
      rhs_group_dimensions=group)


@dataclasses.dataclass(frozen=True)
class Dims:
  """Dimension numbers read once: mode and the dimensions every implementation needs."""

  lhs_contract: tuple[int, ...]
  rhs_contract: tuple[int, ...]
  lhs_batch: tuple[int, ...]
  rhs_batch: tuple[int, ...]
  lhs_ragged: int
  rhs_group: int | None
  mode: str
  lhs_ndim: int
  rhs_ndim: int

  @property
  def is_plain(self) -> bool:
    """lhs ``[m, k]``, rhs ``[g, k, n]`` or ``[g, n, k]`` ("rows" mode, no batch): the layout
    the grouped kernels take."""
    return (self.mode == ROWS and self.lhs_ndim == 2 and self.rhs_ndim == 3
            and not self.lhs_batch and self.lhs_ragged == 0
            and self.lhs_contract == (1,) and self.rhs_group == 0
            and self.rhs_contract in ((1,), (2,)))


def grouped_unsupported_reason(spec: Spec) -> str | None:
  """Why the grouped kernels ("xla_grouped", "triton") do not take a call: not the plain layout
  (`Dims.is_plain`), or an empty operand (no local groups, no rows, or nothing to contract or
  produce), which "xla" serves."""
  if not dims_of(spec).is_plain:
    return ("only lhs [m, k] with rhs [g, k, n] or [g, n, k] (ragged_dot's layout, rows mode, no "
            "batch dimensions); use 'xla' for other dimension numbers")
  lhs, rhs = spec.arg("lhs").shape, spec.arg("rhs").shape
  if 0 in tuple(lhs) + tuple(rhs):
    return f"an empty operand (lhs {list(lhs)}, rhs {list(rhs)}); use 'xla'"
  return None


def read_dims(dn: Any, lhs_ndim: int, rhs_ndim: int) -> Dims:
  """Checks dimension numbers against the operands' ranks.

  Raises:
    TypeError: `dn` is not a ``jax.lax.RaggedDotDimensionNumbers``.
    ValueError: dimensions out of range or repeated, not exactly one lhs ragged dimension, more
      than one rhs group dimension, or a group dimension where the mode has none.
  """
  if not isinstance(dn, jax.lax.RaggedDotDimensionNumbers):
    raise TypeError(f"ragged_dot_general: ragged_dot_dimension_numbers must be a "
                    f"jax.lax.RaggedDotDimensionNumbers, got {type(dn).__name__}")
  (lc, rc), (lb, rb) = dn.dot_dimension_numbers
  lc, rc, lb, rb = (tuple(int(d) for d in x) for x in (lc, rc, lb, rb))
  ragged = tuple(int(d) for d in dn.lhs_ragged_dimensions)
  group = tuple(int(d) for d in dn.rhs_group_dimensions)
  where = "ragged_dot_dimension_numbers"
  for name, dims_, rank in (("lhs contracting", lc, lhs_ndim), ("rhs contracting", rc, rhs_ndim),
                            ("lhs batch", lb, lhs_ndim), ("rhs batch", rb, rhs_ndim),
                            ("lhs ragged", ragged, lhs_ndim), ("rhs group", group, rhs_ndim)):
    if any(not 0 <= d < rank for d in dims_):
      raise ValueError(f"{where}: {name} dimensions {list(dims_)} out of range for rank {rank}")
  if len(lc) != len(rc) or len(lb) != len(rb):
    raise ValueError(f"{where}: lhs and rhs need as many contracting ({len(lc)} vs {len(rc)}) "
                     f"and batch ({len(lb)} vs {len(rb)}) dimensions")
  if len(set(lc + lb)) != len(lc + lb) or len(set(rc + rb + group)) != len(rc + rb + group):
    raise ValueError(f"{where}: a dimension is used twice: {dims_to_text(dn)}")
  if len(ragged) != 1:
    raise ValueError(f"{where}: exactly one lhs ragged dimension is accepted, got {list(ragged)}")
  if len(group) > 1:
    raise ValueError(f"{where}: at most one rhs group dimension is accepted, got {list(group)}")
  r = ragged[0]
  mode = CONTRACTING if r in lc else BATCH if r in lb else ROWS
  if mode == ROWS and not group:
    raise ValueError(f"{where}: a ragged non-contracting lhs dimension needs an rhs group "
                     f"dimension")
  if mode != ROWS and group:
    raise ValueError(f"{where}: an rhs group dimension is accepted only when the lhs ragged "
                     f"dimension is not contracting or batch (mode {mode!r})")
  return Dims(lc, rc, lb, rb, r, group[0] if group else None, mode, lhs_ndim, rhs_ndim)


def dims_of(spec: Spec) -> Dims:
  """The `Dims` of a spec."""
  return read_dims(dims_from_text(spec.param("dimension_numbers")), len(spec.arg("lhs").shape),
                   len(spec.arg("rhs").shape))


# --- the call's checks ------------------------------------------------------------------------

def _array(name: str, a: Any) -> None:
  if not hasattr(a, "shape") or not hasattr(a, "dtype"):
    raise TypeError(f"ragged_dot: {name} must be an array, got {type(a).__name__}")


def make_spec(lhs: Any, rhs: Any, group_sizes: Any, dn: Any, precision: Any,
              preferred_element_type: Any, group_offset: Any, activation: Any,
              zero_initialize: bool, fuse_gateup_activation: str | None) -> tuple[Spec, Any]:
  """Checks a call; returns its Spec and the group sizes array.

  Raises:
    TypeError, ValueError: naming the parameter and the accepted values.
  """
  _array("lhs", lhs)
  _array("rhs", rhs)
  for name, a in (("lhs", lhs), ("rhs", rhs)):
    if not (jnp.issubdtype(a.dtype, jnp.floating) or jnp.issubdtype(a.dtype, jnp.integer)):
      raise TypeError(f"ragged_dot: {name} must have a floating or integer dtype, got "
                      f"{jnp.dtype(a.dtype).name}")
  representative = None
  if isinstance(group_sizes, GroupSizes):
    representative = group_sizes.repr_value_or_total_size
    group_sizes = group_sizes.value
  elif isinstance(group_sizes, (list, tuple)):
    representative = tuple(int(s) for s in group_sizes)
    group_sizes = np.asarray(representative, np.int32)
  _array("group_sizes", group_sizes)
  if not jnp.issubdtype(group_sizes.dtype, jnp.integer) or len(group_sizes.shape) != 1:
    raise TypeError(f"ragged_dot: group_sizes must be a 1-D integer array (batched group "
                    f"sizes [b..., g] are not supported; vmap over the batch instead), got "
                    f"{jnp.dtype(group_sizes.dtype).name}{list(group_sizes.shape)}")
  dims = read_dims(dn, lhs.ndim, rhs.ndim)
  for dl, dr in zip(dims.lhs_contract + dims.lhs_batch, dims.rhs_contract + dims.rhs_batch):
    if lhs.shape[dl] != rhs.shape[dr]:
      raise ValueError(f"ragged_dot: lhs dimension {dl} ({lhs.shape[dl]}) does not match rhs "
                       f"dimension {dr} ({rhs.shape[dr]}) under ragged_dot_dimension_numbers "
                       f"{dims_to_text(dn)}")
  g = group_sizes.shape[0]
  if dims.mode == ROWS:
    local = rhs.shape[dims.rhs_group]
    if group_offset is None and g != local:
      raise ValueError(f"ragged_dot: group_sizes has {g} groups but rhs dimension "
                       f"{dims.rhs_group} has {local} (they must match without group_offset)")
    if group_offset is not None and local > g:
      raise ValueError(f"ragged_dot: rhs holds {local} groups, more than group_sizes' {g}")
  if group_offset is not None:
    _array("group_offset", group_offset)
    if dims.mode != ROWS:
      raise ValueError("ragged_dot: group_offset is accepted only in the rows mode (an rhs "
                       "group dimension)")
    if not jnp.issubdtype(group_offset.dtype, jnp.integer) or tuple(group_offset.shape) != (1,):
      raise TypeError(f"ragged_dot: group_offset must be an integer array of shape (1,), got "
                      f"{jnp.dtype(group_offset.dtype).name}{list(group_offset.shape)}")
  if fuse_gateup_activation is not None:
    if fuse_gateup_activation not in GATEUP_ACTIVATIONS:
      raise ValueError(f"ragged_dot: fuse_gateup_activation must be one of "
                       f"{list(GATEUP_ACTIVATIONS)} or None, got {fuse_gateup_activation!r}")
    if dims.mode != ROWS:
      raise ValueError("ragged_dot: fuse_gateup_activation is accepted only in the rows mode")
  out_dtype = jnp.result_type(lhs.dtype, rhs.dtype)
  if preferred_element_type is not None:
    try:
      out_dtype = jnp.dtype(preferred_element_type)
    except TypeError as e:
      raise TypeError(f"ragged_dot: preferred_element_type must be None or a dtype, got "
                      f"{preferred_element_type!r}") from e
    if not (jnp.issubdtype(out_dtype, jnp.floating) or jnp.issubdtype(out_dtype, jnp.integer)):
      raise TypeError(f"ragged_dot: preferred_element_type must be a floating or integer dtype, "
                      f"got {out_dtype.name}")
  out_shape = output_shape(lhs.shape, rhs.shape, dims, g)
  if fuse_gateup_activation is not None and out_shape[-1] % 2:
    raise ValueError(f"ragged_dot: fuse_gateup_activation needs an even last output dimension, "
                     f"got {out_shape[-1]}")
  params = {
      "dimension_numbers": dims_to_text(dn),
      "precision": functions.precision_name(precision),
      "out_dtype": out_dtype.name,
      "activation": functions.name_of(activation),
      "zero_initialize": bool(zero_initialize),
      "fuse_gateup_activation": fuse_gateup_activation,
      "representative": (json.dumps(representative, separators=(",", ":"))
                         if representative is not None else None),
  }
  spec = Spec.make(OP_NAME, {"lhs": lhs, "rhs": rhs, "group_sizes": group_sizes,
                             "group_offset": group_offset}, params,
                   {"activation": activation} if activation is not None else None)
  return spec, group_sizes


def non_negative_sizes(group_sizes: Any) -> Any:
  """The group sizes a call passes to its implementation: concrete sizes (numpy, a sequence,
  a ``jax.Array`` outside a trace) unchanged once checked; traced ones with negative entries read
  as 0 (``jnp.maximum``, one elementwise op on ``[g]``), as every implementation then reads them
  (``jax.lax.ragged_dot`` leaves negative sizes undefined).

  Raises:
    ValueError: a concrete size below 0, naming group_sizes and the accepted values.
  """
  if isinstance(group_sizes, jax.ShapeDtypeStruct):
    return group_sizes
  if (isinstance(group_sizes, jax.core.Tracer)
      or not getattr(group_sizes, "is_fully_addressable", True)):
    return jnp.maximum(group_sizes, 0)
  values = np.asarray(group_sizes)
  negative = np.flatnonzero(values < 0)
  if negative.size:
    i = int(negative[0])
    shown = f" in {values.tolist()}" if values.size <= 16 else ""
    raise ValueError(f"ragged_dot: group_sizes must hold sizes >= 0 (the number of rows of each "
                     f"group), got group_sizes[{i}] = {int(values[i])}{shown}")
  return group_sizes


def output_shape(lhs_shape: Sequence[int], rhs_shape: Sequence[int], dims: Dims,
                 num_groups: int) -> tuple[int, ...]:
  """The result's shape (before ``fuse_gateup_activation`` halves the last dimension)."""
  batch = [lhs_shape[d] for d in dims.lhs_batch]
  lhs_kept = [lhs_shape[d] for d in range(len(lhs_shape))
              if d not in dims.lhs_contract + dims.lhs_batch]
  rhs_drop = dims.rhs_contract + dims.rhs_batch + (
      (dims.rhs_group,) if dims.rhs_group is not None else ())
  rhs_kept = [rhs_shape[d] for d in range(len(rhs_shape)) if d not in rhs_drop]
  lead = [num_groups] if dims.mode == CONTRACTING else []
  return tuple(lead + batch + lhs_kept + rhs_kept)


def accumulator(spec: Spec) -> Any:
  """float32 for floating results (int32 for integer ones): what every implementation sums in."""
  return jnp.int32 if jnp.issubdtype(jnp.dtype(spec.param("out_dtype")), jnp.integer) \
      else jnp.float32


def gateup(y: jax.Array, name: str | None) -> jax.Array:
  """``act(y[..., :n/2]) * y[..., n/2:]`` for a `fuse_gateup_activation` name (y unchanged for
  None)."""
  if name is None:
    return y
  gate, up = jnp.split(y, 2, axis=-1)
  # As in Tokamax: "gelu" is jax.nn.gelu's default, its tanh approximation, as "gelu_tanh".
  act = {"silu": jax.nn.silu, "gelu": jax.nn.gelu,
         "gelu_tanh": lambda v: jax.nn.gelu(v, approximate=True)}[name]
  return act(gate) * up


def finish(spec: Spec, acc: jax.Array) -> tuple[jax.Array, jax.Array | None]:
  """The output from the accumulator-dtype product `acc` (gate-up fusion, then the activation,
  then the output dtype), and the residual `pre` (`acc` when a backward needs it)."""
  act = spec.function("activation")
  fuse = spec.param("fuse_gateup_activation")
  y = gateup(acc, fuse)
  if act is not None:
    y = act(y)
  pre = acc if (act is not None or fuse is not None) else None
  return y.astype(spec.param("out_dtype")), pre


def dout_to_acc(spec: Spec, pre: jax.Array | None, dout: jax.Array) -> jax.Array:
  """The cotangent of the accumulator-dtype product from the output's cotangent (through the
  activation and the gate-up fusion)."""
  act = spec.function("activation")
  fuse = spec.param("fuse_gateup_activation")
  if pre is None:
    return dout.astype(jnp.float32) if jnp.issubdtype(dout.dtype, jnp.floating) else dout

  def epilogue(a: jax.Array) -> jax.Array:
    y = gateup(a, fuse)
    return act(y) if act is not None else y

  _, vjp = jax.vjp(epilogue, pre)
  (dpre,) = vjp(dout.astype(pre.dtype))
  return dpre


def example_args(spec: Spec, seed: int) -> tuple[Any, ...]:
  """Example arguments with representative group sizes (the call's, else sizes drawn at random
  over the ragged dimension) and a zero group offset."""
  args = list(spec.example_args(seed))
  dims = dims_of(spec)
  g = spec.arg("group_sizes").shape[0]
  total = spec.arg("lhs").shape[dims.lhs_ragged]
  rep = spec.param("representative")
  sizes = json.loads(rep) if rep is not None else None
  if isinstance(sizes, int):
    total = sizes
  if not isinstance(sizes, list):
    sizes = list(generate_group_sizes(m=total, num_groups=g, seed=seed))
  args[2] = jnp.asarray(np.asarray(sizes), spec.arg("group_sizes").dtype)
  return tuple(args)


def reference(lhs: jax.Array, rhs: jax.Array, group_sizes: jax.Array,
              group_offset: int = 0) -> np.ndarray:
  """``ragged_dot`` (lhs ``[m, k]``, rhs ``[g_local, k, n]``) in float64 numpy, row by row:
  the definition tests compare with."""
  lhs64 = np.asarray(jnp.asarray(lhs, jnp.float32), np.float64)
  rhs64 = np.asarray(jnp.asarray(rhs, jnp.float32), np.float64)
  sizes = np.asarray(group_sizes)
  out = np.zeros((lhs64.shape[0], rhs64.shape[2]))
  start = 0
  for g, size in enumerate(sizes):
    local = g - group_offset
    if 0 <= local < rhs64.shape[0]:
      out[start:start + size] = lhs64[start:start + size] @ rhs64[local]
    start += int(size)
  return out

