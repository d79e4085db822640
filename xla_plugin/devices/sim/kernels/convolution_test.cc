#include <algorithm>
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

struct ConvGolden {
  const char* name;
  ConvolutionParams params;
  GoldenArray lhs, rhs, result;
  double abs_tol, rel_tol;
};

// Goldens from jax.lax.conv_general_dilated on XLA:CPU, including the convolutions of jax.grad
// of convolutions (testing/contraction_goldens.py states how the tolerances follow from f32/f64
// summation error and bf16/f16 rounding).
const ConvGolden kGoldens[] = {
#include "xla_plugin/devices/sim/kernels/testing/convolution_goldens.inc"
};

std::vector<unsigned char> RunConv(const ConvolutionParams& params, const ArrayType& lhs_type,
                                   const std::vector<unsigned char>& lhs,
                                   const ArrayType& rhs_type,
                                   const std::vector<unsigned char>& rhs,
                                   const ArrayType& result_type) {
  const Status check = CheckConvolution(params, {&lhs_type, &rhs_type}, {&result_type});
  EXPECT_TRUE(check.ok()) << check.ToString();
  std::vector<unsigned char> out(static_cast<size_t>(result_type.byte_size()) + 1, 0xA5);
  const Status run = RunConvolution(params, {{&lhs_type, lhs.data()}, {&rhs_type, rhs.data()}},
                                    {{&result_type, out.data()}});
  EXPECT_TRUE(run.ok()) << run.ToString();
  EXPECT_EQ(out.back(), 0xA5) << "wrote past the result";
  out.pop_back();
  return out;
}

TEST(ConvolutionTest, MatchesJaxGoldens) {
  for (const ConvGolden& g : kGoldens) {
    SCOPED_TRACE(g.name);
    const ArrayType result = TypeOf(g.result);
    const std::vector<unsigned char> got = RunConv(g.params, TypeOf(g.lhs), Bytes(g.lhs),
                                                   TypeOf(g.rhs), Bytes(g.rhs), result);
    ExpectArrayNear(g.name, result, got, Bytes(g.result), g.abs_tol, g.rel_tol);
  }
}

TEST(ConvolutionTest, GoldensCoverTheGradientForms) {
  bool lhs_dilation = false, batch_groups = false, negative_padding = false;
  for (const ConvGolden& g : kGoldens) {
    for (int64_t d : g.params.lhs_dilation) lhs_dilation |= d > 1;
    batch_groups |= g.params.batch_group_count > 1 &&
                    std::string(g.name).rfind("grad_", 0) == 0;
    for (auto [low, high] : g.params.padding) negative_padding |= low < 0 || high < 0;
  }
  EXPECT_TRUE(lhs_dilation);
  EXPECT_TRUE(batch_groups);
  EXPECT_TRUE(negative_padding);
}

// ---------------------------------------------------------------------------------------------
// Random convolutions against the spec's definition, computed directly.

struct RandomConv {
  ConvolutionParams params;
  ArrayType lhs{ElementType::kF32, {}}, rhs{ElementType::kF32, {}},
      result{ElementType::kF32, {}};
};

std::vector<int64_t> Permutation(int n, std::mt19937* rng) {
  std::vector<int64_t> p(n);
  for (int i = 0; i < n; ++i) p[i] = i;
  std::shuffle(p.begin(), p.end(), *rng);
  return p;
}

RandomConv MakeRandomConv(std::mt19937* rng) {
  const auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(*rng);
  };
  RandomConv c;
  ConvolutionParams& p = c.params;
  const int s = uniform(0, 3);
  const int rank = s + 2;
  const std::vector<int64_t> lp = Permutation(rank, rng), kp = Permutation(rank, rng),
                             op = Permutation(rank, rng);
  p.input_batch_dimension = lp[0];
  p.input_feature_dimension = lp[1];
  p.input_spatial_dimensions.assign(lp.begin() + 2, lp.end());
  p.kernel_output_feature_dimension = kp[0];
  p.kernel_input_feature_dimension = kp[1];
  p.kernel_spatial_dimensions.assign(kp.begin() + 2, kp.end());
  p.output_batch_dimension = op[0];
  p.output_feature_dimension = op[1];
  p.output_spatial_dimensions.assign(op.begin() + 2, op.end());
  if (uniform(0, 1)) {
    p.feature_group_count = uniform(1, 3);
  } else {
    p.batch_group_count = uniform(1, 3);
  }
  const int64_t kernel_in = uniform(0, 9) == 0 ? 0 : uniform(1, 3);
  const int64_t out_per_group = uniform(1, 3);
  const int64_t batch_out = uniform(0, 9) == 0 ? 0 : uniform(1, 2);
  const int64_t groups = p.feature_group_count * p.batch_group_count;
  c.lhs.dims.assign(rank, 0);
  c.rhs.dims.assign(rank, 0);
  c.result.dims.assign(rank, 0);
  c.lhs.dims[lp[0]] = batch_out * p.batch_group_count;
  c.lhs.dims[lp[1]] = kernel_in * p.feature_group_count;
  c.rhs.dims[kp[1]] = kernel_in;
  c.rhs.dims[kp[0]] = out_per_group * groups;
  c.result.dims[op[0]] = batch_out;
  c.result.dims[op[1]] = out_per_group * groups;
  for (int j = 0; j < s; ++j) {
    const int64_t in = uniform(0, 12) == 0 ? 0 : uniform(1, 7);
    const int64_t window = uniform(0, 12) == 0 ? 0 : uniform(1, 3);
    p.window_strides.push_back(uniform(1, 3));
    p.padding.push_back({uniform(-2, 3), uniform(-2, 3)});
    p.lhs_dilation.push_back(uniform(1, 3));
    p.rhs_dilation.push_back(uniform(1, 3));
    p.window_reversal.push_back(uniform(0, 1) == 1);
    c.lhs.dims[lp[2 + j]] = in;
    c.rhs.dims[kp[2 + j]] = window;
    const int64_t dilated_in = in == 0 ? 0 : (in - 1) * p.lhs_dilation[j] + 1;
    const int64_t dilated_window = window == 0 ? 0 : (window - 1) * p.rhs_dilation[j] + 1;
    const int64_t padded = p.padding[j].first + dilated_in + p.padding[j].second;
    c.result.dims[op[2 + j]] = padded <= 0 || dilated_window > padded
                                   ? 0
                                   : (padded - dilated_window) / p.window_strides[j] + 1;
  }
  return c;
}

int64_t Offset(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + index[d];
  return flat;
}

// The spec's convolution, one output element at a time.
std::vector<float> ReferenceConv(const RandomConv& c, const std::vector<float>& lhs,
                                 const std::vector<float>& rhs) {
  const ConvolutionParams& p = c.params;
  const int s = static_cast<int>(p.input_spatial_dimensions.size());
  const int64_t kernel_in = c.rhs.dims[p.kernel_input_feature_dimension];
  const int64_t out_features = c.result.dims[p.output_feature_dimension];
  const int64_t batch_out = c.result.dims[p.output_batch_dimension];
  const int64_t per_group = out_features / (p.feature_group_count * p.batch_group_count);
  int64_t window_count = 1;
  std::vector<int64_t> window_dims;
  for (int j = 0; j < s; ++j) {
    window_dims.push_back(c.rhs.dims[p.kernel_spatial_dimensions[j]]);
    window_count *= window_dims.back();
  }
  std::vector<float> out(static_cast<size_t>(c.result.num_elements()));
  for (int64_t r = 0; r < c.result.num_elements(); ++r) {
    std::vector<int64_t> oi(c.result.dims.size());
    int64_t rest = r;
    for (int d = static_cast<int>(oi.size()) - 1; d >= 0; --d) {
      oi[d] = rest % c.result.dims[d];
      rest /= c.result.dims[d];
    }
    const int64_t n = oi[p.output_batch_dimension];
    const int64_t o = oi[p.output_feature_dimension];
    const int64_t group = o / per_group;
    const int64_t lhs_batch = p.batch_group_count > 1 ? group * batch_out + n : n;
    const int64_t feature0 = p.feature_group_count > 1 ? group * kernel_in : 0;
    double sum = 0;
    for (int64_t w = 0; w < window_count; ++w) {
      std::vector<int64_t> wi(s);
      int64_t wrest = w;
      for (int j = s - 1; j >= 0; --j) {
        wi[j] = wrest % window_dims[j];
        wrest /= window_dims[j];
      }
      std::vector<int64_t> li(c.lhs.dims.size()), ki(c.rhs.dims.size());
      bool valid = true;
      for (int j = 0; j < s && valid; ++j) {
        const int64_t in = c.lhs.dims[p.input_spatial_dimensions[j]];
        const int64_t dilated_in = in == 0 ? 0 : (in - 1) * p.lhs_dilation[j] + 1;
        const int64_t pos = oi[p.output_spatial_dimensions[j]] * p.window_strides[j] +
                            wi[j] * p.rhs_dilation[j] - p.padding[j].first;
        valid = pos >= 0 && pos < dilated_in && pos % p.lhs_dilation[j] == 0;
        li[p.input_spatial_dimensions[j]] = valid ? pos / p.lhs_dilation[j] : 0;
        ki[p.kernel_spatial_dimensions[j]] =
            p.window_reversal[j] ? window_dims[j] - 1 - wi[j] : wi[j];
      }
      if (!valid) continue;
      li[p.input_batch_dimension] = lhs_batch;
      ki[p.kernel_output_feature_dimension] = o;
      for (int64_t i = 0; i < kernel_in; ++i) {
        li[p.input_feature_dimension] = feature0 + i;
        ki[p.kernel_input_feature_dimension] = i;
        sum += static_cast<double>(lhs[Offset(li, c.lhs.dims)]) * rhs[Offset(ki, c.rhs.dims)];
      }
    }
    out[r] = static_cast<float>(sum);
  }
  return out;
}

TEST(ConvolutionTest, RandomConvolutionsMatchTheSpecDefinition) {
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> value(-3, 3);
  for (int it = 0; it < 400; ++it) {
    const RandomConv c = MakeRandomConv(&rng);
    SCOPED_TRACE("iteration " + std::to_string(it) + ": " + c.lhs.ToString() + " * " +
                 c.rhs.ToString() + " -> " + c.result.ToString());
    std::vector<float> lhs(static_cast<size_t>(c.lhs.num_elements()));
    std::vector<float> rhs(static_cast<size_t>(c.rhs.num_elements()));
    for (float& x : lhs) x = static_cast<float>(value(rng));
    for (float& x : rhs) x = static_cast<float>(value(rng));
    std::vector<unsigned char> lhs_bytes(lhs.size() * 4), rhs_bytes(rhs.size() * 4);
    if (!lhs.empty()) std::memcpy(lhs_bytes.data(), lhs.data(), lhs_bytes.size());
    if (!rhs.empty()) std::memcpy(rhs_bytes.data(), rhs.data(), rhs_bytes.size());
    const std::vector<unsigned char> got =
        RunConv(c.params, c.lhs, lhs_bytes, c.rhs, rhs_bytes, c.result);
    std::vector<float> values(got.size() / 4);
    if (!got.empty()) std::memcpy(values.data(), got.data(), got.size());
    ASSERT_EQ(values, ReferenceConv(c, lhs, rhs));
  }
}

TEST(ConvolutionTest, OmittedAttributesTakeTheirDefaults) {
  // A 1-D convolution with empty strides/padding/dilations/reversal: a plain valid correlation.
  ConvolutionParams p;
  p.input_batch_dimension = 0;
  p.input_feature_dimension = 2;
  p.input_spatial_dimensions = {1};
  p.kernel_spatial_dimensions = {0};
  p.kernel_input_feature_dimension = 1;
  p.kernel_output_feature_dimension = 2;
  p.output_batch_dimension = 0;
  p.output_feature_dimension = 2;
  p.output_spatial_dimensions = {1};
  const ArrayType lhs{ElementType::kF32, {1, 4, 1}}, rhs{ElementType::kF32, {2, 1, 1}};
  const ArrayType result{ElementType::kF32, {1, 3, 1}};
  const float x[4] = {1, 2, 3, 4}, w[2] = {10, 1};
  std::vector<unsigned char> xb(16), wb(8);
  std::memcpy(xb.data(), x, 16);
  std::memcpy(wb.data(), w, 8);
  const std::vector<unsigned char> got = RunConv(p, lhs, xb, rhs, wb, result);
  float values[3];
  std::memcpy(values, got.data(), 12);
  EXPECT_EQ(std::vector<float>(values, values + 3), (std::vector<float>{12, 23, 34}));
}

// ---------------------------------------------------------------------------------------------
// Check refusals.

class ConvCheckTest : public ::testing::Test {
 protected:
  ConvCheckTest() {
    // NHWC x HWIO -> NHWC, 3x3 window, stride 1, no padding: [2,6,5,4] x [3,3,2,6] -> [2,4,3,6]
    // with feature_group_count 2.
    p_.window_strides = {1, 1};
    p_.padding = {{0, 0}, {0, 0}};
    p_.lhs_dilation = {1, 1};
    p_.rhs_dilation = {1, 1};
    p_.window_reversal = {false, false};
    p_.input_batch_dimension = 0;
    p_.input_feature_dimension = 3;
    p_.input_spatial_dimensions = {1, 2};
    p_.kernel_input_feature_dimension = 2;
    p_.kernel_output_feature_dimension = 3;
    p_.kernel_spatial_dimensions = {0, 1};
    p_.output_batch_dimension = 0;
    p_.output_feature_dimension = 3;
    p_.output_spatial_dimensions = {1, 2};
    p_.feature_group_count = 2;
  }
  Status Check() { return CheckConvolution(p_, {&lhs_, &rhs_}, {&result_}); }

  ConvolutionParams p_;
  ArrayType lhs_{ElementType::kF32, {2, 6, 5, 4}};
  ArrayType rhs_{ElementType::kF32, {3, 3, 2, 6}};
  ArrayType result_{ElementType::kF32, {2, 4, 3, 6}};
};

TEST_F(ConvCheckTest, AcceptsTheBaseCase) { EXPECT_TRUE(Check().ok()) << Check().ToString(); }

TEST_F(ConvCheckTest, OperandAndResultCounts) {
  EXPECT_ERROR_CONTAINS(CheckConvolution(p_, {&lhs_}, {&result_}),
                        "expected 2 operands (lhs, rhs) and 1 result, got 1 operands");
}

TEST_F(ConvCheckTest, TypesAndElementTypes) {
  EXPECT_ERROR_CONTAINS(CheckConvolution(p_, {&lhs_, &rhs_}, {nullptr}),
                        "the result type is null");
  rhs_.type = ElementType::kU4;
  EXPECT_ERROR_CONTAINS(Check(), "the rhs element type u4 is not supported");
  rhs_.type = ElementType::kF32;
  result_.type = ElementType::kU8;
  EXPECT_ERROR_CONTAINS(Check(), "f32 x f32 cannot produce a u8 result");
  result_.type = ElementType::kF32;
  lhs_.dims[0] = -2;
  EXPECT_ERROR_CONTAINS(Check(), "has a negative dimension");
}

TEST_F(ConvCheckTest, Ranks) {
  rhs_.dims = {3, 3, 2};
  EXPECT_ERROR_CONTAINS(Check(), "(expected equal ranks of at least 2)");
  lhs_.dims = {4};
  rhs_.dims = {4};
  EXPECT_ERROR_CONTAINS(Check(), "(expected equal ranks of at least 2)");
}

TEST_F(ConvCheckTest, DimensionNumbers) {
  p_.input_spatial_dimensions = {1};
  EXPECT_ERROR_CONTAINS(Check(), "input_spatial_dimensions [1] has 1 entries (expected rank - 2 "
                                 "= 2 for the lhs)");
  p_.input_spatial_dimensions = {1, 4};
  EXPECT_ERROR_CONTAINS(Check(), "input_spatial_dimensions 4 is out of range (expected 0 <= d "
                                 "< 4)");
  p_.input_spatial_dimensions = {1, 2};
  p_.kernel_input_feature_dimension = 0;
  EXPECT_ERROR_CONTAINS(Check(), "kernel_spatial_dimensions 0 repeats a dimension");
  p_.kernel_input_feature_dimension = 2;
  p_.output_feature_dimension = -1;
  EXPECT_ERROR_CONTAINS(Check(), "output_feature_dimension -1 is out of range");
  p_.output_feature_dimension = 0;
  EXPECT_ERROR_CONTAINS(Check(), "output_feature_dimension 0 repeats a dimension");
}

TEST_F(ConvCheckTest, SpatialListLengths) {
  const char* expected = "(expected 2, one per spatial dimension, or none for the default)";
  p_.window_strides = {1};
  EXPECT_ERROR_CONTAINS(Check(), std::string("window_strides has 1 entries ") + expected);
  p_.window_strides = {};
  p_.padding = {{0, 0}, {0, 0}, {0, 0}};
  EXPECT_ERROR_CONTAINS(Check(), "padding has 3 entries");
  p_.padding = {};
  p_.lhs_dilation = {1};
  EXPECT_ERROR_CONTAINS(Check(), "lhs_dilation has 1 entries");
  p_.lhs_dilation = {};
  p_.rhs_dilation = {1, 1, 1};
  EXPECT_ERROR_CONTAINS(Check(), "rhs_dilation has 3 entries");
  p_.rhs_dilation = {};
  p_.window_reversal = {true};
  EXPECT_ERROR_CONTAINS(Check(), "window_reversal has 1 entries");
  p_.window_reversal = {};
  EXPECT_TRUE(Check().ok()) << Check().ToString();
}

TEST_F(ConvCheckTest, StridesAndDilations) {
  p_.window_strides = {1, 0};
  EXPECT_ERROR_CONTAINS(Check(), "window_strides 0, lhs_dilation 1, rhs_dilation 1 of spatial "
                                 "dimension 1 (expected all >= 1)");
  p_.window_strides = {1, 1};
  p_.lhs_dilation = {-1, 1};
  EXPECT_ERROR_CONTAINS(Check(), "lhs_dilation -1");
  p_.lhs_dilation = {1, 1};
  p_.rhs_dilation = {1, 0};
  EXPECT_ERROR_CONTAINS(Check(), "rhs_dilation 0 of spatial dimension 1");
}

TEST_F(ConvCheckTest, HugePaddingAndDilation) {
  p_.padding = {{int64_t{1} << 61, 0}, {0, 0}};
  EXPECT_ERROR_CONTAINS(Check(), "(expected magnitudes below 2^60)");
  p_.padding = {{0, 0}, {0, 0}};
  p_.lhs_dilation = {int64_t{1} << 62, 1};
  EXPECT_ERROR_CONTAINS(Check(), "the dilated input or window of spatial dimension 0 is too "
                                 "large");
  p_.lhs_dilation = {int64_t{1} << 57, 1};
  p_.padding = {{int64_t{1} << 59, int64_t{1} << 59}, {0, 0}};
  EXPECT_ERROR_CONTAINS(Check(), "the padded input of spatial dimension 0 is too large");
}

TEST_F(ConvCheckTest, GroupCounts) {
  p_.feature_group_count = 0;
  EXPECT_ERROR_CONTAINS(Check(), "feature_group_count 0 and batch_group_count 1 (expected both "
                                 ">= 1)");
  p_.feature_group_count = 2;
  p_.batch_group_count = 2;
  EXPECT_ERROR_CONTAINS(Check(), "(expected one of them = 1)");
  p_.batch_group_count = 1;
  p_.feature_group_count = 3;
  EXPECT_ERROR_CONTAINS(Check(), "lhs feature size 4 is not a multiple of feature_group_count 3");
  p_.feature_group_count = 4;
  EXPECT_ERROR_CONTAINS(Check(), "rhs input feature size 2 (expected lhs feature size / "
                                 "feature_group_count = 1)");
  p_.feature_group_count = 2;
  rhs_.dims = {3, 3, 2, 5};
  EXPECT_ERROR_CONTAINS(Check(), "rhs output feature size 5 is not a multiple of "
                                 "feature_group_count 2");
  rhs_.dims = {3, 3, 4, 6};
  p_.feature_group_count = 1;
  p_.batch_group_count = 3;
  EXPECT_ERROR_CONTAINS(Check(), "lhs batch size 2 is not a multiple of batch_group_count 3");
  p_.batch_group_count = 2;
  rhs_.dims = {3, 3, 4, 5};
  EXPECT_ERROR_CONTAINS(Check(), "rhs output feature size 5 is not a multiple of "
                                 "batch_group_count 2");
}

TEST_F(ConvCheckTest, ResultShape) {
  result_.dims = {2, 4, 3};
  EXPECT_ERROR_CONTAINS(Check(), "result f32[2,4,3] (expected rank 4)");
  result_.dims = {2, 4, 4, 6};
  EXPECT_ERROR_CONTAINS(Check(), "result f32[2,4,4,6] (expected dimensions [2,4,3,6])");
  p_.batch_group_count = 2;
  p_.feature_group_count = 1;
  rhs_.dims = {3, 3, 4, 6};
  result_.dims = {2, 4, 3, 6};
  EXPECT_ERROR_CONTAINS(Check(), "(expected dimensions [1,4,3,6])");
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
