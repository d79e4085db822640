"""The Mosaic GPU kernels besides the attention backward that ``ptxas_local`` compiles: the
ragged_dot forward (``kernels/ragged_dot/mosaic.py``) and the gated linear unit's forward
(``kernels/gated_linear_unit/mosaic.py``), bfloat16, at a shape and config given as text:

  ragged_dot:M,K,N,GROUPS,CONTRACT[:FIELD=INT,...]       (CONTRACT 1: rhs [g, k, n]; 2: [g, n, k])
  gated_linear_unit:M,K,N,FUSED[:FIELD=INT,...]          (FUSED 1: weights [k, 2, n]; 0: a pair)

FIELDs are the op's Mosaic config's (``MosaicRaggedDotConfig``, ``MosaicGatedLinearUnitConfig``);
unset ones keep its defaults. Parsing needs no JAX; `lower` (stage 1, in ``ptxas_local``'s jax
0.11.2 venv) imports the kernels.
"""

from __future__ import annotations

import dataclasses
from typing import Any

OPS = {"ragged_dot": ("M,K,N,GROUPS,CONTRACT", 5),
       "gated_linear_unit": ("M,K,N,FUSED", 4)}
"""op -> (its dimensions as the text names them, how many)."""


@dataclasses.dataclass(frozen=True)
class OpCase:
  """One kernel to compile: the op, its dimensions (`OPS`) and config fields set."""

  op: str
  dims: tuple[int, ...]
  config: tuple[tuple[str, int], ...] = ()

  @property
  def text(self) -> str:
    """The case as `parse` reads it."""
    fields = ",".join(f"{k}={v}" for k, v in self.config)
    return f"{self.op}:{','.join(map(str, self.dims))}" + (f":{fields}" if fields else "")


def is_op_case(text: str) -> bool:
  """Whether `text` is an op case (``op:...``, a known op or not: `parse` names the ops)."""
  return ":" in text


def _number(text: str) -> bool:
  return text.isascii() and text.isdigit()


def parse(text: str) -> OpCase:
  """``op:DIMS[:FIELD=INT,...]`` -> OpCase.

  Raises:
    ValueError: naming the case and what it should be.
  """
  op, _, rest = text.partition(":")
  if op not in OPS:
    raise ValueError(f"case {text!r}: the op must be one of {sorted(OPS)}")
  form, count = OPS[op]
  dims_text, _, fields_text = rest.partition(":")
  dims = dims_text.split(",")
  if len(dims) != count or not all(_number(d) for d in dims):
    raise ValueError(f"case {text!r}: expected {op}:{form} ({count} non-negative integers)")
  config = []
  for field in filter(None, fields_text.split(",")):
    name, eq, value = field.partition("=")
    if not (eq and name.isidentifier() and _number(value)):
      raise ValueError(f"case {text!r}: config fields are FIELD=INT, got {field!r}")
    config.append((name, int(value)))
  case = OpCase(op, tuple(map(int, dims)), tuple(config))
  if op == "ragged_dot" and case.dims[4] not in (1, 2):
    raise ValueError(f"case {text!r}: CONTRACT must be 1 or 2, got {case.dims[4]}")
  if op == "gated_linear_unit" and case.dims[3] not in (0, 1):
    raise ValueError(f"case {text!r}: FUSED must be 0 or 1, got {case.dims[3]}")
  if min(case.dims[:3]) < 1 or (op == "ragged_dot" and case.dims[3] < 1):
    raise ValueError(f"case {text!r}: {form.rsplit(',', 1)[0]} must be positive")
  return case


def _config(config_type: Any, case: OpCase) -> Any:
  """`case`'s config of `config_type` (a dataclass).

  Raises:
    ValueError: naming a field the config does not have and the ones it has.
  """
  names = [f.name for f in dataclasses.fields(config_type)]
  unknown = [k for k, _ in case.config if k not in names]
  if unknown:
    raise ValueError(f"case {case.text!r}: {config_type.__name__} has no field {unknown}; "
                     f"accepted: {names}")
  return config_type(**dict(case.config))


def lower(case: OpCase) -> tuple[bytes, str]:
  """(The serialized Mosaic GPU module of `case`'s kernel, as the custom call gets it, and the
  config asked for: the kernel may run fewer stages where they do not fit in shared memory),
  lowered for "cuda" with an abstract H200 as the target.

  Raises:
    RuntimeError: when the lowering holds other than one Mosaic GPU kernel.
    ValueError: a config field the op's config lacks or refuses.
  """
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  from pjrtkit.kernels.core import triton_matmul  # pylint: disable=g-import-not-at-top

  bf16 = jnp.bfloat16
  fn: Any
  if case.op == "ragged_dot":
    from pjrtkit.kernels.ragged_dot import mosaic  # pylint: disable=g-import-not-at-top
    m, k, n, groups, contract = case.dims
    config = _config(mosaic.MosaicRaggedDotConfig, case)
    avals = [jax.ShapeDtypeStruct((m, k), bf16),
             jax.ShapeDtypeStruct((groups, k, n) if contract == 1 else (groups, n, k), bf16),
             jax.ShapeDtypeStruct((groups,), jnp.int32)]
    fn = lambda a, b, s: mosaic.rows_forward(a, b, contract, s, None, config, bf16)  # noqa: E731
  else:
    from pjrtkit.kernels.gated_linear_unit import (  # pylint: disable=g-import-not-at-top
        base, mosaic)
    m, k, n, fused = case.dims
    config = _config(mosaic.MosaicGatedLinearUnitConfig, case)
    x = jax.ShapeDtypeStruct((m, k), bf16)
    weights = (jax.ShapeDtypeStruct((k, 2, n), bf16) if fused
               else (jax.ShapeDtypeStruct((k, n), bf16),) * 2)
    spec, args = base.make_spec(x, weights, jax.nn.silu, None)
    avals = [None if a is None else jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    fn = lambda *a: mosaic.MosaicGatedLinearUnit().forward_output(a, spec, config)  # noqa: E731
  with triton_matmul.lowering_target():
    return mosaic_module(fn, avals), f"config asked for: {config!r}"


def mosaic_module(fn: Any, avals: Any) -> bytes:
  """The one Mosaic GPU module `fn` lowers to for "cuda" at `avals`, serialized as the custom
  call gets it (jax keeps it in ``KNOWN_KERNELS``).

  Raises:
    RuntimeError: when the lowering holds other than one Mosaic GPU kernel.
  """
  import jax  # pylint: disable=g-import-not-at-top
  from jax.experimental.mosaic.gpu import core as mosaic_core  # pylint: disable=g-import-not-at-top
  jax.clear_caches()
  mosaic_core.KNOWN_KERNELS.clear()
  jax.jit(fn).trace(*avals).lower(lowering_platforms=("cuda",))
  kernels = list(mosaic_core.KNOWN_KERNELS.values())
  if len(kernels) != 1:
    raise RuntimeError(f"expected one Mosaic GPU kernel in the lowering, got {len(kernels)}")
  return kernels[0]
