// The fused elementwise engine's data movement: broadcast and strided gathers, iota, constants,
// in-place outputs, several outputs, empty and rank-0 outputs, blocks, per-op rounding of
// low-precision chains, ConvertArray.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/kernels/element_kind.h"
#include "xla_plugin/devices/sim/kernels/elementwise_plan.h"
#include "xla_plugin/devices/sim/kernels/float_codec.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"

namespace pjrtkit {
namespace sim {
namespace {

constexpr ElementType kF32 = ElementType::kF32;
constexpr ElementType kS32 = ElementType::kS32;

// Builds programs step by step.
class Builder {
 public:
  explicit Builder(std::vector<int64_t> dims) { f_.dims = std::move(dims); }

  int Input(ElementType type, std::vector<int64_t> strides) {
    f_.inputs.push_back(EwInput{type, std::move(strides)});
    EwStep s;
    s.op = EwOp::kInput;
    s.type = type;
    s.attr = static_cast<int64_t>(f_.inputs.size()) - 1;
    return Add(s);
  }
  int Iota(ElementType type, int64_t dim) {
    EwStep s;
    s.op = EwOp::kIota;
    s.type = type;
    s.attr = dim;
    return Add(s);
  }
  template <typename T>
  int Constant(ElementType type, T value) {
    EwStep s;
    s.op = EwOp::kConstant;
    s.type = type;
    s.constant.assign(reinterpret_cast<const char*>(&value), sizeof(T));
    return Add(s);
  }
  int Op(EwOp op, ElementType type, std::vector<int> operands, int64_t attr = 0) {
    EwStep s;
    s.op = op;
    s.type = type;
    s.attr = attr;
    for (size_t i = 0; i < operands.size(); ++i) s.operands[i] = operands[i];
    s.operand_type = f_.steps[operands[0]].type;
    return Add(s);
  }
  void Output(int step) { f_.outputs.push_back(step); }
  const FusedElementwise& program() const { return f_; }

 private:
  int Add(const EwStep& s) {
    f_.steps.push_back(s);
    return static_cast<int>(f_.steps.size()) - 1;
  }
  FusedElementwise f_;
};

void RunProgram(const FusedElementwise& f, std::vector<const void*> inputs,
                std::vector<void*> outputs) {
  ASSERT_TRUE(Validate(f).ok()) << Validate(f).ToString();
  Evaluate(f, inputs.data(), outputs.data());
}

TEST(FusedElementwiseEngineTest, BroadcastsRowColumnAndScalar) {
  // out[i][j] = a[i][j] + row[j] * col[i] - scalar, shape [3, 4].
  Builder b({3, 4});
  const int a = b.Input(kF32, {4, 1});
  const int row = b.Input(kF32, {0, 1});
  const int col = b.Input(kF32, {1, 0});
  const int scalar = b.Input(kF32, {0, 0});
  const int prod = b.Op(EwOp::kMultiply, kF32, {row, col});
  const int sum = b.Op(EwOp::kAdd, kF32, {a, prod});
  b.Output(b.Op(EwOp::kSubtract, kF32, {sum, scalar}));
  std::vector<float> av(12), rv = {1, 2, 3, 4}, cv = {10, 20, 30}, sv = {0.5f}, out(12);
  for (int i = 0; i < 12; ++i) av[i] = static_cast<float>(i);
  RunProgram(b.program(), {av.data(), rv.data(), cv.data(), sv.data()}, {out.data()});
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(out[i * 4 + j], av[i * 4 + j] + rv[j] * cv[i] - 0.5f) << i << "," << j;
    }
  }
}

TEST(FusedElementwiseEngineTest, TransposedAndStridedInputsOverManyBlocks) {
  // out[i][j] = t[j][i] (t stored [500][300]) + every other element of a row vector.
  const int64_t rows = 300, cols = 500;
  Builder b({rows, cols});
  const int t = b.Input(kS32, {1, rows});
  const int v = b.Input(kS32, {0, 2});
  b.Output(b.Op(EwOp::kAdd, kS32, {t, v}));
  std::vector<int32_t> tv(rows * cols), vv(2 * cols), out(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) tv[i] = static_cast<int32_t>(i * 7);
  for (int64_t i = 0; i < 2 * cols; ++i) vv[i] = static_cast<int32_t>(i * 1000);
  RunProgram(b.program(), {tv.data(), vv.data()}, {out.data()});
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      ASSERT_EQ(out[i * cols + j], tv[j * rows + i] + vv[2 * j]) << i << "," << j;
    }
  }
}

// A large output cut into parts run on threads in reverse order gives the bytes the one-thread
// evaluation gives: transposed, broadcast and constant inputs, iota, two outputs, one in place.
TEST(FusedElementwiseEngineTest, ParallelPartsGiveTheSameBytes) {
  const int64_t rows = 517, cols = 613;  // 316921 elements: parts end mid-row, not on a block.
  Builder b({rows, cols});
  const int t = b.Input(kF32, {1, rows});
  const int col = b.Input(kF32, {1, 0});
  const int in_place = b.Input(kF32, {cols, 1});
  const int iota = b.Iota(kF32, 1);
  const int c = b.Constant(kF32, 0.25f);
  const int x = b.Op(EwOp::kAdd, kF32, {b.Op(EwOp::kMultiply, kF32, {t, col}), iota});
  b.Output(b.Op(EwOp::kTanh, kF32, {b.Op(EwOp::kMultiply, kF32, {x, c})}));
  b.Output(b.Op(EwOp::kSubtract, kF32, {in_place, x}));
  const int64_t n = rows * cols;
  ASSERT_GE(n, kParallelElements);
  std::vector<float> tv(n), cv(rows), base(n);
  for (int64_t i = 0; i < n; ++i) tv[i] = static_cast<float>((i * 37) % 1001) * 0.01f;
  for (int64_t i = 0; i < rows; ++i) cv[i] = static_cast<float>(i % 13) - 6.0f;
  for (int64_t i = 0; i < n; ++i) base[i] = static_cast<float>(i % 97);
  std::vector<float> want0(n), want1 = base, got0(n), got1 = base;
  RunProgram(b.program(), {tv.data(), cv.data(), want1.data()}, {want0.data(), want1.data()});
  int64_t parts_run = 0;
  const ParallelFor reversed = [&](int64_t count, const std::function<void(int64_t)>& part) {
    std::vector<std::thread> threads;
    for (int64_t i = count; i-- > 0;) threads.emplace_back([&part, i] { part(i); });
    for (std::thread& thread : threads) thread.join();
    parts_run = count;
  };
  const void* inputs[] = {tv.data(), cv.data(), got1.data()};
  void* outputs[] = {got0.data(), got1.data()};
  EvaluateParallel(b.program(), inputs, outputs, reversed, 3);
  EXPECT_EQ(parts_run, 3);
  EXPECT_EQ(std::memcmp(got0.data(), want0.data(), n * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(got1.data(), want1.data(), n * sizeof(float)), 0);
  // Below kParallelElements, or with one part, nothing is handed out.
  Builder small({1000});
  small.Output(small.Op(EwOp::kNegate, kF32, {small.Input(kF32, {1})}));
  std::vector<float> in(1000, 2.0f), out(1000);
  const void* small_in[] = {in.data()};
  void* small_out[] = {out.data()};
  parts_run = 0;
  EvaluateParallel(small.program(), small_in, small_out, reversed, 3);
  EXPECT_EQ(parts_run, 0);
  EXPECT_EQ(out[999], -2.0f);
}

TEST(FusedElementwiseEngineTest, ShortInnerDimensionBroadcast) {
  // [4000, 3] + [3]: runs of three elements per source.
  Builder b({4000, 3});
  const int a = b.Input(kF32, {3, 1});
  const int v = b.Input(kF32, {0, 1});
  b.Output(b.Op(EwOp::kMultiply, kF32, {a, v}));
  std::vector<float> av(12000), vv = {1, -2, 0.5f}, out(12000);
  for (int i = 0; i < 12000; ++i) av[i] = static_cast<float>(i % 97);
  RunProgram(b.program(), {av.data(), vv.data()}, {out.data()});
  for (int i = 0; i < 12000; ++i) ASSERT_EQ(out[i], av[i] * vv[i % 3]) << i;
}

TEST(FusedElementwiseEngineTest, IotaAlongEachDimensionAndType) {
  Builder b({3, 300});
  const int i0 = b.Iota(kS32, 0);
  const int i1 = b.Iota(kS32, 1);
  b.Output(b.Op(EwOp::kAdd, kS32, {b.Op(EwOp::kMultiply, kS32, {i0, b.Constant(kS32, 1000)}),
                                   i1}));
  b.Output(b.Iota(ElementType::kU8, 1));  // Wraps at 256.
  b.Output(b.Iota(ElementType::kBF16, 1));  // Rounds to bf16 (257 -> 256).
  b.Output(b.Iota(ElementType::kPred, 0));
  b.Output(b.Iota(ElementType::kC64, 1));
  std::vector<int32_t> out0(900);
  std::vector<uint8_t> out1(900), out3(900);
  std::vector<uint16_t> out2(900);
  std::vector<Complex<float>> out4(900);
  RunProgram(b.program(), {}, {out0.data(), out1.data(), out2.data(), out3.data(), out4.data()});
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 300; ++j) {
      const int k = i * 300 + j;
      ASSERT_EQ(out0[k], i * 1000 + j);
      ASSERT_EQ(out1[k], static_cast<uint8_t>(j));
      ASSERT_EQ(out2[k], EncodeFromF32(LowFloat::kBF16, static_cast<float>(j)));
      ASSERT_EQ(out3[k], i != 0 ? 1 : 0);
      ASSERT_EQ(out4[k].re, static_cast<float>(j));
      ASSERT_EQ(out4[k].im, 0.0f);
    }
  }
  EXPECT_EQ(out2[257], 0x4380);  // 257 in bf16 is 256.
}

TEST(FusedElementwiseEngineTest, InPlaceOutputOverManyBlocks) {
  // x = x * 2 + y, written over x; 5000 elements (several blocks), x read in place.
  Builder b({5000});
  const int x = b.Input(kF32, {1});
  const int y = b.Input(kF32, {1});
  const int twice = b.Op(EwOp::kMultiply, kF32, {x, b.Constant(kF32, 2.0f)});
  b.Output(b.Op(EwOp::kAdd, kF32, {twice, y}));
  std::vector<float> xv(5000), yv(5000);
  for (int i = 0; i < 5000; ++i) {
    xv[i] = static_cast<float>(i);
    yv[i] = static_cast<float>(-3 * i);
  }
  RunProgram(b.program(), {xv.data(), yv.data()}, {xv.data()});
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(xv[i], static_cast<float>(2 * i - 3 * i)) << i;
}

TEST(FusedElementwiseEngineTest, InPlaceWithAPassThroughOutputOfTheSameInput) {
  // outputs: (x + 1 written over x, x itself): the second must read x before the first's store.
  Builder b({3000});
  const int x = b.Input(kS32, {1});
  b.Output(b.Op(EwOp::kAdd, kS32, {x, b.Constant(kS32, 1)}));
  b.Output(x);
  std::vector<int32_t> xv(3000), copy(3000);
  for (int i = 0; i < 3000; ++i) xv[i] = i;
  RunProgram(b.program(), {xv.data()}, {xv.data(), copy.data()});
  for (int i = 0; i < 3000; ++i) {
    ASSERT_EQ(xv[i], i + 1);
    ASSERT_EQ(copy[i], i);
  }
}

TEST(FusedElementwiseEngineTest, MultipleOutputsOfDifferentTypes) {
  Builder b({2000});
  const int x = b.Input(kF32, {1});
  const int neg = b.Op(EwOp::kNegate, kF32, {x});
  const int cmp = b.Op(EwOp::kCompare, ElementType::kPred, {x, b.Constant(kF32, 100.0f)},
                       static_cast<int64_t>(ComparisonDirection::kLt));
  const int as_int = b.Op(EwOp::kConvert, kS32, {x});
  const int as_half = b.Op(EwOp::kConvert, ElementType::kF16, {neg});
  b.Output(neg);
  b.Output(cmp);
  b.Output(as_int);
  b.Output(as_half);
  std::vector<float> xv(2000), o0(2000);
  std::vector<uint8_t> o1(2000);
  std::vector<int32_t> o2(2000);
  std::vector<uint16_t> o3(2000);
  for (int i = 0; i < 2000; ++i) xv[i] = 0.5f * static_cast<float>(i);
  RunProgram(b.program(), {xv.data()}, {o0.data(), o1.data(), o2.data(), o3.data()});
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(o0[i], -xv[i]);
    ASSERT_EQ(o1[i], xv[i] < 100 ? 1 : 0);
    ASSERT_EQ(o2[i], static_cast<int32_t>(xv[i]));
    ASSERT_EQ(o3[i], EncodeFromF32(LowFloat::kF16, -xv[i]));
  }
}

TEST(FusedElementwiseEngineTest, EmptyOutputTouchesNothing) {
  Builder b({4, 0, 3});
  const int x = b.Input(kF32, {0, 3, 1});
  b.Output(b.Op(EwOp::kExp, kF32, {x}));
  const void* in[1] = {nullptr};
  void* out[1] = {nullptr};
  ASSERT_TRUE(Validate(b.program()).ok());
  Evaluate(b.program(), in, out);
  EXPECT_EQ(ElementwisePlan::CreateValidated(b.program()).scratch_bytes(), 0u);
}

TEST(FusedElementwiseEngineTest, RankZeroOutput) {
  Builder b({});
  const int x = b.Input(ElementType::kF64, {});
  const int y = b.Input(ElementType::kF64, {});
  b.Output(b.Op(EwOp::kAtan2, ElementType::kF64, {x, y}));
  const double xv = 1.0, yv = -1.0;
  double out = 0;
  RunProgram(b.program(), {&xv, &yv}, {&out});
  EXPECT_EQ(out, std::atan2(1.0, -1.0));
}

TEST(FusedElementwiseEngineTest, SizeOneDimensionsAndRepeatedOperands) {
  Builder b({1, 7, 1});
  const int x = b.Input(kS32, {0, 1, 0});
  const int sq = b.Op(EwOp::kMultiply, kS32, {x, x});
  b.Iota(kS32, 0);  // An unused step: never evaluated.
  b.Output(b.Op(EwOp::kAdd, kS32, {sq, b.Iota(kS32, 1)}));
  std::vector<int32_t> xv = {1, 2, 3, 4, 5, 6, 7}, out(7);
  RunProgram(b.program(), {xv.data()}, {out.data()});
  for (int i = 0; i < 7; ++i) EXPECT_EQ(out[i], xv[i] * xv[i] + i);
}

TEST(FusedElementwiseEngineTest, Bf16ChainRoundsAfterEveryOp) {
  // (x * y + z) in bf16: the product is rounded to bf16 before the add, as XLA:CPU does.
  const ElementType bf16 = ElementType::kBF16;
  Builder b({3});
  const int x = b.Input(bf16, {1});
  const int y = b.Input(bf16, {1});
  const int z = b.Input(bf16, {1});
  b.Output(b.Op(EwOp::kAdd, bf16, {b.Op(EwOp::kMultiply, bf16, {x, y}), z}));
  auto bits = [](float v) { return static_cast<uint16_t>(EncodeFromF32(LowFloat::kBF16, v)); };
  // 1.0078125 * 1.0078125 = 1.01568603515625 -> bf16 1.015625; + 2^-8 -> 1.01953125 (a tie
  // in bf16, to even: 1.015625). Unrounded: 1.01959228515625 -> 1.0234375.
  std::vector<uint16_t> xv = {bits(1.0078125f), bits(3.0f), bits(-2.0f)};
  std::vector<uint16_t> yv = {bits(1.0078125f), bits(0.5f), bits(1e30f)};
  std::vector<uint16_t> zv = {bits(0.00390625f), bits(1.0f), bits(1e30f)};
  std::vector<uint16_t> out(3);
  RunProgram(b.program(), {xv.data(), yv.data(), zv.data()}, {out.data()});
  EXPECT_EQ(out[0], bits(1.015625f));
  EXPECT_EQ(out[1], bits(2.5f));
  EXPECT_EQ(out[2], bits(-1e30f));
}

TEST(FusedElementwiseEngineTest, Float8ConstantsAndSelect) {
  const ElementType f8 = ElementType::kF8E4M3FN;
  Builder b({4});
  const int x = b.Input(f8, {1});
  const int p = b.Input(ElementType::kPred, {1});
  const int c = b.Constant(f8, uint8_t{0x7e});  // 448, the largest f8e4m3fn.
  const int sum = b.Op(EwOp::kAdd, f8, {x, c});  // Overflows to NaN (no inf).
  b.Output(b.Op(EwOp::kSelect, f8, {p, sum, x}));
  std::vector<uint8_t> xv = {0x38 /*1.0*/, 0x7f /*NaN*/, 0xb8 /*-1.0*/, 0x7e}, pv = {1, 0, 1, 1};
  std::vector<uint8_t> out(4);
  RunProgram(b.program(), {xv.data(), pv.data()}, {out.data()});
  EXPECT_EQ(out[0], 0x7e);  // 449 rounds to 448.
  EXPECT_EQ(out[1], 0x7f);  // Selected x: NaN kept.
  EXPECT_EQ(out[2], 0x7e);  // 447 -> 448.
  EXPECT_EQ(out[3], 0x7f);  // 896 -> NaN.
}

TEST(FusedElementwiseEngineTest, BitcastKeepsNaNPayloads) {
  Builder b({3});
  const int x = b.Input(ElementType::kF16, {1});
  b.Output(b.Op(EwOp::kBitcastConvert, ElementType::kS16, {x}));
  std::vector<uint16_t> xv = {0x7c01 /*signaling NaN*/, 0xfe35, 0x3c00}, out(3);
  RunProgram(b.program(), {xv.data()}, {out.data()});
  EXPECT_EQ(out, xv);
}

TEST(FusedElementwiseEngineTest, PlanRunsWithCallerScratchRepeatedly) {
  Builder b({10000});
  const int x = b.Input(kF32, {1});
  b.Output(b.Op(EwOp::kSqrt, kF32, {b.Op(EwOp::kAbs, kF32, {x})}));
  StatusOr<ElementwisePlan> plan = ElementwisePlan::Create(b.program());
  ASSERT_TRUE(plan.ok());
  std::vector<unsigned char> scratch(plan.value().scratch_bytes() + 64);
  void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  std::vector<float> xv(10000), out(10000);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 10000; ++i) xv[i] = static_cast<float>((i + round) * (i % 2 ? -1 : 1));
    const void* in[1] = {xv.data()};
    void* outs[1] = {out.data()};
    plan.value().Run(in, outs, aligned);
    for (int i = 0; i < 10000; ++i) ASSERT_EQ(out[i], std::sqrt(std::fabs(xv[i])));
  }
}

TEST(FusedElementwiseEngineTest, ConvertArrayMatchesTheConvertOp) {
  const std::vector<float> src = {1.5f, -2.5f, NAN, 3e9f, -3e9f, 0.0f};
  std::vector<int32_t> ints(src.size());
  ConvertArray(kF32, src.data(), kS32, ints.data(), static_cast<int64_t>(src.size()));
  EXPECT_EQ(ints, (std::vector<int32_t>{1, -2, 0, INT32_MAX, INT32_MIN, 0}));
  std::vector<uint16_t> halves(src.size());
  ConvertArray(kF32, src.data(), ElementType::kF16, halves.data(), 6);
  EXPECT_EQ(halves[0], 0x3e00);
  EXPECT_EQ(halves[3], 0x7c00);
  std::vector<float> same(6);
  ConvertArray(kF32, src.data(), kF32, same.data(), 6);
  EXPECT_EQ(std::memcmp(same.data(), src.data(), 24), 0);
  std::vector<float> in_place = {1.25f, -7.75f};
  ConvertArray(kF32, in_place.data(), kS32, in_place.data(), 2);
  int32_t converted[2];
  std::memcpy(converted, in_place.data(), 8);
  EXPECT_EQ(converted[0], 1);
  EXPECT_EQ(converted[1], -7);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
