// CheckScalarComputation's refusals, ScalarApplier's strides and aliasing, and every typed loop
// against the engine evaluating the same body.
#include "xla_plugin/devices/sim/kernels/scalar_computation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/kernels/testdata/reduction_test_util.h"
#include "xla_plugin/devices/sim/kernels/typed_combiner.h"

namespace pjrtkit {
namespace sim {
namespace {

using testing::BinaryComputation;
using testing::Buffer;

constexpr ElementType kF32 = ElementType::kF32;
constexpr ElementType kS32 = ElementType::kS32;
constexpr ElementType kPred = ElementType::kPred;

// Expects `status` to be INVALID_ARGUMENT with `text` in its message.
void ExpectRefused(const Status& status, const std::string& text) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find(text), std::string::npos)
      << "message: " << status.message() << "\nexpected to contain: " << text;
}

// (x, y) -> (x > y ? x : y, x > y ? i : j) over (f32, s32) pairs: a variadic argmax-like body.
ScalarComputation ArgmaxComputation() {
  ScalarComputation c;
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
  c.body.steps.push_back(gt);
  EwStep sv{EwOp::kSelect, kF32, kPred};
  sv.operands[0] = 4;
  sv.operands[1] = 0;
  sv.operands[2] = 2;
  EwStep si{EwOp::kSelect, kS32, kPred};
  si.operands[0] = 4;
  si.operands[1] = 1;
  si.operands[2] = 3;
  c.body.steps.push_back(sv);
  c.body.steps.push_back(si);
  c.body.outputs = {5, 6};
  return c;
}

TEST(CheckScalarComputationTest, AcceptsCombinersAndGenericBodies) {
  EXPECT_TRUE(CheckScalarComputation(BinaryComputation(EwOp::kAdd, kF32, Combiner::kAdd),
                                     {kF32, kF32}, {kF32})
                  .ok());
  ScalarComputation swapped = BinaryComputation(EwOp::kMaximum, kS32, Combiner::kMaximum);
  std::swap(swapped.body.steps[2].operands[0], swapped.body.steps[2].operands[1]);
  EXPECT_TRUE(CheckScalarComputation(swapped, {kS32, kS32}, {kS32}).ok());
  EXPECT_TRUE(CheckScalarComputation(BinaryComputation(EwOp::kInput, kF32, Combiner::kReplace),
                                     {kF32, kF32}, {kF32})
                  .ok());
  EXPECT_TRUE(
      CheckScalarComputation(ArgmaxComputation(), {kF32, kS32, kF32, kS32}, {kF32, kS32}).ok());
}

TEST(CheckScalarComputationTest, RefusesMismatchedSignatures) {
  const ScalarComputation add = BinaryComputation(EwOp::kAdd, kF32, Combiner::kGeneric);
  ExpectRefused(CheckScalarComputation(add, {ElementType::kS4, kF32}, {kF32}),
                "scalar computation: parameter 0 type s4 is not supported by the sim kernels");
  ExpectRefused(CheckScalarComputation(add, {kF32, kF32}, {ElementType::kToken}),
                "scalar computation: result 0 type");
  ScalarComputation dims = add;
  dims.body.dims = {3};
  ExpectRefused(CheckScalarComputation(dims, {kF32, kF32}, {kF32}),
                "scalar computation: body.dims = [3] (expected [] for a computation on scalars)");
  ExpectRefused(CheckScalarComputation(add, {kF32, kF32, kF32}, {kF32}),
                "scalar computation: body has 2 parameters (expected 3)");
  ExpectRefused(CheckScalarComputation(add, {kF32, kS32}, {kF32}),
                "scalar computation: parameter 1 has type f32 (expected s32)");
  ScalarComputation strided = add;
  strided.body.inputs[1].strides = {1};
  ExpectRefused(CheckScalarComputation(strided, {kF32, kF32}, {kF32}),
                "scalar computation: parameter 1 has strides [1] (expected [] for a scalar)");
  ExpectRefused(CheckScalarComputation(add, {kF32, kF32}, {kF32, kF32}),
                "scalar computation: body has 1 results (expected 2)");
  ScalarComputation out = add;
  out.body.outputs = {7};
  ExpectRefused(CheckScalarComputation(out, {kF32, kF32}, {kF32}),
                "scalar computation: outputs[0] = 7 is not a step (expected 0 <= it < 3)");
  ExpectRefused(CheckScalarComputation(add, {kF32, kF32}, {kS32}),
                "scalar computation: result 0 has type f32 (expected s32)");
  ScalarComputation forward = add;
  forward.body.steps[2].operands[1] = 2;  // Reads itself: the engine's Validate refuses.
  const Status invalid = CheckScalarComputation(forward, {kF32, kF32}, {kF32});
  EXPECT_EQ(invalid.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(invalid.message().rfind("scalar computation: ", 0), 0u) << invalid.message();
}

TEST(CheckScalarComputationTest, RefusesCombinersThatDisagreeWithTheBody) {
  ExpectRefused(CheckScalarComputation(BinaryComputation(EwOp::kMultiply, kF32, Combiner::kAdd),
                                       {kF32, kF32}, {kF32}),
                "scalar computation: combiner add does not match the body: its result must be "
                "add(parameter 0, parameter 1) of type f32 (got multiply of type f32)");
  ScalarComputation same = BinaryComputation(EwOp::kAdd, kF32, Combiner::kAdd);
  same.body.steps[2].operands[1] = 0;  // x + x
  ExpectRefused(CheckScalarComputation(same, {kF32, kF32}, {kF32}),
                "combiner add does not match the body");
  ExpectRefused(CheckScalarComputation(BinaryComputation(EwOp::kAdd, kF32, Combiner::kReplace),
                                       {kF32, kF32}, {kF32}),
                "scalar computation: combiner replace does not match the body: its result must "
                "be parameter 1");
  ScalarComputation first = BinaryComputation(EwOp::kInput, kF32, Combiner::kReplace);
  first.body.outputs = {0};
  ExpectRefused(CheckScalarComputation(first, {kF32, kF32}, {kF32}),
                "combiner replace does not match the body");
  ScalarComputation variadic = ArgmaxComputation();
  variadic.combiner = Combiner::kMaximum;
  ExpectRefused(CheckScalarComputation(variadic, {kF32, kS32, kF32, kS32}, {kF32, kS32}),
                "scalar computation: combiner maximum needs 2 parameters and 1 result (the "
                "computation has 4 and 2)");
  // A select body (f32, f32) -> pred cannot carry a combiner.
  ScalarComputation compare = testing::CompareComputation(ComparisonDirection::kGe, kF32);
  compare.combiner = Combiner::kOr;
  ExpectRefused(CheckScalarComputation(compare, {kF32, kF32}, {kPred}),
                "scalar computation: combiner or needs parameters of the result's type pred "
                "(got f32, f32)");
  // The engine refuses `and` on floats, so a combiner cannot smuggle it in.
  const Status and_f32 = CheckScalarComputation(BinaryComputation(EwOp::kAnd, kF32, Combiner::kAnd),
                                                {kF32, kF32}, {kF32});
  EXPECT_FALSE(and_f32.ok());
}

TEST(ScalarApplierTest, StridesAndBroadcasts) {
  const ScalarComputation sub = BinaryComputation(EwOp::kSubtract, kS32, Combiner::kGeneric);
  ASSERT_TRUE(CheckScalarComputation(sub, {kS32, kS32}, {kS32}).ok());
  const int32_t a[8] = {10, 11, 12, 13, 14, 15, 16, 17};
  const int32_t b = 3;
  int32_t out[4];
  ApplyScalarComputation(sub, 4, {a, &b}, {2, 0}, {out});
  EXPECT_EQ(std::vector<int32_t>(out, out + 4), (std::vector<int32_t>{7, 9, 11, 13}));
  ApplyScalarComputation(sub, 4, {&b, a + 1}, {0, 2}, {out});
  EXPECT_EQ(std::vector<int32_t>(out, out + 4), (std::vector<int32_t>{-8, -10, -12, -14}));
  ScalarApplier applier(sub);
  EXPECT_EQ(applier.combine_fn(), nullptr);
  for (int64_t n : {1, 3, 0, 2}) {
    int32_t o[4] = {0, 0, 0, 0};
    const void* in[2] = {a, a + 4};
    const int64_t strides[2] = {1, 1};
    void* res[1] = {o};
    applier.Apply(n, in, strides, res);
    for (int64_t k = 0; k < n; ++k) EXPECT_EQ(o[k], -4);
    for (int64_t k = n; k < 4; ++k) EXPECT_EQ(o[k], 0);
  }
}

TEST(ScalarApplierTest, ResultsMayAliasInputs) {
  // Variadic body, results written over the first operands (same element index).
  const ScalarComputation argmax = ArgmaxComputation();
  const int n = 5000;
  std::vector<float> v(n), w(n);
  std::vector<int32_t> i(n), j(n);
  for (int k = 0; k < n; ++k) {
    v[k] = static_cast<float>((k * 7) % 13);
    w[k] = static_cast<float>((k * 5) % 11);
    i[k] = k;
    j[k] = -k;
  }
  std::vector<float> want_v(n);
  std::vector<int32_t> want_i(n);
  for (int k = 0; k < n; ++k) {
    want_v[k] = v[k] > w[k] ? v[k] : w[k];
    want_i[k] = v[k] > w[k] ? i[k] : j[k];
  }
  ApplyScalarComputation(argmax, n, {v.data(), i.data(), w.data(), j.data()}, {1, 1, 1, 1},
                         {v.data(), i.data()});
  EXPECT_EQ(v, want_v);
  EXPECT_EQ(i, want_i);
  // Typed loop in place.
  const ScalarComputation add = BinaryComputation(EwOp::kAdd, kS32, Combiner::kAdd);
  std::vector<int32_t> acc = {1, 2, 3};
  const int32_t one = 1;
  ApplyScalarComputation(add, 3, {acc.data(), &one}, {1, 0}, {acc.data()});
  EXPECT_EQ(acc, (std::vector<int32_t>{2, 3, 4}));
}

TEST(GetCombineFnTest, TypedLoopsExistWhereExpected) {
  EXPECT_NE(GetCombineFn(Combiner::kAdd, kF32), nullptr);
  EXPECT_NE(GetCombineFn(Combiner::kAdd, ElementType::kC128), nullptr);
  EXPECT_NE(GetCombineFn(Combiner::kReplace, ElementType::kBF16), nullptr);
  EXPECT_NE(GetCombineFn(Combiner::kXor, ElementType::kU16), nullptr);
  EXPECT_EQ(GetCombineFn(Combiner::kGeneric, kF32), nullptr);
  EXPECT_NE(GetCombineFn(Combiner::kAdd, ElementType::kBF16), nullptr);
  EXPECT_NE(GetCombineFn(Combiner::kMultiply, ElementType::kF16), nullptr);
  EXPECT_EQ(GetCombineFn(Combiner::kMaximum, ElementType::kBF16), nullptr);
  EXPECT_EQ(GetCombineFn(Combiner::kMinimum, ElementType::kF16), nullptr);
  EXPECT_EQ(GetCombineFn(Combiner::kAdd, ElementType::kF8E4M3FN), nullptr);
  EXPECT_EQ(GetCombineFn(Combiner::kMultiply, ElementType::kC64), nullptr);
  EXPECT_EQ(GetCombineFn(Combiner::kMaximum, ElementType::kC64), nullptr);
  EXPECT_EQ(GetCombineFn(Combiner::kAnd, kF32), nullptr);
  EXPECT_EQ(GetCombineFn(Combiner::kAdd, ElementType::kS4), nullptr);
}

// Random element bits with the specials of floats mixed in (zeros, infinities, NaN, denormals).
void FillRandom(ElementType type, void* data, int64_t n, std::mt19937_64* rng) {
  const int64_t bytes = ArrayType{type, {}}.element_bytes();
  unsigned char* p = static_cast<unsigned char*>(data);
  for (int64_t k = 0; k < n * bytes; ++k) p[k] = static_cast<unsigned char>((*rng)());
  if (type == ElementType::kPred) {
    for (int64_t k = 0; k < n; ++k) p[k] &= 1;
  }
  if (type == ElementType::kF16 || type == ElementType::kBF16) {
    const uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x8003, 0x7c00, 0x7f80, 0x7e00, 0x7fc0};
    for (int64_t k = 0; k < n; k += 5) std::memcpy(p + 2 * k, &specials[(*rng)() % 8], 2);
  }
  if (type == kF32 || type == ElementType::kF64 || type == ElementType::kC64 ||
      type == ElementType::kC128) {
    const bool single = type == kF32 || type == ElementType::kC64;
    const int64_t parts = (type == ElementType::kC64 || type == ElementType::kC128) ? 2 : 1;
    const double specials[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 3.5};
    for (int64_t k = 0; k < n * parts; ++k) {
      double v = (k % 3 == 0) ? specials[(*rng)() % 8]
                              : std::ldexp(static_cast<double>((*rng)() % 2001) - 1000.0,
                                           static_cast<int>((*rng)() % 40) - 20);
      if (k % 7 == 1)
        v = std::ldexp(static_cast<double>((*rng)() % 64) - 32, single ? -140 : -1060);
      if (single) {
        const float f = static_cast<float>(v);
        std::memcpy(p + k * 4, &f, 4);
      } else {
        std::memcpy(p + k * 8, &v, 8);
      }
    }
  }
}

TEST(TypedCombinerTest, MatchesTheEngineOnEveryTypedLoop) {
  const ElementType types[] = {kPred,
                               ElementType::kS8,
                               ElementType::kS16,
                               kS32,
                               ElementType::kS64,
                               ElementType::kU8,
                               ElementType::kU16,
                               ElementType::kU32,
                               ElementType::kU64,
                               ElementType::kF16,
                               ElementType::kBF16,
                               kF32,
                               ElementType::kF64,
                               ElementType::kC64,
                               ElementType::kC128};
  const std::pair<Combiner, EwOp> combiners[] = {
      {Combiner::kAdd, EwOp::kAdd},         {Combiner::kMultiply, EwOp::kMultiply},
      {Combiner::kMaximum, EwOp::kMaximum}, {Combiner::kMinimum, EwOp::kMinimum},
      {Combiner::kAnd, EwOp::kAnd},         {Combiner::kOr, EwOp::kOr},
      {Combiner::kXor, EwOp::kXor},         {Combiner::kReplace, EwOp::kInput}};
  std::mt19937_64 rng(7);
  int checked = 0;
  const int64_t n = 257;
  for (ElementType type : types) {
    for (const auto& [combiner, op] : combiners) {
      if (GetCombineFn(combiner, type) == nullptr) continue;
      SCOPED_TRACE(std::string(ElementTypeName(type)) + " op " + EwOpName(op));
      const ScalarComputation typed = BinaryComputation(op, type, combiner);
      ASSERT_TRUE(CheckScalarComputation(typed, {type, type}, {type}).ok());
      const ScalarComputation engine = BinaryComputation(op, type, Combiner::kGeneric);
      Buffer a(type, {n}), b(type, {n}), got(type, {n}), want(type, {n});
      FillRandom(type, a.data(), n, &rng);
      FillRandom(type, b.data(), n, &rng);
      for (int64_t stride_a : {1, 0}) {
        ApplyScalarComputation(typed, n, {a.data(), b.data()}, {stride_a, 1}, {got.data()});
        ApplyScalarComputation(engine, n, {a.data(), b.data()}, {stride_a, 1}, {want.data()});
        EXPECT_EQ(testing::Compare(got, want, 0), "");
      }
      ++checked;
    }
  }
  // pred and 8 integer types: 7 ops + replace each; f32, f64: 4 + replace; f16, bf16: add,
  // multiply + replace; c64, c128: add + replace.
  EXPECT_EQ(checked, 9 * 8 + 2 * 5 + 2 * 3 + 2 * 2);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
