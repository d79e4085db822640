"""Generates sort_cases.inc: XLA:CPU's sort results for the C++ sort test.

Each case names its comparator (the C++ test builds the same comparator as `keys` and as a
`body`, and checks both paths): jnp.sort / argsort / lax.sort cases run through JAX (whose float
comparator canonicalizes -0.0 and NaNs before a TOTALORDER compare); the others run StableHLO
sorts with the comparator region written out, as XLA:CPU compiles them.

Regenerate (from the repository root):
  JAX_PLATFORMS=cpu .venv/bin/python xla_plugin/devices/sim/kernels/gen_sort_cases.py
"""
import os

import ml_dtypes
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

import movement_testgen as tg

CASES = []
BF16 = np.dtype(ml_dtypes.bfloat16)
F8 = np.dtype(ml_dtypes.float8_e4m3fn)
TYPES = dict(tg.MLIR_TYPES)
TYPES[BF16] = "bf16"
TYPES[F8] = "f8E4M3FN"
CC = dict(tg.CC_TYPES)
CC[BF16] = "kBF16"
CC[F8] = "kF8E4M3FN"

# Positive quiet NaNs (JAX's canonical NaN) by float type.
QUIET_NANS = {np.dtype(np.float16): "7E00", BF16: "7FC0", np.dtype(np.float32): "7FC00000",
              np.dtype(np.float64): "7FF8000000000000"}

# Comparators by name: lexicographic keys (operand, direction, comparison type, canonicalize).
KEYS = {
    "jax_float_lt": [(0, "LT", "TOTALORDER", True)],
    "jax_float_then_s32": [(0, "LT", "TOTALORDER", True), (1, "LT", "SIGNED", False)],
    "signed_lt": [(0, "LT", "SIGNED", False)],
    "signed_gt": [(0, "GT", "SIGNED", False)],
    "unsigned_lt": [(0, "LT", "UNSIGNED", False)],
    "total_lt": [(0, "LT", "TOTALORDER", False)],
    "float_lt": [(0, "LT", "FLOAT", False)],
    "float_gt": [(0, "GT", "FLOAT", False)],
    "s32_lt_then_f32_gt": [(0, "LT", "SIGNED", False), (1, "GT", "FLOAT", False)],
}


def region(name, types):
  """The comparator region of `name` for operands of `types` (MLIR text lines)."""
  args = ", ".join(f"%l{i}: tensor<{TYPES[t]}>, %r{i}: tensor<{TYPES[t]}>"
                   for i, t in enumerate(types))
  lines = [f"^bb0({args}):"]
  count = [0]

  def emit(text):
    count[0] += 1
    lines.append(f"  %v{count[0]} = {text}")
    return f"%v{count[0]}"

  def scalar(t):
    return f"tensor<{TYPES[t]}>"

  def cmp(direction, a, b, t, ctype):
    return emit(f"stablehlo.compare {direction}, {a}, {b}, {ctype} : ({scalar(t)}, {scalar(t)}) "
                f"-> tensor<i1>")

  def canonical(x, t):  # JAX's: -0.0 -> 0.0, NaN -> NaN.
    zero = emit(f"stablehlo.constant dense<0.0> : {scalar(t)}")
    nan = emit(f"stablehlo.constant dense<0x{QUIET_NANS[np.dtype(t)]}> : {scalar(t)}")
    is_zero = cmp("EQ", x, zero, t, "FLOAT")
    y = emit(f"stablehlo.select {is_zero}, {zero}, {x} : tensor<i1>, {scalar(t)}")
    is_nan = cmp("NE", x, x, t, "FLOAT")
    return emit(f"stablehlo.select {is_nan}, {nan}, {y} : tensor<i1>, {scalar(t)}")

  if name == "sum_s32_lt":
    a = emit(f"stablehlo.add %l0, %l1 : {scalar(types[0])}")
    b = emit(f"stablehlo.add %r0, %r1 : {scalar(types[0])}")
    result = cmp("LT", a, b, types[0], "SIGNED")
  else:
    terms = []
    for operand, direction, ctype, canon in KEYS[name]:
      t = types[operand]
      x, y = f"%l{operand}", f"%r{operand}"
      if canon:
        x, y = canonical(x, t), canonical(y, t)
      terms.append((cmp(direction, x, y, t, ctype), cmp("EQ", x, y, t, ctype)))
    result = terms[-1][0]
    for less, equal in reversed(terms[:-1]):
      both = emit(f"stablehlo.and {equal}, {result} : tensor<i1>")
      result = emit(f"stablehlo.or {less}, {both} : tensor<i1>")
  lines.append(f"  stablehlo.return {result} : tensor<i1>")
  return "\n".join(lines)


def bits(a):
  """Bit patterns: one word per element; two (low, high) for 16-byte elements."""
  a = np.ascontiguousarray(a).reshape(-1)
  if a.dtype.itemsize == 16:
    return a.view(np.uint64).tolist()
  return a.view(f"u{a.dtype.itemsize}").astype(np.uint64).tolist()


def record(name, comparator, dimension, is_stable, inputs, outputs):
  assert all(o.shape == inputs[0].shape for o in outputs)
  CASES.append(dict(name=name, comparator=comparator, dimension=dimension, stable=is_stable,
                    dims=list(inputs[0].shape), types=[CC[i.dtype] for i in inputs],
                    inputs=[bits(i) for i in inputs], expected=[bits(o) for o in outputs]))


def raw(name, comparator, dimension, is_stable, *inputs):
  inputs = [np.asarray(i) for i in inputs]
  ts = [tg.tensor_type(i.shape, TYPES[i.dtype]) for i in inputs]
  args = ", ".join(f"%a{k}: {t}" for k, t in enumerate(ts))
  ops = ", ".join(f"%a{k}" for k in range(len(ts)))
  results = f"%s:{len(ts)}" if len(ts) > 1 else "%s"
  returns = ", ".join(f"%s#{k}" if len(ts) > 1 else "%s" for k in range(len(ts)))
  text = (f"func.func public @main({args}) -> ({', '.join(ts)}) {{\n"
          f'  {results} = "stablehlo.sort"({ops}) <{{dimension = {dimension} : i64, is_stable = '
          f"{'true' if is_stable else 'false'}}}> ({{\n"
          f"{region(comparator, [i.dtype for i in inputs])}\n"
          f"  }}) : ({', '.join(ts)}) -> ({', '.join(ts)})\n"
          f"  return {returns} : {', '.join(ts)}\n}}")
  outputs = tg.run(text, *inputs)
  outputs = [np.asarray(o).view(i.dtype) for o, i in zip(outputs, inputs)]
  record(name, comparator, dimension, is_stable, inputs, outputs)


def via_jax(name, comparator, f, dimension, *inputs):
  """A sort JAX emits (jnp.sort, lax.sort): also rerun as StableHLO with our region, equal."""
  inputs = [np.asarray(i) for i in inputs]
  outputs = [np.asarray(o) for o in f(*inputs)]
  record("jax/" + name, comparator, dimension, True, inputs, outputs)
  raw("raw/" + name, comparator, dimension, True, *inputs)
  for o, r in zip(CASES[-2]["expected"], CASES[-1]["expected"]):
    assert o == r, name
  CASES.pop()


def build():
  rng = np.random.default_rng(48)
  specials = np.array([np.nan, -np.nan, 1.0, -0.0, 0.0, -np.inf, np.inf, -1.0, 0.0, -0.0, np.nan,
                       3.0], np.float32)
  via_jax("sort_f32_specials", "jax_float_lt", lambda x: [jnp.sort(x)], 0, specials)
  iota = np.arange(12, dtype=np.int32)
  via_jax("argsort_f32_specials", "jax_float_lt",
          lambda x, i: lax.sort((x, i), num_keys=1, is_stable=True), 0, specials, iota)
  ties = rng.integers(-3, 4, size=(4, 9)).astype(np.float32)
  via_jax("sort_2d_axis1", "jax_float_lt", lambda x: [jnp.sort(x, axis=1)], 1, ties)
  via_jax("sort_2d_axis0", "jax_float_lt", lambda x: [jnp.sort(x, axis=0)], 0, ties.T.copy())
  via_jax("num_keys2_with_payload", "jax_float_then_s32",
          lambda a, b, c: lax.sort((a, b, c), num_keys=2, is_stable=True), 0,
          np.array([1, 0, 1, 0, np.nan, 1, 0, -0.0], np.float32),
          np.array([3, 9, -1, 9, 0, 3, -7, 2], np.int32),
          np.arange(8, dtype=np.uint8))
  for dtype in (np.int8, np.int16, np.int32, np.int64):
    x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, size=11, dtype=dtype)
    x[3] = x[7]
    via_jax(f"sort_{np.dtype(dtype).name}", "signed_lt", lambda x: [jnp.sort(x)], 0, x)
  for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
    x = rng.integers(0, np.iinfo(dtype).max, size=11, dtype=dtype, endpoint=True)
    x[0] = np.iinfo(dtype).max
    via_jax(f"sort_{np.dtype(dtype).name}", "unsigned_lt", lambda x: [jnp.sort(x)], 0, x)
  via_jax("sort_pred_payload", "unsigned_lt",
          lambda b, i: lax.sort((b, i), num_keys=1, is_stable=True), 0,
          np.array([True, False, True, False, False, True]), np.arange(6, dtype=np.int32))
  for dtype in (np.float16, BF16, np.float64):
    x = np.array([2.5, -np.nan, -0.0, np.inf, 0.0, -1.5, np.nan, -np.inf, 0.0, 1e-3]).astype(dtype)
    via_jax(f"sort_{np.dtype(dtype).name}", "jax_float_lt",
            lambda x, i: lax.sort((x, i), num_keys=1, is_stable=True), 0, x,
            np.arange(10, dtype=np.int32))
  big = rng.permutation(300).astype(np.float32) * 0.25 - 100
  via_jax("sort_300_unique", "jax_float_lt", lambda x: [jnp.sort(x)], 0, big)
  many_ties = rng.integers(0, 10, size=300).astype(np.float32)
  via_jax("argsort_300_ties", "jax_float_lt",
          lambda x, i: lax.sort((x, i), num_keys=1, is_stable=True), 0, many_ties,
          np.arange(300, dtype=np.int32))

  raw("total_order_f32", "total_lt", 0, True, specials, iota)
  raw("float_lt_zero_ties", "float_lt", 0, True,
      np.array([0.0, -0.0, 2.0, -0.0, 0.0, -1.0, 0.0], np.float32), np.arange(7, dtype=np.int32))
  raw("float_gt_f64_ties", "float_gt", 0, True,
      np.array([1.0, 3.0, 1.0, -2.0, 3.0, 0.5, 1.0]), np.arange(7, dtype=np.int16))
  raw("signed_gt_3d_dim_minus1", "signed_gt", -1, True,
      rng.integers(-5, 5, size=(2, 3, 5)).astype(np.int16))
  raw("signed_lt_3d_dim1", "signed_lt", 1, True,
      rng.integers(-5, 5, size=(2, 4, 3)).astype(np.int32), np.arange(24, dtype=np.int32)
      .reshape(2, 4, 3))
  raw("s32_lt_then_f32_gt", "s32_lt_then_f32_gt", 0, True,
      np.array([2, 1, 2, 1, 2, 0, 1], np.int32),
      np.array([0.5, 1.5, 2.5, -1.0, 0.5, 9.0, 1.5], np.float32), np.arange(7, dtype=np.uint32))
  raw("unstable_unique_keys", "signed_lt", 0, False,
      rng.permutation(40).astype(np.int32), np.arange(40, dtype=np.int64))
  raw("sum_s32_body_only", "sum_s32_lt", 0, True,
      np.array([1, 5, 2, 0, 3, -4, 2], np.int32), np.array([2, -2, 1, 3, 0, 10, 4], np.int32))
  raw("f8_total_order_body_fallback", "total_lt", 0, True,
      np.array([0.5, -1, np.nan, -0.0, 0.0, 2, -np.nan, -0.0]).astype(F8),
      np.arange(8, dtype=np.int32))
  raw("empty_length", "signed_lt", 1, True, np.zeros((3, 0), np.int32))
  raw("empty_rows", "signed_lt", 1, True, np.zeros((0, 4), np.int32))
  raw("length_one", "float_lt", 0, True, np.array([4.0], np.float32))
  raw("c64_payload", "signed_lt", 0, True, np.array([3, 1, 2], np.int32),
      np.array([1 + 2j, 3 - 1j, -2j], np.complex64))
  raw("c128_payload", "signed_lt", 0, True, np.array([3, 1, 2], np.int32),
      np.array([1 + 2j, 3 - 1j, -2j], np.complex128))


def main():
  build()
  lines = ["const SortCase kSortCases[] = {"]
  for c in CASES:
    types = "{" + ", ".join(f"ElementType::{t}" for t in c["types"]) + "}"
    lines.append(f'    {{"{c["name"]}", "{c["comparator"]}", {c["dimension"]}, '
                 f'{"true" if c["stable"] else "false"}, {tg.cc_ints(c["dims"])}, {types},')
    lines.append("     {" + ", ".join(tg.cc_u64s(i) for i in c["inputs"]) + "},")
    lines.append("     {" + ", ".join(tg.cc_u64s(e) for e in c["expected"]) + "}},")
  lines.append("};")
  tg.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sort_cases.inc"),
           "gen_sort_cases.py", lines)
  print(f"{len(CASES)} cases")


if __name__ == "__main__":
  main()
