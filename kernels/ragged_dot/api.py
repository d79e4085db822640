"""ragged_dot's public functions and its implementations table."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax

from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.errors import UnsupportedImplementationError
from pjrtkit.kernels.core.op import Family, Op, register_family
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.ragged_dot import base
from pjrtkit.kernels.ragged_dot.mosaic import MosaicRaggedDot
from pjrtkit.kernels.ragged_dot.native import NativeRaggedDot
from pjrtkit.kernels.ragged_dot.triton import TritonRaggedDot
from pjrtkit.kernels.ragged_dot.xla import XlaRaggedDot
from pjrtkit.kernels.ragged_dot.xla_grouped import XlaGroupedRaggedDot

IMPLEMENTATIONS: dict[str, Op] = {
    "xla": XlaRaggedDot(),
    "xla_grouped": XlaGroupedRaggedDot(),
    "triton": TritonRaggedDot(),
    "native": NativeRaggedDot(),
    "mosaic": MosaicRaggedDot(),
}


def rule(spec: Spec, device: DeviceInfo, phase: str) -> list[str]:
  """The documented choice for ``implementation=None`` without a tuned result.

  pjrtkit's CPU device: "native" first, forward and gradient (the C++ grouped GEMM; float32 and
  bfloat16 operands in ragged_dot's layout; it refuses the rest, which falls through). Measured
  by ``tools/bench/ragged_dot_native.py`` at 8x2048x1024x1024 float32, 32x2048x512x512 and
  64x4096x512x256 bfloat16 (experts x m x k x n): 0.12-0.49x of "xla_grouped"'s time and
  0.02-0.18x of ``jax.lax.ragged_dot``'s, forward and forward+gradient (docs/kernels.md).
  Every device: "xla_grouped" for ragged_dot's layout (lhs ``[m, k]``, rhs ``[g, k, n]``),
  forward and gradient: XLA expands ``ragged_dot`` into a product over every group, ``g`` times
  the work (measured on pjrtkit's CPU device by ``kernels/ragged_dot/benchmark.py``; see
  docs/kernels.md). "xla" for every other layout and for integer operands.
  An NVIDIA GPU: "triton" first, forward and gradient (the grouped Pallas Triton kernels; it
  refuses other layouts, integer and mixed-dtype operands, which fall through to the same
  choices as elsewhere).
  """
  del spec, phase
  if device.is_pjrtkit_cpu:
    return ["native", "xla_grouped", "xla"]
  if device.is_gpu:
    return ["triton", "xla_grouped", "xla"]
  return ["xla_grouped", "xla"]


FAMILY = Family(base.OP_NAME, IMPLEMENTATIONS, rule)
_BYPASS_NOTE = ("bypass_device_check=True does not lift this refusal: pjrtkit checks an "
                "implementation against the device calls are traced for before tracing it, "
                "whatever bypass_device_check says")
register_family(FAMILY)


def ragged_dot_general(lhs: Any, rhs: Any, group_sizes: Any,
                       ragged_dot_dimension_numbers: jax.lax.RaggedDotDimensionNumbers,
                       precision: Any = None, preferred_element_type: Any = None,
                       group_offset: Any = None,
                       activation: Callable[[jax.Array], jax.Array] | None = None,
                       manual_axis_type: Any = None, *,
                       implementation: str | Sequence[str | Callable[..., Any]] | None = None,
                       bypass_device_check: bool | None = None,
                       zero_initialize: bool = False,
                       fuse_gateup_activation: str | None = None) -> jax.Array:
  """Ragged matrix product, with ``jax.lax.ragged_dot_general``'s API and all three of its
  modes (a ragged row, contracting or batch dimension of lhs; see `base`).

  Args:
    lhs, rhs: the operands (floating or integer).
    group_sizes: ``[g]`` integer array (or `base.GroupSizes`, or a sequence of ints): the
      length of each group's run along lhs's ragged dimension, each >= 0. A negative entry is a
      ValueError when the sizes are concrete (read from the device when a ``jax.Array``); traced
      sizes (under ``jit``) are read with negative entries as 0 by every implementation.
    ragged_dot_dimension_numbers: a ``jax.lax.RaggedDotDimensionNumbers``.
    precision: as for ``jax.lax.dot`` (None, a ``jax.lax.Precision``, a pair of them, or a
      ``jax.lax.DotAlgorithmPreset``).
    preferred_element_type: the result dtype (default: the operands' result type); products
      are summed in float32 (int32 for integers) whatever it is.
    group_offset: ``[1]`` integer array: rhs holds only the groups ``[offset, offset + g_rhs)``
      of `group_sizes`; rows of other groups are zero in the result (rows mode only).
    activation: a function applied to the result in float32 before the cast (fused where the
      implementation can; its gradient is taken by JAX).
    manual_axis_type: accepted for Tokamax compatibility; must be None.
    implementation: "xla", "xla_grouped", "triton", "native", "mosaic" (the Hopper forward
      kernel; `implementation=None` does not take it yet), a sequence of them and of callables
      (the first that serves the call runs; a callable is called as Tokamax calls one: lhs,
      rhs and the other arguments by name, the optional ones only when set, and passes the
      call on by raising NotImplementedError), or None to choose per device and call.
    bypass_device_check: Tokamax's option (there: skip its check that the implementation
      supports the device, for lowering on a host without that device); accepted (None, True
      or False) and changes nothing here: pjrtkit checks the implementation against the device
      calls are traced for (JAX's default device, not the arguments' placement) before tracing
      it, whatever this says, and refuses one that cannot serve it
      (`UnsupportedImplementationError`; with True, a note says the option does not lift it).
    zero_initialize: rows no group covers are zero (they always are here).
    fuse_gateup_activation: "silu", "gelu" or "gelu_tanh": the result is
      ``act(y[..., :n/2]) * y[..., n/2:]`` (n the product's last dimension).

  Returns:
    The product, of `preferred_element_type` (or the operands' result type).

  Raises:
    TypeError, ValueError: for arguments of the wrong type, dtype or shape (naming the
      parameter).
    UnsupportedImplementationError: when `implementation` cannot serve this call.
  """
  if bypass_device_check is not None and not isinstance(bypass_device_check, bool):
    raise TypeError(f"ragged_dot: bypass_device_check must be None, True or False, got "
                    f"{bypass_device_check!r}")
  if manual_axis_type is not None:
    raise ValueError("ragged_dot: manual_axis_type is not supported (accepted: None); shard the "
                     "call with shard_map instead")
  spec, sizes = base.make_spec(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision,
                               preferred_element_type, group_offset, activation,
                               zero_initialize, fuse_gateup_activation)
  sizes = base.non_negative_sizes(sizes)
  def user_call(fn: Callable[..., jax.Array]) -> jax.Array:
    """A callable of `implementation`, with Tokamax's arguments (the optional ones only when
    they are set)."""
    optional = {"group_offset": group_offset, "zero_initialize": zero_initialize or None,
                "fuse_gateup_activation": fuse_gateup_activation}
    return fn(lhs, rhs, group_sizes=group_sizes,
              ragged_dot_dimension_numbers=ragged_dot_dimension_numbers, precision=precision,
              preferred_element_type=preferred_element_type, activation=activation,
              **{k: v for k, v in optional.items() if v is not None})

  try:
    return FAMILY.call(spec, (lhs, rhs, sizes, group_offset), implementation, user_call)
  except (UnsupportedImplementationError, ExceptionGroup) as e:
    if bypass_device_check:
      e.add_note(_BYPASS_NOTE)
    raise


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Any = None,
               activation: Callable[[jax.Array], jax.Array] | None = None,
               manual_axis_type: Any = None, *,
               implementation: str | Sequence[str | Callable[..., Any]] | None = None,
               bypass_device_check: bool | None = None, zero_initialize: bool = False,
               fuse_gateup_activation: str | None = None) -> jax.Array:
  """Ragged matrix product with ``jax.lax.ragged_dot``'s API: lhs ``[m, k]``, rhs
  ``[g, k, n]``; rows ``[s_i, s_i + group_sizes[i])`` (``s_i`` the sum of the sizes before
  group i) are multiplied by ``rhs[i]``; the result is ``[m, n]`` (``[m, n / 2]`` with
  `fuse_gateup_activation`). The arguments are those of `ragged_dot_general`.
  """
  return ragged_dot_general(lhs, rhs, group_sizes, base.DEFAULT_RAGGED_DOT_DIM_NUMS,
                            precision=precision, preferred_element_type=preferred_element_type,
                            group_offset=group_offset, activation=activation,
                            manual_axis_type=manual_axis_type, implementation=implementation,
                            bypass_device_check=bypass_device_check,
                            zero_initialize=zero_initialize,
                            fuse_gateup_activation=fuse_gateup_activation)
