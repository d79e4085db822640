// Random params, as a fuzzer (or a corrupt program) would send them: Check must refuse them or Run
// must stay inside the arrays (run this test under --config=asan-ubsan to see that), and never
// abort. Params start from a valid case and get up to three random mutations, so that both sides
// of every Check condition are reached.
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/kernels/collectives.h"
#include "xla_plugin/devices/sim/kernels/contraction.h"
#include "xla_plugin/devices/sim/kernels/testing/contraction_test_util.h"

namespace pjrtkit {
namespace sim {
namespace {

const ElementType kTypes[] = {
    ElementType::kF32,  ElementType::kF32,  ElementType::kF32, ElementType::kBF16,
    ElementType::kF16,  ElementType::kF64,  ElementType::kC64, ElementType::kC128,
    ElementType::kS8,   ElementType::kS32,  ElementType::kU16, ElementType::kU64,
    ElementType::kPred, ElementType::kS4,   ElementType::kToken, ElementType::kInvalid,
};

class Fuzzer {
 public:
  explicit Fuzzer(uint32_t seed) : rng_(seed) {}

  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool OneIn(int n) { return Int(0, n - 1) == 0; }
  ElementType Type() { return kTypes[Int(0, sizeof(kTypes) / sizeof(kTypes[0]) - 1)]; }
  // A dimension size: mostly 1..4, sometimes 0, rarely negative.
  int64_t Dim() { return OneIn(12) ? 0 : OneIn(40) ? -1 : Int(1, 4); }
  // Replaces, grows or shrinks a list of dimension numbers.
  void Mutate(std::vector<int64_t>* v, int64_t lo, int64_t hi) {
    const int64_t what = Int(0, 2);
    if (what == 0 && !v->empty()) {
      (*v)[Int(0, v->size() - 1)] = Int(lo, hi);
    } else if (what == 1) {
      v->push_back(Int(lo, hi));
    } else if (!v->empty()) {
      v->pop_back();
    }
  }

  // Bytes for `type` (pred as 0/1); nothing when Check would not have passed sizes.
  std::vector<unsigned char> Data(const ArrayType& type) {
    std::vector<unsigned char> bytes(static_cast<size_t>(type.byte_size()));
    for (auto& b : bytes) b = static_cast<unsigned char>(Int(0, 255));
    if (type.type == ElementType::kPred) {
      for (auto& b : bytes) b &= 1;
    }
    return bytes;
  }

 private:
  std::mt19937 rng_;
};

// Runs when Check passes; returns whether it did.
bool CheckAndRunDot(Fuzzer* f, const DotGeneralParams& p, const ArrayType& lhs,
                    const ArrayType& rhs, const ArrayType& result) {
  if (!CheckDotGeneral(p, {&lhs, &rhs}, {&result}).ok()) return false;
  const std::vector<unsigned char> a = f->Data(lhs), b = f->Data(rhs);
  std::vector<unsigned char> c(static_cast<size_t>(result.byte_size()));
  EXPECT_TRUE(RunDotGeneral(p, {{&lhs, a.data()}, {&rhs, b.data()}}, {{&result, c.data()}}).ok());
  return true;
}

TEST(ContractionFuzzTest, DotGeneral) {
  Fuzzer f(1);
  int ran = 0;
  const int kIterations = 3000;
  for (int it = 0; it < kIterations; ++it) {
    // A valid [b, m, k] x [b, k, n] -> [b, m, n] to start from.
    const int64_t b = f.Dim(), m = f.Dim(), k = f.Dim(), n = f.Dim();
    DotGeneralParams p;
    p.lhs_batching_dimensions = {0};
    p.rhs_batching_dimensions = {0};
    p.lhs_contracting_dimensions = {2};
    p.rhs_contracting_dimensions = {1};
    ArrayType lhs{ElementType::kF32, {b, m, k}}, rhs{ElementType::kF32, {b, k, n}};
    ArrayType result{ElementType::kF32, {b, m, n}};
    for (int64_t mutations = f.Int(0, 3); mutations > 0; --mutations) {
      switch (f.Int(0, 8)) {
        case 0: f.Mutate(&p.lhs_batching_dimensions, -1, 3); break;
        case 1: f.Mutate(&p.rhs_batching_dimensions, -1, 3); break;
        case 2: f.Mutate(&p.lhs_contracting_dimensions, -1, 3); break;
        case 3: f.Mutate(&p.rhs_contracting_dimensions, -1, 3); break;
        case 4: f.Mutate(&lhs.dims, -1, 4); break;
        case 5: f.Mutate(&rhs.dims, -1, 4); break;
        case 6: f.Mutate(&result.dims, -1, 4); break;
        case 7: lhs.type = rhs.type = f.Type(); break;
        default: result.type = f.Type(); break;
      }
    }
    ran += CheckAndRunDot(&f, p, lhs, rhs, result);
  }
  EXPECT_GT(ran, kIterations / 4);
  EXPECT_LT(ran, kIterations);
}

TEST(ContractionFuzzTest, Convolution) {
  Fuzzer f(2);
  int ran = 0;
  const int kIterations = 3000;
  for (int it = 0; it < kIterations; ++it) {
    // A valid NHWC x HWIO -> NHWC to start from.
    ConvolutionParams p;
    p.window_strides = {f.Int(1, 2), f.Int(1, 2)};
    p.padding = {{f.Int(-1, 2), f.Int(-1, 2)}, {f.Int(-1, 2), f.Int(-1, 2)}};
    p.lhs_dilation = {f.Int(1, 2), 1};
    p.rhs_dilation = {1, f.Int(1, 2)};
    p.window_reversal = {f.OneIn(2), false};
    p.input_batch_dimension = 0;
    p.input_feature_dimension = 3;
    p.input_spatial_dimensions = {1, 2};
    p.kernel_input_feature_dimension = 2;
    p.kernel_output_feature_dimension = 3;
    p.kernel_spatial_dimensions = {0, 1};
    p.output_batch_dimension = 0;
    p.output_feature_dimension = 3;
    p.output_spatial_dimensions = {1, 2};
    const int64_t groups = f.Int(1, 2);
    const int64_t batch = f.Dim(), in_features = f.Int(1, 2) * groups, out_features = 2 * groups;
    p.feature_group_count = groups;
    ArrayType lhs{ElementType::kF32, {batch, f.Dim(), f.Dim(), in_features}};
    ArrayType rhs{ElementType::kF32, {f.Dim(), f.Dim(), in_features / groups, out_features}};
    ArrayType result{ElementType::kF32, {batch, f.Int(0, 4), f.Int(0, 4), out_features}};
    for (int64_t mutations = f.Int(0, 3); mutations > 0; --mutations) {
      switch (f.Int(0, 13)) {
        case 0: f.Mutate(&p.window_strides, -1, 3); break;
        case 1: p.padding.push_back({f.Int(-3, 3), f.Int(-3, 3)}); break;
        case 2: f.Mutate(&p.lhs_dilation, -1, 3); break;
        case 3: f.Mutate(&p.rhs_dilation, -1, 3); break;
        case 4: f.Mutate(&p.input_spatial_dimensions, -1, 4); break;
        case 5: f.Mutate(&p.kernel_spatial_dimensions, -1, 4); break;
        case 6: f.Mutate(&p.output_spatial_dimensions, -1, 4); break;
        case 7: p.input_feature_dimension = f.Int(-1, 4); break;
        case 8: p.kernel_output_feature_dimension = f.Int(-1, 4); break;
        case 9: p.feature_group_count = f.Int(-1, 3); break;
        case 10: p.batch_group_count = f.Int(0, 3); break;
        case 11: f.Mutate(&lhs.dims, -1, 4); break;
        case 12: lhs.type = rhs.type = f.Type(); break;
        default: result.type = f.Type(); break;
      }
    }
    // Mostly take the result shape Check computes (when it says it), so that Run is reached.
    if (!CheckConvolution(p, {&lhs, &rhs}, {&result}).ok() && !f.OneIn(8)) {
      const Status status = CheckConvolution(p, {&lhs, &rhs}, {&result});
      const std::string& text = status.message();
      const size_t at = text.find("(expected dimensions [");
      if (at != std::string::npos) {
        result.dims.clear();
        for (size_t i = at + 22; i < text.size() && text[i] != ']';) {
          const size_t end = text.find_first_of(",]", i);
          result.dims.push_back(std::stoll(text.substr(i, end - i)));
          i = text[end] == ',' ? end + 1 : end;
        }
      }
    }
    if (!CheckConvolution(p, {&lhs, &rhs}, {&result}).ok()) continue;
    ++ran;
    const std::vector<unsigned char> a = f.Data(lhs), b = f.Data(rhs);
    std::vector<unsigned char> c(static_cast<size_t>(result.byte_size()));
    EXPECT_TRUE(
        RunConvolution(p, {{&lhs, a.data()}, {&rhs, b.data()}}, {{&result, c.data()}}).ok());
  }
  EXPECT_GT(ran, kIterations / 4);
  EXPECT_LT(ran, kIterations);
}

TEST(ContractionFuzzTest, CollectivesOnOneParticipant) {
  Fuzzer f(3);
  int ran = 0;
  const int kIterations = 3000;
  for (int it = 0; it < kIterations; ++it) {
    CollectiveParams p;
    p.kind = static_cast<CollectiveKind>(f.Int(0, 5));
    p.dimension = f.Int(-1, 2);
    p.concat_dimension = f.Int(-1, 2);
    p.split_count = f.Int(0, 2);
    if (f.OneIn(3)) p.groups = {{0}};
    if (f.OneIn(6)) p.groups = {{f.Int(-1, 1)}, {f.Int(-1, 1)}};
    if (p.kind == CollectiveKind::kCollectivePermute && f.OneIn(2)) {
      p.source_target_pairs = {{f.Int(-1, 1), f.Int(-1, 1)}};
    }
    // Generic-body reductions would need the scalar computation engine: use typed combiners.
    const ElementType type = f.OneIn(5) ? f.Type() : ElementType::kS32;
    p.reduction = testing::Reduction(f.OneIn(2) ? Combiner::kAdd : Combiner::kMaximum, type);
    const ArrayType operand{type, {f.Dim(), f.Dim()}};
    ArrayType result = operand;
    if (f.OneIn(4)) result.dims[0] = f.Dim();
    // CheckScalarComputation is the reduction kernels' (a test stand-in here).
    if (!CheckCollective(p, 1, {&operand}, {&result}).ok()) continue;
    if (!(p.reduction.combiner == Combiner::kAdd || type == ElementType::kS32)) continue;
    ++ran;
    const std::vector<unsigned char> in = f.Data(operand);
    std::vector<unsigned char> out(static_cast<size_t>(result.byte_size()));
    int64_t step = 0;
    CollectiveContext context{0, 1, nullptr, &step};
    EXPECT_TRUE(RunCollective(p, context, {{&operand, in.data()}}, {{&result, out.data()}}).ok());
  }
  EXPECT_GT(ran, kIterations / 10);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
