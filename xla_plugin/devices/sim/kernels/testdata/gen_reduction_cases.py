"""Generates reduction_cases.inc: test cases of the sim device's reduction kernels from JAX.

Each case is a small jitted function whose lowering holds exactly one stablehlo.reduce,
reduce_window, select_and_scatter or scatter whose operands are the function's arguments. The
generator reads the op's attributes and regions from the lowering (the regions become the
FusedElementwise steps of a ScalarComputation, with the combiner the compiler would recognize),
runs the function on jax's CPU backend (XLA:CPU) for the expected results, and writes C++ tables.
Cases named after a jnp/flax idiom (argmax, x.at[].add, segment_sum, vmap, max-pool gradient) also
assert that the idiom's own lowering holds the very same op (attributes and body).

Regenerate (from the repository root):
  JAX_PLATFORMS=cpu .venv/bin/python \
    xla_plugin/devices/sim/kernels/testdata/gen_reduction_cases.py \
    > xla_plugin/devices/sim/kernels/testdata/reduction_cases.inc
"""

import base64
import re
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax
from jax._src.lax import lax as lax_internal
from jax._src.lax import slicing
from jax._src.lax import windowed_reductions
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as sh

jax.config.update("jax_enable_x64", True)

BF16 = ml_dtypes.bfloat16
VERBOSE = "-v" in sys.argv

# numpy dtype -> ElementType enumerator.
DTYPES = {
    np.dtype(bool): "kPred",
    np.dtype(np.int8): "kS8",
    np.dtype(np.int16): "kS16",
    np.dtype(np.int32): "kS32",
    np.dtype(np.int64): "kS64",
    np.dtype(np.uint8): "kU8",
    np.dtype(np.uint16): "kU16",
    np.dtype(np.uint32): "kU32",
    np.dtype(np.uint64): "kU64",
    np.dtype(np.float16): "kF16",
    np.dtype(BF16): "kBF16",
    np.dtype(np.float32): "kF32",
    np.dtype(np.float64): "kF64",
    np.dtype(np.complex64): "kC64",
    np.dtype(np.complex128): "kC128",
    np.dtype(ml_dtypes.float8_e4m3fn): "kF8E4M3FN",
    np.dtype(ml_dtypes.float8_e5m2): "kF8E5M2",
    np.dtype(ml_dtypes.float8_e4m3fnuz): "kF8E4M3FNUZ",
    np.dtype(ml_dtypes.float8_e5m2fnuz): "kF8E5M2FNUZ",
    np.dtype(ml_dtypes.float8_e4m3b11fnuz): "kF8E4M3B11FNUZ",
    np.dtype(ml_dtypes.float8_e4m3): "kF8E4M3",
    np.dtype(ml_dtypes.float8_e3m4): "kF8E3M4",
}
FLOAT8 = [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fnuz,
          ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e4m3,
          ml_dtypes.float8_e3m4]
# MLIR element type -> (ElementType enumerator, numpy dtype).
MLIR_TYPES = {
    "i1": ("kPred", np.dtype(bool)),
    "i8": ("kS8", np.dtype(np.int8)),
    "i16": ("kS16", np.dtype(np.int16)),
    "i32": ("kS32", np.dtype(np.int32)),
    "i64": ("kS64", np.dtype(np.int64)),
    "ui8": ("kU8", np.dtype(np.uint8)),
    "ui16": ("kU16", np.dtype(np.uint16)),
    "ui32": ("kU32", np.dtype(np.uint32)),
    "ui64": ("kU64", np.dtype(np.uint64)),
    "f16": ("kF16", np.dtype(np.float16)),
    "bf16": ("kBF16", np.dtype(BF16)),
    "f32": ("kF32", np.dtype(np.float32)),
    "f64": ("kF64", np.dtype(np.float64)),
    "complex<f32>": ("kC64", np.dtype(np.complex64)),
    "complex<f64>": ("kC128", np.dtype(np.complex128)),
    "f8E4M3FN": ("kF8E4M3FN", np.dtype(ml_dtypes.float8_e4m3fn)),
    "f8E5M2": ("kF8E5M2", np.dtype(ml_dtypes.float8_e5m2)),
    "f8E4M3FNUZ": ("kF8E4M3FNUZ", np.dtype(ml_dtypes.float8_e4m3fnuz)),
    "f8E5M2FNUZ": ("kF8E5M2FNUZ", np.dtype(ml_dtypes.float8_e5m2fnuz)),
    "f8E4M3B11FNUZ": ("kF8E4M3B11FNUZ", np.dtype(ml_dtypes.float8_e4m3b11fnuz)),
    "f8E4M3": ("kF8E4M3", np.dtype(ml_dtypes.float8_e4m3)),
    "f8E3M4": ("kF8E3M4", np.dtype(ml_dtypes.float8_e3m4)),
}
BINARY_OPS = {
    "stablehlo.add": "kAdd",
    "stablehlo.subtract": "kSubtract",
    "stablehlo.multiply": "kMultiply",
    "stablehlo.maximum": "kMaximum",
    "stablehlo.minimum": "kMinimum",
    "stablehlo.and": "kAnd",
    "stablehlo.or": "kOr",
    "stablehlo.xor": "kXor",
}
COMBINERS = {
    "kAdd": "kAdd",
    "kMultiply": "kMultiply",
    "kMaximum": "kMaximum",
    "kMinimum": "kMinimum",
    "kAnd": "kAnd",
    "kOr": "kOr",
    "kXor": "kXor",
}
DIRECTIONS = ["EQ", "NE", "GE", "GT", "LE", "LT"]  # = ComparisonDirection's order
COMPARE_TYPES = ["NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"]  # = ComparisonType's
TARGETS = ("stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.select_and_scatter",
           "stablehlo.scatter")


def b64(array):
  return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()


def element_type(mlir_type):
  text = str(mlir_type)
  match = re.match(r"tensor<(?:[0-9]+x)*(.+)>$", text)
  return MLIR_TYPES[match.group(1) if match else text]


def find_target(fn, args):
  """The one target op in fn's lowering (and the module, kept alive)."""
  module = jax.jit(fn).lower(*args).compiler_ir("stablehlo")
  found = []

  def walk(op):
    if op.name in TARGETS:
      found.append(op)
    for region in op.regions:
      for block in region.blocks:
        for inner in block.operations:
          walk(inner.operation)

  walk(module.operation)
  assert len(found) == 1, [op.name for op in found]
  return module, found[0]


def constant_bytes(attr, dtype):
  text = str(attr)
  match = re.match(r"dense<(0x[0-9A-Fa-f]+)>", text)
  if match:
    return int(match.group(1), 16).to_bytes(dtype.itemsize, "little")
  if dtype == np.dtype(bool):
    return np.array(ir.DenseElementsAttr(attr)).astype(bool).tobytes()
  return np.array(ir.DenseElementsAttr(attr)).astype(dtype).tobytes()


def translate_region(region):
  """(inputs, steps, outputs, combiner) of a region, as the compiler would build them."""
  block = region.blocks[0]
  names = {}
  inputs = []
  steps = []
  for i, arg in enumerate(block.arguments):
    enum, _ = element_type(arg.type)
    inputs.append(enum)
    names[arg.get_name()] = len(steps)
    steps.append(dict(op="kInput", type=enum, operand_type="kInvalid", operands=[], attr=i,
                      constant=""))
  outputs = []
  for inner in block.operations:
    op = inner.operation
    name = op.name
    if name == "stablehlo.return":
      outputs = [names[v.get_name()] for v in op.operands]
      continue
    enum, dtype = element_type(op.results[0].type)
    operands = [names[v.get_name()] for v in op.operands]
    operand_type = "kInvalid"
    attr = 0
    constant = ""
    if name in BINARY_OPS:
      code = BINARY_OPS[name]
    elif name == "stablehlo.negate":
      code = "kNegate"
    elif name == "stablehlo.convert":
      code = "kConvert"
      operand_type = element_type(op.operands[0].type)[0]
    elif name == "stablehlo.select":
      code = "kSelect"
      operand_type = "kPred"  # operands[0]'s type, as fused_elementwise.h defines it.
    elif name == "stablehlo.compare":
      code = "kCompare"
      operand_type = element_type(op.operands[0].type)[0]
      direction = re.search(r"comparison_direction (\w+)",
                            str(op.attributes["comparison_direction"])).group(1)
      compare_type = "NOTYPE"
      if "compare_type" in op.attributes:
        compare_type = re.search(r"comparison_type (\w+)",
                                 str(op.attributes["compare_type"])).group(1)
      attr = DIRECTIONS.index(direction) | (COMPARE_TYPES.index(compare_type) << 8)
    elif name == "stablehlo.constant":
      code = "kConstant"
      constant = base64.b64encode(constant_bytes(op.attributes["value"], dtype)).decode()
    else:
      raise ValueError("op not translated: " + name)
    names[op.results[0].get_name()] = len(steps)
    steps.append(dict(op=code, type=enum, operand_type=operand_type, operands=operands,
                      attr=attr, constant=constant))
  combiner = "kGeneric"
  if len(inputs) == 2 and len(outputs) == 1 and inputs[0] == inputs[1]:
    out = steps[outputs[0]]
    if out["op"] == "kInput" and out["attr"] == 1:
      combiner = "kReplace"
    elif (out["op"] in COMBINERS and out["type"] == inputs[0] and
          sorted(out["operands"]) == [0, 1]):
      combiner = COMBINERS[out["op"]]
  return inputs, steps, outputs, combiner


def body_cpp(body):
  inputs, steps, outputs, combiner = body
  rows = []
  for s in steps:
    ops = s["operands"] + [-1] * (3 - len(s["operands"]))
    rows.append("{EwOp::%s, ElementType::%s, ElementType::%s, %d, %d, %d, %d, \"%s\"}" %
                (s["op"], s["type"], s["operand_type"], ops[0], ops[1], ops[2], s["attr"],
                 s["constant"]))
  return "{{%s}, {%s}, {%s}, Combiner::%s}" % (
      ", ".join("ElementType::" + t for t in inputs), ",\n      ".join(rows),
      ", ".join(str(o) for o in outputs), combiner)


def array_cpp(array):
  array = np.asarray(array)
  return "{ElementType::%s, {%s}, \"%s\"}" % (
      DTYPES[array.dtype], ", ".join(str(d) for d in array.shape), b64(array))


def ints(attr):
  return list(ir.DenseI64ArrayAttr(attr)) if attr is not None else []


def vec(values):
  return "{" + ", ".join(str(int(v)) for v in values) + "}"


def op_signature(op):
  """Attributes and bodies of an op, for comparing two lowerings."""
  attrs = {name: str(op.attributes[name]) for name in op.attributes}
  bodies = [translate_region(region) for region in op.regions]
  return attrs, bodies


class Writer:
  """Collects the cases of each kernel and prints the tables."""

  def __init__(self):
    self.reduce = []
    self.reduce_window = []
    self.select_and_scatter = []
    self.scatter = []

  def run(self, fn, args, idiom=None):
    if VERBOSE:
      print("case", file=sys.stderr)
    args = [np.asarray(a) for a in args]
    module, op = find_target(fn, args)
    for k, operand in enumerate(op.operands):
      assert isinstance(operand, ir.BlockArgument), (op.name, k)
      assert operand.arg_number == k, (op.name, k)
    if idiom is not None:
      idiom_fn, idiom_args = idiom
      _, idiom_op = find_target(idiom_fn, idiom_args)
      assert op.name == idiom_op.name
      assert op_signature(op) == op_signature(idiom_op), (op_signature(op),
                                                          op_signature(idiom_op))
    out = jax.jit(fn)(*args)
    if not isinstance(out, (tuple, list)):
      out = (out,)
    results = [np.asarray(o) for o in out]
    return op, args, results, module

  def add_reduce(self, name, fn, args, rtol=0.0, idiom=None):
    if VERBOSE:
      print(name, file=sys.stderr)
    op, args, results, _ = self.run(fn, args, idiom)
    assert op.name == "stablehlo.reduce"
    dims = ints(op.attributes["dimensions"])
    self.reduce.append('{"%s", %s,\n    %s,\n    {%s},\n    {%s}, %r}' % (
        name, vec(dims), body_cpp(translate_region(op.regions[0])),
        ", ".join(array_cpp(a) for a in args), ", ".join(array_cpp(r) for r in results), rtol))

  def add_reduce_window(self, name, fn, args, rtol=0.0, idiom=None):
    if VERBOSE:
      print(name, file=sys.stderr)
    op, args, results, _ = self.run(fn, args, idiom)
    assert op.name == "stablehlo.reduce_window"
    a = op.attributes
    get = lambda k: ints(a[k]) if k in a else []
    padding = []
    if "padding" in a:
      padding = np.array(ir.DenseIntElementsAttr(a["padding"])).reshape(-1, 2).tolist()
    row = '{"%s", %s, %s, %s, %s, {%s},\n    %s,\n    {%s},\n    {%s}, %r}'
    self.reduce_window.append(row % (
        name, vec(get("window_dimensions")), vec(get("window_strides")),
        vec(get("base_dilations")), vec(get("window_dilations")),
        ", ".join("{%d, %d}" % (lo, hi) for lo, hi in padding),
        body_cpp(translate_region(op.regions[0])),
        ", ".join(array_cpp(x) for x in args), ", ".join(array_cpp(r) for r in results), rtol))

  def add_select_and_scatter(self, name, fn, args, rtol=0.0, idiom=None):
    if VERBOSE:
      print(name, file=sys.stderr)
    op, args, results, _ = self.run(fn, args, idiom)
    assert op.name == "stablehlo.select_and_scatter"
    a = op.attributes
    get = lambda k: ints(a[k]) if k in a else []
    padding = []
    if "padding" in a:
      padding = np.array(ir.DenseIntElementsAttr(a["padding"])).reshape(-1, 2).tolist()
    row = '{"%s", %s, %s, {%s},\n    %s,\n    %s,\n    {%s},\n    {%s}, %r}'
    self.select_and_scatter.append(row % (
        name, vec(get("window_dimensions")), vec(get("window_strides")),
        ", ".join("{%d, %d}" % (lo, hi) for lo, hi in padding),
        body_cpp(translate_region(op.regions[0])), body_cpp(translate_region(op.regions[1])),
        ", ".join(array_cpp(x) for x in args), ", ".join(array_cpp(r) for r in results), rtol))

  def add_scatter(self, name, fn, args, rtol=0.0, idiom=None):
    if VERBOSE:
      print(name, file=sys.stderr)
    op, args, results, _ = self.run(fn, args, idiom)
    assert op.name == "stablehlo.scatter"
    d = sh.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
    flag = lambda k: k in op.attributes and str(op.attributes[k]) == "true"
    row = '{"%s", %s, %s, %s, %s, %s, %d, %s, %s,\n    %s,\n    {%s},\n    {%s}, %r}'
    self.scatter.append(row % (
        name, vec(d.update_window_dims), vec(d.inserted_window_dims), vec(d.input_batching_dims),
        vec(d.scatter_indices_batching_dims), vec(d.scattered_dims_to_operand_dims),
        d.index_vector_dim, str(flag("indices_are_sorted")).lower(),
        str(flag("unique_indices")).lower(), body_cpp(translate_region(op.regions[0])),
        ", ".join(array_cpp(x) for x in args), ", ".join(array_cpp(r) for r in results), rtol))

  def print(self):
    print("// Generated by gen_reduction_cases.py; do not edit (see its docstring to regenerate).")
    for name, rows in (("kReduceCases", self.reduce),
                       ("kReduceWindowCases", self.reduce_window),
                       ("kSelectAndScatterCases", self.select_and_scatter),
                       ("kScatterCases", self.scatter)):
      print("const std::vector<%sCase>& %s() {" % (name[1:-5], name))
      print("  static const auto* cases = new std::vector<%sCase>{" % name[1:-5])
      for row in rows:
        print("  " + row + ",")
      print("  };")
      print("  return *cases;")
      print("}")
      print()


RNG = np.random.default_rng(20261204)


def normal(shape, dtype=np.float32):
  return RNG.standard_normal(shape).astype(dtype)


def small_ints(shape, dtype, low=-4, high=5):
  return RNG.integers(low, high, size=shape).astype(dtype)


def scalar(value, dtype):
  return np.array(value, dtype=dtype)


def reduce_fn(op, dims):
  return lambda x, init: lax.reduce(x, init, op, dims)


def argmax_body(a, b):
  """The body jnp.argmax's reduce has (values, then indices)."""
  (av, ai), (bv, bi) = a, b
  pick_a = lax.bitwise_or(lax.gt(av, bv), lax.ne(av, av))
  pick_a_index = lax.bitwise_or(pick_a, lax.bitwise_and(lax.eq(av, bv), lax.lt(ai, bi)))
  return lax.select(pick_a, av, bv), lax.select(pick_a_index, ai, bi)


def argmin_body(a, b):
  (av, ai), (bv, bi) = a, b
  pick_a = lax.bitwise_or(lax.lt(av, bv), lax.ne(av, av))
  pick_a_index = lax.bitwise_or(pick_a, lax.bitwise_and(lax.eq(av, bv), lax.lt(ai, bi)))
  return lax.select(pick_a, av, bv), lax.select(pick_a_index, ai, bi)


def iota_along(shape, axis, dtype=np.int64):
  return np.broadcast_to(
      np.arange(shape[axis], dtype=dtype).reshape([-1 if d == axis else 1
                                                    for d in range(len(shape))]),
      shape).copy()


def add_reduce_cases(w):
  x = normal((3, 4))
  # Sums: innermost, outer, middle, several groups, whole arrays; init applied once.
  w.add_reduce("sum_f32_inner", reduce_fn(lax.add, (1,)), [x, scalar(0, np.float32)], 1e-6)
  w.add_reduce("sum_f32_outer", reduce_fn(lax.add, (0,)), [x, scalar(0, np.float32)], 1e-6)
  x3 = normal((4, 5, 6))
  w.add_reduce("sum_f32_middle", reduce_fn(lax.add, (1,)), [x3, scalar(0, np.float32)], 1e-6)
  w.add_reduce("sum_f32_dims_0_2", reduce_fn(lax.add, (0, 2)), [x3, scalar(0, np.float32)], 1e-6)
  w.add_reduce("sum_f32_dims_2_0", reduce_fn(lax.add, (2, 0)), [x3, scalar(0, np.float32)], 1e-6)
  w.add_reduce("sum_f32_dims_0_1", reduce_fn(lax.add, (0, 1)), [x3, scalar(0, np.float32)], 1e-6)
  x4 = normal((3, 4, 5, 2))
  w.add_reduce("sum_f32_dims_1_3", reduce_fn(lax.add, (1, 3)), [x4, scalar(0, np.float32)], 1e-6)
  w.add_reduce("sum_f32_all_1000", reduce_fn(lax.add, (0,)),
               [normal((1000,)), scalar(0, np.float32)], 1e-5)
  w.add_reduce("sum_f32_all_2d", reduce_fn(lax.add, (0, 1)),
               [normal((37, 53)), scalar(0, np.float32)], 1e-5)
  w.add_reduce("sum_f32_outer_300x70", reduce_fn(lax.add, (0,)),
               [normal((300, 70)), scalar(0, np.float32)], 1e-5)
  w.add_reduce("sum_f32_init_5", reduce_fn(lax.add, (1,)), [x, scalar(5, np.float32)], 1e-6)
  w.add_reduce("sum_f32_init_5_outer", reduce_fn(lax.add, (0,)), [x, scalar(5, np.float32)],
               1e-6)
  # Nothing to combine: XLA returns the input and drops the init value (it assumes an identity;
  # the kernel applies it once, see reduction_test.cc), so these use identities.
  w.add_reduce("sum_f32_rank0", reduce_fn(lax.add, ()),
               [scalar(2.5, np.float32), scalar(0, np.float32)])
  w.add_reduce("sum_f32_no_dims", reduce_fn(lax.add, ()), [x, scalar(0, np.float32)])
  w.add_reduce("max_f32_size1_dims", reduce_fn(lax.max, (0, 2)),
               [normal((1, 3, 1)), scalar(-np.inf, np.float32)])
  w.add_reduce("sum_f32_empty_reduced", reduce_fn(lax.add, (1,)),
               [np.zeros((3, 0), np.float32), scalar(7, np.float32)])
  w.add_reduce("sum_f32_empty_kept", reduce_fn(lax.add, (1,)),
               [np.zeros((0, 3), np.float32), scalar(7, np.float32)])
  # jnp idioms: the same op as jnp's own lowering.
  w.add_reduce("jnp_sum_axis1", reduce_fn(lax.add, (1,)), [x, scalar(0, np.float32)], 1e-6,
               idiom=(lambda x: jnp.sum(x, axis=1), [x]))
  w.add_reduce("jnp_max_axis0", reduce_fn(lax.max, (0,)), [x, scalar(-np.inf, np.float32)],
               idiom=(lambda x: jnp.max(x, axis=0), [x]))
  xb = x > 0
  w.add_reduce("jnp_any_axis0", reduce_fn(lax.bitwise_or, (0,)), [xb, scalar(False, bool)],
               idiom=(lambda x: jnp.any(x, axis=0), [xb]))
  w.add_reduce("jnp_all_axis1", reduce_fn(lax.bitwise_and, (1,)), [xb, scalar(True, bool)],
               idiom=(lambda x: jnp.all(x, axis=1), [xb]))
  w.add_reduce("pred_xor", reduce_fn(lax.bitwise_xor, (0,)),
               [RNG.integers(0, 2, (5, 7)).astype(bool), scalar(False, bool)])
  # Floats: maximum/minimum with NaN, -0, infinities.
  special = np.array([[1.0, -0.0, 0.0, np.nan, 2.0], [-0.0, 0.0, -np.inf, 3.0, np.inf],
                      [0.0, -0.0, 5.0, -1.0, np.nan]], np.float32)
  for axis in (0, 1):
    w.add_reduce("max_f32_special_%d" % axis, reduce_fn(lax.max, (axis,)),
                 [special, scalar(-np.inf, np.float32)])
    w.add_reduce("min_f32_special_%d" % axis, reduce_fn(lax.min, (axis,)),
                 [special, scalar(np.inf, np.float32)])
  w.add_reduce("prod_f32", reduce_fn(lax.mul, (1,)), [normal((4, 9)), scalar(1, np.float32)],
               1e-6)
  # Integers: wrap-around sums and products, signed/unsigned max/min.
  for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
    info = np.iinfo(dtype)
    big = RNG.integers(info.min, info.max, size=(6, 17), dtype=dtype, endpoint=True)
    name = np.dtype(dtype).name
    w.add_reduce("sum_%s_wraps" % name, reduce_fn(lax.add, (1,)), [big, scalar(3, dtype)])
    w.add_reduce("sum_%s_outer" % name, reduce_fn(lax.add, (0,)), [big, scalar(0, dtype)])
    w.add_reduce("prod_%s" % name, reduce_fn(lax.mul, (1,)), [big, scalar(1, dtype)])
    w.add_reduce("max_%s" % name, reduce_fn(lax.max, (0,)), [big, scalar(info.min, dtype)])
    w.add_reduce("min_%s" % name, reduce_fn(lax.min, (1,)), [big, scalar(info.max, dtype)])
    ones = -1 if info.min < 0 else info.max
    w.add_reduce("and_%s" % name, reduce_fn(lax.bitwise_and, (1,)), [big, scalar(ones, dtype)])
    w.add_reduce("or_%s" % name, reduce_fn(lax.bitwise_or, (0,)), [big, scalar(0, dtype)])
    w.add_reduce("xor_%s" % name, reduce_fn(lax.bitwise_xor, (1,)), [big, scalar(0, dtype)])
  # Low-precision floats: small integers sum exactly in any order; max/min exact.
  for dtype in (np.float16, BF16):
    name = np.dtype(dtype).name
    w.add_reduce("sum_%s_small_ints" % name, reduce_fn(lax.add, (1,)),
                 [small_ints((5, 12), dtype), scalar(1, dtype)])
    w.add_reduce("sum_%s_outer" % name, reduce_fn(lax.add, (0,)),
                 [small_ints((5, 12), dtype), scalar(0, dtype)])
    w.add_reduce("max_%s" % name, reduce_fn(lax.max, (0,)),
                 [normal((7, 5), dtype), scalar(-np.inf, dtype)])
    w.add_reduce("min_%s" % name, reduce_fn(lax.min, (1,)),
                 [normal((7, 5), dtype), scalar(np.inf, dtype)])
    # Rounding after each step: XLA adds 1 to 2048 (f16; bf16: 256) four times and stays at
    # 2048; pairwise the ones sum to 4 first (2052): the order difference, within 2 ulps.
    w.add_reduce("sum_%s_rounding_order" % name, reduce_fn(lax.add, (0,)),
                 [np.array([1, 1, 1, 1], dtype), scalar(2048 if dtype == np.float16 else 256,
                                                        dtype)],
                 2.0 ** -8 if dtype == np.float16 else 2.0 ** -5)
  # Denormals: XLA:CPU reads them as zero (and flushes results); maximum returns them flushed.
  tiny = np.array([[1e-39, -2e-39, 3e-40, 1.0], [1e-45, 1e-38, -1e-38, -0.0],
                   [-1e-39, -1e-40, 0.0, -1e-45]], np.float32)
  w.add_reduce("sum_f32_denormals", reduce_fn(lax.add, (1,)), [tiny, scalar(0, np.float32)])
  w.add_reduce("sum_f32_denormals_init", reduce_fn(lax.add, (0,)),
               [tiny, scalar(1e-39, np.float32)])
  w.add_reduce("max_f32_denormals", reduce_fn(lax.max, (0,)), [tiny, scalar(-np.inf, np.float32)])
  w.add_reduce("min_f32_denormals", reduce_fn(lax.min, (1,)), [tiny, scalar(np.inf, np.float32)])
  w.add_reduce("sum_f64_denormals", reduce_fn(lax.add, (0,)),
               [np.array([1e-310, 2e-310, 1.0], np.float64), scalar(0, np.float64)])
  w.add_reduce("sum_bf16_denormals", reduce_fn(lax.add, (1,)),
               [tiny.astype(BF16), scalar(0, BF16)])
  w.add_reduce("max_bf16_denormals", reduce_fn(lax.max, (0,)),
               [tiny.astype(BF16), scalar(-np.inf, BF16)])
  # float8 types through the engine: maximum, and sums of small integers.
  for dtype in FLOAT8:
    name = np.dtype(dtype).name
    info = ml_dtypes.finfo(dtype)
    low = scalar(-np.inf, dtype) if info.dtype.name in ("float8_e5m2", "float8_e4m3",
                                                      "float8_e3m4") else scalar(info.min, dtype)
    w.add_reduce("max_%s" % name, reduce_fn(lax.max, (1,)), [normal((4, 6)).astype(dtype), low])
    w.add_reduce("sum_%s_small_ints" % name, reduce_fn(lax.add, (0,)),
                 [small_ints((3, 5), dtype, -2, 3), scalar(0, dtype)])
  w.add_reduce("sum_f64", reduce_fn(lax.add, (1,)), [normal((6, 50), np.float64),
                                                     scalar(0, np.float64)], 1e-12)
  w.add_reduce("max_f64", reduce_fn(lax.max, (0,)), [normal((6, 50), np.float64),
                                                     scalar(-np.inf, np.float64)])
  c64 = (normal((4, 6)) + 1j * normal((4, 6))).astype(np.complex64)
  w.add_reduce("sum_c64", reduce_fn(lax.add, (1,)), [c64, scalar(1 + 2j, np.complex64)], 1e-6)
  w.add_reduce("prod_c64", reduce_fn(lax.mul, (0,)), [c64, scalar(1, np.complex64)], 1e-5)
  c128 = (normal((4, 6), np.float64) + 1j * normal((4, 6), np.float64))
  w.add_reduce("sum_c128", reduce_fn(lax.add, (0,)), [c128, scalar(0, np.complex128)], 1e-12)
  # Variadic: argmax/argmin (ties pick the lowest index, NaN wins), and a pair of sums.
  values = np.array([[1, 3, 3, 0, -1], [2, 2, np.nan, 5, np.nan], [0, 0, 0, 0, 0],
                     [-np.inf, -np.inf, -5, -6, -5]], np.float32)
  for axis in (0, 1):
    idx = iota_along(values.shape, axis)
    w.add_reduce("argmax_f32_axis%d" % axis,
                 lambda v, i, v0, i0, axis=axis: lax.reduce((v, i), (v0, i0), argmax_body,
                                                            (axis,)),
                 [values, idx, scalar(-np.inf, np.float32), scalar(0, np.int64)],
                 idiom=(lambda v, axis=axis: jnp.argmax(v, axis=axis), [values]))
    w.add_reduce("argmin_f32_axis%d" % axis,
                 lambda v, i, v0, i0, axis=axis: lax.reduce((v, i), (v0, i0), argmin_body,
                                                            (axis,)),
                 [values, idx, scalar(np.inf, np.float32), scalar(0, np.int64)],
                 idiom=(lambda v, axis=axis: jnp.argmin(v, axis=axis), [values]))
  big = normal((40, 30))
  idx = iota_along(big.shape, 0)
  w.add_reduce("argmax_f32_40x30_axis0",
               lambda v, i, v0, i0: lax.reduce((v, i), (v0, i0), argmax_body, (0,)),
               [big, idx.astype(np.int32), scalar(-np.inf, np.float32), scalar(0, np.int32)])
  flat = normal((333,))
  w.add_reduce("argmax_f32_all",
               lambda v, i, v0, i0: lax.reduce((v, i), (v0, i0), argmax_body, (0,)),
               [flat, np.arange(333, dtype=np.int32), scalar(-np.inf, np.float32),
                scalar(0, np.int32)])
  bvals = small_ints((6, 9), BF16)
  w.add_reduce("argmax_bf16_axis1",
               lambda v, i, v0, i0: lax.reduce((v, i), (v0, i0), argmax_body, (1,)),
               [bvals, iota_along(bvals.shape, 1), scalar(-np.inf, BF16), scalar(0, np.int64)],
               idiom=(lambda v: jnp.argmax(v, axis=1), [bvals]))
  ia = small_ints((5, 8), np.int32, -100, 100)
  ib = small_ints((5, 8), np.int64, -100, 100)
  w.add_reduce("sum_pair_s32_s64",
               lambda a, b, a0, b0: lax.reduce((a, b), (a0, b0),
                                               lambda x, y: (x[0] + y[0], x[1] + y[1]), (0,)),
               [ia, ib, scalar(1, np.int32), scalar(2, np.int64)])
  w.add_reduce("argmax_empty_reduced",
               lambda v, i, v0, i0: lax.reduce((v, i), (v0, i0), argmax_body, (1,)),
               [np.zeros((3, 0), np.float32), np.zeros((3, 0), np.int32),
                scalar(-np.inf, np.float32), scalar(-1, np.int32)])


def rw(op, dims, strides, padding, base=None, dil=None):
  return lambda x, init: lax.reduce_window(x, init, op, dims, strides, padding,
                                           base_dilation=base, window_dilation=dil)


def add_reduce_window_cases(w):
  img = normal((2, 6, 7, 3))
  ninf = scalar(-np.inf, np.float32)
  zero = scalar(0, np.float32)
  w.add_reduce_window("max_pool_2x2_valid", rw(lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
                      [img, ninf])
  w.add_reduce_window("max_pool_3x3_s2_same", rw(lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                      [img, ninf])
  w.add_reduce_window("avg_pool_sum_3x3_same", rw(lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"),
                      [img, zero], 1e-6)
  w.add_reduce_window("sum_init5_padded", rw(lax.add, (1, 3), (1, 1), [(0, 0), (1, 1)]),
                      [normal((3, 4)), scalar(5, np.float32)], 1e-6)
  w.add_reduce_window("sum_base_dilation", rw(lax.add, (2,), (1,), [(0, 0)], base=(2,)),
                      [normal((5,)), scalar(5, np.float32)], 1e-6)
  w.add_reduce_window("sum_base_dilation_3_stride_2",
                      rw(lax.add, (3, 2), (2, 1), [(1, 2), (0, 1)], base=(3, 2)),
                      [normal((4, 3)), zero], 1e-6)
  w.add_reduce_window("max_window_dilation", rw(lax.max, (2, 3), (1, 2), [(1, 0), (2, 2)],
                                                dil=(2, 2)), [normal((5, 8)), ninf])
  w.add_reduce_window("sum_all_dilations", rw(lax.add, (2, 2), (3, 2), [(2, 1), (0, 3)],
                                              base=(2, 3), dil=(3, 2)),
                      [normal((4, 5)), zero], 1e-6)
  w.add_reduce_window("sum_negative_padding", rw(lax.add, (2,), (1,), [(-1, 1)]),
                      [normal((6,)), zero], 1e-6)
  w.add_reduce_window("max_negative_padding_2d", rw(lax.max, (2, 2), (1, 2), [(-1, -1), (1, -2)]),
                      [normal((6, 7)), ninf])
  # (XLA drops the init of one-element windows; identity init here, reduction_test.cc has 4.)
  w.add_reduce_window("sum_rank0", rw(lax.add, (), (), []), [scalar(3, np.float32),
                                                             scalar(0, np.float32)])
  w.add_reduce_window("sum_empty_input_padded", rw(lax.add, (1, 2), (1, 1), [(1, 1), (0, 0)]),
                      [np.zeros((0, 4), np.float32), scalar(7, np.float32)])
  w.add_reduce_window("sum_no_windows", rw(lax.add, (5,), (1,), "VALID"),
                      [normal((3,)), zero])
  # Cumulative windows (scans) as jnp/lax emit them.
  x = normal((3, 40))
  w.add_reduce_window("cumsum_axis1", rw(lax.add, (1, 40), (1, 1), [(0, 0), (39, 0)]), [x, zero],
                      1e-5, idiom=(lambda x: jnp.cumsum(x, axis=1), [x]))
  w.add_reduce_window("cumsum_axis0", rw(lax.add, (3, 1), (1, 1), [(2, 0), (0, 0)]), [x, zero],
                      1e-6, idiom=(lambda x: jnp.cumsum(x, axis=0), [x]))
  x3 = normal((4, 9, 5))
  w.add_reduce_window("cumsum_middle", rw(lax.add, (1, 9, 1), (1, 1, 1), [(0, 0), (8, 0), (0, 0)]),
                      [x3, zero], 1e-6, idiom=(lambda x: jnp.cumsum(x, axis=1), [x3]))
  w.add_reduce_window("cumsum_reverse", rw(lax.add, (1, 40), (1, 1), [(0, 0), (0, 39)]),
                      [x, zero], 1e-5,
                      idiom=(lambda x: lax.cumsum(x, axis=1, reverse=True), [x]))
  w.add_reduce_window("cumsum_reverse_middle",
                      rw(lax.add, (1, 9, 1), (1, 1, 1), [(0, 0), (0, 8), (0, 0)]), [x3, zero],
                      1e-6)
  w.add_reduce_window("cummax_axis0", rw(lax.max, (3, 1), (1, 1), [(2, 0), (0, 0)]), [x, ninf],
                      idiom=(lambda x: lax.cummax(x, axis=0), [x]))
  xi = small_ints((4, 30), np.int32, -1000, 1000)
  w.add_reduce_window("cumsum_s32", rw(lax.add, (1, 30), (1, 1), [(0, 0), (29, 0)]),
                      [xi, scalar(0, np.int32)], idiom=(lambda x: jnp.cumsum(x, axis=1), [xi]))
  w.add_reduce_window("cumprod_s32_reverse", rw(lax.mul, (1, 30), (1, 1), [(0, 0), (0, 29)]),
                      [xi, scalar(1, np.int32)])
  w.add_reduce_window("cumsum_longer_window", rw(lax.add, (1, 50), (1, 1), [(0, 0), (49, 5)]),
                      [x, zero], 1e-5)
  w.add_reduce_window("sliding_sum_5", rw(lax.add, (1, 5), (1, 1), [(0, 0), (4, 0)]), [x, zero],
                      1e-5)
  # Other types.
  for dtype in (np.int8, np.uint8, np.int64, np.uint64):
    info = np.iinfo(dtype)
    v = RNG.integers(info.min, info.max, size=(5, 6), dtype=dtype, endpoint=True)
    name = np.dtype(dtype).name
    w.add_reduce_window("max_%s" % name, rw(lax.max, (2, 3), (1, 2), "SAME"),
                        [v, scalar(info.min, dtype)])
    w.add_reduce_window("sum_%s" % name, rw(lax.add, (3, 2), (2, 1), [(1, 1), (0, 1)]),
                        [v, scalar(0, dtype)])
  pred = RNG.integers(0, 2, (5, 6)).astype(bool)
  w.add_reduce_window("or_pred", rw(lax.bitwise_or, (2, 2), (1, 1), "SAME"),
                      [pred, scalar(False, bool)])
  for dtype in (np.float16, BF16):
    name = np.dtype(dtype).name
    w.add_reduce_window("max_pool_%s" % name, rw(lax.max, (2, 2), (2, 2), "VALID"),
                        [normal((6, 8), dtype), scalar(-np.inf, dtype)])
    w.add_reduce_window("sum_%s_small_ints" % name, rw(lax.add, (3,), (1,), "SAME"),
                        [small_ints((9,), dtype), scalar(0, dtype)])
  w.add_reduce_window("max_pool_f8e4m3fn", rw(lax.max, (2, 2), (2, 2), "VALID"),
                      [normal((4, 6)).astype(ml_dtypes.float8_e4m3fn),
                       scalar(-448, ml_dtypes.float8_e4m3fn)])
  w.add_reduce_window("cumsum_f32_denormals", rw(lax.add, (4,), (1,), [(3, 0)]),
                      [np.array([1e-39, 1e-39, 1.0, 1e-39], np.float32), zero])
  w.add_reduce_window("sum_f64", rw(lax.add, (2, 2), (1, 1), "VALID"),
                      [normal((4, 5), np.float64), scalar(0, np.float64)], 1e-12)
  c = (normal((6,)) + 1j * normal((6,))).astype(np.complex64)
  w.add_reduce_window("sum_c64", rw(lax.add, (3,), (1,), "SAME"), [c, scalar(0, np.complex64)],
                      1e-6)
  # Variadic: windowed argmax, and a generic prefix scan of (value, index) pairs.
  v = normal((4, 7))
  i = iota_along(v.shape, 1)
  i = i.astype(np.int32)
  w.add_reduce_window(
      "argmax_window",
      lambda v, i, v0, i0: lax.reduce_window((v, i), (v0, i0), argmax_body, (2, 3), (1, 2),
                                             [(0, 1), (1, 1)]),
      [v, i, ninf, scalar(-1, np.int32)])
  w.add_reduce_window(
      "argmax_prefix_scan",
      lambda v, i, v0, i0: lax.reduce_window((v, i), (v0, i0), argmax_body, (1, 7), (1, 1),
                                             [(0, 0), (6, 0)]),
      [v, i, ninf, scalar(-1, np.int32)])


def sas(select, scatter, dims, strides, padding):
  return lambda operand, source, init: windowed_reductions._select_and_scatter(
      operand, select, dims, strides, padding, source, init, scatter)


def max_pool_grad_idiom(x, dims, strides, padding):
  def loss(x):
    return jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, dims, strides, padding))
  return jax.grad(loss), [x]


def add_select_and_scatter_cases(w):
  x = normal((4, 6))
  w.add_select_and_scatter("max_pool_grad_2x2", sas(lax.ge, lax.add, (2, 2), (2, 2),
                                                    [(0, 0), (0, 0)]),
                           [x, np.ones((2, 3), np.float32), scalar(0, np.float32)],
                           idiom=max_pool_grad_idiom(x, (2, 2), (2, 2), "VALID"))
  src = normal((3, 3))
  w.add_select_and_scatter("max_pool_grad_3x3_s2_same",
                           sas(lax.ge, lax.add, (3, 3), (2, 2), [(1, 1), (1, 1)]),
                           [normal((6, 6)), src, scalar(0, np.float32)], 1e-6)
  w.add_select_and_scatter("overlapping_windows_add",
                           sas(lax.ge, lax.add, (3, 3), (1, 1), [(0, 0), (0, 0)]),
                           [normal((5, 6)), normal((3, 4)), scalar(0, np.float32)], 1e-6)
  ties = np.array([[1, 1, 2, 2], [1, 0, 2, 2], [3, 3, 3, 3], [3, 3, 3, 3]], np.float32)
  w.add_select_and_scatter("ties_ge_first", sas(lax.ge, lax.add, (2, 2), (2, 2), [(0, 0), (0, 0)]),
                           [ties, np.array([[10, 20], [30, 40]], np.float32),
                            scalar(0, np.float32)])
  w.add_select_and_scatter("ties_gt_last", sas(lax.gt, lax.add, (2, 2), (2, 2), [(0, 0), (0, 0)]),
                           [ties, np.array([[10, 20], [30, 40]], np.float32),
                            scalar(0, np.float32)])
  w.add_select_and_scatter("min_select_le", sas(lax.le, lax.add, (2, 3), (1, 2), [(1, 0), (1, 1)]),
                           [normal((4, 5)), normal((4, 3)), scalar(1, np.float32)], 1e-6)
  w.add_select_and_scatter("padding_never_selected",
                           sas(lax.ge, lax.add, (2,), (2,), [(1, 1)]),
                           [-np.arange(1, 5, dtype=np.float32),
                            np.array([10, 20, 30], np.float32), scalar(0, np.float32)])
  w.add_select_and_scatter("scatter_multiply",
                           sas(lax.ge, lax.mul, (2, 2), (1, 1), [(0, 0), (0, 0)]),
                           [normal((3, 3)), normal((2, 2)), scalar(1, np.float32)], 1e-6)
  w.add_select_and_scatter("scatter_generic",
                           sas(lax.ge, lambda a, b: a + b * b, (2,), (1,), [(0, 0)]),
                           [np.array([3, 1, 2, 5, 4], np.float32),
                            np.array([1, 2, 3, 4], np.float32), scalar(0.5, np.float32)])
  xi = small_ints((5, 5), np.int32, -50, 50)
  w.add_select_and_scatter("s32_max_grad", sas(lax.ge, lax.add, (2, 2), (1, 1), [(0, 1), (0, 1)]),
                           [xi, small_ints((5, 5), np.int32), scalar(0, np.int32)])
  xu = RNG.integers(0, 2**32, (4, 5), dtype=np.uint32, endpoint=False)
  w.add_select_and_scatter("u32_min_select_le",
                           sas(lax.le, lax.add, (2, 2), (1, 2), [(1, 0), (0, 1)]),
                           [xu, RNG.integers(0, 2**32, (4, 3), dtype=np.uint32),
                            scalar(5, np.uint32)])
  for dtype in (np.float16, BF16, np.float64):
    name = np.dtype(dtype).name
    w.add_select_and_scatter("max_pool_grad_%s" % name,
                             sas(lax.ge, lax.add, (2, 2), (2, 2), [(0, 0), (0, 0)]),
                             [normal((4, 4), dtype), small_ints((2, 2), dtype),
                              scalar(0, dtype)])
  # (XLA:CPU aborts on a rank-0 select_and_scatter; the C++ test has a rank-0 case by hand.)
  w.add_select_and_scatter("empty_operand", sas(lax.ge, lax.add, (1,), (1,), [(0, 0)]),
                           [np.zeros((0,), np.float32), np.zeros((0,), np.float32),
                            scalar(1, np.float32)])


def scatter_fn(kind, dnums, sorted_=False, unique=False, mode=lax.GatherScatterMode.FILL_OR_DROP):
  fns = {"add": lax.scatter_add, "set": lax.scatter, "max": lax.scatter_max,
         "min": lax.scatter_min, "mul": lax.scatter_mul}
  f = fns[kind]
  return lambda x, i, u: f(x, i, u, dnums, indices_are_sorted=sorted_, unique_indices=unique,
                           mode=mode)


def scatter_with(update, dnums):
  """A scatter whose update computation is `update` (not one of lax's scatter_* combiners)."""
  def fn(x, i, u):
    aval = jax.core.ShapedArray((), x.dtype)
    jaxpr, consts = lax_internal._reduction_jaxpr(update, aval)
    return slicing.scatter_p.bind(
        x, i, u, update_jaxpr=jaxpr, update_consts=consts, dimension_numbers=dnums,
        indices_are_sorted=False, unique_indices=False,
        mode=lax.GatherScatterMode.FILL_OR_DROP)
  return fn


def dn(update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
       operand_batching_dims=(), scatter_indices_batching_dims=()):
  return lax.ScatterDimensionNumbers(
      update_window_dims=update_window_dims, inserted_window_dims=inserted_window_dims,
      scatter_dims_to_operand_dims=scatter_dims_to_operand_dims,
      operand_batching_dims=operand_batching_dims,
      scatter_indices_batching_dims=scatter_indices_batching_dims)


def normalize(idx, size):
  idx = np.asarray(idx)
  return np.where(idx < 0, idx + size, idx)


def add_scatter_cases(w):
  x = normal((5, 4))
  rows = np.array([0, 2, 0, -1, 7])
  u = normal((5, 4))
  rows_dn = dn((1,), (0,), (0,))
  for kind in ("add", "set", "max", "min", "mul"):
    w.add_scatter("at_rows_%s" % kind, scatter_fn(kind, rows_dn),
                  [x, normalize(rows, 5)[:, None], u], 1e-6 if kind in ("add", "mul") else 0.0,
                  idiom=(lambda x, i, u, kind=kind: getattr(x.at[i], kind)(u), [x, rows, u]))
  cols = np.array([3, 0, 3])
  w.add_scatter("at_columns_add", scatter_fn("add", dn((0,), (1,), (1,))),
                [x, cols[:, None], normal((5, 3))], 1e-6,
                idiom=(lambda x, i, u: x.at[:, i].add(u), [x, cols, normal((5, 3))]))
  ij = np.array([[0, 1], [4, 3], [0, 1], [2, 2], [5, 0]])
  w.add_scatter("at_points_add", scatter_fn("add", dn((), (0, 1), (0, 1))),
                [x, ij, normal((5,))], 1e-6,
                idiom=(lambda x, i, j, u: x.at[i, j].add(u),
                       [x, ij[:, 0], ij[:, 1], normal((5,))]))
  zeros = np.zeros((6,), np.float32)
  seg = np.array([0, 1, 1, 3, 2, 0, 5, 9])
  data = normal((8,))
  w.add_scatter("segment_sum", scatter_fn("add", dn((), (0,), (0,))),
                [zeros, seg[:, None], data], 1e-6,
                idiom=(lambda d, s: jax.ops.segment_sum(d, s, 6), [data, seg]))
  w.add_scatter("zeros_at_set", scatter_fn("set", dn((), (0,), (0,))),
                [zeros, np.array([[4], [1], [4]]), np.array([1, 2, 3], np.float32)],
                idiom=(lambda i, u: jnp.zeros(6, jnp.float32).at[i].set(u),
                       [np.array([4, 1, 4]), np.array([1, 2, 3], np.float32)]))
  # vmap over a scatter: batching dims.
  xb = normal((3, 4))
  ib = np.array([[0], [2], [1]])
  w.add_scatter("vmap_at_max", scatter_fn("max", dn((), (1,), (1,), (0,), (0,)), True, True),
                [xb, ib, normal((3,))],
                idiom=(jax.vmap(lambda x, i, u: x.at[i].max(u)), [xb, ib[:, 0], normal((3,))]))
  xb3 = normal((2, 5, 3))
  ib3 = np.array([[[1], [4], [1]], [[0], [0], [3]]])
  ub3 = normal((2, 3, 3))
  w.add_scatter("vmap_rows_add", scatter_fn("add", dn((2,), (1,), (1,), (0,), (0,))),
                [xb3, ib3, ub3], 1e-6,
                idiom=(jax.vmap(lambda x, i, u: x.at[i].add(u)), [xb3, ib3[:, :, 0], ub3]))
  # Windows partly out of bounds are skipped whole; index_vector_dim first; scalar indices.
  w.add_scatter("partial_window_skipped", scatter_fn("add", dn((1,), (), (0,))),
                [zeros[:5], np.array([[0], [3], [4], [-1]]), normal((4, 2))], 1e-6)
  w.add_scatter("index_vector_swapped", scatter_fn("add", dn((), (0, 1), (1, 0))),
                [x, np.array([[1, 4], [0, 2], [3, 0]]), normal((3,))], 1e-6)
  # (lax.scatter refuses rank-0 indices; the C++ test derives index_vector_dim = rank cases.)
  w.add_scatter("window_2d_into_3d", scatter_fn("add", dn((1, 2), (1,), (1, 0))),
                [normal((4, 5, 3)), np.array([[2, 1], [0, 0], [3, 4]]), normal((3, 2, 3))],
                1e-6)
  w.add_scatter("unique_sorted", scatter_fn("set", dn((1,), (0,), (0,)), True, True),
                [x, np.array([[1], [3]]), normal((2, 4))])
  # (XLA:CPU fails to compile a scatter into a rank-0 operand; reduction_test.cc has one.)
  w.add_scatter("empty_updates", scatter_fn("add", dn((1,), (0,), (0,))),
                [x, np.zeros((0, 1), np.int32), np.zeros((0, 4), np.float32)])
  # Types: values and indices.
  for dtype in (np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float64, np.float16, BF16):
    name = np.dtype(dtype).name
    base = small_ints((6,), dtype, 0, 5)
    w.add_scatter("add_%s" % name, scatter_fn("add", dn((), (0,), (0,))),
                  [base, np.array([[1], [5], [1], [0]]), small_ints((4,), dtype, 0, 5)])
    w.add_scatter("max_%s" % name, scatter_fn("max", dn((), (0,), (0,))),
                  [base, np.array([[1], [5], [1], [0]]), small_ints((4,), dtype, 0, 9)])
  pred_dn = dn((), (0,), (0,))
  pred_args = [np.array([True, False, False]), np.array([[2], [0], [1]]),
               np.array([False, True, False])]
  w.add_scatter("set_pred", scatter_fn("set", pred_dn), pred_args)
  w.add_scatter("max_pred", scatter_fn("max", pred_dn), pred_args)
  w.add_scatter("min_pred", scatter_fn("min", pred_dn), pred_args)
  w.add_scatter("add_f32_denormals", scatter_fn("add", dn((), (0,), (0,))),
                [np.array([1e-39, 0, 1], np.float32), np.array([[0], [1], [1], [2]]),
                 np.array([1e-39, 2e-39, 3e-39, 1e-39], np.float32)])
  w.add_scatter("max_f8e5m2", scatter_fn("max", dn((), (0,), (0,))),
                [normal((4,)).astype(ml_dtypes.float8_e5m2), np.array([[1], [3], [1]]),
                 normal((3,)).astype(ml_dtypes.float8_e5m2)])
  w.add_scatter("add_c64", scatter_fn("add", dn((), (0,), (0,))),
                [np.zeros((3,), np.complex64), np.array([[1], [2], [1]]),
                 (normal((3,)) + 1j * normal((3,))).astype(np.complex64)], 1e-6)
  for itype in (np.int8, np.uint8, np.int16, np.uint32, np.int64, np.uint64):
    name = np.dtype(itype).name
    indices = np.array([[1], [3], [200 if itype in (np.uint8, np.uint32, np.uint64) else -2]],
                       itype)
    w.add_scatter("indices_%s" % name, scatter_fn("add", dn((1,), (0,), (0,))),
                  [x, indices, normal((3, 4))], 1e-6)
  w.add_scatter("indices_u64_huge", scatter_fn("add", dn((1,), (0,), (0,))),
                [x, np.array([[2], [2**63 + 1], [2**64 - 1]], np.uint64), normal((3, 4))],
                1e-6)
  w.add_scatter("generic_update", scatter_with(lambda a, b: a * 2 + b, dn((), (0,), (0,))),
                [np.arange(4, dtype=np.float32), np.array([[1], [3], [1]]),
                 np.array([1, 2, 3], np.float32)])
  w.add_scatter("generic_update_s32", scatter_with(lambda a, b: a - b, dn((1,), (0,), (0,))),
                [small_ints((4, 3), np.int32), np.array([[1], [3], [1]]),
                 small_ints((3, 3), np.int32)])


def main():
  w = Writer()
  add_reduce_cases(w)
  add_reduce_window_cases(w)
  add_select_and_scatter_cases(w)
  add_scatter_cases(w)
  w.print()


if __name__ == "__main__":
  sys.exit(main())
