#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/kernels/contraction.h"
#include "xla_plugin/devices/sim/kernels/testing/contraction_test_util.h"

namespace pjrtkit {
namespace sim {
namespace {

using testing::Bytes;
using testing::ExpectArrayNear;
using testing::GoldenArray;
using testing::TypeOf;

struct DotGolden {
  const char* name;
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  GoldenArray lhs, rhs, result;
  double abs_tol, rel_tol;
};

// Goldens from jax.lax.dot_general on XLA:CPU (testing/contraction_goldens.py states how the
// tolerances follow from f32/f64 summation error and bf16/f16 rounding).
const DotGolden kGoldens[] = {
#include "xla_plugin/devices/sim/kernels/testing/dot_general_goldens.inc"
};

DotGeneralParams ParamsOf(const DotGolden& g) {
  DotGeneralParams p;
  p.lhs_batching_dimensions = g.lhs_batch;
  p.rhs_batching_dimensions = g.rhs_batch;
  p.lhs_contracting_dimensions = g.lhs_contracting;
  p.rhs_contracting_dimensions = g.rhs_contracting;
  return p;
}

// Checks and runs a dot_general on byte arrays; returns the result bytes.
std::vector<unsigned char> RunDot(const DotGeneralParams& params, const ArrayType& lhs_type,
                                  const std::vector<unsigned char>& lhs,
                                  const ArrayType& rhs_type,
                                  const std::vector<unsigned char>& rhs,
                                  const ArrayType& result_type) {
  const Status check = CheckDotGeneral(params, {&lhs_type, &rhs_type}, {&result_type});
  EXPECT_TRUE(check.ok()) << check.ToString();
  // One guard byte past the result catches writes out of bounds.
  std::vector<unsigned char> out(static_cast<size_t>(result_type.byte_size()) + 1, 0xA5);
  const Status run = RunDotGeneral(params, {{&lhs_type, lhs.data()}, {&rhs_type, rhs.data()}},
                                   {{&result_type, out.data()}});
  EXPECT_TRUE(run.ok()) << run.ToString();
  EXPECT_EQ(out.back(), 0xA5) << "wrote past the result";
  out.pop_back();
  return out;
}

TEST(DotGeneralTest, MatchesJaxGoldens) {
  for (const DotGolden& g : kGoldens) {
    SCOPED_TRACE(g.name);
    const ArrayType result = TypeOf(g.result);
    const std::vector<unsigned char> got = RunDot(ParamsOf(g), TypeOf(g.lhs), Bytes(g.lhs),
                                                  TypeOf(g.rhs), Bytes(g.rhs), result);
    ExpectArrayNear(g.name, result, got, Bytes(g.result), g.abs_tol, g.rel_tol);
  }
}

TEST(DotGeneralTest, GoldensCoverEveryElementClass) {
  std::vector<ElementType> seen;
  for (const DotGolden& g : kGoldens) seen.push_back(g.result.type);
  for (ElementType t : {ElementType::kPred, ElementType::kS8, ElementType::kS16,
                        ElementType::kS32, ElementType::kS64, ElementType::kU32,
                        ElementType::kU64, ElementType::kF16, ElementType::kBF16,
                        ElementType::kF32, ElementType::kF64, ElementType::kC64,
                        ElementType::kC128}) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), t), seen.end()) << ElementTypeName(t);
  }
}

template <typename T>
std::vector<unsigned char> ToBytes(const std::vector<T>& values) {
  std::vector<unsigned char> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> FromBytes(const std::vector<unsigned char>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

TEST(DotGeneralTest, MixedOperandTypes) {
  DotGeneralParams p;
  p.lhs_contracting_dimensions = {1};
  p.rhs_contracting_dimensions = {0};
  // f32 x bf16 -> f32: bf16 0x4040 = 3, 0xBF80 = -1.
  const ArrayType f32_2x2{ElementType::kF32, {2, 2}}, bf16_2x1{ElementType::kBF16, {2, 1}};
  const ArrayType f32_2x1{ElementType::kF32, {2, 1}};
  std::vector<uint16_t> bf16 = {0x4040, 0xBF80};
  EXPECT_EQ(FromBytes<float>(RunDot(p, f32_2x2, ToBytes(std::vector<float>{1, 2, 3, 4}),
                                    bf16_2x1, ToBytes(bf16), f32_2x1)),
            (std::vector<float>{1, 5}));
  // s8 x u8 -> s32: -1 sign-extends, 255 zero-extends: -1 * 255 + 2 * 3 = -249.
  const ArrayType s8_1x2{ElementType::kS8, {1, 2}}, u8_2x1{ElementType::kU8, {2, 1}};
  const ArrayType s32_1x1{ElementType::kS32, {1, 1}};
  EXPECT_EQ(FromBytes<int32_t>(RunDot(p, s8_1x2, ToBytes(std::vector<int8_t>{-1, 2}), u8_2x1,
                                      ToBytes(std::vector<uint8_t>{255, 3}), s32_1x1)),
            (std::vector<int32_t>{-249}));
  // pred x s8 -> s32.
  const ArrayType pred_1x2{ElementType::kPred, {1, 2}}, s8_2x1{ElementType::kS8, {2, 1}};
  EXPECT_EQ(FromBytes<int32_t>(RunDot(p, pred_1x2, ToBytes(std::vector<uint8_t>{1, 1}), s8_2x1,
                                      ToBytes(std::vector<int8_t>{-7, 3}), s32_1x1)),
            (std::vector<int32_t>{-4}));
  // s32 x s32 -> f32 (integers converted, summed in f32).
  const ArrayType s32_1x2{ElementType::kS32, {1, 2}}, s32_2x1{ElementType::kS32, {2, 1}};
  const ArrayType f32_1x1{ElementType::kF32, {1, 1}};
  EXPECT_EQ(FromBytes<float>(RunDot(p, s32_1x2, ToBytes(std::vector<int32_t>{3, -4}), s32_2x1,
                                    ToBytes(std::vector<int32_t>{5, 6}), f32_1x1)),
            (std::vector<float>{-9}));
  // f32 x f32 -> c64.
  const ArrayType f32_1x2{ElementType::kF32, {1, 2}}, f32_2x1b{ElementType::kF32, {2, 1}};
  const ArrayType c64_1x1{ElementType::kC64, {1, 1}};
  EXPECT_EQ(FromBytes<std::complex<float>>(
                RunDot(p, f32_1x2, ToBytes(std::vector<float>{1, 2}), f32_2x1b,
                       ToBytes(std::vector<float>{3, 4}), c64_1x1)),
            (std::vector<std::complex<float>>{{11, 0}}));
  // f64 x f64 -> f32: summed in f64, rounded once.
  const ArrayType f64_1x2{ElementType::kF64, {1, 2}}, f64_2x1{ElementType::kF64, {2, 1}};
  EXPECT_EQ(FromBytes<float>(RunDot(p, f64_1x2, ToBytes(std::vector<double>{1.0, 1e-10}),
                                    f64_2x1, ToBytes(std::vector<double>{1.0, 1.0}), f32_1x1)),
            (std::vector<float>{static_cast<float>(1.0 + 1e-10)}));
}

// A random dot_general: dimension roles shuffled over both operands, integer-valued data, and a
// naive reference (exact for every type used).
struct RandomDot {
  DotGeneralParams params;
  ArrayType lhs, rhs, result;
};

RandomDot MakeRandomDot(std::mt19937* rng, ElementType type) {
  std::uniform_int_distribution<int> count(0, 2);
  std::uniform_int_distribution<int> size(0, 9);
  const auto dim_size = [&]() {
    const int s = size(*rng);
    return s == 0 ? int64_t{0} : s <= 6 ? int64_t{s} : int64_t{s * 5};  // 0, 1..6, 35..45.
  };
  const int nb = count(*rng), nc = count(*rng), lf = count(*rng), rf = count(*rng);
  std::vector<int64_t> batch(nb), contract(nc), lfree(lf), rfree(rf);
  for (auto* v : {&batch, &contract, &lfree, &rfree}) {
    for (int64_t& d : *v) d = dim_size();
  }
  // Keep the work small: at most ~2^16 multiply-adds.
  int64_t work = 1;
  for (auto* v : {&batch, &contract, &lfree, &rfree}) {
    for (int64_t& d : *v) {
      if (work * std::max<int64_t>(d, 1) > 65536) d = 1;
      work *= std::max<int64_t>(d, 1);
    }
  }
  RandomDot dot;
  const auto place = [&](const std::vector<int64_t>& free, std::vector<int64_t>* batch_dims,
                         std::vector<int64_t>* contract_dims, ArrayType* type) {
    const int rank = nb + nc + static_cast<int>(free.size());
    std::vector<int64_t> positions(rank);
    for (int i = 0; i < rank; ++i) positions[i] = i;
    std::shuffle(positions.begin(), positions.end(), *rng);
    type->dims.assign(rank, 0);
    for (int i = 0; i < nb; ++i) {
      batch_dims->push_back(positions[i]);
      type->dims[positions[i]] = batch[i];
    }
    for (int i = 0; i < nc; ++i) {
      contract_dims->push_back(positions[nb + i]);
      type->dims[positions[nb + i]] = contract[i];
    }
    // Free dimensions keep their relative order in the result (increasing dimension number).
    std::vector<int64_t> free_positions(positions.begin() + nb + nc, positions.end());
    std::sort(free_positions.begin(), free_positions.end());
    for (size_t i = 0; i < free.size(); ++i) type->dims[free_positions[i]] = free[i];
  };
  dot.lhs.type = dot.rhs.type = dot.result.type = type;
  place(lfree, &dot.params.lhs_batching_dimensions, &dot.params.lhs_contracting_dimensions,
        &dot.lhs);
  place(rfree, &dot.params.rhs_batching_dimensions, &dot.params.rhs_contracting_dimensions,
        &dot.rhs);
  dot.result.dims = batch;
  dot.result.dims.insert(dot.result.dims.end(), lfree.begin(), lfree.end());
  dot.result.dims.insert(dot.result.dims.end(), rfree.begin(), rfree.end());
  return dot;
}

// Row-major multi-index of flat index `i` in `dims`.
std::vector<int64_t> Unflatten(int64_t i, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    index[d] = i % dims[d];
    i /= dims[d];
  }
  return index;
}

int64_t Flatten(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + index[d];
  return flat;
}

template <typename T>
std::vector<T> ReferenceDot(const RandomDot& dot, const std::vector<T>& lhs,
                            const std::vector<T>& rhs) {
  const DotGeneralParams& p = dot.params;
  std::vector<int64_t> contract_dims;
  for (int64_t d : p.lhs_contracting_dimensions) contract_dims.push_back(dot.lhs.dims[d]);
  int64_t contract_count = 1;
  for (int64_t d : contract_dims) contract_count *= d;
  const auto free_of = [](const ArrayType& t, const std::vector<int64_t>& a,
                          const std::vector<int64_t>& b) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < static_cast<int64_t>(t.dims.size()); ++d) {
      if (std::find(a.begin(), a.end(), d) == a.end() &&
          std::find(b.begin(), b.end(), d) == b.end()) {
        free.push_back(d);
      }
    }
    return free;
  };
  const std::vector<int64_t> lfree =
      free_of(dot.lhs, p.lhs_batching_dimensions, p.lhs_contracting_dimensions);
  const std::vector<int64_t> rfree =
      free_of(dot.rhs, p.rhs_batching_dimensions, p.rhs_contracting_dimensions);
  std::vector<T> out(static_cast<size_t>(dot.result.num_elements()));
  for (int64_t r = 0; r < dot.result.num_elements(); ++r) {
    const std::vector<int64_t> ri = Unflatten(r, dot.result.dims);
    T sum(0);
    for (int64_t c = 0; c < contract_count; ++c) {
      const std::vector<int64_t> ci = Unflatten(c, contract_dims);
      std::vector<int64_t> li(dot.lhs.dims.size()), hi(dot.rhs.dims.size());
      size_t k = 0;
      for (size_t b = 0; b < p.lhs_batching_dimensions.size(); ++b, ++k) {
        li[p.lhs_batching_dimensions[b]] = ri[k];
        hi[p.rhs_batching_dimensions[b]] = ri[k];
      }
      for (int64_t d : lfree) li[d] = ri[k++];
      for (int64_t d : rfree) hi[d] = ri[k++];
      for (size_t j = 0; j < ci.size(); ++j) {
        li[p.lhs_contracting_dimensions[j]] = ci[j];
        hi[p.rhs_contracting_dimensions[j]] = ci[j];
      }
      sum += lhs[Flatten(li, dot.lhs.dims)] * rhs[Flatten(hi, dot.rhs.dims)];
    }
    out[r] = sum;
  }
  return out;
}

template <typename T>
void RandomDotsMatchReference(ElementType type, int iterations, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-3, 3);
  for (int it = 0; it < iterations; ++it) {
    const RandomDot dot = MakeRandomDot(&rng, type);
    SCOPED_TRACE("iteration " + std::to_string(it) + ": " + dot.lhs.ToString() + " x " +
                 dot.rhs.ToString() + " -> " + dot.result.ToString());
    std::vector<T> lhs(static_cast<size_t>(dot.lhs.num_elements()));
    std::vector<T> rhs(static_cast<size_t>(dot.rhs.num_elements()));
    for (T& x : lhs) x = T(value(rng));
    for (T& x : rhs) x = T(value(rng));
    const std::vector<T> got = FromBytes<T>(
        RunDot(dot.params, dot.lhs, ToBytes(lhs), dot.rhs, ToBytes(rhs), dot.result));
    ASSERT_EQ(got, ReferenceDot(dot, lhs, rhs));
  }
}

TEST(DotGeneralTest, RandomDimensionRolesF32) {
  RandomDotsMatchReference<float>(ElementType::kF32, 300, 11);
}

TEST(DotGeneralTest, RandomDimensionRolesS32) {
  RandomDotsMatchReference<int32_t>(ElementType::kS32, 150, 12);
}

TEST(DotGeneralTest, RandomDimensionRolesC128) {
  RandomDotsMatchReference<std::complex<double>>(ElementType::kC128, 100, 13);
}

// ---------------------------------------------------------------------------------------------
// Check refusals.

class DotCheckTest : public ::testing::Test {
 protected:
  DotCheckTest() {
    params_.lhs_batching_dimensions = {0};
    params_.rhs_batching_dimensions = {0};
    params_.lhs_contracting_dimensions = {2};
    params_.rhs_contracting_dimensions = {1};
  }
  Status Check() { return CheckDotGeneral(params_, {&lhs_, &rhs_}, {&result_}); }

  DotGeneralParams params_;
  ArrayType lhs_{ElementType::kF32, {2, 3, 4}};
  ArrayType rhs_{ElementType::kF32, {2, 4, 5}};
  ArrayType result_{ElementType::kF32, {2, 3, 5}};
};

TEST_F(DotCheckTest, AcceptsTheBaseCase) { EXPECT_TRUE(Check().ok()) << Check().ToString(); }

TEST_F(DotCheckTest, OperandAndResultCounts) {
  EXPECT_ERROR_CONTAINS(CheckDotGeneral(params_, {&lhs_}, {&result_}),
                        "expected 2 operands (lhs, rhs) and 1 result, got 1 operands");
  EXPECT_ERROR_CONTAINS(CheckDotGeneral(params_, {&lhs_, &rhs_}, {}),
                        "expected 2 operands (lhs, rhs) and 1 result, got 2 operands and 0");
}

TEST_F(DotCheckTest, NullType) {
  EXPECT_ERROR_CONTAINS(CheckDotGeneral(params_, {&lhs_, nullptr}, {&result_}),
                        "the rhs type is null");
}

TEST_F(DotCheckTest, NegativeAndHugeDimensions) {
  lhs_.dims = {2, -3, 4};
  EXPECT_ERROR_CONTAINS(Check(), "lhs f32[2,-3,4] has a negative dimension");
  lhs_.dims = {2, 3, 4};
  result_.dims = {int64_t{1} << 40, int64_t{1} << 30, 5};
  EXPECT_ERROR_CONTAINS(Check(), "is too large (expected fewer than 2^62 bytes)");
}

TEST_F(DotCheckTest, UnsupportedElementTypes) {
  lhs_.type = ElementType::kS4;
  EXPECT_ERROR_CONTAINS(Check(), "the lhs element type s4 is not supported");
  lhs_.type = ElementType::kF32;
  result_.type = ElementType::kToken;
  EXPECT_ERROR_CONTAINS(Check(), "the result element type");
}

TEST_F(DotCheckTest, ElementTypeCombinations) {
  result_.type = ElementType::kS32;
  EXPECT_ERROR_CONTAINS(Check(), "f32 x f32 cannot produce a s32 result (expected integer");
  result_.type = ElementType::kPred;
  EXPECT_ERROR_CONTAINS(Check(), "cannot produce a pred result (expected pred operands)");
  lhs_.type = ElementType::kC64;
  result_.type = ElementType::kF32;
  EXPECT_ERROR_CONTAINS(Check(), "c64 x f32 cannot produce a f32 result (expected real");
}

TEST_F(DotCheckTest, ListLengths) {
  params_.rhs_batching_dimensions = {};
  EXPECT_ERROR_CONTAINS(Check(), "lhs_batching_dimensions [0] and rhs_batching_dimensions [] "
                                 "differ in length");
  params_.rhs_batching_dimensions = {0};
  params_.lhs_contracting_dimensions = {1, 2};
  EXPECT_ERROR_CONTAINS(Check(), "lhs_contracting_dimensions [1,2] and "
                                 "rhs_contracting_dimensions [1] differ in length");
}

TEST_F(DotCheckTest, DimensionOutOfRange) {
  params_.lhs_contracting_dimensions = {3};
  EXPECT_ERROR_CONTAINS(Check(), "lhs_contracting_dimensions [3] has dimension 3 out of range "
                                 "(expected 0 <= d < 3)");
  params_.lhs_contracting_dimensions = {2};
  params_.rhs_batching_dimensions = {-1};
  EXPECT_ERROR_CONTAINS(Check(), "rhs_batching_dimensions [-1] has dimension -1 out of range");
}

TEST_F(DotCheckTest, RepeatedDimension) {
  params_.lhs_contracting_dimensions = {0};
  EXPECT_ERROR_CONTAINS(Check(), "dimension 0 appears twice in lhs_contracting_dimensions");
  params_.lhs_contracting_dimensions = {2};
  params_.rhs_batching_dimensions = {1};
  params_.rhs_contracting_dimensions = {1};
  EXPECT_ERROR_CONTAINS(Check(), "dimension 1 appears twice in rhs_contracting_dimensions");
}

TEST_F(DotCheckTest, PairedSizes) {
  rhs_.dims = {3, 4, 5};
  EXPECT_ERROR_CONTAINS(Check(), "batching dimension 0 has size 2 in lhs f32[2,3,4] but 3 in "
                                 "rhs f32[3,4,5] (expected equal sizes)");
  rhs_.dims = {2, 6, 5};
  EXPECT_ERROR_CONTAINS(Check(), "contracting dimension 0 has size 4 in lhs");
}

TEST_F(DotCheckTest, ResultDimensions) {
  result_.dims = {2, 5, 3};
  EXPECT_ERROR_CONTAINS(Check(), "result f32[2,5,3] has dimensions [2,5,3] (expected batch, lhs "
                                 "free, rhs free dimensions [2,3,5])");
  result_.dims = {2, 3, 5, 1};
  EXPECT_ERROR_CONTAINS(Check(), "(expected batch, lhs free, rhs free dimensions [2,3,5])");
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
