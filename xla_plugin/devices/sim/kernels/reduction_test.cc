// The reduction kernels beyond the generated tables: every Check refusal with its message, the
// semantics the tables cannot show (init values that are not identities, promotion, rank 0, the
// spec's scatter example, variadic scatter), randomized parameters against plain reference loops
// (typed and engine paths), and sizes large enough to show the algorithms are not quadratic.
#include "xla_plugin/devices/sim/kernels/reduction.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/testdata/reduction_test_util.h"

namespace pjrtkit {
namespace sim {
namespace {

using testing::BinaryComputation;
using testing::Buffer;

constexpr ElementType kF32 = ElementType::kF32;
constexpr ElementType kS32 = ElementType::kS32;
constexpr ElementType kS8 = ElementType::kS8;
constexpr ElementType kPred = ElementType::kPred;

void ExpectRefused(const Status& status, const std::string& text) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find(text), std::string::npos)
      << "message: " << status.message() << "\nexpected to contain: " << text;
}

ArrayType T(ElementType type, std::vector<int64_t> dims) { return ArrayType{type, dims}; }

// Buffer of `type` with values[k] in element k.
Buffer Values(ElementType type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Buffer b(type, std::move(dims));
  for (size_t k = 0; k < values.size(); ++k) testing::SetElement(type, b.data(), k, values[k]);
  return b;
}

std::vector<double> ToDoubles(const Buffer& b) {
  std::vector<double> out;
  for (int64_t k = 0; k < b.type().num_elements(); ++k) {
    out.push_back(testing::ElementValue(b.type().type, b.data(), k));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// reduce

ReduceParams SumParams(std::vector<int64_t> dims, ElementType type = kF32,
                       Combiner combiner = Combiner::kAdd) {
  ReduceParams p;
  p.dimensions = std::move(dims);
  p.body = BinaryComputation(EwOp::kAdd, type, combiner);
  return p;
}

TEST(CheckReduceTest, Refusals) {
  const ArrayType x = T(kF32, {2, 3}), init = T(kF32, {}), out = T(kF32, {2});
  const ReduceParams p = SumParams({1});
  EXPECT_TRUE(CheckReduce(p, {&x, &init}, {&out}).ok());
  ExpectRefused(CheckReduce(p, {&x, &init}, {}),
                "reduce: no results (expected one per input, at least 1)");
  ExpectRefused(CheckReduce(p, {&x}, {&out}),
                "reduce: 1 operands (expected 2 x 1 results: the inputs, then their init values)");
  ExpectRefused(CheckReduce(p, {&x, nullptr}, {&out}), "reduce: operand 1 has no type");
  const ArrayType s4 = T(ElementType::kS4, {2, 3});
  ExpectRefused(CheckReduce(p, {&s4, &init}, {&out}),
                "reduce: operand 0 (s4[2,3]): element type not supported by the sim kernels");
  const ArrayType negative = T(kF32, {2, -3});
  ExpectRefused(CheckReduce(p, {&negative, &init}, {&out}),
                "reduce: operand 0 (f32[2,-3]): dimension 1 is negative (expected >= 0)");
  const ArrayType huge = T(kF32, {int64_t{1} << 40, int64_t{1} << 30});
  ExpectRefused(CheckReduce(p, {&huge, &init}, {&out}), "reduce: operand 0 (f32[");
  ExpectRefused(CheckReduce(SumParams({2}), {&x, &init}, {&out}),
                "reduce: dimensions[0] = 2 (expected 0 <= it < rank 2 of f32[2,3])");
  ExpectRefused(CheckReduce(SumParams({-1}), {&x, &init}, {&out}),
                "reduce: dimensions[0] = -1 (expected 0 <= it < rank 2 of f32[2,3])");
  const ArrayType scalar_out = T(kF32, {});
  ExpectRefused(CheckReduce(SumParams({1, 1}), {&x, &init}, {&scalar_out}),
                "reduce: dimensions [1, 1] repeat 1 (expected unique dimensions)");
  const ArrayType wrong_out = T(kF32, {3});
  ExpectRefused(CheckReduce(p, {&x, &init}, {&wrong_out}),
                "reduce: result 0 (f32[3]): expected dimensions [2] (the input's without the "
                "reduced ones)");
  const ArrayType init_vec = T(kF32, {1});
  ExpectRefused(CheckReduce(p, {&x, &init_vec}, {&out}),
                "reduce: init value 0 (f32[1]): expected a f32 scalar");
  const ArrayType init_s32 = T(kS32, {});
  ExpectRefused(CheckReduce(p, {&x, &init_s32}, {&out}),
                "reduce: init value 0 (s32[]): expected a f32 scalar");
  const ArrayType out_s32 = T(kS32, {2});
  ExpectRefused(CheckReduce(SumParams({1}, kS32), {&x, &init}, {&out_s32}),
                "reduce: result 0 (s32[2]): input type f32 is not promotable to the result type");
  // Two inputs of different shapes.
  const ArrayType y = T(kS32, {3, 2}), y_init = T(kS32, {}), y_out = T(kS32, {2});
  ReduceParams pair;
  pair.dimensions = {1};
  pair.body = BinaryComputation(EwOp::kAdd, kF32, Combiner::kGeneric);
  ExpectRefused(CheckReduce(pair, {&x, &y, &init, &y_init}, {&out, &y_out}),
                "reduce: input 1 (s32[3,2]): shape differs from input 0 (expected [2, 3])");
  // The body does not take (acc, element) of the result types.
  ExpectRefused(CheckReduce(SumParams({1}, kS32, Combiner::kGeneric), {&x, &init}, {&out}),
                "reduce: body: scalar computation: parameter 0 has type s32 (expected f32)");
  ExpectRefused(CheckReduce(SumParams({1}, kF32, Combiner::kMaximum), {&x, &init}, {&out}),
                "reduce: body: scalar computation: combiner maximum does not match the body");
}

// Runs a reduce and returns its single result.
Buffer RunReduce1(const ReduceParams& p, const Buffer& x, const Buffer& init,
                  ElementType result_type, std::vector<int64_t> result_dims) {
  Buffer out(result_type, std::move(result_dims));
  const Status checked = CheckReduce(p, {&x.type(), &init.type()}, {&out.type()});
  EXPECT_TRUE(checked.ok()) << checked.ToString();
  EXPECT_TRUE(RunReduce(p, {x.arg(), init.arg()}, {out.result()}).ok());
  return out;
}

// Composition of affine maps x -> a * x + b on s32 pairs (a, b): associative, not commutative.
// (a1, b1) then (a2, b2) is (a1 * a2, a2 * b1 + b2): any grouping of the elements in their order
// gives the sequential result, any reordering (almost always) another one.
ScalarComputation AffineComposition() {
  ScalarComputation c;
  c.body.inputs = {EwInput{kS32, {}}, EwInput{kS32, {}}, EwInput{kS32, {}}, EwInput{kS32, {}}};
  for (int i = 0; i < 4; ++i) {
    EwStep in{EwOp::kInput, kS32};
    in.attr = i;
    c.body.steps.push_back(in);
  }
  EwStep a{EwOp::kMultiply, kS32};  // 4: a1 * a2
  a.operands[0] = 0;
  a.operands[1] = 2;
  EwStep ab{EwOp::kMultiply, kS32};  // 5: a2 * b1
  ab.operands[0] = 2;
  ab.operands[1] = 1;
  EwStep b{EwOp::kAdd, kS32};  // 6: a2 * b1 + b2
  b.operands[0] = 5;
  b.operands[1] = 3;
  c.body.steps = {c.body.steps[0], c.body.steps[1], c.body.steps[2], c.body.steps[3], a, ab, b};
  c.body.outputs = {4, 6};
  return c;
}

// (a, b) composed with (a2, b2), wrapping like s32.
std::pair<int32_t, int32_t> Compose(std::pair<int32_t, int32_t> x, int32_t a2, int32_t b2) {
  const uint32_t a = static_cast<uint32_t>(x.first) * static_cast<uint32_t>(a2);
  const uint32_t b =
      static_cast<uint32_t>(a2) * static_cast<uint32_t>(x.second) + static_cast<uint32_t>(b2);
  return {static_cast<int32_t>(a), static_cast<int32_t>(b)};
}

// XLA:CPU drops the init value where nothing is combined (it assumes an identity); the kernel
// applies it exactly once per result element in every case (the spec allows either).
TEST(ReduceTest, InitValueAppliedOnceEvenWithNothingToCombine) {
  for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
    const Buffer init = Values(kF32, {}, {5});
    EXPECT_EQ(ToDoubles(RunReduce1(SumParams({}, kF32, combiner), Values(kF32, {}, {2.5}), init,
                                   kF32, {})),
              std::vector<double>{7.5});
    EXPECT_EQ(ToDoubles(RunReduce1(SumParams({0, 2}, kF32, combiner),
                                   Values(kF32, {1, 2, 1}, {1, 2}), init, kF32, {2})),
              (std::vector<double>{6, 7}));
    EXPECT_EQ(
        ToDoubles(RunReduce1(SumParams({1}, kF32, combiner),
                             Values(kF32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), init, kF32, {2})),
        (std::vector<double>{15, 31}));
    EXPECT_EQ(ToDoubles(RunReduce1(SumParams({1}, kF32, combiner), Buffer(kF32, {3, 0}), init, kF32,
                                   {3})),
              (std::vector<double>{5, 5, 5}));
  }
}

// Inputs promoted to a wider result type (StableHLO's is_promotable): s8 sums in s32.
TEST(ReduceTest, PromotesInputsToTheResultType) {
  const Buffer x = Values(kS8, {2, 3}, {100, 100, 100, -128, -128, 1});
  for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
    const ReduceParams p = SumParams({1}, kS32, combiner);
    EXPECT_EQ(ToDoubles(RunReduce1(p, x, Values(kS8, {}, {7}), kS32, {2})),
              (std::vector<double>{307, -248}));
  }
}

// Pairwise order is visible where each step rounds: 2048 + four ones in f16 is 2052 here (the
// ones meet first) and 2048 sequentially (XLA:CPU).
TEST(ReduceTest, LowPrecisionSumsArePairwise) {
  const Buffer x = Values(ElementType::kF16, {4}, {1, 1, 1, 1});
  const ReduceParams p = SumParams({0}, ElementType::kF16, Combiner::kAdd);
  EXPECT_EQ(
      ToDoubles(RunReduce1(p, x, Values(ElementType::kF16, {}, {2048}), ElementType::kF16, {})),
      std::vector<double>{2052});
}

// Plain per-output reference: init op x0 op x1 ... over the reduced elements in row-major order.
std::vector<int64_t> ReferenceReduce(const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& reduce,
                                     const std::vector<int32_t>& x, int32_t init) {
  std::vector<bool> reduced(dims.size(), false);
  for (int64_t d : reduce) reduced[d] = true;
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!reduced[d]) out_dims.push_back(dims[d]);
  }
  int64_t out_count = 1;
  for (int64_t d : out_dims) out_count *= d;
  std::vector<int64_t> out(out_count, init);
  const std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t k = 0; k < x.size(); ++k) {
    int64_t o = 0;
    for (size_t d = 0, j = 0; d < dims.size(); ++d) {
      if (!reduced[d]) o += index[d] * out_strides[j++];
    }
    out[o] = static_cast<int32_t>(static_cast<uint32_t>(out[o]) + static_cast<uint32_t>(x[k]));
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

TEST(ReduceTest, RandomShapesAndDimensionsAgainstAReference) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = static_cast<int>(rng() % 5);
    std::vector<int64_t> dims, reduce, out_dims;
    for (int d = 0; d < rank; ++d) {
      dims.push_back(rng() % 9 == 0 ? 0 : 1 + rng() % 5);
      if (rng() % 2) {
        reduce.push_back(d);
      } else {
        out_dims.push_back(dims.back());
      }
    }
    std::shuffle(reduce.begin(), reduce.end(), rng);
    Buffer x(kS32, dims);
    std::vector<int32_t> values(x.type().num_elements());
    for (int32_t& v : values) v = static_cast<int32_t>(rng());
    if (!values.empty()) std::memcpy(x.data(), values.data(), values.size() * 4);
    const int32_t init = static_cast<int32_t>(rng() % 100);
    const std::vector<int64_t> want = ReferenceReduce(dims, reduce, values, init);
    for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " dims " + x.type().ToString());
      const Buffer got = RunReduce1(SumParams(reduce, kS32, combiner), x,
                                    Values(kS32, {}, {static_cast<double>(init)}), kS32, out_dims);
      std::vector<int64_t> got_values(want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        got_values[k] = static_cast<const int32_t*>(got.data())[k];
      }
      ASSERT_EQ(got_values, want);
    }
  }
}

// The engine's tree keeps the elements' order (the spec's in-order schedule): reducing affine
// maps composes them in index order, for every layout and odd or even lengths.
TEST(ReduceTest, TreeKeepsElementOrder) {
  std::mt19937 rng(13);
  const struct {
    std::vector<int64_t> dims, reduce;
  } shapes[] = {{{3, 1}, {1}},       {{3, 2}, {1}},     {{2, 7}, {1}},          {{100}, {0}},
                {{33, 3}, {0}},      {{4, 19, 3}, {1}}, {{2, 5, 3, 6}, {1, 3}}, {{5, 2, 9}, {0, 2}},
                {{6, 4, 5}, {2, 0}}, {{3, 0}, {1}}};
  for (const auto& shape : shapes) {
    Buffer a(kS32, shape.dims), b(kS32, shape.dims);
    const int64_t count = a.type().num_elements();
    for (int64_t e = 0; e < count; ++e) {
      static_cast<int32_t*>(a.data())[e] = static_cast<int32_t>(rng() % 7) - 3;
      static_cast<int32_t*>(b.data())[e] = static_cast<int32_t>(rng() % 100);
    }
    // Sequential reference per result element (reduced elements in row-major order).
    std::vector<bool> reduced(shape.dims.size(), false);
    for (int64_t d : shape.reduce) reduced[d] = true;
    std::vector<int64_t> out_dims;
    for (size_t d = 0; d < shape.dims.size(); ++d) {
      if (!reduced[d]) out_dims.push_back(shape.dims[d]);
    }
    const std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
    int64_t out_count = 1;
    for (int64_t d : out_dims) out_count *= d;
    std::vector<std::pair<int32_t, int32_t>> want(out_count, {1, 0});
    std::vector<int64_t> index(shape.dims.size(), 0);
    for (int64_t e = 0; e < count; ++e) {
      int64_t o = 0;
      for (size_t d = 0, j = 0; d < shape.dims.size(); ++d) {
        if (!reduced[d]) o += index[d] * out_strides[j++];
      }
      want[o] =
          Compose(want[o], static_cast<int32_t*>(a.data())[e], static_cast<int32_t*>(b.data())[e]);
      for (int d = static_cast<int>(shape.dims.size()) - 1; d >= 0; --d) {
        if (++index[d] < shape.dims[d]) break;
        index[d] = 0;
      }
    }
    ReduceParams p;
    p.dimensions = shape.reduce;
    p.body = AffineComposition();
    const Buffer one = Values(kS32, {}, {1}), zero = Values(kS32, {}, {0});
    Buffer out_a(kS32, out_dims), out_b(kS32, out_dims);
    SCOPED_TRACE(a.type().ToString());
    const Status checked = CheckReduce(p, {&a.type(), &b.type(), &one.type(), &zero.type()},
                                       {&out_a.type(), &out_b.type()});
    ASSERT_TRUE(checked.ok()) << checked.ToString();
    ASSERT_TRUE(
        RunReduce(p, {a.arg(), b.arg(), one.arg(), zero.arg()}, {out_a.result(), out_b.result()})
            .ok());
    for (int64_t o = 0; o < out_count; ++o) {
      EXPECT_EQ(static_cast<int32_t*>(out_a.data())[o], want[o].first) << o;
      EXPECT_EQ(static_cast<int32_t*>(out_b.data())[o], want[o].second) << o;
    }
  }
}

// Large reductions stay fast and accurate: 2^22 f32 ones sum exactly (pairwise), a 2000 x 2000
// reduction over either dimension, and an argmax-like variadic reduction of 2^20 elements through
// the engine (log2 of that many vector calls).
TEST(ReduceTest, LargeReductions) {
  const int64_t n = int64_t{1} << 22;
  Buffer ones(kF32, {n});
  for (int64_t k = 0; k < n; ++k) static_cast<float*>(ones.data())[k] = 1.0f;
  EXPECT_EQ(ToDoubles(RunReduce1(SumParams({0}), ones, Values(kF32, {}, {0}), kF32, {})),
            std::vector<double>{static_cast<double>(n)});
  Buffer square(kF32, {2000, 2000});
  for (int64_t k = 0; k < 4000000; ++k) static_cast<float*>(square.data())[k] = (k % 7) * 0.5f;
  for (int64_t d : {0, 1}) {
    const Buffer sums = RunReduce1(SumParams({d}), square, Values(kF32, {}, {0}), kF32, {2000});
    for (int64_t k = 0; k < 2000; k += 199) {
      double want = 0;
      for (int64_t j = 0; j < 2000; ++j) want += ((d == 0 ? j * 2000 + k : k * 2000 + j) % 7) * 0.5;
      EXPECT_NEAR(static_cast<const float*>(sums.data())[k], want, 1e-5 * want);
    }
  }
  // max of (value, -value) pairs through the engine (generic body, two operands).
  const int64_t m = int64_t{1} << 20;
  Buffer a(kS32, {m}), b(kS32, {m});
  for (int64_t k = 0; k < m; ++k) {
    static_cast<int32_t*>(a.data())[k] = static_cast<int32_t>((k * 7919) % 1000003);
    static_cast<int32_t*>(b.data())[k] = static_cast<int32_t>(k);
  }
  ReduceParams p;
  p.dimensions = {0};
  p.body.body.inputs = {EwInput{kS32, {}}, EwInput{kS32, {}}, EwInput{kS32, {}}, EwInput{kS32, {}}};
  for (int i = 0; i < 4; ++i) {
    EwStep in{EwOp::kInput, kS32};
    in.attr = i;
    p.body.body.steps.push_back(in);
  }
  EwStep max0{EwOp::kMaximum, kS32};
  max0.operands[0] = 0;
  max0.operands[1] = 2;
  EwStep min1{EwOp::kMinimum, kS32};
  min1.operands[0] = 1;
  min1.operands[1] = 3;
  p.body.body.steps.push_back(max0);
  p.body.body.steps.push_back(min1);
  p.body.body.outputs = {4, 5};
  Buffer init0 = Values(kS32, {}, {-1}), init1 = Values(kS32, {}, {1 << 30});
  Buffer out0(kS32, {}), out1(kS32, {});
  ASSERT_TRUE(CheckReduce(p, {&a.type(), &b.type(), &init0.type(), &init1.type()},
                          {&out0.type(), &out1.type()})
                  .ok());
  ASSERT_TRUE(
      RunReduce(p, {a.arg(), b.arg(), init0.arg(), init1.arg()}, {out0.result(), out1.result()})
          .ok());
  int32_t want_max = -1;
  for (int64_t k = 0; k < m; ++k) want_max = std::max(want_max, static_cast<int32_t*>(a.data())[k]);
  EXPECT_EQ(*static_cast<int32_t*>(out0.data()), want_max);
  EXPECT_EQ(*static_cast<int32_t*>(out1.data()), 0);
}

// ---------------------------------------------------------------------------------------------
// reduce_window

ReduceWindowParams WindowParams(std::vector<int64_t> window, ElementType type = kF32,
                                Combiner combiner = Combiner::kAdd) {
  ReduceWindowParams p;
  p.window_dimensions = std::move(window);
  p.body = BinaryComputation(EwOp::kAdd, type, combiner);
  return p;
}

TEST(CheckReduceWindowTest, Refusals) {
  const ArrayType x = T(kF32, {4, 5}), init = T(kF32, {}), out = T(kF32, {3, 4});
  ReduceWindowParams p = WindowParams({2, 2});
  EXPECT_TRUE(CheckReduceWindow(p, {&x, &init}, {&out}).ok());
  ExpectRefused(CheckReduceWindow(p, {&x, &init}, {}),
                "reduce_window: no results (expected one per input, at least 1)");
  ExpectRefused(CheckReduceWindow(p, {&x, &init, &init}, {&out}),
                "reduce_window: 3 operands (expected 2 x 1 results");
  ExpectRefused(CheckReduceWindow(WindowParams({2}), {&x, &init}, {&out}),
                "reduce_window: window_dimensions has 1 entries (expected the rank 2)");
  ExpectRefused(CheckReduceWindow(WindowParams({2, 0}), {&x, &init}, {&out}),
                "reduce_window: window_dimensions[1] = 0 (expected 1 <= it <= 1099511627776)");
  ReduceWindowParams bad = p;
  bad.window_strides = {1, 0};
  ExpectRefused(CheckReduceWindow(bad, {&x, &init}, {&out}),
                "reduce_window: window_strides[1] = 0 (expected 1 <= it <= 1099511627776)");
  bad = p;
  bad.window_strides = {1};
  ExpectRefused(CheckReduceWindow(bad, {&x, &init}, {&out}),
                "reduce_window: window_strides has 1 entries (expected the rank 2)");
  bad = p;
  bad.base_dilations = {0, 1};
  ExpectRefused(CheckReduceWindow(bad, {&x, &init}, {&out}),
                "reduce_window: base_dilations[0] = 0 (expected 1 <= it <= 1099511627776)");
  bad = p;
  bad.window_dilations = {1, -2};
  ExpectRefused(CheckReduceWindow(bad, {&x, &init}, {&out}),
                "reduce_window: window_dilations[1] = -2 (expected 1 <= it <= 1099511627776)");
  bad = p;
  bad.padding = {{0, 0}};
  ExpectRefused(CheckReduceWindow(bad, {&x, &init}, {&out}),
                "reduce_window: padding has 1 rows (expected the rank 2)");
  bad = p;
  bad.padding = {{0, 0}, {int64_t{1} << 50, 0}};
  ExpectRefused(CheckReduceWindow(bad, {&x, &init}, {&out}),
                "reduce_window: padding[1] = (1125899906842624, 0) (expected values within "
                "+-1099511627776)");
  const ArrayType wide = T(kF32, {int64_t{1} << 30, 2});
  bad = p;
  bad.base_dilations = {int64_t{1} << 35, 1};
  ExpectRefused(CheckReduceWindow(bad, {&wide, &init}, {&out}),
                "reduce_window: dimension 0 dilated by base_dilations is too large");
  const ArrayType wrong = T(kF32, {4, 4});
  ExpectRefused(CheckReduceWindow(p, {&x, &init}, {&wrong}),
                "reduce_window: result 0 (f32[4,4]): expected dimensions [3, 4] (the number of "
                "windows)");
  ExpectRefused(CheckReduceWindow(p, {&x, &wrong}, {&out}),
                "reduce_window: init value 0 (f32[4,4]): expected a f32 scalar");
  const ArrayType out_s32 = T(kS32, {3, 4});
  ExpectRefused(CheckReduceWindow(WindowParams({2, 2}, kS32), {&x, &init}, {&out_s32}),
                "reduce_window: result 0 (s32[3,4]): input type f32 is not promotable");
  ExpectRefused(
      CheckReduceWindow(WindowParams({2, 2}, kF32, Combiner::kMultiply), {&x, &init}, {&out}),
      "reduce_window: body: scalar computation: combiner multiply does not match");
  const ArrayType y = T(kF32, {4, 4});
  ReduceWindowParams pair = WindowParams({2, 2}, kF32, Combiner::kGeneric);
  ExpectRefused(CheckReduceWindow(pair, {&x, &y, &init, &init}, {&out, &out}),
                "reduce_window: input 1 (f32[4,4]): shape differs from input 0");
  // Windows whose offsets reach the input more than 2^32 times are refused (never run).
  const ArrayType big = T(kF32, {70000, 70000});
  ReduceWindowParams cum = WindowParams({70000, 70000});
  cum.padding = {{69999, 0}, {69999, 0}};
  const ArrayType big_out = T(kF32, {70000, 70000});
  ExpectRefused(CheckReduceWindow(cum, {&big, &init}, {&big_out}),
                "reduce_window: the window has more than 4294967296 offsets that reach the input");
}

// As XLA:CPU: the init value once, then the window's input elements; padding and holes skipped.
// With nothing in the window but one element, XLA drops the init (it assumes an identity); the
// kernel still applies it once.
TEST(ReduceWindowTest, InitValueAppliedOnce) {
  for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
    const ReduceWindowParams p = WindowParams({}, kF32, combiner);
    const Buffer x = Values(kF32, {}, {3}), init = Values(kF32, {}, {4});
    Buffer out(kF32, {});
    ASSERT_TRUE(CheckReduceWindow(p, {&x.type(), &init.type()}, {&out.type()}).ok());
    ASSERT_TRUE(RunReduceWindow(p, {x.arg(), init.arg()}, {out.result()}).ok());
    EXPECT_EQ(ToDoubles(out), std::vector<double>{7});
  }
}

// Inputs promoted to a wider result type: s8 windows summed in s32.
TEST(ReduceWindowTest, PromotesInputsToTheResultType) {
  for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
    const ReduceWindowParams p = WindowParams({2}, kS32, combiner);
    const Buffer x = Values(kS8, {3}, {100, 100, -128}), init = Values(kS8, {}, {1});
    Buffer out(kS32, {2});
    const Status checked = CheckReduceWindow(p, {&x.type(), &init.type()}, {&out.type()});
    ASSERT_TRUE(checked.ok()) << checked.ToString();
    ASSERT_TRUE(RunReduceWindow(p, {x.arg(), init.arg()}, {out.result()}).ok());
    EXPECT_EQ(ToDoubles(out), (std::vector<double>{201, -27}));
  }
}

// One output's window the XLA way: acc = init; window offsets row-major; skip padding and holes.
std::vector<int32_t> ReferenceReduceWindow(const ReduceWindowParams& p,
                                           const std::vector<int64_t>& dims,
                                           const std::vector<int64_t>& out_dims, const int32_t* x,
                                           int32_t init) {
  const size_t rank = dims.size();
  int64_t out_count = 1, window_count = 1;
  for (int64_t d : out_dims) out_count *= d;
  for (int64_t w : p.window_dimensions) window_count *= w;
  const std::vector<int64_t> in_strides = RowMajorStrides(dims);
  std::vector<int32_t> out(out_count, init);
  std::vector<int64_t> o(rank, 0);
  for (int64_t k = 0; k < out_count; ++k) {
    int64_t rem = k;
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      o[d] = rem % out_dims[d];
      rem /= out_dims[d];
    }
    uint32_t acc = static_cast<uint32_t>(init);
    for (int64_t w = 0; w < window_count; ++w) {
      int64_t wrem = w, offset = 0;
      bool valid = true;
      for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
        const int64_t kd = wrem % p.window_dimensions[d];
        wrem /= p.window_dimensions[d];
        const int64_t pos =
            o[d] * p.window_strides[d] + kd * p.window_dilations[d] - p.padding[d].first;
        const int64_t bd = p.base_dilations[d];
        if (pos < 0 || pos % bd != 0 || pos / bd >= dims[d]) {
          valid = false;
          break;
        }
        offset += pos / bd * in_strides[d];
      }
      if (valid) acc += static_cast<uint32_t>(x[offset]);
    }
    out[k] = static_cast<int32_t>(acc);
  }
  return out;
}

TEST(ReduceWindowTest, RandomWindowsAgainstAReference) {
  std::mt19937 rng(5);
  int ran = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    ReduceWindowParams p = WindowParams({}, kS32);
    std::vector<int64_t> dims, out_dims;
    bool empty = false;
    for (int d = 0; d < rank; ++d) {
      const int64_t size = rng() % 8 == 0 ? 0 : 1 + rng() % 6;
      const int64_t w = 1 + rng() % 4, s = 1 + rng() % 3, bd = 1 + rng() % 3, wd = 1 + rng() % 3;
      const int64_t lo = static_cast<int64_t>(rng() % 6) - 2;
      const int64_t hi = static_cast<int64_t>(rng() % 6) - 2;
      dims.push_back(size);
      p.window_dimensions.push_back(w);
      p.window_strides.push_back(s);
      p.base_dilations.push_back(bd);
      p.window_dilations.push_back(wd);
      p.padding.push_back({lo, hi});
      const int64_t dilated = size == 0 ? 0 : (size - 1) * bd + 1;
      const int64_t padded = dilated + lo + hi;
      const int64_t span = (w - 1) * wd + 1;
      const int64_t windows = (padded <= 0 || span > padded) ? 0 : (padded - span) / s + 1;
      out_dims.push_back(windows);
      empty = empty || windows == 0;
    }
    Buffer x(kS32, dims);
    for (int64_t k = 0; k < x.type().num_elements(); ++k) {
      static_cast<int32_t*>(x.data())[k] = static_cast<int32_t>(rng() % 1000);
    }
    const int32_t init = static_cast<int32_t>(rng() % 10);
    const Buffer init_buffer = Values(kS32, {}, {static_cast<double>(init)});
    const std::vector<int32_t> want =
        ReferenceReduceWindow(p, dims, out_dims, static_cast<const int32_t*>(x.data()), init);
    for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
      p.body.combiner = combiner;
      Buffer out(kS32, out_dims);
      SCOPED_TRACE("trial " + std::to_string(trial));
      const Status checked = CheckReduceWindow(p, {&x.type(), &init_buffer.type()}, {&out.type()});
      ASSERT_TRUE(checked.ok()) << checked.ToString();
      ASSERT_TRUE(RunReduceWindow(p, {x.arg(), init_buffer.arg()}, {out.result()}).ok());
      ASSERT_EQ(std::vector<int32_t>(static_cast<const int32_t*>(out.data()),
                                     static_cast<const int32_t*>(out.data()) + want.size()),
                want);
    }
    ran += empty ? 0 : 1;
  }
  EXPECT_GT(ran, 150);
}

// Cumulative windows run as scans: a cumsum over 2^20 elements (a window of 2^20) and its
// reverse finish quickly, typed and through the engine (blocked: about 3 * 2^10 calls); values
// match a running sum (exact for integers).
TEST(ReduceWindowTest, LongCumulativeWindowsAreScans) {
  const int64_t n = int64_t{1} << 20;
  Buffer x(kS32, {2, n});
  for (int64_t k = 0; k < 2 * n; ++k) static_cast<int32_t*>(x.data())[k] = (k % 5) - 2;
  const Buffer init = Values(kS32, {}, {0});
  for (bool reverse : {false, true}) {
    for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
      ReduceWindowParams p = WindowParams({1, n}, kS32, combiner);
      p.padding = {{0, 0}, {reverse ? 0 : n - 1, reverse ? n - 1 : 0}};
      Buffer out(kS32, {2, n});
      ASSERT_TRUE(CheckReduceWindow(p, {&x.type(), &init.type()}, {&out.type()}).ok());
      ASSERT_TRUE(RunReduceWindow(p, {x.arg(), init.arg()}, {out.result()}).ok());
      const int32_t* in = static_cast<const int32_t*>(x.data());
      const int32_t* got = static_cast<const int32_t*>(out.data());
      for (int64_t row = 0; row < 2; ++row) {
        int64_t acc = 0;
        for (int64_t t = 0; t < n; ++t) {
          const int64_t k = reverse ? n - 1 - t : t;
          acc += in[row * n + k];
          ASSERT_EQ(got[row * n + k], acc) << "row " << row << " index " << k;
        }
      }
    }
  }
}

// Blocked engine scans (few lanes, long rows) against the typed loops, both directions, prefix
// windows longer than the row too (results past the row repeat its total).
TEST(ReduceWindowTest, BlockedEngineScansMatchTypedScans) {
  std::mt19937 rng(17);
  int ran = 0;
  for (int64_t rows : {65, 100, 1000, 4097}) {
    for (int64_t outer : {1, 3}) {
      for (int64_t inner : {1, 2}) {
        for (int direction = 0; direction < 3; ++direction) {
          const bool reverse = direction == 1;
          const int64_t extra = direction == 2 ? 5 : 0;  // Window past the row's end.
          Buffer x(kS32, {outer, rows, inner});
          for (int64_t k = 0; k < x.type().num_elements(); ++k) {
            static_cast<int32_t*>(x.data())[k] = static_cast<int32_t>(rng());
          }
          const Buffer init = Values(kS32, {}, {7});
          std::vector<Buffer> outs;
          for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
            ReduceWindowParams p = WindowParams({1, rows + extra, 1}, kS32, combiner);
            p.padding = {{0, 0}, {reverse ? 0 : rows - 1 + extra, reverse ? rows - 1 : 0}, {0, 0}};
            outs.emplace_back(kS32, std::vector<int64_t>{outer, rows, inner});
            const Status checked =
                CheckReduceWindow(p, {&x.type(), &init.type()}, {&outs.back().type()});
            ASSERT_TRUE(checked.ok()) << checked.ToString();
            ASSERT_TRUE(RunReduceWindow(p, {x.arg(), init.arg()}, {outs.back().result()}).ok());
          }
          EXPECT_EQ(testing::Compare(outs[1], outs[0], 0), "")
              << rows << " rows, " << outer << " x " << inner << " lanes, direction " << direction;
          ++ran;
        }
      }
    }
  }
  EXPECT_EQ(ran, 48);
}

// Engine scans keep the order too: affine maps composed along long rows (blocked) and short
// ones, forward and reverse, against sequential composition (a reverse window o composes x_o,
// x_o+1, ... in that order).
TEST(ReduceWindowTest, EngineScansKeepElementOrder) {
  std::mt19937 rng(19);
  for (int64_t rows : {5, 64, 65, 300, 2000}) {
    for (bool reverse : {false, true}) {
      const int64_t lanes = 3;
      Buffer a(kS32, {lanes, rows}), b(kS32, {lanes, rows});
      for (int64_t e = 0; e < lanes * rows; ++e) {
        static_cast<int32_t*>(a.data())[e] = static_cast<int32_t>(rng() % 7) - 3;
        static_cast<int32_t*>(b.data())[e] = static_cast<int32_t>(rng() % 100);
      }
      ReduceWindowParams p;
      p.window_dimensions = {1, rows};
      p.padding = {{0, 0}, {reverse ? 0 : rows - 1, reverse ? rows - 1 : 0}};
      p.body = AffineComposition();
      const Buffer one = Values(kS32, {}, {1}), zero = Values(kS32, {}, {0});
      Buffer out_a(kS32, {lanes, rows}), out_b(kS32, {lanes, rows});
      SCOPED_TRACE(std::to_string(rows) + (reverse ? " reverse" : " forward"));
      const Status checked = CheckReduceWindow(p, {&a.type(), &b.type(), &one.type(), &zero.type()},
                                               {&out_a.type(), &out_b.type()});
      ASSERT_TRUE(checked.ok()) << checked.ToString();
      ASSERT_TRUE(RunReduceWindow(p, {a.arg(), b.arg(), one.arg(), zero.arg()},
                                  {out_a.result(), out_b.result()})
                      .ok());
      for (int64_t l = 0; l < lanes; ++l) {
        for (int64_t o = 0; o < rows; ++o) {
          std::pair<int32_t, int32_t> want = {1, 0};
          const int64_t first = reverse ? o : 0, last = reverse ? rows - 1 : o;
          for (int64_t e = first; e <= last; ++e) {
            want = Compose(want, static_cast<int32_t*>(a.data())[l * rows + e],
                           static_cast<int32_t*>(b.data())[l * rows + e]);
          }
          ASSERT_EQ(static_cast<int32_t*>(out_a.data())[l * rows + o], want.first) << l << " " << o;
          ASSERT_EQ(static_cast<int32_t*>(out_b.data())[l * rows + o], want.second)
              << l << " " << o;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// select_and_scatter

SelectAndScatterParams SasParams(std::vector<int64_t> window, std::vector<int64_t> strides,
                                 ElementType type = kF32, Combiner combiner = Combiner::kAdd) {
  SelectAndScatterParams p;
  p.window_dimensions = std::move(window);
  p.window_strides = std::move(strides);
  p.select = testing::CompareComputation(ComparisonDirection::kGe, type);
  p.scatter = BinaryComputation(EwOp::kAdd, type, combiner);
  return p;
}

TEST(CheckSelectAndScatterTest, Refusals) {
  const ArrayType x = T(kF32, {4, 6}), src = T(kF32, {2, 3}), init = T(kF32, {});
  const SelectAndScatterParams p = SasParams({2, 2}, {2, 2});
  EXPECT_TRUE(CheckSelectAndScatter(p, {&x, &src, &init}, {&x}).ok());
  ExpectRefused(CheckSelectAndScatter(p, {&x, &src}, {&x}),
                "select_and_scatter: 2 operands and 1 results (expected 3: operand, source, init "
                "value; and 1)");
  ExpectRefused(CheckSelectAndScatter(p, {&x, nullptr, &init}, {&x}),
                "select_and_scatter: source has no type");
  const ArrayType src_s32 = T(kS32, {2, 3});
  ExpectRefused(CheckSelectAndScatter(p, {&x, &src_s32, &init}, {&x}),
                "select_and_scatter: source (s32[2,3]): expected element type f32 (the "
                "operand's)");
  ExpectRefused(CheckSelectAndScatter(p, {&x, &src, &src}, {&x}),
                "select_and_scatter: init value (f32[2,3]): expected a f32 scalar");
  ExpectRefused(CheckSelectAndScatter(SasParams({2}, {2, 2}), {&x, &src, &init}, {&x}),
                "select_and_scatter: window_dimensions has 1 entries (expected the rank 2)");
  ExpectRefused(CheckSelectAndScatter(SasParams({2, 2}, {2, 0}), {&x, &src, &init}, {&x}),
                "select_and_scatter: window_strides[1] = 0 (expected 1 <= it <= 1099511627776)");
  SelectAndScatterParams padded = p;
  padded.padding = {{0, 0}, {0, 0}, {0, 0}};
  ExpectRefused(CheckSelectAndScatter(padded, {&x, &src, &init}, {&x}),
                "select_and_scatter: padding has 3 rows (expected the rank 2)");
  const ArrayType src_wrong = T(kF32, {3, 3});
  ExpectRefused(CheckSelectAndScatter(p, {&x, &src_wrong, &init}, {&x}),
                "select_and_scatter: source (f32[3,3]): expected dimensions [2, 3] (the number "
                "of windows)");
  ExpectRefused(CheckSelectAndScatter(p, {&x, &src, &init}, {&src}),
                "select_and_scatter: result (f32[2,3]): expected the operand's shape [4, 6]");
  SelectAndScatterParams select_add = p;
  select_add.select = BinaryComputation(EwOp::kAdd, kF32, Combiner::kGeneric);
  ExpectRefused(CheckSelectAndScatter(select_add, {&x, &src, &init}, {&x}),
                "select_and_scatter: select: scalar computation: result 0 has type f32 "
                "(expected pred)");
  SelectAndScatterParams scatter_s32 = p;
  scatter_s32.scatter = BinaryComputation(EwOp::kAdd, kS32, Combiner::kAdd);
  ExpectRefused(CheckSelectAndScatter(scatter_s32, {&x, &src, &init}, {&x}),
                "select_and_scatter: scatter: scalar computation: parameter 0 has type s32 "
                "(expected f32)");
}

Buffer RunSas(const SelectAndScatterParams& p, const Buffer& x, const Buffer& src,
              const Buffer& init) {
  Buffer out(init.type().type, x.type().dims);
  const Status checked =
      CheckSelectAndScatter(p, {&x.type(), &src.type(), &init.type()}, {&out.type()});
  EXPECT_TRUE(checked.ok()) << checked.ToString();
  EXPECT_TRUE(RunSelectAndScatter(p, {x.arg(), src.arg(), init.arg()}, {out.result()}).ok());
  return out;
}

TEST(SelectAndScatterTest, RankZeroAndPaddingOnlyWindows) {
  for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
    EXPECT_EQ(ToDoubles(RunSas(SasParams({}, {}, kF32, combiner), Values(kF32, {}, {2}),
                               Values(kF32, {}, {3}), Values(kF32, {}, {1}))),
              std::vector<double>{4});
    // Window 2, stride 2, padding (2, 2) over 2 elements: windows [pad pad] [x0 x1] [pad pad].
    SelectAndScatterParams p = SasParams({2}, {2}, kF32, combiner);
    p.padding = {{2, 2}};
    EXPECT_EQ(ToDoubles(RunSas(p, Values(kF32, {2}, {1, 5}), Values(kF32, {3}, {10, 20, 30}),
                               Values(kF32, {}, {0}))),
              (std::vector<double>{0, 20}));
  }
}

// The scatter body on a wider type: s8 operand and source, s32 result.
TEST(SelectAndScatterTest, PromotesToTheScatterType) {
  for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
    SelectAndScatterParams p = SasParams({2}, {1}, kS32, combiner);
    p.select = testing::CompareComputation(ComparisonDirection::kGe, kS8);
    const Buffer x = Values(kS8, {3}, {5, 9, 1}), src = Values(kS8, {2}, {100, 100});
    const Buffer init = Values(kS8, {}, {-1});
    Buffer out(kS32, {3});
    const Status checked =
        CheckSelectAndScatter(p, {&x.type(), &src.type(), &init.type()}, {&out.type()});
    ASSERT_TRUE(checked.ok()) << checked.ToString();
    ASSERT_TRUE(RunSelectAndScatter(p, {x.arg(), src.arg(), init.arg()}, {out.result()}).ok());
    EXPECT_EQ(ToDoubles(out), (std::vector<double>{-1, 199, -1}));
  }
}

// Reference: windows row-major; the first in-bounds element, replaced by a later one when
// select(selected, it) is false; then result[selected] += source.
std::vector<int32_t> ReferenceSas(const SelectAndScatterParams& p, const std::vector<int64_t>& dims,
                                  const std::vector<int64_t>& win_dims, const int32_t* x,
                                  const int32_t* src, int32_t init, bool greater_equal) {
  const size_t rank = dims.size();
  int64_t count = 1, windows = 1, window_size = 1;
  for (int64_t d : dims) count *= d;
  for (int64_t d : win_dims) windows *= d;
  for (int64_t w : p.window_dimensions) window_size *= w;
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int32_t> out(count, init);
  for (int64_t k = 0; k < windows; ++k) {
    std::vector<int64_t> o(rank);
    int64_t rem = k;
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      o[d] = rem % win_dims[d];
      rem /= win_dims[d];
    }
    int64_t selected = -1;
    for (int64_t w = 0; w < window_size; ++w) {
      int64_t wrem = w, offset = 0;
      bool valid = true;
      for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
        const int64_t kd = wrem % p.window_dimensions[d];
        wrem /= p.window_dimensions[d];
        const int64_t pos = o[d] * p.window_strides[d] + kd - p.padding[d].first;
        if (pos < 0 || pos >= dims[d]) valid = false;
        offset += pos * strides[d];
      }
      if (!valid) continue;
      if (selected < 0) {
        selected = offset;
      } else {
        const bool keep = greater_equal ? x[selected] >= x[offset] : x[selected] < x[offset];
        if (!keep) selected = offset;
      }
    }
    if (selected >= 0) out[selected] += src[k];
  }
  return out;
}

TEST(SelectAndScatterTest, RandomWindowsAgainstAReference) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    const bool greater_equal = rng() % 2;
    SelectAndScatterParams p = SasParams({}, {}, kS32);
    std::vector<int64_t> dims, win_dims;
    for (int d = 0; d < rank; ++d) {
      const int64_t size = rng() % 10 == 0 ? 0 : 1 + rng() % 6;
      const int64_t w = 1 + rng() % 3, s = 1 + rng() % 3;
      const int64_t lo = static_cast<int64_t>(rng() % 4) - 1,
                    hi = static_cast<int64_t>(rng() % 4) - 1;
      dims.push_back(size);
      p.window_dimensions.push_back(w);
      p.window_strides.push_back(s);
      p.padding.push_back({lo, hi});
      const int64_t padded = size + lo + hi;
      win_dims.push_back((padded <= 0 || w > padded) ? 0 : (padded - w) / s + 1);
    }
    Buffer x(kS32, dims), src(kS32, win_dims);
    for (int64_t k = 0; k < x.type().num_elements(); ++k) {
      static_cast<int32_t*>(x.data())[k] = static_cast<int32_t>(rng() % 7);  // Many ties.
    }
    for (int64_t k = 0; k < src.type().num_elements(); ++k) {
      static_cast<int32_t*>(src.data())[k] = static_cast<int32_t>(rng() % 100);
    }
    const std::vector<int32_t> want =
        ReferenceSas(p, dims, win_dims, static_cast<const int32_t*>(x.data()),
                     static_cast<const int32_t*>(src.data()), 1, greater_equal);
    const ComparisonDirection direction =
        greater_equal ? ComparisonDirection::kGe : ComparisonDirection::kLt;
    for (int form = 0; form < 3; ++form) {
      // 0: compare(a, b), typed; 1: the mirrored compare of (b, a), typed; 2: and(compare,
      // compare), through the engine.
      p.select = testing::CompareComputation(direction, kS32);
      if (form == 1) {
        p.select.body.steps[2].attr = static_cast<int64_t>(
            greater_equal ? ComparisonDirection::kLe : ComparisonDirection::kGt);
        std::swap(p.select.body.steps[2].operands[0], p.select.body.steps[2].operands[1]);
      } else if (form == 2) {
        EwStep both{EwOp::kAnd, kPred};
        both.operands[0] = 2;
        both.operands[1] = 2;
        p.select.body.steps.push_back(both);
        p.select.body.outputs = {3};
      }
      for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
        p.scatter.combiner = combiner;
        SCOPED_TRACE("trial " + std::to_string(trial) + " form " + std::to_string(form));
        const Buffer got = RunSas(p, x, src, Values(kS32, {}, {1}));
        ASSERT_EQ(std::vector<int32_t>(static_cast<const int32_t*>(got.data()),
                                       static_cast<const int32_t*>(got.data()) + want.size()),
                  want);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// scatter

ScatterParams RowsParams(ElementType type = kF32, Combiner combiner = Combiner::kAdd) {
  ScatterParams p;
  p.update_window_dims = {1};
  p.inserted_window_dims = {0};
  p.scatter_dims_to_operand_dims = {0};
  p.index_vector_dim = 1;
  p.update =
      BinaryComputation(combiner == Combiner::kReplace ? EwOp::kInput : EwOp::kAdd, type, combiner);
  return p;
}

TEST(CheckScatterTest, Refusals) {
  const ArrayType x = T(kF32, {5, 4}), idx = T(kS32, {3, 1}), upd = T(kF32, {3, 4});
  const ScatterParams p = RowsParams();
  EXPECT_TRUE(CheckScatter(p, {&x, &idx, &upd}, {&x}).ok());
  ExpectRefused(CheckScatter(p, {&x, &idx, &upd}, {}),
                "scatter: no results (expected one per input, at least 1)");
  ExpectRefused(CheckScatter(p, {&x, &idx}, {&x}),
                "scatter: 2 operands (expected 2 x 1 results + 1: the inputs, the indices, then "
                "the updates)");
  const ArrayType idx_f32 = T(kF32, {3, 1});
  ExpectRefused(CheckScatter(p, {&x, &idx_f32, &upd}, {&x}),
                "scatter: scatter_indices (f32[3,1]): expected an integer element type");
  const ArrayType upd_s32 = T(kS32, {3, 4});
  ExpectRefused(CheckScatter(p, {&x, &idx, &upd_s32}, {&x}),
                "scatter: updates 0 (s32[3,4]): expected the shape of updates 0 [3, 4] and input "
                "0's element type f32");
  ExpectRefused(CheckScatter(p, {&x, &idx, &upd}, {&upd}),
                "scatter: result 0 (f32[3,4]): expected the inputs' shape [5, 4] and a type f32 "
                "promotes to");
  ScatterParams q = p;
  q.update_window_dims = {2};
  ExpectRefused(CheckScatter(q, {&x, &idx, &upd}, {&x}),
                "scatter: update_window_dims[0] = 2 (expected 0 <= it < the updates' rank 2)");
  q = p;
  q.update_window_dims = {1, 0};
  q.inserted_window_dims = {};
  ExpectRefused(CheckScatter(q, {&x, &idx, &upd}, {&x}),
                "scatter: update_window_dims [1, 0] is not sorted (expected ascending)");
  q = p;
  q.inserted_window_dims = {0, 0};
  ExpectRefused(CheckScatter(q, {&x, &idx, &upd}, {&x}),
                "scatter: inserted_window_dims [0, 0] repeats 0 (expected unique dimensions)");
  q = p;
  q.inserted_window_dims = {2};
  ExpectRefused(CheckScatter(q, {&x, &idx, &upd}, {&x}),
                "scatter: inserted_window_dims[0] = 2 (expected 0 <= it < the inputs' rank 2)");
  q = p;
  q.scatter_dims_to_operand_dims = {0, 1};
  ExpectRefused(CheckScatter(q, {&x, &idx, &upd}, {&x}),
                "scatter: scatter_dims_to_operand_dims has 2 entries (expected the index vector "
                "size 1)");
  q = p;
  q.scatter_dims_to_operand_dims = {-1};
  ExpectRefused(CheckScatter(q, {&x, &idx, &upd}, {&x}),
                "scatter: scatter_dims_to_operand_dims[0] = -1 (expected 0 <= it < the inputs' "
                "rank 2)");
  q = p;
  q.index_vector_dim = 3;
  ExpectRefused(CheckScatter(q, {&x, &idx, &upd}, {&x}),
                "scatter: index_vector_dim = 3 (expected 0 <= it <= the indices' rank 2)");
  q = p;
  q.inserted_window_dims = {};
  ExpectRefused(CheckScatter(q, {&x, &idx, &upd}, {&x}),
                "scatter: update_window_dims, inserted_window_dims and input_batching_dims have 1 "
                "entries together (expected the inputs' rank 2)");
  q = p;
  q.inserted_window_dims = {};
  q.input_batching_dims = {0};
  ExpectRefused(CheckScatter(q, {&x, &idx, &upd}, {&x}),
                "scatter: dimension 0 is in both scatter_dims_to_operand_dims and "
                "input_batching_dims");
  q = p;
  q.input_batching_dims = {0};
  q.update_window_dims = {};
  ExpectRefused(CheckScatter(q, {&x, &idx, &upd}, {&x}),
                "scatter: dimension 0 is in both inserted_window_dims and input_batching_dims");
  // Batching: x[b, i] with indices [3 (batch), 1].
  const ArrayType xb = T(kF32, {3, 4}), ib = T(kS32, {3, 1}), ub = T(kF32, {3});
  ScatterParams b;
  b.inserted_window_dims = {1};
  b.input_batching_dims = {0};
  b.scatter_indices_batching_dims = {0};
  b.scatter_dims_to_operand_dims = {1};
  b.index_vector_dim = 1;
  b.update = BinaryComputation(EwOp::kAdd, kF32, Combiner::kAdd);
  EXPECT_TRUE(CheckScatter(b, {&xb, &ib, &ub}, {&xb}).ok());
  ScatterParams bad = b;
  bad.scatter_indices_batching_dims = {};
  ExpectRefused(CheckScatter(bad, {&xb, &ib, &ub}, {&xb}),
                "scatter: scatter_indices_batching_dims has 0 entries (expected as many as "
                "input_batching_dims, 1)");
  bad = b;
  bad.scatter_indices_batching_dims = {1};
  ExpectRefused(CheckScatter(bad, {&xb, &ib, &ub}, {&xb}),
                "scatter: scatter_indices_batching_dims[0] = 1 is the index_vector_dim");
  const ArrayType ib_wrong = T(kS32, {2, 1}), ub_wrong = T(kF32, {2});
  ExpectRefused(CheckScatter(b, {&xb, &ib_wrong, &ub_wrong}, {&xb}),
                "scatter: indices dimension 0 has size 2 (expected input batching dimension 0's "
                "size 3)");
  // Update shapes.
  const ArrayType upd_rank = T(kF32, {3, 4, 1});
  ExpectRefused(CheckScatter(p, {&x, &idx, &upd_rank}, {&x}),
                "scatter: updates have rank 3 (expected 2: the window dims plus the indices' "
                "scatter dims)");
  const ArrayType upd_scatter = T(kF32, {2, 4});
  ExpectRefused(CheckScatter(p, {&x, &idx, &upd_scatter}, {&x}),
                "scatter: updates dimension 0 has size 2 (expected 3, the size of the matching "
                "scatter dimension of the indices)");
  const ArrayType upd_window = T(kF32, {3, 5});
  ExpectRefused(CheckScatter(p, {&x, &idx, &upd_window}, {&x}),
                "scatter: updates dimension 1 has size 5 (expected at most input dimension 1's "
                "size 4)");
  ExpectRefused(CheckScatter(RowsParams(kS32), {&x, &idx, &upd}, {&x}),
                "scatter: update_computation: scalar computation: parameter 0 has type s32 "
                "(expected f32)");
  const ArrayType x2 = T(kF32, {5, 3});
  ScatterParams pair = RowsParams(kF32, Combiner::kGeneric);
  ExpectRefused(CheckScatter(pair, {&x, &x2, &idx, &upd, &upd}, {&x, &x}),
                "scatter: input 1 (f32[5,3]): shape differs from input 0 (expected [5, 4])");
}

// The spec's example (batching dims, two-element index vectors, 2-d windows).
TEST(ScatterTest, SpecExample) {
  std::vector<double> input(48);
  for (int k = 0; k < 48; ++k) input[k] = k + 1;
  const std::vector<double> indices = {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9,
                                       0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0};
  const std::vector<double> want = {3,  4,  6,  7,  6,  7,  7,  8,  9,  10, 11, 12, 15, 16, 17, 18,
                                    17, 18, 19, 20, 22, 23, 24, 25, 25, 26, 28, 29, 30, 31, 31, 32,
                                    35, 36, 38, 39, 38, 39, 39, 40, 41, 42, 44, 45, 46, 47, 47, 48};
  ScatterParams p;
  p.update_window_dims = {3, 4};
  p.inserted_window_dims = {1};
  p.input_batching_dims = {0};
  p.scatter_indices_batching_dims = {1};
  p.scatter_dims_to_operand_dims = {2, 1};
  p.index_vector_dim = 3;
  for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
    p.update = BinaryComputation(EwOp::kAdd, ElementType::kS64, combiner);
    const Buffer x = Values(ElementType::kS64, {2, 3, 4, 2}, input);
    const Buffer idx = Values(ElementType::kS64, {2, 2, 3, 2}, indices);
    const Buffer upd = Values(ElementType::kS64, {2, 2, 3, 2, 2}, std::vector<double>(48, 1));
    Buffer out(ElementType::kS64, {2, 3, 4, 2});
    const Status checked = CheckScatter(p, {&x.type(), &idx.type(), &upd.type()}, {&out.type()});
    ASSERT_TRUE(checked.ok()) << checked.ToString();
    ASSERT_TRUE(RunScatter(p, {x.arg(), idx.arg(), upd.arg()}, {out.result()}).ok());
    EXPECT_EQ(ToDoubles(out), want);
  }
}

// Two inputs updated together by one body: keep the larger value and its tag (later updates
// win ties), applied in index order with repeated targets.
TEST(ScatterTest, VariadicGenericBody) {
  ScatterParams p;
  p.inserted_window_dims = {0};
  p.scatter_dims_to_operand_dims = {0};
  p.index_vector_dim = 1;
  ScalarComputation& c = p.update;
  c.body.inputs = {EwInput{kF32, {}}, EwInput{kS32, {}}, EwInput{kF32, {}}, EwInput{kS32, {}}};
  for (int i = 0; i < 4; ++i) {
    EwStep in{EwOp::kInput, c.body.inputs[i].type};
    in.attr = i;
    c.body.steps.push_back(in);
  }
  EwStep gt{EwOp::kCompare, kPred, kF32};
  gt.operands[0] = 0;
  gt.operands[1] = 2;
  gt.attr = static_cast<int64_t>(ComparisonDirection::kGt);
  EwStep sv{EwOp::kSelect, kF32, kPred};
  sv.operands[0] = 4;
  sv.operands[1] = 0;
  sv.operands[2] = 2;
  EwStep si{EwOp::kSelect, kS32, kPred};
  si.operands[0] = 4;
  si.operands[1] = 1;
  si.operands[2] = 3;
  c.body.steps.push_back(gt);
  c.body.steps.push_back(sv);
  c.body.steps.push_back(si);
  c.body.outputs = {5, 6};
  const Buffer values = Values(kF32, {4}, {0, 0, 0, 0});
  const Buffer tags = Values(kS32, {4}, {-1, -1, -1, -1});
  const Buffer idx = Values(kS32, {6, 1}, {2, 0, 2, 2, 9, 0});
  const Buffer upd_values = Values(kF32, {6}, {3, 1, 5, 5, 7, 1});
  const Buffer upd_tags = Values(kS32, {6}, {10, 11, 12, 13, 14, 15});
  Buffer out_values(kF32, {4}), out_tags(kS32, {4});
  const Status checked = CheckScatter(
      p, {&values.type(), &tags.type(), &idx.type(), &upd_values.type(), &upd_tags.type()},
      {&out_values.type(), &out_tags.type()});
  ASSERT_TRUE(checked.ok()) << checked.ToString();
  ASSERT_TRUE(RunScatter(p, {values.arg(), tags.arg(), idx.arg(), upd_values.arg(), upd_tags.arg()},
                         {out_values.result(), out_tags.result()})
                  .ok());
  EXPECT_EQ(ToDoubles(out_values), (std::vector<double>{1, 0, 5, 0}));
  EXPECT_EQ(ToDoubles(out_tags), (std::vector<double>{15, -1, 13, -1}));
}

// Into a rank-0 operand (index vectors of size 0): every update combines with the one element,
// in order.
TEST(ScatterTest, RankZeroOperand) {
  ScatterParams p;
  p.index_vector_dim = 1;
  for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
    p.update = BinaryComputation(EwOp::kAdd, kF32, combiner);
    const Buffer x = Values(kF32, {}, {1.5});
    const Buffer idx(kS32, {3, 0});
    const Buffer upd = Values(kF32, {3}, {1, 2, 4});
    Buffer out(kF32, {});
    const Status checked = CheckScatter(p, {&x.type(), &idx.type(), &upd.type()}, {&out.type()});
    ASSERT_TRUE(checked.ok()) << checked.ToString();
    ASSERT_TRUE(RunScatter(p, {x.arg(), idx.arg(), upd.arg()}, {out.result()}).ok());
    EXPECT_EQ(ToDoubles(out), std::vector<double>{8.5});
  }
}

TEST(ScatterTest, PromotesToTheResultType) {
  // s8 input and updates, s32 result and update computation: no wrap at 8 bits.
  ScatterParams p = RowsParams(kS32);
  p.update_window_dims = {};
  p.inserted_window_dims = {0};
  const Buffer x = Values(kS8, {3}, {100, 0, -100});
  const Buffer idx = Values(kS32, {3, 1}, {0, 0, 2});
  const Buffer upd = Values(kS8, {3}, {100, 100, -100});
  Buffer out(kS32, {3});
  const Status checked = CheckScatter(p, {&x.type(), &idx.type(), &upd.type()}, {&out.type()});
  ASSERT_TRUE(checked.ok()) << checked.ToString();
  ASSERT_TRUE(RunScatter(p, {x.arg(), idx.arg(), upd.arg()}, {out.result()}).ok());
  EXPECT_EQ(ToDoubles(out), (std::vector<double>{300, 0, -200}));
}

// Many updates to few targets: the typed loop and the engine's conflict-free batches give the
// same (sequential per target) f32 sums bit for bit; a million updates run quickly.
TEST(ScatterTest, RepeatedTargetsKeepIndexOrder) {
  const int64_t n = 1 << 20, segments = 37;
  Buffer x(kF32, {segments});
  Buffer idx(kS32, {n, 1}), upd(kF32, {n});
  std::mt19937 rng(9);
  for (int64_t k = 0; k < n; ++k) {
    static_cast<int32_t*>(idx.data())[k] = static_cast<int32_t>(rng() % (segments + 2)) - 1;
    static_cast<float*>(upd.data())[k] = static_cast<float>(rng() % 1000) * 0.001f + 1e-3f * k;
  }
  std::vector<float> want(segments, 0.0f);
  for (int64_t k = 0; k < n; ++k) {
    const int32_t t = static_cast<int32_t*>(idx.data())[k];
    if (t >= 0 && t < segments) want[t] += static_cast<float*>(upd.data())[k];
  }
  for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
    ScatterParams p = RowsParams(kF32, combiner);
    p.update_window_dims = {};
    Buffer out(kF32, {segments});
    ASSERT_TRUE(CheckScatter(p, {&x.type(), &idx.type(), &upd.type()}, {&out.type()}).ok());
    ASSERT_TRUE(RunScatter(p, {x.arg(), idx.arg(), upd.arg()}, {out.result()}).ok());
    EXPECT_EQ(std::vector<float>(static_cast<const float*>(out.data()),
                                 static_cast<const float*>(out.data()) + segments),
              want);
  }
}

// Random dimension numbers against the spec's per-element formula with XLA's whole-window bounds
// check (s32 adds: exact in any order).
TEST(ScatterTest, RandomDimensionNumbersAgainstAReference) {
  std::mt19937 rng(21);
  int applied = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 3);
    std::vector<int64_t> in_dims;
    for (int d = 0; d < rank; ++d) in_dims.push_back(1 + rng() % 4);
    ScatterParams p;
    std::vector<int> role(rank, 0);  // 0 window, 1 inserted, 2 batching.
    if (rank >= 2 && rng() % 3 == 0) role[rng() % rank] = 2;
    for (int d = 0; d < rank; ++d) {
      if (role[d] == 0 && rng() % 2) role[d] = 1;
    }
    for (int d = 0; d < rank; ++d) {
      if (role[d] == 1) p.inserted_window_dims.push_back(d);
      if (role[d] == 2) p.input_batching_dims.push_back(d);
    }
    std::vector<int64_t> candidates;
    for (int d = 0; d < rank; ++d) {
      if (role[d] != 2) candidates.push_back(d);
    }
    std::shuffle(candidates.begin(), candidates.end(), rng);
    const size_t vector_size = 1 + rng() % candidates.size();
    p.scatter_dims_to_operand_dims.assign(candidates.begin(), candidates.begin() + vector_size);
    // Indices: scatter dims, batching dims, and the index vector dim somewhere (or implicit).
    const int scatter_dims = static_cast<int>(rng() % 3);
    std::vector<int64_t> index_dims;
    std::vector<int> index_role;  // -1 scatter, -2 vector, b >= 0 batching dim b.
    for (int s = 0; s < scatter_dims; ++s) {
      index_dims.push_back(rng() % 6 == 0 ? 0 : 1 + rng() % 3);
      index_role.push_back(-1);
    }
    for (size_t b = 0; b < p.input_batching_dims.size(); ++b) {
      const size_t at = rng() % (index_dims.size() + 1);
      index_dims.insert(index_dims.begin() + at, in_dims[p.input_batching_dims[b]]);
      index_role.insert(index_role.begin() + at, static_cast<int>(b));
    }
    const bool implicit = vector_size == 1 && rng() % 3 == 0;
    if (implicit) {
      p.index_vector_dim = static_cast<int64_t>(index_dims.size());
    } else {
      const size_t at = rng() % (index_dims.size() + 1);
      index_dims.insert(index_dims.begin() + at, static_cast<int64_t>(vector_size));
      index_role.insert(index_role.begin() + at, -2);
      p.index_vector_dim = static_cast<int64_t>(at);
    }
    p.scatter_indices_batching_dims.resize(p.input_batching_dims.size());
    std::vector<int64_t> scatter_sizes;  // Indices dims but the vector dim, in order.
    for (size_t q = 0; q < index_role.size(); ++q) {
      if (index_role[q] >= 0) p.scatter_indices_batching_dims[index_role[q]] = q;
      if (index_role[q] != -2) scatter_sizes.push_back(index_dims[q]);
    }
    // Updates: window dims at random sorted positions among the scatter dims.
    std::vector<int64_t> window_sizes;
    for (int d = 0; d < rank; ++d) {
      if (role[d] == 0) window_sizes.push_back(rng() % (in_dims[d] + 1));
    }
    const size_t update_rank = window_sizes.size() + scatter_sizes.size();
    std::vector<bool> is_window(update_rank, false);
    std::vector<size_t> positions(update_rank);
    for (size_t k = 0; k < update_rank; ++k) positions[k] = k;
    std::shuffle(positions.begin(), positions.end(), rng);
    for (size_t k = 0; k < window_sizes.size(); ++k) is_window[positions[k]] = true;
    std::vector<int64_t> upd_dims;
    for (size_t d = 0, w = 0, s = 0; d < update_rank; ++d) {
      if (is_window[d]) {
        p.update_window_dims.push_back(d);
        upd_dims.push_back(window_sizes[w++]);
      } else {
        upd_dims.push_back(scatter_sizes[s++]);
      }
    }
    p.update = BinaryComputation(EwOp::kAdd, kS32, Combiner::kAdd);
    Buffer x(kS32, in_dims), idx(kS32, index_dims), upd(kS32, upd_dims);
    for (int64_t k = 0; k < x.type().num_elements(); ++k) static_cast<int32_t*>(x.data())[k] = k;
    for (int64_t k = 0; k < idx.type().num_elements(); ++k) {
      static_cast<int32_t*>(idx.data())[k] = static_cast<int32_t>(rng() % 6) - 1;
    }
    for (int64_t k = 0; k < upd.type().num_elements(); ++k) {
      static_cast<int32_t*>(upd.data())[k] = 1000 * (1 + static_cast<int32_t>(k));
    }
    // Reference, per update element (spec formula), windows checked whole.
    std::vector<int32_t> want(static_cast<const int32_t*>(x.data()),
                              static_cast<const int32_t*>(x.data()) + x.type().num_elements());
    const std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
    const std::vector<int64_t> idx_strides = RowMajorStrides(index_dims);
    std::vector<int64_t> window_extent(rank, 1);
    for (int d = 0, w = 0; d < rank; ++d) {
      if (role[d] == 0) window_extent[d] = window_sizes[w++];
    }
    std::vector<int64_t> u(update_rank, 0);
    for (int64_t k = 0; k < upd.type().num_elements(); ++k) {
      int64_t rem = k;
      for (int d = static_cast<int>(update_rank) - 1; d >= 0; --d) {
        u[d] = rem % upd_dims[d];
        rem /= upd_dims[d];
      }
      std::vector<int64_t> usi, uwi;
      for (size_t d = 0; d < update_rank; ++d) (is_window[d] ? uwi : usi).push_back(u[d]);
      std::vector<int64_t> start(rank, 0), full_window(rank, 0);
      for (size_t v = 0; v < vector_size; ++v) {
        int64_t offset = 0;
        for (size_t q = 0, s = 0; q < index_dims.size(); ++q) {
          if (static_cast<int64_t>(q) == p.index_vector_dim) {
            offset += v * idx_strides[q];
          } else {
            offset += usi[s++] * idx_strides[q];
          }
        }
        start[p.scatter_dims_to_operand_dims[v]] = static_cast<const int32_t*>(idx.data())[offset];
      }
      for (size_t b = 0; b < p.input_batching_dims.size(); ++b) {
        const int64_t ds = p.scatter_indices_batching_dims[b];
        start[p.input_batching_dims[b]] = usi[ds - (ds < p.index_vector_dim ? 0 : 1)];
      }
      for (int d = 0, w = 0; d < rank; ++d) {
        if (role[d] == 0) full_window[d] = uwi[w++];
      }
      bool in_bounds = true;
      int64_t target = 0;
      for (int d = 0; d < rank; ++d) {
        in_bounds = in_bounds && start[d] >= 0 && start[d] + window_extent[d] <= in_dims[d];
        target += (start[d] + full_window[d]) * in_strides[d];
      }
      if (in_bounds) {
        want[target] += static_cast<const int32_t*>(upd.data())[k];
        ++applied;
      }
    }
    for (Combiner combiner : {Combiner::kAdd, Combiner::kGeneric}) {
      p.update.combiner = combiner;
      SCOPED_TRACE("trial " + std::to_string(trial));
      Buffer out(kS32, in_dims);
      const Status checked = CheckScatter(p, {&x.type(), &idx.type(), &upd.type()}, {&out.type()});
      ASSERT_TRUE(checked.ok()) << checked.ToString();
      ASSERT_TRUE(RunScatter(p, {x.arg(), idx.arg(), upd.arg()}, {out.result()}).ok());
      ASSERT_EQ(std::vector<int32_t>(static_cast<const int32_t*>(out.data()),
                                     static_cast<const int32_t*>(out.data()) + want.size()),
                want);
    }
  }
  EXPECT_GT(applied, 300);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
