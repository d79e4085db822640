"""The op-coverage cases: jax.lax primitives (through jax.lax / jax.numpy / jax.random) that lower
to StableHLO, each with the inputs it is tried on.

A case is a function of one dtype's inputs; ``op_coverage`` runs it under ``jax.jit`` on pjrtkit
and on jaxlib's cpu backend for every dtype in ``DTYPES`` and compares. Inputs are deterministic
(numpy ``default_rng(seed)``) and kept in each op's domain (``Arg.domain``) so results are finite.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64", "complex64", "complex128")
"""Every dtype the suite tries (with jax_enable_x64 on in the child)."""


@dataclasses.dataclass(frozen=True)
class Arg:
  """One operand.

  Attributes:
    shape: its shape.
    domain: "any", "positive", "unit" (|x| < 1), "ge1" (x > 1), "nonzero", "small" (0..3),
      "shift" (0..bits-1 for integers), "spd" (Hermitian positive definite matrices), "hermitian",
      "lower" (well-conditioned lower triangular), "index:<n>" (int32 indices in [0, n)),
      "seed" (a uint32 scalar) and "bool" (a bool array): these two whatever the case's dtype.
  """

  shape: tuple[int, ...]
  domain: str = "any"


@dataclasses.dataclass(frozen=True)
class OpCase:
  """An op tried on every dtype.

  Attributes:
    name: the name in the coverage table.
    group: the table section.
    fn: the function jitted on each backend (takes the operands, returns an array or a tuple).
    args: its operands.
    kind: "plain" or "linalg" (looser tolerances: results depend on the factorization path).
  """

  name: str
  group: str
  fn: Callable[..., Any]
  args: Sequence[Arg]
  kind: str = "plain"


def _lax():
  from jax import lax  # pylint: disable=g-import-not-at-top
  return lax


def _jnp():
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  return jnp


V = (7,)          # Vector operands.
M = (3, 4)        # Matrix operands.
SQ = (2, 4, 4)    # Batched square matrices.


def _unary(name: str, attr: str, domain: str = "any", module: str = "lax") -> OpCase:
  def fn(x):
    mod = _lax() if module == "lax" else _jnp()
    return getattr(mod, attr)(x)
  return OpCase(name, "elementwise unary", fn, (Arg(V, domain),))


def _binary(name: str, attr: str, domain2: str = "any", group: str = "elementwise binary",
            module: str = "lax") -> OpCase:
  def fn(x, y):
    mod = _lax() if module == "lax" else _jnp()
    return getattr(mod, attr)(x, y)
  return OpCase(name, group, fn, (Arg(V), Arg(V, domain2)))


UNARY = [
    _unary("neg", "neg"), _unary("abs", "abs"), _unary("sign", "sign"),
    _unary("floor", "floor"), _unary("ceil", "ceil"), _unary("round", "round"),
    _unary("exp", "exp"), _unary("exp2", "exp2"), _unary("log", "log", "positive"),
    _unary("log1p", "log1p", "positive"), _unary("expm1", "expm1"),
    _unary("sqrt", "sqrt", "positive"), _unary("rsqrt", "rsqrt", "positive"),
    _unary("cbrt", "cbrt"), _unary("sin", "sin"), _unary("cos", "cos"),
    _unary("tan", "tan", "unit"),
    _unary("tanh", "tanh"), _unary("logistic", "logistic"), _unary("asin", "asin", "unit"),
    _unary("acos", "acos", "unit"), _unary("atan", "atan"), _unary("sinh", "sinh"),
    _unary("cosh", "cosh"), _unary("asinh", "asinh"), _unary("acosh", "acosh", "ge1"),
    _unary("atanh", "atanh", "unit"), _unary("erf", "erf"), _unary("erfc", "erfc"),
    _unary("erf_inv", "erf_inv", "unit"), _unary("lgamma", "lgamma", "positive"),
    _unary("digamma", "digamma", "positive"), _unary("is_finite", "is_finite"),
    _unary("not", "bitwise_not"), _unary("population_count", "population_count"),
    _unary("clz", "clz"), _unary("real", "real"), _unary("imag", "imag"), _unary("conj", "conj"),
    _unary("square", "square"),
    OpCase("integer_pow", "elementwise unary", lambda x: _lax().integer_pow(x, 3), (Arg(V),)),
]

BINARY = [
    _binary("add", "add"), _binary("sub", "sub"), _binary("mul", "mul"),
    _binary("div", "div", "nonzero"), _binary("rem", "rem", "nonzero"),
    _binary("pow", "pow", "small"), _binary("max", "max"), _binary("min", "min"),
    _binary("atan2", "atan2"), _binary("nextafter", "nextafter"),
    _binary("and", "bitwise_and"), _binary("or", "bitwise_or"), _binary("xor", "bitwise_xor"),
    _binary("shift_left", "shift_left", "shift"),
    _binary("shift_right_logical", "shift_right_logical", "shift"),
    _binary("shift_right_arithmetic", "shift_right_arithmetic", "shift"),
    _binary("complex", "complex"),
]

COMPARE = [_binary(n, n, group="comparison") for n in ("eq", "ne", "lt", "le", "gt", "ge")] + [
    OpCase("select_n", "comparison", lambda p, x, y: _lax().select_n(p, x, y),
           (Arg(V, "bool"), Arg(V), Arg(V))),
    OpCase("clamp", "comparison", lambda x: _lax().clamp(x[0], x, x[-1]), (Arg(V),)),
]

REDUCE = [
    OpCase("reduce_sum", "reduction", lambda x: _jnp().sum(x, axis=1), (Arg(M),)),
    OpCase("reduce_prod", "reduction", lambda x: _jnp().prod(x, axis=0), (Arg(M),)),
    OpCase("reduce_max", "reduction", lambda x: _jnp().max(x, axis=1), (Arg(M),)),
    OpCase("reduce_min", "reduction", lambda x: _jnp().min(x, axis=0), (Arg(M),)),
    OpCase("reduce_and", "reduction", lambda x: _lax().reduce_and(x, (1,)), (Arg(M),)),
    OpCase("reduce_or", "reduction", lambda x: _lax().reduce_or(x, (1,)), (Arg(M),)),
    OpCase("argmax", "reduction", lambda x: _jnp().argmax(x, axis=1), (Arg(M),)),
    OpCase("argmin", "reduction", lambda x: _jnp().argmin(x, axis=0), (Arg(M),)),
    OpCase("cumsum", "cumulative", lambda x: _lax().cumsum(x, axis=1), (Arg(M),)),
    OpCase("cumprod", "cumulative", lambda x: _lax().cumprod(x, axis=1), (Arg(M, "small"),)),
    OpCase("cummax", "cumulative", lambda x: _lax().cummax(x, axis=0), (Arg(M),)),
    OpCase("cummin", "cumulative", lambda x: _lax().cummin(x, axis=1), (Arg(M),)),
    OpCase("cumlogsumexp", "cumulative", lambda x: _lax().cumlogsumexp(x, axis=1), (Arg(M),)),
]


def _dot(x, y):
  return _lax().dot_general(x, y, (((2,), (1,)), ((0,), (0,))))


def _conv(x, w):
  return _lax().conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))


STRUCTURED = [
    OpCase("dot_general", "dot/conv", _dot, (Arg((2, 3, 4)), Arg((2, 4, 5)))),
    OpCase("conv_general_dilated", "dot/conv", _conv, (Arg((1, 5, 5, 2)), Arg((3, 3, 2, 3)))),
    OpCase("gather", "indexing", lambda x, i: x[i], (Arg((6, 3)), Arg((4,), "index:6"))),
    OpCase("scatter_add", "indexing", lambda x, i, u: x.at[i].add(u),
           (Arg((6,)), Arg((4,), "index:6"), Arg((4,)))),
    OpCase("scatter", "indexing", lambda x, i, u: x.at[i].set(u),
           (Arg((6,)), Arg((3,), "index:6"), Arg((3,)))),
    OpCase("dynamic_slice", "indexing",
           lambda x, i: _lax().dynamic_slice(x, (i[0], i[1]), (2, 2)),
           (Arg((4, 5)), Arg((2,), "index:3"))),
    OpCase("dynamic_update_slice", "indexing",
           lambda x, u, i: _lax().dynamic_update_slice(x, u, (i[0], i[1])),
           (Arg((4, 5)), Arg((2, 2)), Arg((2,), "index:3"))),
    OpCase("slice/pad/concat", "indexing",
           lambda x: _jnp().concatenate(
               [_lax().pad(x[1:3], x[0, 0], ((1, 0, 1), (0, 2, 0)))[:, 1:4],
                _lax().rev(x, (0,))], axis=0),
           (Arg((4, 3)),)),
    OpCase("transpose/reshape", "indexing",
           lambda x: _jnp().reshape(_jnp().transpose(x, (1, 0, 2)), (3, -1)), (Arg((2, 3, 2)),)),
    OpCase("sort", "sort", lambda x: _jnp().sort(x, axis=-1), (Arg(M),)),
    OpCase("argsort", "sort", lambda x: _jnp().argsort(x, axis=0, stable=True), (Arg(M),)),
    OpCase("top_k", "sort", lambda x: _lax().top_k(x, 3), (Arg(M),)),
    OpCase("convert_to_f32", "conversion",
           lambda x: _lax().convert_element_type(x, _jnp().float32), (Arg(V),)),
    OpCase("bitcast_convert", "conversion", lambda x: _bitcast(x), (Arg(V),)),
    OpCase("reduce_precision", "conversion",
           lambda x: _lax().reduce_precision(x, exponent_bits=5, mantissa_bits=7), (Arg(V),)),
]


def _bitcast(x):
  import numpy as np  # pylint: disable=g-import-not-at-top
  jnp = _jnp()
  size = np.dtype(x.dtype).itemsize
  target = {1: jnp.uint8, 2: jnp.uint16, 4: jnp.uint32, 8: jnp.uint64, 16: jnp.uint64}[size]
  return _lax().bitcast_convert_type(x, target)


FFT = [
    OpCase("fft", "fft", lambda x: _jnp().fft.fft(x), (Arg((2, 8)),)),
    OpCase("ifft", "fft", lambda x: _jnp().fft.ifft(x), (Arg((2, 8)),)),
    OpCase("rfft", "fft", lambda x: _jnp().fft.rfft(x), (Arg((2, 8)),)),
    OpCase("irfft", "fft", lambda x: _jnp().fft.irfft(x), (Arg((2, 5)),)),
    OpCase("fft2", "fft", lambda x: _jnp().fft.fft2(x), (Arg((4, 4)),)),
]


def _linalg():
  import jax.numpy.linalg as jla  # pylint: disable=g-import-not-at-top
  return jla


def _lax_linalg():
  from jax.lax import linalg  # pylint: disable=g-import-not-at-top
  return linalg


LINALG = [
    OpCase("cholesky", "linalg", lambda a: _lax_linalg().cholesky(a), (Arg(SQ, "spd"),), "linalg"),
    OpCase("qr", "linalg", lambda a: _linalg().qr(a), (Arg((2, 5, 3)),), "linalg"),
    OpCase("svd", "linalg", lambda a: _linalg().svd(a, full_matrices=False),
           (Arg((2, 4, 3)),), "linalg"),
    OpCase("eigh", "linalg", lambda a: _linalg().eigh(a), (Arg(SQ, "hermitian"),), "linalg"),
    OpCase("lu", "linalg", lambda a: _lax_linalg().lu(a), (Arg(SQ),), "linalg"),
    OpCase("triangular_solve", "linalg",
           lambda a, b: _lax_linalg().triangular_solve(a, b, left_side=True, lower=True),
           (Arg(SQ, "lower"), Arg((2, 4, 3))), "linalg"),
    OpCase("solve", "linalg", lambda a, b: _linalg().solve(a, b),
           (Arg(SQ, "spd"), Arg((2, 4, 2))), "linalg"),
    OpCase("eig", "linalg", lambda a: _lax_linalg().eig(a, compute_left_eigenvectors=False,
                                                       compute_right_eigenvectors=False)[0],
           (Arg(SQ, "hermitian"),), "linalg"),
    OpCase("schur", "linalg", lambda a: _lax_linalg().schur(a)[0], (Arg(SQ, "hermitian"),),
           "linalg"),
    OpCase("hessenberg", "linalg", lambda a: _lax_linalg().hessenberg(a)[0], (Arg(SQ, "spd"),),
           "linalg"),
    OpCase("tridiagonal", "linalg", lambda a: _lax_linalg().tridiagonal(a)[1:3],
           (Arg(SQ, "hermitian"),), "linalg"),
    OpCase("qr_pivoting", "linalg", lambda a: _lax_linalg().qr(a, pivoting=True),
           (Arg((2, 5, 3)),), "linalg"),
    OpCase("tridiagonal_solve", "linalg",
           lambda dl, d, du, b: _lax_linalg().tridiagonal_solve(dl * 0.1, d, du * 0.1, b),
           (Arg((4,)), Arg((4,), "ge1"), Arg((4,)), Arg((4, 2))), "linalg"),
]


def _key(seed, impl: str):
  import jax  # pylint: disable=g-import-not-at-top
  return jax.random.key(seed, impl=impl)


def _random_values(seed, dtype, impl: str):
  import jax  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  key = _key(seed, impl)
  dt = np.dtype(dtype)
  if dt == np.bool_:
    return jax.random.bernoulli(key, 0.5, (16,))
  if dt.kind == "u":
    return jax.random.bits(key, (16,), dtype=dt)
  if dt.kind == "i":
    return jax.random.randint(key, (16,), -50, 50, dtype=dt)
  if dt.kind == "c":
    return jax.random.normal(key, (16,), dtype=dt)
  k1, k2 = jax.random.split(key)
  return jax.random.uniform(k1, (16,), dtype=dt), jax.random.normal(k2, (16,), dtype=dt)


def random_case(name: str, impl: str) -> OpCase:
  """A jax.random case whose output dtype is the table's dtype (the seed is a uint32 scalar)."""
  return OpCase(name, "random", lambda seed, dtype: _random_values(seed, dtype, impl),
                (Arg((), "seed"),), "random")


RANDOM = [random_case("random_threefry", "threefry2x32"), random_case("random_rbg", "rbg")]


def _cond(x):
  return _lax().cond(x[0] == x[1], lambda v: v + v, lambda v: v * x[2], x)


def _while(x):
  def body(state):
    i, c = state
    return i + 1, c * x + x
  return _lax().while_loop(lambda state: state[0] < 4, body, (0, x))[1]


def _scan(x):
  return _lax().scan(lambda c, v: (c + v, c * v), x[0], x)


def _switch(x):
  return _lax().switch(2, [lambda v: v, lambda v: v + v, lambda v: v * v], x)


CONTROL = [
    OpCase("cond", "control flow", _cond, (Arg(V),)),
    OpCase("while_loop", "control flow", _while, (Arg(V, "small"),)),
    OpCase("scan", "control flow", _scan, (Arg((5, 2), "small"),)),
    OpCase("switch", "control flow", _switch, (Arg(V, "small"),)),
]

CASES: tuple[OpCase, ...] = tuple(UNARY + BINARY + COMPARE + REDUCE + STRUCTURED + FFT + LINALG +
                                  RANDOM + CONTROL)
"""Every case, in table order."""
