// Differential cases of dot_general (batching and contracting dimensions, mixed precision) and
// convolution (strides, padding, dilations, feature and batch groups, layouts) (see README.md).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "xla_plugin/devices/sim/differential/case_helpers.h"

namespace pjrtkit {
namespace sim {
namespace differential {
namespace {

// Values of dot and convolution operands: NaN, infinities and edges, with finite magnitudes small
// enough that no sum of products overflows (order-dependent inf or NaN otherwise).
ValuePolicy ProductValues(ElementType type) {
  const ElementType component = ComponentType(type);
  if (!IsFloat(component)) return AnyValues();
  const double max = component == ElementType::kF64 ? 1e150 : component == ElementType::kF16 ? 4 : 1e17;
  ValuePolicy policy = Magnitude(max);
  policy.nan_inf = true;
  return policy;
}

Tolerance ContractionTolerance(ElementType result, int64_t terms) {
  if (!IsFloat(ComponentType(result))) return Exact();
  return Scaled(SumFactor(terms));
}

struct Dot {
  std::vector<int64_t> lhs, rhs, lhs_batch, rhs_batch, lhs_contract, rhs_contract;
};

bool Contains(const std::vector<int64_t>& list, int64_t v) {
  for (int64_t x : list) {
    if (x == v) return true;
  }
  return false;
}

// dot_general's result dims: batch, lhs free, rhs free; and the terms per result element.
std::vector<int64_t> DotResult(const Dot& d, int64_t* terms) {
  std::vector<int64_t> out;
  *terms = 1;
  for (int64_t b : d.lhs_batch) out.push_back(d.lhs[b]);
  for (size_t i = 0; i < d.lhs.size(); ++i) {
    if (!Contains(d.lhs_batch, i) && !Contains(d.lhs_contract, i)) out.push_back(d.lhs[i]);
  }
  for (size_t i = 0; i < d.rhs.size(); ++i) {
    if (!Contains(d.rhs_batch, i) && !Contains(d.rhs_contract, i)) out.push_back(d.rhs[i]);
  }
  for (int64_t c : d.lhs_contract) *terms *= d.lhs[c];
  return out;
}

std::string DotAttributes(const Dot& d) {
  return "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = " +
         IntList(d.lhs_batch) + ", rhs_batching_dimensions = " + IntList(d.rhs_batch) +
         ", lhs_contracting_dimensions = " + IntList(d.lhs_contract) +
         ", rhs_contracting_dimensions = " + IntList(d.rhs_contract) + ">";
}

TEST(ContractionDiffTest, DotGeneral) {
  // A contraction over a dimension of size 0 aborts the interpreter (its dot_general reads one
  // term before checking the bounds), so none is listed (README: not covered).
  const std::vector<Dot> dots = {
      {{33, 17}, {17, 9}, {}, {}, {1}, {0}},              // matmul
      {{17, 33}, {9, 17}, {}, {}, {0}, {1}},              // both transposed
      {{3, 5, 7}, {3, 7, 4}, {0}, {0}, {2}, {1}},         // batched
      {{4, 5, 6}, {6, 5, 3}, {}, {}, {1, 2}, {1, 0}},     // two contracting dimensions
      {{2, 4, 3, 5}, {5, 3, 2}, {0}, {2}, {2, 3}, {1, 0}},  // batch not leading on rhs
      {{33, 17}, {17}, {}, {}, {1}, {0}},                 // matrix-vector
      {{5}, {7}, {}, {}, {}, {}},                          // outer product
      {{0, 17}, {17, 3}, {}, {}, {1}, {0}},               // no rows
      {{64, 130}, {130, 70}, {}, {}, {1}, {0}},           // several blocks
  };
  // (operand type, result type): same types, and the mixed products JAX emits.
  const std::vector<std::pair<ElementType, ElementType>> types = {
      {ElementType::kF32, ElementType::kF32},   {ElementType::kF64, ElementType::kF64},
      {ElementType::kBF16, ElementType::kBF16}, {ElementType::kF16, ElementType::kF16},
      {ElementType::kBF16, ElementType::kF32},  {ElementType::kF16, ElementType::kF32},
      {ElementType::kS32, ElementType::kS32},   {ElementType::kS8, ElementType::kS32},
      {ElementType::kU8, ElementType::kU32},    {ElementType::kS64, ElementType::kS64},
      {ElementType::kC64, ElementType::kC64},   {ElementType::kC128, ElementType::kC128}};
  std::vector<DiffCase> cases;
  for (const auto& [in, out] : types) {
    for (const Dot& d : dots) {
      // The largest product only in f32 and bf16 -> f32 (the interpreter is slow on it).
      if (d.lhs[0] == 64 && !(out == ElementType::kF32)) continue;
      int64_t terms;
      const std::vector<int64_t> result = DotResult(d, &terms);
      DiffCase c;
      c.op = "dot_general";
      c.what = ShapeText(in, d.lhs) + " x " + ShapeText(in, d.rhs) + " -> " + ShapeText(out, result) +
               " batch " + IntList(d.lhs_batch) + "x" + IntList(d.rhs_batch) + " contract " +
               IntList(d.lhs_contract) + "x" + IntList(d.rhs_contract);
      ValueGenerator values(SeedOf(c.op + c.what));
      ProgramBuilder b;
      const std::string lhs = b.Parameter(ArrayType{in, d.lhs});
      const std::string rhs = b.Parameter(ArrayType{in, d.rhs});
      c.program = b.Build({b.Op1("stablehlo.dot_general", {lhs, rhs}, ArrayType{out, result},
                                 DotAttributes(d))});
      c.inputs = {values.Random(ArrayType{in, d.lhs}, ProductValues(in)),
                  values.Random(ArrayType{in, d.rhs}, ProductValues(in))};
      c.tolerances = {ContractionTolerance(out, terms)};
      cases.push_back(std::move(c));
    }
  }
  ExpectAgree("dot_general", cases);
}

// A convolution: shapes in their layouts, the dimension numbers text and the window.
struct Conv {
  std::string layout;  // "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
  std::vector<int64_t> lhs, rhs;
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation;
  std::vector<std::vector<int64_t>> padding;
  int64_t feature_groups = 1, batch_groups = 1;
};

// Reads a layout "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]" into the position of each letter
// ('b', 'f', 'i', 'o') and spatial digit in each of the three parts.
struct Layout {
  std::vector<std::vector<std::string>> parts;
  int64_t Position(int part, const std::string& name) const {
    for (size_t i = 0; i < parts[part].size(); ++i) {
      if (parts[part][i] == name) return static_cast<int64_t>(i);
    }
    return -1;
  }
};

Layout ParseLayout(const std::string& text) {
  Layout layout;
  std::vector<std::string> current;
  std::string token;
  for (char ch : text) {
    if (ch == '[') {
      current.clear();
    } else if (ch == ']') {
      if (!token.empty()) current.push_back(token);
      token.clear();
      layout.parts.push_back(current);
    } else if (ch == ',') {
      current.push_back(token);
      token.clear();
    } else if (ch != ' ' && ch != 'x' && ch != '-' && ch != '>') {
      token += ch;
    }
  }
  return layout;
}

// The output shape of `conv` and the terms per output element.
std::vector<int64_t> ConvResult(const Conv& conv, int64_t* terms) {
  const Layout layout = ParseLayout(conv.layout);
  const size_t spatial = conv.strides.size();
  std::vector<int64_t> out(conv.lhs.size());
  out[layout.Position(2, "b")] = conv.lhs[layout.Position(0, "b")] / conv.batch_groups;
  out[layout.Position(2, "f")] = conv.rhs[layout.Position(1, "o")];
  *terms = conv.rhs[layout.Position(1, "i")];
  for (size_t s = 0; s < spatial; ++s) {
    const std::string name = std::to_string(s);
    const int64_t n = conv.lhs[layout.Position(0, name)];
    const int64_t k = conv.rhs[layout.Position(1, name)];
    *terms *= k;
    const int64_t dilated = n == 0 ? 0 : (n - 1) * conv.lhs_dilation[s] + 1;
    const int64_t padded = dilated + conv.padding[s][0] + conv.padding[s][1];
    const int64_t window = (k - 1) * conv.rhs_dilation[s] + 1;
    out[layout.Position(2, name)] = padded < window ? 0 : (padded - window) / conv.strides[s] + 1;
  }
  return out;
}

std::string ConvAttributes(const Conv& conv) {
  return "dimension_numbers = #stablehlo.conv<" + conv.layout + ">, window_strides = " +
         I64Array(conv.strides) + ", padding = " + I64Matrix(conv.padding, 2) +
         ", lhs_dilation = " + I64Array(conv.lhs_dilation) + ", rhs_dilation = " +
         I64Array(conv.rhs_dilation) + ", feature_group_count = " +
         std::to_string(conv.feature_groups) + " : i64, batch_group_count = " +
         std::to_string(conv.batch_groups) + " : i64";
}

TEST(ContractionDiffTest, Convolution) {
  const std::string nhwc = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]";
  const std::string nchw = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]";
  const std::vector<Conv> convs = {
      {nhwc, {2, 9, 9, 4}, {3, 3, 4, 5}, {1, 1}, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}},
      {nhwc, {2, 9, 8, 3}, {3, 2, 3, 4}, {2, 3}, {1, 1}, {1, 1}, {{0, 1}, {2, 0}}},
      {nhwc, {1, 6, 7, 2}, {2, 3, 2, 3}, {1, 2}, {2, 1}, {1, 2}, {{1, 0}, {0, 2}}},  // dilations
      {nhwc, {2, 7, 7, 4}, {3, 3, 2, 6}, {1, 1}, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}, 2},  // groups
      {nhwc, {1, 8, 8, 6}, {3, 3, 1, 6}, {2, 2}, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}, 6},  // depthwise
      {nhwc, {4, 5, 5, 3}, {2, 2, 3, 4}, {1, 1}, {1, 1}, {1, 1}, {{0, 0}, {0, 0}}, 1, 2},  // batch groups
      {nchw, {2, 3, 9, 10}, {4, 3, 3, 3}, {2, 1}, {1, 1}, {1, 1}, {{1, 2}, {-1, 1}}},  // NCHW
      {"[b, 0, f]x[0, i, o]->[b, 0, f]", {2, 20, 3}, {5, 3, 2}, {1}, {1}, {1}, {{2, 2}}},  // 1D
      {nhwc, {0, 5, 5, 2}, {3, 3, 2, 2}, {1, 1}, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}},  // no batch
  };
  const std::vector<ElementType> types = {ElementType::kF32, ElementType::kF64, ElementType::kBF16,
                                          ElementType::kF16, ElementType::kS32, ElementType::kC64};
  std::vector<DiffCase> cases;
  for (ElementType t : types) {
    for (const Conv& conv : convs) {
      int64_t terms;
      const std::vector<int64_t> result = ConvResult(conv, &terms);
      DiffCase c;
      c.op = "convolution";
      c.what = ShapeText(t, conv.lhs) + " * " + ShapeText(t, conv.rhs) + " -> " +
               ShapeText(t, result) + " " + ConvAttributes(conv);
      ValueGenerator values(SeedOf(c.op + c.what));
      ProgramBuilder b;
      const std::string lhs = b.Parameter(ArrayType{t, conv.lhs});
      const std::string rhs = b.Parameter(ArrayType{t, conv.rhs});
      c.program = b.Build({b.Op1("stablehlo.convolution", {lhs, rhs}, ArrayType{t, result},
                                 ConvAttributes(conv))});
      // The interpreter multiplies the kernel with the zeros of the padding and of the lhs
      // dilation holes (0 * inf = NaN); XLA (and the sim) skip them: the kernel stays finite.
      ValuePolicy kernel = ProductValues(t);
      kernel.nan_inf = false;
      c.inputs = {values.Random(ArrayType{t, conv.lhs}, ProductValues(t)),
                  values.Random(ArrayType{t, conv.rhs}, kernel)};
      c.tolerances = {ContractionTolerance(t, terms)};
      cases.push_back(std::move(c));
    }
  }
  ExpectAgree("convolution", cases);
}

}  // namespace
}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit
