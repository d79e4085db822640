// Differential cases of the elementwise ops (see README.md): unary and binary math, compare,
// select, clamp, convert, bitcast_convert, reduce_precision and fused chains with broadcasts.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/differential/case_helpers.h"

namespace pjrtkit {
namespace sim {
namespace differential {
namespace {

// Cases of `op` on operands of `operand_types` with random inputs following `policies` (one per
// operand, the last repeated), one per elementwise shape.
// `fix` (optional) adjusts the drawn inputs.
std::vector<DiffCase> OpCases(const std::string& op, const std::vector<ElementType>& operand_types,
                              ElementType result, const std::vector<ValuePolicy>& policies,
                              const Tolerance& tolerance, const std::string& attributes = "",
                              const std::string& label = "",
                              void (*fix)(std::vector<HostTensor>*) = nullptr) {
  std::vector<DiffCase> cases;
  for (const std::vector<int64_t>& dims : ElementwiseShapes()) {
    DiffCase c;
    c.op = op;
    c.what = ShapeText(operand_types[0], dims) + label;
    ValueGenerator values(SeedOf(c.op + c.what));
    c.program = ElementwiseProgram("stablehlo." + op, operand_types, result, dims, attributes);
    for (size_t i = 0; i < operand_types.size(); ++i) {
      c.inputs.push_back(values.Random(ArrayType{operand_types[i], dims},
                                       policies[std::min(i, policies.size() - 1)]));
    }
    if (fix != nullptr) fix(&c.inputs);
    c.tolerances = {tolerance};
    c.elementwise = true;
    cases.push_back(std::move(c));
  }
  return cases;
}

// Signed division and remainder of the type's minimum by -1 overflow: the interpreter's
// (implementation-defined) result is a hardware trap, so those divisors become 1.
void NoDivisionOverflow(std::vector<HostTensor>* inputs) {
  const HostTensor& lhs = (*inputs)[0];
  HostTensor& rhs = (*inputs)[1];
  if (!IsSigned(lhs.type)) return;
  const int width = ElementTypeBits(lhs.type);
  const uint64_t min = uint64_t{1} << (width - 1);
  const uint64_t minus_one = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  for (int64_t i = 0; i < NumElements(lhs); ++i) {
    if (ElementBits(lhs, i) == min && ElementBits(rhs, i) == minus_one) SetElementBits(&rhs, i, 1);
  }
}

void Append(std::vector<DiffCase>* all, std::vector<DiffCase> more) {
  for (DiffCase& c : more) all->push_back(std::move(c));
}

// The result type of a unary op on `type`.
ElementType UnaryResult(const std::string& op, ElementType type) {
  if (op == "is_finite") return ElementType::kPred;
  if (op == "abs" || op == "real" || op == "imag") return ComponentType(type);
  return type;
}

TEST(ElementwiseDiffTest, UnaryExactOps) {
  std::vector<DiffCase> cases;
  // Ops that move or test bits: every value, denormals included.
  for (const char* op : {"abs", "negate"}) {
    const std::vector<ElementType> types =
        std::string(op) == "abs" ? Types({SignedTypes(), FloatTypes(), ComplexTypes()})
                                 : Types({IntegerTypes(), FloatTypes(), ComplexTypes()});
    for (ElementType t : types) {
      // Complex abs computes |z|: rounded, with an ulp tolerance below.
      if (std::string(op) == "abs" && IsComplex(t)) continue;
      Append(&cases, OpCases(op, {t}, UnaryResult(op, t), {BitValues()}, Exact()));
    }
  }
  for (ElementType t : Types({{ElementType::kPred}, IntegerTypes()})) {
    Append(&cases, OpCases("not", {t}, t, {BitValues()}, Exact()));
  }
  for (ElementType t : IntegerTypes()) {
    Append(&cases, OpCases("popcnt", {t}, t, {BitValues()}, Exact()));
    Append(&cases, OpCases("count_leading_zeros", {t}, t, {BitValues()}, Exact()));
  }
  for (ElementType t : Types({FloatTypes(), ComplexTypes()})) {
    for (const char* op : {"real", "imag"}) {
      Append(&cases, OpCases(op, {t}, UnaryResult(op, t), {BitValues()}, Exact()));
    }
  }
  for (ElementType t : FloatTypes()) {
    Append(&cases, OpCases("is_finite", {t}, ElementType::kPred, {BitValues()}, Exact()));
    // Rounding ops and sign read denormals as zero on the sim (XLA:CPU's denormals-are-zero):
    // denormal inputs are left out (README: denormals).
    for (const char* op : {"floor", "ceil", "round_nearest_afz", "round_nearest_even", "sign"}) {
      Append(&cases, OpCases(op, {t}, t, {AnyValues()}, Exact()));
    }
    Append(&cases, OpCases("sqrt", {t}, t, {AnyValues()}, ExactFlushed()));
  }
  for (ElementType t : SignedTypes()) Append(&cases, OpCases("sign", {t}, t, {BitValues()}, Exact()));
  ExpectAgree("unary exact ops", cases);
}

// The largest ulp distance accepted for a transcendental op (measured with PJRTKIT_DIFF_MEASURE=1
// on 100000 more elements per case; README: tolerances).
double TranscendentalUlps(const std::string& op, ElementType type) {
  switch (type) {
    case ElementType::kF32:
    case ElementType::kF64:
      return 1;  // Measured 0: both evaluate in f64 with the same libm and round once.
    case ElementType::kF16:
    case ElementType::kBF16:
      // The interpreter rounds logistic's three steps 1 / (1 + exp(-x)) to the type each; the
      // sim rounds once. Elsewhere the sim rounds through f32 (double rounding, 1 ulp).
      return op == "logistic" ? 4 : 1;
    case ElementType::kC64:
      // The interpreter's logistic is 1 / (1 + exp(-z)) in c64 arithmetic, which cancels near
      // the poles (measured 75 ulps); everything else is evaluated in f64 by both.
      return op == "logistic" ? 128 : 4;
    case ElementType::kC128:
      // XLA's formulas against C99's in f64 (measured up to 9 ulps: cos, expm1); power's error
      // grows with its angle (measured 16.5).
      return op == "power" ? 64 : 16;
    default:
      return 0;
  }
}

TEST(ElementwiseDiffTest, UnaryTranscendentalOps) {
  std::vector<DiffCase> cases;
  const char* const ops[] = {"exponential", "exponential_minus_one", "log", "log_plus_one",
                             "logistic", "tanh", "sine", "cosine", "tan", "rsqrt", "cbrt"};
  for (ElementType t : FloatTypes()) {
    for (const char* op : ops) {
      Append(&cases, OpCases(op, {t}, t, {AnyValues()}, Ulps(TranscendentalUlps(op, t))));
    }
  }
  for (ElementType t : ComplexTypes()) {
    for (const char* op : ops) {
      std::vector<DiffCase> more =
          OpCases(op, {t}, t, {ModerateComplex()}, Ulps(TranscendentalUlps(op, t)));
      // XLA:CPU has no complex cbrt; the sim refuses it.
      if (std::string(op) == "cbrt") {
        for (DiffCase& c : more) c.refused = "op 'cbrt' on " + std::string(ElementTypeName(t));
      }
      Append(&cases, std::move(more));
    }
    Append(&cases, OpCases("sqrt", {t}, t, {ModerateComplex()}, Ulps(TranscendentalUlps("sqrt", t))));
    // |z| near the top of the range rounds to the largest float on the sim and to inf on the
    // interpreter (one rounding of the exact value): magnitudes stay below 1e30 / 1e300. The sim
    // computes |z| in the component type as XLA does (measured 2 ulps).
    const ValuePolicy finite = Magnitude(t == ElementType::kC64 ? 1e30 : 1e300);
    Append(&cases, OpCases("abs", {t}, ComponentType(t), {finite}, Ulps(4)));
    Append(&cases, OpCases("sign", {t}, t, {finite}, Ulps(4)));
  }
  ExpectAgree("unary transcendental ops", cases);
}

// A policy for integer divisors: no zeros (the interpreter's integer division by zero is
// undefined).
ValuePolicy Divisors() {
  ValuePolicy policy;
  policy.nonzero = true;
  return policy;
}

TEST(ElementwiseDiffTest, BinaryArithmetic) {
  std::vector<DiffCase> cases;
  for (ElementType t : IntegerTypes()) {
    for (const char* op : {"add", "subtract", "multiply", "maximum", "minimum"}) {
      Append(&cases, OpCases(op, {t, t}, t, {AnyValues()}, Exact()));
    }
    for (const char* op : {"divide", "remainder"}) {
      Append(&cases, OpCases(op, {t, t}, t, {AnyValues(), Divisors()}, Exact(), "", "",
                             &NoDivisionOverflow));
    }
  }
  for (const char* op : {"add", "multiply", "maximum", "minimum"}) {
    Append(&cases, OpCases(op, {ElementType::kPred, ElementType::kPred}, ElementType::kPred,
                           {AnyValues()}, Exact()));
  }
  // IEEE operations, correctly rounded on both sides: exact, with flushed denormal results
  // accepted and denormal inputs left out (README: denormals).
  for (ElementType t : Types({FloatTypes(), {ElementType::kF8E4M3FN, ElementType::kF8E5M2}})) {
    for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "maximum",
                           "minimum"}) {
      Append(&cases, OpCases(op, {t, t}, t, {AnyValues()}, ExactFlushed()));
    }
  }
  for (ElementType t : ComplexTypes()) {
    for (const char* op : {"add", "subtract"}) {
      Append(&cases, OpCases(op, {t, t}, t, {AnyValues()}, ExactFlushed()));
    }
    // The sim multiplies with two fused multiply-adds and divides with Smith's algorithm (XLA's
    // formulas), the interpreter rounds each product (multiply) or divides in complex<double>:
    // a few ulps of the larger part, on finite values far from overflow.
    // Parts of magnitude 0 or within [1e-15, 1e15] (c128: [1e-150, 1e150]) keep every product
    // and quotient normal: the sim's formulas flush denormal intermediate results.
    const ValuePolicy moderate = t == ElementType::kC64 ? Magnitudes(1e-15, 1e15)
                                                        : Magnitudes(1e-150, 1e150);
    Append(&cases, OpCases("multiply", {t, t}, t, {moderate}, Ulps(4)));
    Append(&cases, OpCases("divide", {t, t}, t, {moderate}, Ulps(4)));
    // XLA:CPU orders complex numbers by their real parts only; the sim refuses them.
    for (const char* op : {"maximum", "minimum"}) {
      std::vector<DiffCase> more = OpCases(op, {t, t}, t, {AnyValues()}, Exact());
      for (DiffCase& c : more) c.refused = "op '" + std::string(op) + "' on " + ElementTypeName(t);
      Append(&cases, std::move(more));
    }
  }
  ExpectAgree("binary arithmetic", cases);
}

TEST(ElementwiseDiffTest, PowerAndAtan2) {
  std::vector<DiffCase> cases;
  // Integer power: exponents below 64 (XLA squares over the exponent's low 6 bits; the
  // interpreter over all of them) and down to -3 (both: 1 for base 1, +-1 for base -1, else 0).
  for (ElementType t : IntegerTypes()) {
    Append(&cases, OpCases("power", {t, t}, t, {AnyValues(), Range(IsSigned(t) ? -3 : 0, 63)},
                           Exact()));
  }
  for (ElementType t : FloatTypes()) {
    Append(&cases, OpCases("power", {t, t}, t, {AnyValues()}, Ulps(TranscendentalUlps("power", t))));
    Append(&cases, OpCases("atan2", {t, t}, t, {AnyValues()}, Ulps(TranscendentalUlps("atan2", t))));
  }
  for (ElementType t : ComplexTypes()) {
    // A zero base is left out: XLA's formula gives NaN for 0^(c + di) with d != 0 (it takes
    // log 0), C99's pow gives 0 for c > 0.
    ValuePolicy base = ModerateComplex();
    base.nonzero = true;
    Append(&cases, OpCases("power", {t, t}, t, {base, ModerateComplex()},
                           Ulps(TranscendentalUlps("power", t))));
    std::vector<DiffCase> more = OpCases("atan2", {t, t}, t, {AnyValues()}, Exact());
    for (DiffCase& c : more) c.refused = "op 'atan2' on " + std::string(ElementTypeName(t));
    Append(&cases, std::move(more));
  }
  ExpectAgree("power and atan2", cases);
}

TEST(ElementwiseDiffTest, BitwiseAndShifts) {
  std::vector<DiffCase> cases;
  for (ElementType t : Types({{ElementType::kPred}, IntegerTypes()})) {
    for (const char* op : {"and", "or", "xor"}) {
      Append(&cases, OpCases(op, {t, t}, t, {BitValues()}, Exact()));
    }
  }
  // Shift amounts below the width (the interpreter's larger shifts are implementation-defined).
  for (ElementType t : IntegerTypes()) {
    for (const char* op : {"shift_left", "shift_right_arithmetic", "shift_right_logical"}) {
      Append(&cases, OpCases(op, {t, t}, t, {BitValues(), Range(0, ElementTypeBits(t) - 1)},
                             Exact()));
    }
  }
  for (ElementType t : {ElementType::kF32, ElementType::kF64}) {
    Append(&cases, OpCases("complex", {t, t}, t == ElementType::kF32 ? ElementType::kC64
                                                                    : ElementType::kC128,
                           {BitValues()}, Exact()));
  }
  ExpectAgree("bitwise ops and shifts", cases);
}

// Makes about half of the elements of inputs[1] equal to those of inputs[0] (compare's EQ, GE
// and LE need ties).
void MakeTies(std::vector<HostTensor>* inputs) {
  const HostTensor& lhs = (*inputs)[0];
  HostTensor& rhs = (*inputs)[1];
  const int bytes = ElementBytes(lhs.type);
  for (int64_t i = 0; i < NumElements(lhs); i += 2) {
    std::copy_n(lhs.data.data() + i * bytes, bytes, &rhs.data[i * bytes]);
  }
}

TEST(ElementwiseDiffTest, Compare) {
  std::vector<DiffCase> cases;
  const std::vector<std::string> directions = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  auto add = [&](ElementType t, const std::string& type, const ValuePolicy& policy,
                 const std::vector<std::string>& dirs) {
    for (const std::string& direction : dirs) {
      const std::string attributes = "comparison_direction = " + ComparisonDirection(direction) +
                                     ", compare_type = " + ComparisonType(type);
      Append(&cases, OpCases("compare", {t, t}, ElementType::kPred, {policy}, Exact(), attributes,
                             " " + direction + " " + type, &MakeTies));
    }
  };
  add(ElementType::kPred, "UNSIGNED", AnyValues(), directions);
  for (ElementType t : SignedTypes()) add(t, "SIGNED", AnyValues(), directions);
  for (ElementType t : UnsignedTypes()) add(t, "UNSIGNED", AnyValues(), directions);
  // TOTALORDER: the interpreter ignores compare_type and compares as FLOAT, so the inputs avoid
  // where the two orders differ (NaN, and -0 against +0); denormals are compared as they are by
  // both (the sim orders bits).
  ValuePolicy total_order = BitValues();
  total_order.nan_inf = false;
  total_order.negative_zero = false;
  for (ElementType t : Types({FloatTypes(), Float8Types()})) {
    // FLOAT on the sim reads denormals as zero (XLA's denormals-are-zero): none in the inputs.
    add(t, "FLOAT", AnyValues(), directions);
    add(t, "TOTALORDER", total_order, directions);
  }
  // Complex numbers have no order: EQ and NE only.
  for (ElementType t : ComplexTypes()) add(t, "FLOAT", AnyValues(), {"EQ", "NE"});
  ExpectAgree("compare", cases);
}

TEST(ElementwiseDiffTest, SelectAndClamp) {
  std::vector<DiffCase> cases;
  for (ElementType t : Types({AllTypes(), Float8Types()})) {
    // select moves bits: every value, denormals included.
    Append(&cases, OpCases("select", {ElementType::kPred, t, t}, t, {BitValues()}, Exact()));
    for (const std::vector<int64_t>& dims : ElementwiseShapes()) {
      DiffCase c;
      c.op = "select";
      c.what = ShapeText(t, dims) + " scalar pred";
      ValueGenerator values(SeedOf(c.op + c.what));
      c.program = ElementwiseProgram("stablehlo.select", {ElementType::kPred, t, t}, t, dims, "",
                                     {true, false, false});
      c.inputs = {values.Random(ArrayType{ElementType::kPred, {}}),
                  values.Random(ArrayType{t, dims}, BitValues()),
                  values.Random(ArrayType{t, dims}, BitValues())};
      c.tolerances = {Exact()};
      c.elementwise = true;
      cases.push_back(std::move(c));
    }
  }
  for (ElementType t : Types({IntegerTypes(), FloatTypes()})) {
    Append(&cases, OpCases("clamp", {t, t, t}, t, {AnyValues()}, Exact()));
    // The scalar bounds form (min and max rank 0).
    for (const std::vector<int64_t>& dims : ElementwiseShapes()) {
      DiffCase c;
      c.op = "clamp";
      c.what = ShapeText(t, dims) + " scalar bounds";
      ValueGenerator values(SeedOf(c.op + c.what));
      c.program =
          ElementwiseProgram("stablehlo.clamp", {t, t, t}, t, dims, "", {true, false, true});
      c.inputs = {ValueGenerator::FromValues(ArrayType{t, {}}, {-2}),
                  values.Random(ArrayType{t, dims}), ValueGenerator::FromValues(ArrayType{t, {}}, {3})};
      c.tolerances = {Exact()};
      c.elementwise = true;
      cases.push_back(std::move(c));
    }
  }
  for (ElementType t : ComplexTypes()) {
    std::vector<DiffCase> more = OpCases("clamp", {t, t, t}, t, {AnyValues()}, Exact());
    for (DiffCase& c : more) c.refused = "op 'clamp' on " + std::string(ElementTypeName(t));
    Append(&cases, std::move(more));
  }
  ExpectAgree("select and clamp", cases);
}

// The inputs of a convert from `from` to `to`: float -> integer conversions of values outside
// the integer range (and of NaN) are implementation-defined, so those sources stay within
// the target's range; float sources carry no flushed denormals (the sim reads them as zero).
ValuePolicy ConvertSource(ElementType from, ElementType to) {
  ValuePolicy policy = AnyValues();
  if (IsFloat(ComponentType(from)) && IsInteger(to)) {
    const int width = ElementTypeBits(to);
    // The largest magnitudes whose truncation fits (64-bit: below 2^63 / 2^64 after rounding).
    const double hi = IsSigned(to) ? std::ldexp(1.0, width - 1) * (1 - 0x1p-10)
                                   : std::ldexp(1.0, width) * (1 - 0x1p-10);
    policy = Range(IsSigned(to) ? -hi : 0, hi);
  }
  if (to == ElementType::kF8E8M0FNU) {
    // f8E8M0FNU holds the powers of two 2^-127..2^127 and NaN. XLA (which the sim follows) maps
    // zero, negative values and f64 values below 2^-127 to NaN, where the interpreter's APFloat
    // gives 2^-127 or the magnitude's power of two: sources stay within [2^-126, 2^127].
    policy = Range(IsFloat(ComponentType(from)) ? 0x1p-126 : 1, 0x1p127);
    policy.nan_inf = true;
  }
  if (from == ElementType::kF8E8M0FNU) {
    // The interpreter converts f8E8M0FNU's NaN (0xff) to inf: no NaN sources.
    policy.nan_inf = false;
  }
  return policy;
}

// The tolerance of a convert from `from` to `to` (README: conversions).
Tolerance ConvertTolerance(ElementType from, ElementType to) {
  const ElementType target = ComponentType(to);
  const bool low_target = target == ElementType::kF16 || target == ElementType::kBF16;
  // f64 -> f16/bf16 rounds through f32 in XLA (twice), once in the interpreter; integers convert
  // to f16/bf16 and the float8 types through f32 in XLA too. Double rounding is at most 1 ulp
  // off.
  if ((ComponentType(from) == ElementType::kF64 && low_target) ||
      (IsInteger(from) && (low_target || (IsFloat(target) && ElementTypeBits(target) == 8)))) {
    return Ulps(1);
  }
  return ExactFlushed();
}

TEST(ElementwiseDiffTest, Convert) {
  std::vector<DiffCase> cases;
  const std::vector<ElementType> types = Types({AllTypes(), Float8Types()});
  for (ElementType from : types) {
    for (ElementType to : types) {
      std::vector<DiffCase> more = OpCases("convert", {from}, to, {ConvertSource(from, to)},
                                           ConvertTolerance(from, to), "",
                                           " -> " + TypeName(to));
      for (DiffCase& c : more) c.what = TypeName(from) + "->" + c.what;
      Append(&cases, std::move(more));
    }
  }
  ExpectAgree("convert", cases);
}

TEST(ElementwiseDiffTest, BitcastConvert) {
  std::vector<DiffCase> cases;
  const std::vector<std::vector<ElementType>> widths = {
      Types({{ElementType::kS8, ElementType::kU8}, Float8Types()}),
      {ElementType::kS16, ElementType::kU16, ElementType::kF16, ElementType::kBF16},
      {ElementType::kS32, ElementType::kU32, ElementType::kF32},
      {ElementType::kS64, ElementType::kU64, ElementType::kF64}};
  for (const auto& group : widths) {
    for (ElementType from : group) {
      for (ElementType to : group) {
        std::vector<DiffCase> more =
            OpCases("bitcast_convert", {from}, to, {BitValues()}, Exact(), "", " -> " + TypeName(to));
        Append(&cases, std::move(more));
      }
    }
  }
  // Between element sizes: the last dimension splits or joins the bytes.
  const std::vector<std::pair<ElementType, ElementType>> resizes = {
      {ElementType::kF32, ElementType::kU8},  {ElementType::kU8, ElementType::kF32},
      {ElementType::kS64, ElementType::kS32}, {ElementType::kS32, ElementType::kF64},
      {ElementType::kF16, ElementType::kS8},  {ElementType::kBF16, ElementType::kU64}};
  for (const auto& [from, to] : resizes) {
    const int64_t ratio_from = ElementTypeBits(from), ratio_to = ElementTypeBits(to);
    for (int64_t rows : {33, 1, 0}) {
      std::vector<int64_t> in_dims = {rows}, out_dims = {rows};
      if (ratio_from > ratio_to) {
        out_dims.push_back(ratio_from / ratio_to);
      } else {
        in_dims.push_back(ratio_to / ratio_from);
      }
      DiffCase c;
      c.op = "bitcast_convert";
      c.what = ShapeText(from, in_dims) + " -> " + ShapeText(to, out_dims);
      ValueGenerator values(SeedOf(c.op + c.what));
      ProgramBuilder b;
      const std::string p = b.Parameter(ArrayType{from, in_dims});
      c.program = b.Build({b.Op1("stablehlo.bitcast_convert", {p}, ArrayType{to, out_dims})});
      c.inputs = {values.Random(ArrayType{from, in_dims}, BitValues())};
      c.tolerances = {Exact()};
      cases.push_back(std::move(c));
    }
  }
  ExpectAgree("bitcast_convert", cases);
}

TEST(ElementwiseDiffTest, ReducePrecision) {
  std::vector<DiffCase> cases;
  const std::vector<std::pair<int, int>> formats = {{5, 10}, {8, 7}, {4, 3}, {5, 2}, {3, 4},
                                                    {8, 23}, {11, 52}, {2, 1}, {1, 0}, {6, 0}};
  for (ElementType t : FloatTypes()) {
    for (const auto& [exponent, mantissa] : formats) {
      const std::string attributes = "exponent_bits = " + std::to_string(exponent) +
                                     " : i32, mantissa_bits = " + std::to_string(mantissa) + " : i32";
      // With no mantissa bits the interpreter turns NaN into inf (a format without mantissa
      // has no NaN); XLA (and the sim) keep NaN: no NaN inputs there.
      ValuePolicy policy = AnyValues();
      policy.nan_inf = mantissa > 0;
      Append(&cases, OpCases("reduce_precision", {t}, t, {policy}, ExactFlushed(), attributes,
                             " e" + std::to_string(exponent) + "m" + std::to_string(mantissa)));
    }
  }
  ExpectAgree("reduce_precision", cases);
}

// The attributes of broadcast_in_dim.
std::string BroadcastDims(const std::vector<int64_t>& dims) {
  return "broadcast_dimensions = " + I64Array(dims);
}

std::string CompareAttributes(const std::string& direction, const std::string& type) {
  return "comparison_direction = " + ComparisonDirection(direction) +
         ", compare_type = " + ComparisonType(type);
}

// One chain case: `build` writes the program for `rows` and returns its inputs.
using ChainBuilder = std::vector<ArrayType> (*)(ProgramBuilder& b, int64_t rows,
                                                std::vector<std::string>* results);

TEST(ElementwiseDiffTest, FusedChains) {
  struct Chain {
    const char* name;
    ChainBuilder build;
    std::vector<ValuePolicy> policies;
    Tolerance tolerance;
  };
  const std::vector<Chain> chains = {
      // f32: a * row + s, tanh, select on a > 0 with -a.
      {"f32 mul-add-tanh-select",
       [](ProgramBuilder& b, int64_t rows, std::vector<std::string>* results) {
         const ArrayType m{ElementType::kF32, {rows, 17}};
         const ArrayType row{ElementType::kF32, {17}}, s{ElementType::kF32, {}};
         const std::string a = b.Parameter(m), r = b.Parameter(row), c = b.Parameter(s);
         const std::string t = b.Op1("stablehlo.multiply",
                                     {a, b.Op1("stablehlo.broadcast_in_dim", {r}, m, BroadcastDims({1}))}, m);
         const std::string u = b.Op1("stablehlo.add",
                                     {t, b.Op1("stablehlo.broadcast_in_dim", {c}, m, BroadcastDims({}))}, m);
         const std::string v = b.Op1("stablehlo.tanh", {u}, m);
         const std::string zero = b.Constant("0.0", m);
         const std::string p = b.Op1("stablehlo.compare", {a, zero}, ArrayType{ElementType::kPred, m.dims},
                                     CompareAttributes("GT", "FLOAT"));
         results->push_back(b.Op1("stablehlo.select", {p, v, b.Op1("stablehlo.negate", {a}, m)}, m));
         return std::vector<ArrayType>{m, row, s};
       },
       {AnyValues()}, Ulps(1)},
      // bf16: per-op rounding of (a + b) * column - a, then max with 0.
      {"bf16 add-mul-sub-max",
       [](ProgramBuilder& b, int64_t rows, std::vector<std::string>* results) {
         const ArrayType m{ElementType::kBF16, {rows, 50}}, col{ElementType::kBF16, {rows}};
         const std::string a = b.Parameter(m), c = b.Parameter(m), k = b.Parameter(col);
         const std::string t = b.Op1("stablehlo.add", {a, c}, m);
         const std::string u = b.Op1("stablehlo.multiply",
                                     {t, b.Op1("stablehlo.broadcast_in_dim", {k}, m, BroadcastDims({0}))}, m);
         const std::string v = b.Op1("stablehlo.subtract", {u, a}, m);
         results->push_back(b.Op1("stablehlo.maximum", {v, b.Constant("0.0", m)}, m));
         return std::vector<ArrayType>{m, m, col};
       },
       // Magnitudes within [1e-10, 1e10] keep the intermediate results normal (the sim flushes
       // denormal intermediates, the interpreter keeps bf16 denormals).
       {Magnitudes(1e-10, 1e10)}, ExactFlushed()},
      // s32: ((a << k) ^ b) + iota, clamped to scalar bounds; two outputs.
      {"s32 shift-xor-iota-clamp",
       [](ProgramBuilder& b, int64_t rows, std::vector<std::string>* results) {
         const ArrayType m{ElementType::kS32, {rows, 17}}, s{ElementType::kS32, {}};
         const std::string a = b.Parameter(m), c = b.Parameter(m), k = b.Parameter(s);
         const std::string sh = b.Op1("stablehlo.shift_left",
                                      {a, b.Op1("stablehlo.broadcast_in_dim", {k}, m, BroadcastDims({}))}, m);
         const std::string x = b.Op1("stablehlo.xor", {sh, c}, m);
         const std::string io = b.Op1("stablehlo.iota", {}, m, "iota_dimension = 1 : i64");
         const std::string y = b.Op1("stablehlo.add", {x, io}, m);
         const std::string lo = b.Constant("-1000", s), hi = b.Constant("1000000", s);
         results->push_back(b.Op1("stablehlo.clamp", {lo, y, hi}, m));
         results->push_back(x);
         return std::vector<ArrayType>{m, m, s};
       },
       {AnyValues(), AnyValues(), Range(0, 31)}, Exact()},
      // f16 -> f32, exp, times a scalar, back to f16.
      {"f16 convert-exp-scale-convert",
       [](ProgramBuilder& b, int64_t rows, std::vector<std::string>* results) {
         const ArrayType h{ElementType::kF16, {rows, 17}}, f{ElementType::kF32, {rows, 17}};
         const ArrayType s{ElementType::kF32, {}};
         const std::string a = b.Parameter(h), c = b.Parameter(s);
         const std::string x = b.Op1("stablehlo.convert", {a}, f);
         const std::string e = b.Op1("stablehlo.exponential", {x}, f);
         const std::string m = b.Op1("stablehlo.multiply",
                                     {e, b.Op1("stablehlo.broadcast_in_dim", {c}, f, BroadcastDims({}))}, f);
         results->push_back(b.Op1("stablehlo.convert", {m}, h));
         return std::vector<ArrayType>{h, s};
       },
       {AnyValues()}, Ulps(1)},
      // f64: iota < n selects a or a broadcast scalar, then abs and sqrt.
      {"f64 iota-compare-select-abs-sqrt",
       [](ProgramBuilder& b, int64_t rows, std::vector<std::string>* results) {
         const ArrayType m{ElementType::kF64, {rows, 17}}, s{ElementType::kF64, {}};
         const ArrayType n{ElementType::kS32, {}}, im{ElementType::kS32, {rows, 17}};
         const std::string a = b.Parameter(m), c = b.Parameter(s), k = b.Parameter(n);
         const std::string io = b.Op1("stablehlo.iota", {}, im, "iota_dimension = 0 : i64");
         const std::string p = b.Op1("stablehlo.compare",
                                     {io, b.Op1("stablehlo.broadcast_in_dim", {k}, im, BroadcastDims({}))},
                                     ArrayType{ElementType::kPred, m.dims}, CompareAttributes("LT", "SIGNED"));
         const std::string x = b.Op1("stablehlo.select",
                                     {p, a, b.Op1("stablehlo.broadcast_in_dim", {c}, m, BroadcastDims({}))}, m);
         results->push_back(b.Op1("stablehlo.sqrt", {b.Op1("stablehlo.abs", {x}, m)}, m));
         return std::vector<ArrayType>{m, s, n};
       },
       {AnyValues(), AnyValues(), Range(0, 40)}, ExactFlushed()},
      // c64: complex(a, b) * broadcast column, negated, and its magnitude.
      {"c64 complex-mul-negate-abs",
       [](ProgramBuilder& b, int64_t rows, std::vector<std::string>* results) {
         const ArrayType f{ElementType::kF32, {rows, 17}}, c{ElementType::kC64, {rows, 17}};
         const ArrayType col{ElementType::kC64, {rows}};
         const std::string x = b.Parameter(f), y = b.Parameter(f), k = b.Parameter(col);
         const std::string z = b.Op1("stablehlo.complex", {x, y}, c);
         const std::string m = b.Op1("stablehlo.multiply",
                                     {z, b.Op1("stablehlo.broadcast_in_dim", {k}, c, BroadcastDims({0}))}, c);
         results->push_back(b.Op1("stablehlo.negate", {m}, c));
         results->push_back(b.Op1("stablehlo.abs", {m}, f));
         return std::vector<ArrayType>{f, f, col};
       },
       {Magnitudes(1e-15, 1e15)}, Ulps(4)},
      // u8: transpose, add, reshape to one dimension, popcnt.
      {"u8 transpose-add-reshape-popcnt",
       [](ProgramBuilder& b, int64_t rows, std::vector<std::string>* results) {
         const ArrayType t{ElementType::kU8, {17, rows}}, m{ElementType::kU8, {rows, 17}};
         const ArrayType flat{ElementType::kU8, {rows * 17}};
         const std::string a = b.Parameter(t), c = b.Parameter(m);
         const std::string x = b.Op1("stablehlo.transpose", {a}, m, "permutation = " + I64Array({1, 0}));
         const std::string y = b.Op1("stablehlo.add", {x, c}, m);
         results->push_back(b.Op1("stablehlo.popcnt", {b.Op1("stablehlo.reshape", {y}, flat)}, flat));
         return std::vector<ArrayType>{t, m};
       },
       {BitValues()}, Exact()},
  };
  std::vector<DiffCase> cases;
  for (const Chain& chain : chains) {
    for (int64_t rows : {33, 70, 1, 0}) {
      DiffCase c;
      c.op = "chain";
      c.what = std::string(chain.name) + " rows=" + std::to_string(rows);
      ProgramBuilder b;
      std::vector<std::string> results;
      const std::vector<ArrayType> inputs = chain.build(b, rows, &results);
      c.program = b.Build(results);
      ValueGenerator values(SeedOf(c.op + c.what));
      for (size_t i = 0; i < inputs.size(); ++i) {
        c.inputs.push_back(values.Random(inputs[i], chain.policies[std::min(i, chain.policies.size() - 1)]));
      }
      c.tolerances = {chain.tolerance};
      cases.push_back(std::move(c));
    }
  }
  ExpectAgree("fused chains", cases);
}

}  // namespace
}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit
