"""Writes the golden tables of the sim kernels' numerics tests, computed by XLA:CPU through JAX.

Every expected value in golden_*.inc comes from jaxlib's CPU backend running one StableHLO op
(compiled from text, so every op, comparison type and attribute is reachable, with the compile
options jax.jit uses), with ml_dtypes providing the element types. Regenerate from the repository root (takes about two minutes):

  JAX_PLATFORMS=cpu .venv/bin/python xla_plugin/devices/sim/kernels/testdata/gen_goldens.py

The tables are C++ initializers of base64 strings (little-endian element bytes):
  golden_inputs.inc   the input sets (per element type: unary, binary, ternary)
  golden_ops.inc      one row per (op, result type, operand type, attribute)
  golden_convert.inc  one row per (from, to) type pair, for convert and bitcast_convert
  golden_codecs.inc   the float codecs: decode tables and hashes of large encode sweeps
"""

import base64
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import ml_dtypes as md  # noqa: E402
import numpy as np  # noqa: E402
from jax._src import compiler  # noqa: E402
from jax.extend import backend  # noqa: E402
from jaxlib import _jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = HERE

# name: (pjrtkit::ElementType value, MLIR element type, numpy dtype)
TYPES = {
    "pred": (1, "i1", np.bool_),
    "s8": (2, "i8", np.int8),
    "s16": (3, "i16", np.int16),
    "s32": (4, "i32", np.int32),
    "s64": (5, "i64", np.int64),
    "u8": (6, "ui8", np.uint8),
    "u16": (7, "ui16", np.uint16),
    "u32": (8, "ui32", np.uint32),
    "u64": (9, "ui64", np.uint64),
    "f16": (10, "f16", np.float16),
    "f32": (11, "f32", np.float32),
    "f64": (12, "f64", np.float64),
    "bf16": (13, "bf16", md.bfloat16),
    "c64": (14, "complex<f32>", np.complex64),
    "c128": (15, "complex<f64>", np.complex128),
    "f8e5m2": (16, "f8E5M2", md.float8_e5m2),
    "f8e4m3fn": (17, "f8E4M3FN", md.float8_e4m3fn),
    "f8e4m3b11fnuz": (18, "f8E4M3B11FNUZ", md.float8_e4m3b11fnuz),
    "f8e5m2fnuz": (19, "f8E5M2FNUZ", md.float8_e5m2fnuz),
    "f8e4m3fnuz": (20, "f8E4M3FNUZ", md.float8_e4m3fnuz),
    "f8e4m3": (26, "f8E4M3", md.float8_e4m3),
    "f8e3m4": (27, "f8E3M4", md.float8_e3m4),
    "f8e8m0fnu": (28, "f8E8M0FNU", md.float8_e8m0fnu),
}
SINT = ["s8", "s16", "s32", "s64"]
UINT = ["u8", "u16", "u32", "u64"]
F8 = ["f8e5m2", "f8e4m3fn", "f8e4m3b11fnuz", "f8e5m2fnuz", "f8e4m3fnuz", "f8e4m3", "f8e3m4",
      "f8e8m0fnu"]
LOWF = ["f16", "bf16"] + F8
FLOATS = ["f32", "f64"] + LOWF
COMPLEX = ["c64", "c128"]
INTS = SINT + UINT
ALL = ["pred"] + INTS + FLOATS + COMPLEX
COMPONENT = {"c64": "f32", "c128": "f64"}

# Which (op, operand types) the device supports; mirrors CheckSupported. Each op's StableHLO name.
UNARY = {
    "abs": ("abs", SINT + FLOATS + COMPLEX),
    "negate": ("negate", INTS + FLOATS + COMPLEX),
    "sign": ("sign", SINT + FLOATS + COMPLEX),
    "not": ("not", ["pred"] + INTS),
    "exponential": ("exponential", FLOATS + COMPLEX),
    "exponential_minus_one": ("exponential_minus_one", FLOATS + COMPLEX),
    "log": ("log", FLOATS + COMPLEX),
    "log_plus_one": ("log_plus_one", FLOATS + COMPLEX),
    "logistic": ("logistic", FLOATS + COMPLEX),
    "tanh": ("tanh", FLOATS + COMPLEX),
    "sine": ("sine", FLOATS + COMPLEX),
    "cosine": ("cosine", FLOATS + COMPLEX),
    "tan": ("tan", FLOATS + COMPLEX),
    "sqrt": ("sqrt", FLOATS + COMPLEX),
    "rsqrt": ("rsqrt", FLOATS + COMPLEX),
    "cbrt": ("cbrt", FLOATS),
    "floor": ("floor", FLOATS),
    "ceil": ("ceil", FLOATS),
    "round_nearest_afz": ("round_nearest_afz", FLOATS),
    "round_nearest_even": ("round_nearest_even", FLOATS),
    "is_finite": ("is_finite", FLOATS),
    "popcnt": ("popcnt", INTS),
    "count_leading_zeros": ("count_leading_zeros", INTS),
    "real": ("real", FLOATS + COMPLEX),
    "imag": ("imag", FLOATS + COMPLEX),
}
BINARY = {
    "add": ("add", ALL),
    "subtract": ("subtract", INTS + FLOATS + COMPLEX),
    "multiply": ("multiply", ALL),
    "divide": ("divide", INTS + FLOATS + COMPLEX),
    "remainder": ("remainder", INTS + FLOATS),
    "power": ("power", INTS + FLOATS + COMPLEX),
    "maximum": ("maximum", ["pred"] + INTS + FLOATS),
    "minimum": ("minimum", ["pred"] + INTS + FLOATS),
    "and": ("and", ["pred"] + INTS),
    "or": ("or", ["pred"] + INTS),
    "xor": ("xor", ["pred"] + INTS),
    "shift_left": ("shift_left", INTS),
    "shift_right_arithmetic": ("shift_right_arithmetic", INTS),
    "shift_right_logical": ("shift_right_logical", INTS),
    "atan2": ("atan2", FLOATS),
}
DIRECTIONS = ["EQ", "NE", "GE", "GT", "LE", "LT"]  # = ComparisonDirection's order
COMPARE_TYPES = ["NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"]  # = ComparisonType's order
REDUCE_PRECISION_ATTRS = [(5, 10), (8, 7), (4, 3), (5, 2), (8, 23), (11, 52), (3, 4), (2, 1),
                          (1, 0), (6, 30)]

BACKEND = backend.get_backend()
DEVICE = BACKEND.devices()[0]
# The options jax.jit compiles with (the defaults of a bare CompileOptions differ: for one, they
# make maximum/minimum ignore NaN).
COMPILE_OPTIONS = compiler.get_compile_options(num_replicas=1, num_partitions=1)


def mlir_tensor(t, n):
  return f"tensor<{n}x{TYPES[t][1]}>"


def run_op(op, attrs, arg_types, result_type, args):
  """Runs one StableHLO op (generic form) on XLA:CPU; returns the result as a numpy array."""
  n = len(args[0])
  params = ", ".join(f"%a{i}: {mlir_tensor(t, n)}" for i, t in enumerate(arg_types))
  operands = ", ".join(f"%a{i}" for i in range(len(args)))
  attr_text = f" {{{attrs}}}" if attrs else ""
  in_types = ", ".join(mlir_tensor(t, n) for t in arg_types)
  out = mlir_tensor(result_type, n)
  text = (f"func.func public @main({params}) -> {out} {{\n"
          f"  %0 = \"stablehlo.{op}\"({operands}){attr_text} : ({in_types}) -> {out}\n"
          f"  return %0 : {out}\n}}\n")
  exe = BACKEND.compile_and_load(text, _jax.DeviceList((DEVICE,)), COMPILE_OPTIONS)
  bufs = [jax.device_put(a, DEVICE) for a in args]
  return np.asarray(exe.execute(bufs)[0])


def splitmix64(seed, n):
  """The same generator as the C++ tests' SplitMix64 (golden_util.h)."""
  with np.errstate(over="ignore"):
    idx = np.arange(1, n + 1, dtype=np.uint64)
    z = np.uint64(seed) + idx * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def bits_view(a):
  a = np.ascontiguousarray(a)
  return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[
      a.dtype.itemsize])


def unique_by_bits(a):
  seen = set()
  keep = []
  for i, v in enumerate(np.ascontiguousarray(a).view(np.uint8).reshape(len(a), -1)):
    k = v.tobytes()
    if k not in seen:
      seen.add(k)
      keep.append(i)
  return a[keep]


def int_edges(t):
  dt = np.dtype(TYPES[t][2])
  bits = dt.itemsize * 8
  info = np.iinfo(dt)
  vals = [0, 1, -1, 2, -2, 3, -7, bits - 1, bits, bits + 1, -bits, 100, info.max, info.min,
          info.max - 1, info.min + 1, 1 << (bits // 2), (1 << (bits - 1)) - 3]
  mask = (1 << bits) - 1
  return np.array([v & mask for v in vals], dtype=np.uint64).astype(
      {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]).view(dt)


FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -3.0, 0.1, 7.25,
               -100.75, 1e10, -1e10, 1e30, np.inf, -np.inf, np.nan, -np.nan, np.pi, -np.e, 1e-40,
               -1e-40, 1e-310, 65504.0, 65520.0, 448.0, 464.0, 480.0, 57344.0, 240.0, 15.5, 2.0**-127,
               16777217.0, 2.0**31, -2.0**31, 2.0**63, 2.0**64, 300.0, -129.0, 1e300]
BINARY_FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.5, 3.0, 1e30, np.inf, -np.inf, np.nan,
                      1e-40, 0.1]


def float_specials(t):
  dt = np.dtype(TYPES[t][2])
  fi = md.finfo(dt) if t in LOWF else np.finfo(dt)
  out = [fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal]
  return [float(v) for v in out]


def float_values(t, edges, specials=True):
  dt = np.dtype(TYPES[t][2])
  with np.errstate(all="ignore"):
    a = np.array(edges + (float_specials(t) if specials else []), dtype=np.float64).astype(dt)
  return unique_by_bits(a)


def random_floats(t, seed, n):
  dt = np.dtype(TYPES[t][2])
  r = splitmix64(seed, 3 * n)
  u = (r[:n] >> np.uint64(11)).astype(np.float64) / 2.0**53
  v = (r[n:2 * n] >> np.uint64(11)).astype(np.float64) / 2.0**53
  scale = np.exp2(np.floor(v * 24) - 12)
  mixed = (u * 2 - 1) * scale * 8
  if dt.itemsize <= 2:
    raw = r[2 * n:].astype(np.uint16 if dt.itemsize == 2 else np.uint8).view(dt)
  else:
    raw = r[2 * n:].astype(np.uint32 if dt.itemsize == 4 else np.uint64).view(dt)
  with np.errstate(all="ignore"):
    return np.concatenate([mixed.astype(dt), raw[: n // 4]])


def random_ints(t, seed, n):
  dt = np.dtype(TYPES[t][2])
  r = splitmix64(seed, n)
  small = (r[: n // 2] % np.uint64(200)).astype(np.int64) - 100
  full = r[n // 2:]
  return np.concatenate([small.astype(dt), full.astype(
      {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]).view(dt)])


def complex_values(t, values, seed, n_random):
  comp = COMPONENT[t]
  c = np.array(values, np.float64)
  re, im = np.meshgrid(c, c, indexing="ij")
  grid = (re.ravel() + 0j)
  grid.imag = im.ravel()
  r = random_floats(comp, seed, 2 * n_random)
  r = r[np.isfinite(r)][: 2 * (len(r[np.isfinite(r)]) // 2)]
  rand = r[0::2].astype(np.float64) + 1j * r[1::2].astype(np.float64)
  with np.errstate(all="ignore"):
    return np.concatenate([grid, rand]).astype(TYPES[t][2])


def unary_set(t):
  dt = np.dtype(TYPES[t][2])
  if t == "pred":
    return np.array([False, True])
  if dt.itemsize == 1:
    return np.arange(256, dtype=np.uint8).view(dt)
  if t in INTS:
    return unique_by_bits(np.concatenate([int_edges(t), random_ints(t, 11, 64)]))
  if t in COMPLEX:
    return complex_values(t, [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e30,
                              1e-40, 0.1], 12, 64)
  n_random = 128 if t in ("f16", "bf16") else 96
  return unique_by_bits(np.concatenate([float_values(t, FLOAT_EDGES), random_floats(t, 13, n_random)]))


def binary_set(t):
  if t == "pred":
    return np.array([False, False, True, True]), np.array([False, True, False, True])
  if t in INTS:
    e = int_edges(t)
    r = random_ints(t, 21, 128)
  elif t in COMPLEX:
    e = complex_values(t, [0.0, -1.0, 2.5, np.inf, np.nan], 22, 0)[::2]
    e = np.concatenate([e, complex_values(t, [], 23, 8)])
    r = complex_values(t, [], 24, 128)
  else:
    e = float_values(t, BINARY_FLOAT_EDGES, specials=False)
    sp = float_specials(t)
    e = unique_by_bits(np.concatenate([e, float_values(t, [sp[0], sp[5]], specials=False)]))
    r = random_floats(t, 25, 128)
  a = np.repeat(e, len(e))
  b = np.tile(e, len(e))
  half = len(r) // 2
  return np.concatenate([a, r[:half]]), np.concatenate([b, r[half: 2 * half]])


def ternary_set(t):
  """(pred, a, b) for select and (min, operand, max) for clamp."""
  a, b = binary_set(t)
  n = len(a)
  p = np.array([(i * 7 + 3) % 5 < 2 for i in range(n)])
  if t == "pred":
    lo = np.array([0, 0, 0, 0, 1, 1, 1, 1], bool)
    x = np.array([0, 0, 1, 1, 0, 0, 1, 1], bool)
    hi = np.array([0, 1, 0, 1, 0, 1, 0, 1], bool)
  else:
    e = int_edges(t)[[0, 1, 2, 5, 12, 13]] if t in INTS else (
        float_values(t, [0.0, -0.0, 1.0, -1.0, np.inf, np.nan, -3.0], specials=False)
        if t in FLOATS else None)
    if e is None:
      lo = x = hi = a[:0]
    else:
      lo = np.repeat(e, len(e) * len(e))
      x = np.tile(np.repeat(e, len(e)), len(e))
      hi = np.tile(e, len(e) * len(e))
  return (p, a, b), (lo, x, hi)


def b64(a):
  """Base64 of the little-endian element bytes (golden_util.h decodes it)."""
  return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()


def c_string(s, indent="    "):
  """Splits a long string into adjacent C string literals of at most 96 columns."""
  width = 96 - len(indent) - 2
  parts = [s[i: i + width] for i in range(0, len(s), width)] or [""]
  return "\n".join(f'{indent}"{p}"' for p in parts)


HEADER = ("// Generated by testdata/gen_goldens.py from XLA:CPU (jaxlib {jaxlib}, ml_dtypes {md}).\n"
          "// Do not edit; regenerate (see the script's docstring).\n")


def header():
  import jaxlib
  return HEADER.format(jaxlib=jaxlib.__version__, md=md.__version__)


class Writer:
  def __init__(self, name):
    self.path = os.path.join(OUT_DIR, name)
    self.lines = [header()]

  def row(self, fields, fields_b64):
    head = ", ".join(str(f) for f in fields)
    body = ",\n".join(c_string(h) for h in fields_b64)
    self.lines.append(f"{{{head},\n{body}}},")

  def close(self):
    with open(self.path, "w") as f:
      f.write("\n".join(self.lines) + "\n")
    print("wrote", self.path, os.path.getsize(self.path), "bytes")


def write_inputs(sets):
  w = Writer("golden_inputs.inc")
  w.lines.append("// {type, kind (1 unary, 2 binary, 3 select, 4 clamp), n, b64 0, b64 1, b64 2}")
  for (t, kind), arrays in sets.items():
    arrays = list(arrays) + [np.zeros(0, np.uint8)] * (3 - len(arrays))
    w.row([TYPES[t][0], kind, len(arrays[0]) if kind != 3 else len(arrays[1])],
          [b64(a) for a in arrays])
  w.close()


def result_type(op, t):
  if op == "is_finite":
    return "pred"
  if op in ("abs", "real", "imag") and t in COMPLEX:
    return COMPONENT[t]
  return t


def gen_ops():
  sets = {}
  for t in ALL:
    sets[(t, 1)] = (unary_set(t),)
    sets[(t, 2)] = binary_set(t)
    sel, clamp = ternary_set(t)
    sets[(t, 3)] = sel
    if len(clamp[0]):
      sets[(t, 4)] = clamp
  write_inputs(sets)
  w = Writer("golden_ops.inc")
  w.lines.append("// {op, result type, operand type, attr, input kind, expected base64}")

  def emit(name, rt, t, attr, kind, out):
    w.row([f'"{name}"', TYPES[rt][0], TYPES[t][0], attr, kind], [b64(out)])

  for name, (op, types) in UNARY.items():
    for t in types:
      rt = result_type(name, t)
      emit(name, rt, t, 0, 1, run_op(op, "", [t], rt, sets[(t, 1)]))
  for name, (op, types) in BINARY.items():
    for t in types:
      emit(name, t, t, 0, 2, run_op(op, "", [t, t], t, sets[(t, 2)]))
  for t in ALL:
    cts = (["FLOAT", "TOTALORDER"] if t in FLOATS else ["FLOAT"] if t in COMPLEX else
           ["SIGNED"] if t in SINT else ["UNSIGNED"])
    dirs = DIRECTIONS[:2] if t in COMPLEX else DIRECTIONS
    for ct in cts:
      for d in dirs:
        attrs = (f"comparison_direction = #stablehlo<comparison_direction {d}>, "
                 f"compare_type = #stablehlo<comparison_type {ct}>")
        attr = DIRECTIONS.index(d) | (COMPARE_TYPES.index(ct) << 8)
        emit("compare", "pred", t, attr, 2, run_op("compare", attrs, [t, t], "pred", sets[(t, 2)]))
  for t in ALL:
    p, a, b = sets[(t, 3)]
    emit("select", t, "pred", 0, 3, run_op("select", "", ["pred", t, t], t, [p, a, b]))
    if (t, 4) in sets:
      emit("clamp", t, t, 0, 4, run_op("clamp", "", [t, t, t], t, sets[(t, 4)]))
  for t in FLOATS:
    for e, m in REDUCE_PRECISION_ATTRS:
      attrs = f"exponent_bits = {e} : i32, mantissa_bits = {m} : i32"
      emit("reduce_precision", t, t, (e << 32) | m, 1,
           run_op("reduce_precision", attrs, [t], t, sets[(t, 1)]))
  for t, ct in COMPONENT.items():
    emit("complex", t, ct, 0, 2, run_op("complex", "", [ct, ct], t, sets[(ct, 2)]))
  w.close()
  return sets


def gen_convert(sets):
  w = Writer("golden_convert.inc")
  w.lines.append("// {op, result type, operand type, attr, input kind, expected base64}")
  for f in ALL:
    src = sets[(f, 1)][0]
    for t in ALL:
      out = run_op("convert", "", [f], t, [src])
      w.row(['"convert"', TYPES[t][0], TYPES[f][0], 0, 1], [b64(out)])
      fs = np.dtype(TYPES[f][2]).itemsize
      real = f not in ("pred", "c64", "c128") and t not in ("pred", "c64", "c128")
      if real and fs == np.dtype(TYPES[t][2]).itemsize:
        out = run_op("bitcast_convert", "", [f], t, [src])
        w.row(['"bitcast_convert"', TYPES[t][0], TYPES[f][0], 0, 1], [b64(out)])
  w.close()


# ---- codecs ---------------------------------------------------------------------------------

def chunk_hashes(out_bits, chunk):
  """Order-sensitive 64-bit hash per chunk; the same function as golden_util.h's ChunkHash."""
  v = out_bits.astype(np.uint64)
  n = len(v)
  res = []
  with np.errstate(over="ignore"):
    for s in range(0, n, chunk):
      x = v[s: s + chunk]
      i = np.arange(1, len(x) + 1, dtype=np.uint64)
      z = x * np.uint64(0x9E3779B97F4A7C15) + i * np.uint64(0xD6E8FEB86659FD93)
      z = (z ^ (z >> np.uint64(32))) * np.uint64(0xD6E8FEB86659FD93)
      z = z ^ (z >> np.uint64(32))
      res.append(int(np.sum(z, dtype=np.uint64)))
  return res


def f32_sweep(t):
  """Floats near every representable value of `t` (golden_util.h's F32Sweep builds the same)."""
  dt = np.dtype(TYPES[t][2])
  n = dt.itemsize * 8
  allv = np.arange(2**n, dtype=np.uint16 if n == 16 else np.uint8).view(dt).astype(np.float64)
  fin = np.unique(allv[np.isfinite(allv)])  # sorted, -0 and +0 merged
  fin = np.where(fin == 0, 0.0, fin)  # the merged zero as +0
  mids = (fin[:-1] + fin[1:]) / 2
  base = np.concatenate([fin, mids]).astype(np.float32).view(np.uint32)
  with np.errstate(over="ignore"):
    around = np.concatenate([base, base + np.uint32(1), base - np.uint32(1)])
  rnd = splitmix64(99, 1 << 16).astype(np.uint32)
  return np.concatenate([around, rnd]).view(np.float32)


def f64_sweep(t):
  dt = np.dtype(TYPES[t][2])
  n = dt.itemsize * 8
  allv = np.arange(2**n, dtype=np.uint16 if n == 16 else np.uint8).view(dt).astype(np.float64)
  fin = np.unique(allv[np.isfinite(allv)])
  fin = np.where(fin == 0, 0.0, fin)
  mids = (fin[:-1] + fin[1:]) / 2
  base = np.concatenate([fin, mids]).view(np.uint64)
  one = np.uint64(1)
  f32ulp = np.uint64(1 << 29)
  with np.errstate(over="ignore"):
    around = np.concatenate([base, base + one, base - one, base + f32ulp, base - f32ulp])
  rnd = splitmix64(98, 1 << 16)
  return np.concatenate([around, rnd]).view(np.float64)


def gen_codecs():
  w = Writer("golden_codecs.inc")
  w.lines.append("// {type, decode->f32 hashes, decode->f64, encode f32 sweep hashes, "
                 "encode f64 sweep hashes}")
  chunk = 4096
  for t in LOWF:
    dt = np.dtype(TYPES[t][2])
    n = dt.itemsize * 8
    allb = np.arange(2**n, dtype=np.uint16 if n == 16 else np.uint8).view(dt)
    to32 = run_op("convert", "", [t], "f32", [allb])
    to64 = run_op("convert", "", [t], "f64", [allb])
    s32 = f32_sweep(t)
    s64 = f64_sweep(t)
    e32 = bits_view(run_op("convert", "", ["f32"], t, [s32]))
    e64 = bits_view(run_op("convert", "", ["f64"], t, [s64]))
    h = lambda a: ",".join(f"{x:016x}" for x in chunk_hashes(bits_view(a), chunk))
    w.row([TYPES[t][0], len(s32), len(s64)],
          [h(to32), h(to64), h(e32), h(e64)])
    # ml_dtypes agreement, reported (README.md lists the known differences).
    with np.errstate(all="ignore"):
      ml32 = bits_view(allb.astype(np.float32))
      ml_e32 = bits_view(s32.astype(dt))
    print(f"  {t}: decode differs from ml_dtypes at {int(np.sum(ml32 != bits_view(to32)))} "
          f"of {2**n}; f32 encode at {int(np.sum(ml_e32 != e32))} of {len(s32)}")
  w.close()


def main():
  if len(sys.argv) > 1 and sys.argv[1] == "--codecs-only":
    gen_codecs()
    return
  sets = gen_ops()
  gen_convert(sets)
  gen_codecs()


if __name__ == "__main__":
  main()
