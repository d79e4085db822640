"""What an op folder's ``benchmark.py`` declares for the kernel comparison: its cases, its
contenders and its throughput arithmetic, as one `OpBenchmark` named ``BENCHMARK``.

The comparison harness (``tools/bench/kernel_compare.py``) holds no op of its own: it imports
``pjrtkit.kernels.<op>.benchmark`` for every op folder that has one and runs the cases and
contenders found there. A case (`Case`) is one row group of the comparison: a call of the op at
one shape, timed as the forward alone (``fwd``) or as forward and backward (``fwd+bwd``). A
contender (`Contender`) is one implementation under comparison: a forward function of the case's
arrays that `phase_function` turns into what is timed.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from typing import Any, Callable, Mapping, Sequence

import jax

FWD = "fwd"
FWD_BWD = "fwd+bwd"
PHASES = (FWD, FWD_BWD)
"""What is timed: the forward alone, or forward and backward through ``jax.vjp``."""

OURS, CUDNN, JAX, TOKAMAX, XLA_REF = "ours", "cudnn", "jax", "tokamax", "xla"
GROUPS = (OURS, CUDNN, JAX, TOKAMAX, XLA_REF)
"""Contender groups: pjrtkit.kernels' implementations, cuDNN (through ``jax.nn``), ``jax.nn``'s
XLA path, Tokamax, and a plain XLA (jnp) reference."""

Forward = Callable[..., Any]


@dataclasses.dataclass(frozen=True)
class Case:
  """One row group of the comparison: a call of an op at one shape and phase.

  Ops with more parameters (attention's causal mask and key/value heads) subclass it, adding
  fields and overriding `details`, `record` and `with_shape` where those fields need it.

  Attributes:
    id: short name, unique over every op (``A1``, ``L3``).
    op: the benchmark's name (`OpBenchmark.name`: ``attention``, ``layer_norm``).
    shape: the main input's shape.
    phase: ``fwd`` or ``fwd+bwd``.
    extra: a row run after the op's first rows (the issue's rows come first).
    held_out: a shape no tuned file has choices for (never tuned: what ``implementation=None``
      does on shapes nobody tuned).

  Raises:
    ValueError: for an empty id or an unknown phase.
  """

  id: str
  op: str
  shape: tuple[int, ...]
  phase: str
  extra: bool = False
  held_out: bool = False

  def __post_init__(self) -> None:
    if not self.id:
      raise ValueError("Case: id must not be empty")
    if self.phase not in PHASES:
      raise ValueError(f"{self.id}: phase must be one of {PHASES}, got {self.phase!r}")

  def details(self) -> tuple[str, str]:
    """Words the label puts after the phase and after the shape (``(" causal", " kv8")``)."""
    return "", ""

  @property
  def label(self) -> str:
    """``L3 layer_norm fwd+bwd 1048576x64``; subclasses add their `details`."""
    after_phase, after_shape = self.details()
    return (f"{self.id} {self.op} {self.phase}{after_phase} "
            f"{'x'.join(map(str, self.shape))}{after_shape}")

  def record(self) -> dict[str, Any]:
    """What the comparison's JSON records about the case: its fields and its label."""
    info = dataclasses.asdict(self)
    info["label"] = self.label
    return info

  def with_shape(self, shape: tuple[int, ...]) -> Case:
    """The same case at another shape (the ``--quick`` sizes)."""
    return dataclasses.replace(self, shape=tuple(shape))


@dataclasses.dataclass(frozen=True)
class Contender:
  """One implementation under comparison.

  Attributes:
    name: the table's name (``pk triton``, ``cuDNN``, ``tokamax mosaic``).
    group: one of `GROUPS`.
    op: the benchmark's name (`Case.op`).
    make: builds the forward function for a case (may raise: the skip reason).
    implementation: the implementation argument given (None for pjrtkit's automatic choice).
  """

  name: str
  group: str
  op: str
  make: Callable[[Case], Forward]
  implementation: str | None = None


@dataclasses.dataclass(frozen=True)
class OpBenchmark:
  """An op's part of the kernel comparison (``BENCHMARK`` in ``kernels/<op>/benchmark.py``).

  Attributes:
    name: the op's name in case labels and table titles (``attention``).
    cases: the cases, in the order they run (from the op's ``arg_specs.py``).
    quick_shapes: each case shape's small stand-in for ``--quick`` (a smoke test on the CPU).
    unit: the throughput unit (``TFLOP/s``, ``TB/s``).
    amount_key: what `amount` counts, as the JSON names it (``flops``, ``bytes``).
    amount: the FLOPs or bytes one run of a case counts (`convention` says how).
    convention: one line on how `amount` counts, printed above each table.
    contenders: every contender of the op, ours first.
    make_inputs: a case's arrays on JAX's default device: the forward's inputs, plus the output
      cotangent for ``fwd+bwd``.
    pk_forward: ``(case, implementation) ->`` pjrtkit.kernels' forward of the case with that
      implementation (None: the automatic choice); what every ``pk`` contender times.
    baselines: contender names ratios are taken against, the first that ran.
    references: contender names whose output the correctness guard compares with, the first
      that ran.
    quick_of: a case's quick stand-in where it is not `quick_shapes`' (cases of one shape
      whose stand-ins differ, e.g. by group size), raising KeyError for a case it does not
      cover; None: `quick_shapes` for every case.

  Raises:
    ValueError: a case of another op, or a case without a quick stand-in.
  """

  name: str
  cases: tuple[Case, ...]
  quick_shapes: Mapping[tuple[int, ...], tuple[int, ...]]
  unit: str
  amount_key: str
  amount: Callable[[Case], float]
  convention: str
  contenders: Callable[[], list[Contender]]
  make_inputs: Callable[[Case], list[jax.Array]]
  pk_forward: Callable[[Case, str | None], Forward]
  baselines: tuple[str, ...]
  references: tuple[str, ...]
  quick_of: Callable[[Case], Case] | None = None

  def __post_init__(self) -> None:
    others = [c.id for c in self.cases if c.op != self.name]
    if others:
      raise ValueError(f"{self.name}: cases {others} belong to another op")
    missing = []
    for c in self.cases:
      try:
        self.quick(c)
      except KeyError:
        missing.append(c.shape)
    if missing:
      raise ValueError(f"{self.name}: no quick shape for {sorted(set(missing))}")

  def quick(self, case: Case) -> Case:
    """`case` at its quick stand-in (`quick_of`, else `quick_shapes`).

    Raises:
      KeyError: a case with no stand-in.
    """
    if self.quick_of is not None:
      return self.quick_of(case)
    return case.with_shape(self.quick_shapes[case.shape])

  def throughput(self, case: Case, ms: float) -> float:
    """`unit` (tera-amount per second) of one run of `case` taking `ms` milliseconds."""
    if ms <= 0:
      return math.inf
    return self.amount(case) / (ms * 1e-3) / 1e12

  def record(self, case: Case) -> dict[str, Any]:
    """The JSON record of `case`: `Case.record` plus the amount counted."""
    info = case.record()
    info[self.amount_key] = self.amount(case)
    return info


def phase_function(forward: Forward, case: Case) -> Forward:
  """What is timed for `case`: `forward`, or forward+backward returning (out, the gradients of
  the floating inputs); the last array given is then the output cotangent."""
  if case.phase == FWD:
    return forward

  def fwd_bwd(*arrays: jax.Array) -> Any:
    *inputs, cotangent = arrays
    # Gradients of the floating inputs only (group sizes, labels and masks have none).
    diff = [i for i, a in enumerate(inputs) if jax.numpy.issubdtype(a.dtype, jax.numpy.inexact)]

    def of_floats(*floats: jax.Array) -> Any:
      full = list(inputs)
      for i, a in zip(diff, floats):
        full[i] = a
      return forward(*full)

    out, pullback = jax.vjp(of_floats, *[inputs[i] for i in diff])
    return out, pullback(cotangent)

  return fwd_bwd


def forward_inputs(case: Case, arrays: Sequence[jax.Array]) -> list[jax.Array]:
  """The forward's inputs among `make_inputs`' arrays (the cotangent of fwd+bwd left out)."""
  return list(arrays[:-1] if case.phase == FWD_BWD else arrays)


def reason_of(error: BaseException) -> str:
  """The exception text a skipped contender records (sub-exceptions of a group included)."""
  text = f"{type(error).__name__}: {error}".strip()
  subs = getattr(error, "exceptions", None)
  if subs:
    text += " [" + "; ".join(reason_of(s) for s in subs) + "]"
  return text


def import_tokamax() -> Any:
  """The tokamax module (ImportError with pip's words when it is not installed)."""
  return importlib.import_module("tokamax")
