// Differential cases of the reductions (see README.md): reduce (sum, product, max, min, and, or,
// variadic argmax/argmin, over various dimensions), reduce_window (padding, strides, base and
// window dilations, cumulative windows) and select_and_scatter.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/differential/case_helpers.h"

namespace pjrtkit {
namespace sim {
namespace differential {
namespace {

// The identity of the combiner `op` in `type` (the init value JAX uses).
HostTensor Identity(const std::string& op, ElementType type) {
  HostTensor t = ValueGenerator::FromValues(ArrayType{type, {}}, {0});
  const int width = ElementTypeBits(type);
  const uint64_t all = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const double inf = std::numeric_limits<double>::infinity();
  if (op == "multiply") return ValueGenerator::FromValues(ArrayType{type, {}}, {1});
  if (op == "and") SetElementBits(&t, 0, IsPred(type) ? 1 : all);
  if (op == "maximum" || op == "minimum") {
    const bool max = op == "maximum";
    if (IsFloat(type)) {
      SetElementBits(&t, 0, FloatBits(type, max ? -inf : inf));
    } else if (IsSigned(type)) {
      const uint64_t min = uint64_t{1} << (width - 1);
      SetElementBits(&t, 0, max ? min : (min - 1));
    } else {
      SetElementBits(&t, 0, max ? 0 : (IsPred(type) ? 1 : all));
    }
  }
  return t;
}

// The tolerance of a reduction with combiner `op` over `terms` elements per result: sums of
// floats add up in another order on the sim (pairwise, or in blocks) than on the interpreter (one
// after the other), within SumFactor(terms) * eps * (the sum of the terms' magnitudes);
// everything else is exact.
Tolerance ReductionTolerance(const std::string& op, ElementType type, int64_t terms) {
  if (op != "add" || !(IsFloat(type) || IsComplex(type))) return Exact();
  return Scaled(SumFactor(terms));
}

// Values for sums of floats: NaN, infinities and every edge, but finite magnitudes below the
// type's largest value / 4096, so that no sum of finite terms overflows (where it does, the
// order of the additions decides between inf and NaN).
ValuePolicy SumValues(ElementType type) {
  if (!IsFloat(ComponentType(type))) return AnyValues();
  const ElementType component = ComponentType(type);
  const double max = component == ElementType::kF64   ? 1e300
                     : component == ElementType::kF16 ? 16
                                                      : 8e34;
  ValuePolicy policy = Magnitude(max);
  policy.nan_inf = true;
  return policy;
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

TEST(ReductionDiffTest, Reduce) {
  struct Config {
    std::vector<int64_t> in, dimensions;
  };
  const std::vector<Config> configs = {
      {{33, 17}, {0}},  {{33, 17}, {1}},  {{33, 17}, {0, 1}}, {{3, 4, 5}, {1}},
      {{3, 4, 5}, {0, 2}}, {{1200}, {0}}, {{0, 5}, {0}},      {{0, 5}, {1}},
      {{4, 6}, {}}};
  std::vector<std::pair<std::string, std::vector<ElementType>>> combiners = {
      {"add", Types({IntegerTypes(), FloatTypes(), ComplexTypes()})},
      {"multiply", IntegerTypes()},
      {"maximum", Types({IntegerTypes(), FloatTypes()})},
      {"minimum", Types({IntegerTypes(), FloatTypes()})},
      {"and", Types({{ElementType::kPred}, IntegerTypes()})},
      {"or", Types({{ElementType::kPred}, IntegerTypes()})}};
  std::vector<DiffCase> cases;
  for (const auto& [op, types] : combiners) {
    for (ElementType t : types) {
      for (const Config& config : configs) {
        std::vector<int64_t> out;
        int64_t terms = 1;
        for (size_t d = 0; d < config.in.size(); ++d) {
          bool reduced = false;
          for (int64_t r : config.dimensions) reduced |= r == static_cast<int64_t>(d);
          if (reduced) {
            terms *= config.in[d];
          } else {
            out.push_back(config.in[d]);
          }
        }
        // Sums also with an init that is not the identity (applied once by both).
        for (bool identity : {true, false}) {
          if (!identity && (op != "add" || config.dimensions.size() != 1)) continue;
          DiffCase c;
          c.op = "reduce " + op;
          c.what = ShapeText(t, config.in) + " dims " + IntList(config.dimensions) +
                   (identity ? "" : " init 3");
          ValueGenerator values(SeedOf(c.op + c.what));
          ProgramBuilder b;
          const std::string p = b.Parameter(ArrayType{t, config.in});
          const std::string init = b.Parameter(ArrayType{t, {}});
          c.program = b.Build({b.Op1("stablehlo.reduce", {p, init}, ArrayType{t, out},
                                     "dimensions = " + I64Array(config.dimensions),
                                     {BinaryRegion("r", "stablehlo." + op, t)})});
          // Products of random integers are mostly zero past 64 factors: small values instead.
          const ValuePolicy policy = op == "multiply" ? Range(-3, 3) : op == "add" ? SumValues(t) : AnyValues();
          c.inputs = {values.Random(ArrayType{t, config.in}, policy),
                      identity ? Identity(op, t) : ValueGenerator::FromValues(ArrayType{t, {}}, {3})};
          c.tolerances = {ReductionTolerance(op, t, terms + 1)};
          cases.push_back(std::move(c));
        }
      }
    }
  }
  ExpectAgree("reduce", cases);
}

// The body of a variadic argmax (`max`) or argmin reduce as JAX writes it: the larger value
// wins, NaN wins, ties go to the smaller index.
std::string ArgRegion(bool max, ElementType value, ElementType index) {
  RegionBuilder r("g", {value, index, value, index});
  const std::string a = r.Argument(0), ai = r.Argument(1), b = r.Argument(2), bi = r.Argument(3);
  const bool is_float = IsFloat(value);
  const std::string order = is_float ? "FLOAT" : IsSigned(value) ? "SIGNED" : "UNSIGNED";
  auto compare = [&](const std::string& x, const std::string& y, const std::string& direction,
                     const std::string& type) {
    return r.Op("stablehlo.compare", {x, y}, ElementType::kPred,
                "comparison_direction = " + ComparisonDirection(direction) +
                    ", compare_type = " + ComparisonType(type));
  };
  std::string pick = compare(a, b, max ? "GT" : "LT", order);
  if (is_float) pick = r.Op("stablehlo.or", {pick, compare(a, a, "NE", order)}, ElementType::kPred);
  const std::string tie = r.Op("stablehlo.and",
                               {compare(a, b, "EQ", order), compare(ai, bi, "LT", "SIGNED")},
                               ElementType::kPred);
  pick = r.Op("stablehlo.or", {pick, tie}, ElementType::kPred);
  const std::string v = r.Op("stablehlo.select", {pick, a, b}, value);
  const std::string i = r.Op("stablehlo.select", {pick, ai, bi}, index);
  return r.Build({v, i});
}

TEST(ReductionDiffTest, VariadicArgmaxArgmin) {
  std::vector<DiffCase> cases;
  const std::vector<std::pair<std::vector<int64_t>, int64_t>> configs = {
      {{33, 17}, 1}, {{33, 17}, 0}, {{1200}, 0}, {{3, 4, 5}, 2}, {{0, 5}, 1}};
  for (ElementType t : {ElementType::kF32, ElementType::kBF16, ElementType::kF64,
                        ElementType::kS32, ElementType::kU8, ElementType::kS64}) {
    for (bool max : {true, false}) {
      for (const auto& [dims, dimension] : configs) {
        DiffCase c;
        c.op = max ? "reduce argmax" : "reduce argmin";
        c.what = ShapeText(t, dims) + " dim " + std::to_string(dimension);
        ValueGenerator values(SeedOf(c.op + c.what));
        std::vector<int64_t> out = dims;
        out.erase(out.begin() + dimension);
        ProgramBuilder b;
        const std::string p = b.Parameter(ArrayType{t, dims});
        const std::string iota = b.Op1("stablehlo.iota", {}, ArrayType{ElementType::kS32, dims},
                                       "iota_dimension = " + std::to_string(dimension) + " : i64");
        const std::string init = b.Parameter(ArrayType{t, {}});
        const std::string zero = b.Constant("0", ArrayType{ElementType::kS32, {}});
        const std::vector<std::string> r = b.Op(
            "stablehlo.reduce", {p, iota, init, zero},
            {ArrayType{t, out}, ArrayType{ElementType::kS32, out}},
            "dimensions = " + I64Array({dimension}), {ArgRegion(max, t, ElementType::kS32)});
        c.program = b.Build(r);
        // Small integers give ties (the smaller index wins on both).
        const ValuePolicy policy = IsFloat(t) ? AnyValues() : Range(IsUnsigned(t) ? 0 : -5, 5);
        c.inputs = {values.Random(ArrayType{t, dims}, policy), Identity(max ? "maximum" : "minimum", t)};
        c.tolerances = {Exact()};
        cases.push_back(std::move(c));
      }
    }
  }
  ExpectAgree("variadic argmax/argmin", cases);
}

// A window configuration of reduce_window / select_and_scatter.
struct Window {
  std::vector<int64_t> in, window, strides, base_dilations, window_dilations;
  std::vector<std::vector<int64_t>> padding;  // (low, high) per dimension.
};

// The output dimensions of `w`.
std::vector<int64_t> WindowOutput(const Window& w) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < w.in.size(); ++d) {
    const int64_t dilated_in = w.in[d] == 0 ? 0 : (w.in[d] - 1) * w.base_dilations[d] + 1;
    const int64_t padded = dilated_in + w.padding[d][0] + w.padding[d][1];
    const int64_t span = (w.window[d] - 1) * w.window_dilations[d] + 1;
    out.push_back(padded < span ? 0 : (padded - span) / w.strides[d] + 1);
  }
  return out;
}

std::string WindowAttributes(const Window& w, bool dilations) {
  std::string text = "window_dimensions = " + I64Array(w.window) +
                     ", window_strides = " + I64Array(w.strides);
  if (dilations) {
    text += ", base_dilations = " + I64Array(w.base_dilations) +
            ", window_dilations = " + I64Array(w.window_dilations);
  }
  return text + ", padding = " + I64Matrix(w.padding, 2);
}

TEST(ReductionDiffTest, ReduceWindow) {
  const std::vector<Window> windows = {
      {{33, 17}, {2, 3}, {1, 1}, {1, 1}, {1, 1}, {{0, 0}, {0, 0}}},
      {{33, 17}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}},
      {{33, 17}, {2, 2}, {1, 1}, {2, 1}, {1, 2}, {{0, 1}, {2, 0}}},
      {{200}, {200}, {1}, {1}, {1}, {{199, 0}}},  // cumulative sum/max (a scan)
      {{200}, {200}, {1}, {1}, {1}, {{0, 199}}},  // reverse cumulative
      {{2, 9, 9, 3}, {1, 3, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, {1, 1, 1, 1},
       {{0, 0}, {1, 1}, {1, 1}, {0, 0}}},  // NHWC pooling
      {{5, 4}, {4, 4}, {3, 3}, {1, 1}, {1, 1}, {{3, 3}, {3, 3}}},  // windows all padding
      {{0, 4}, {1, 2}, {1, 1}, {1, 1}, {1, 1}, {{0, 0}, {0, 0}}},
  };
  std::vector<std::pair<std::string, std::vector<ElementType>>> combiners = {
      {"add", {ElementType::kF32, ElementType::kBF16, ElementType::kF64, ElementType::kS32,
               ElementType::kU8, ElementType::kC64}},
      {"maximum", {ElementType::kF32, ElementType::kF16, ElementType::kS64, ElementType::kU16}},
      {"minimum", {ElementType::kF64, ElementType::kBF16, ElementType::kS8}}};
  std::vector<DiffCase> cases;
  for (const auto& [op, types] : combiners) {
    for (ElementType t : types) {
      for (const Window& w : windows) {
        DiffCase c;
        c.op = "reduce_window " + op;
        c.what = ShapeText(t, w.in) + " " + WindowAttributes(w, true);
        ValueGenerator values(SeedOf(c.op + c.what));
        ProgramBuilder b;
        const std::string p = b.Parameter(ArrayType{t, w.in});
        const std::string init = b.Parameter(ArrayType{t, {}});
        c.program = b.Build({b.Op1("stablehlo.reduce_window", {p, init},
                                   ArrayType{t, WindowOutput(w)}, WindowAttributes(w, true),
                                   {BinaryRegion("w", "stablehlo." + op, t)})});
        // Padding and base-dilation holes read as the init value on the interpreter and are
        // skipped on the sim: the same when the init is the combiner's identity (as JAX's are).
        c.inputs = {values.Random(ArrayType{t, w.in}, op == "add" ? SumValues(t) : AnyValues()),
                    Identity(op, t)};
        c.tolerances = {ReductionTolerance(op, t, Product(w.window) + 1)};
        cases.push_back(std::move(c));
      }
    }
  }
  ExpectAgree("reduce_window", cases);
}

TEST(ReductionDiffTest, SelectAndScatter) {
  const std::vector<Window> windows = {
      {{8, 10}, {2, 2}, {2, 2}, {1, 1}, {1, 1}, {{0, 0}, {0, 0}}},
      {{9, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}},   // overlapping windows
      {{33, 17}, {3, 2}, {1, 3}, {1, 1}, {1, 1}, {{0, 2}, {1, 0}}},
      {{2, 7, 7, 3}, {1, 3, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, {1, 1, 1, 1},
       {{0, 0}, {1, 1}, {1, 1}, {0, 0}}},
      {{0, 4}, {1, 2}, {1, 2}, {1, 1}, {1, 1}, {{0, 0}, {0, 0}}},
  };
  std::vector<DiffCase> cases;
  for (ElementType t : {ElementType::kF32, ElementType::kF64, ElementType::kBF16, ElementType::kS32,
                        ElementType::kU8}) {
    for (const char* direction : {"GE", "LE"}) {
      for (const Window& w : windows) {
        DiffCase c;
        c.op = std::string("select_and_scatter ") + direction;
        c.what = ShapeText(t, w.in) + " " + WindowAttributes(w, false);
        ValueGenerator values(SeedOf(c.op + c.what));
        const std::vector<int64_t> source_dims = WindowOutput(w);
        RegionBuilder select("s", {t, t});
        const std::string order = IsFloat(t) ? "FLOAT" : IsSigned(t) ? "SIGNED" : "UNSIGNED";
        const std::string selected =
            select.Op("stablehlo.compare", {select.Argument(0), select.Argument(1)},
                      ElementType::kPred,
                      "comparison_direction = " + ComparisonDirection(direction) +
                          ", compare_type = " + ComparisonType(order));
        const std::string select_region = select.Build({selected});
        ProgramBuilder b;
        const std::string operand = b.Parameter(ArrayType{t, w.in});
        const std::string source = b.Parameter(ArrayType{t, source_dims});
        const std::string init = b.Parameter(ArrayType{t, {}});
        c.program = b.Build({b.Op1("stablehlo.select_and_scatter", {operand, source, init},
                                   ArrayType{t, w.in}, WindowAttributes(w, false),
                                   {select_region, BinaryRegion("t", "stablehlo.add", t)})});
        // Small integer operands tie often (the first selected wins on both).
        const ValuePolicy operand_values = IsFloat(t) ? AnyValues() : Range(0, 3);
        c.inputs = {values.Random(ArrayType{t, w.in}, operand_values),
                    values.Random(ArrayType{t, source_dims}, SumValues(t)),
                    Identity("add", t)};
        c.tolerances = {ReductionTolerance("add", t, Product(w.window) + 1)};
        cases.push_back(std::move(c));
      }
    }
  }
  ExpectAgree("select_and_scatter", cases);
}

}  // namespace
}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit
