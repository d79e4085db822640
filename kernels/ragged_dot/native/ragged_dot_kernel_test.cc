// Every instruction-set variant of the native ragged_dot products (the ones this CPU runs, and
// the avx512 variant's AMX tile products where this process may use them) against a plain triple
// loop: tile-crossing shapes, empty groups, rows past the last group, bfloat16 operands and
// outputs, both weight layouts, contractions and groups longer than one pass of the AMX blocks.
#include "kernels/ragged_dot/native/ragged_dot_kernel.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/native/cpu_features.h"

namespace pjrtkit_kernels {
namespace {

using RowsFn = void (*)(const RaggedRowsArgs&);
using GroupsFn = void (*)(const RaggedGroupsArgs&);

struct Variant {
  const char* name;
  Isa isa;
  RowsFn rows;
  GroupsFn groups;
  bool amx;  // the args' `amx`: bfloat16 products on AMX tiles
};

const Variant kVariants[] = {
    {"generic", Isa::kGeneric, generic::RaggedRowsProduct, generic::RaggedGroupsProduct, false},
    {"avx2", Isa::kAvx2, avx2::RaggedRowsProduct, avx2::RaggedGroupsProduct, false},
    {"avx512", Isa::kAvx512, avx512::RaggedRowsProduct, avx512::RaggedGroupsProduct, false},
    {"avx512 amx", Isa::kAvx512, avx512::RaggedRowsProduct, avx512::RaggedGroupsProduct, true},
};

bool Runs(const Variant& v) {
  if (v.amx && !CpuFeatures::AmxBf16()) return false;
  return static_cast<int>(v.isa) <= static_cast<int>(CpuFeatures::Best());
}

// The variants this CPU runs; the AMX one is absent without AMX-BF16 (or with
// PJRTKIT_KERNELS_AMX=0), which the log says.
std::vector<const Variant*> Running() {
  std::vector<const Variant*> running;
  for (const Variant& v : kVariants) {
    if (Runs(v)) {
      running.push_back(&v);
    } else {
      std::printf("variant %s: not run, this CPU or process lacks it\n", v.name);
    }
  }
  return running;
}

std::vector<float> Random(int64_t n, int seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = Bf16ToFloat(FloatToBf16(dist(gen)));  // exact in bfloat16 too
  return v;
}

std::vector<uint16_t> ToBf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = FloatToBf16(v[i]);
  return out;
}

// Groups of `sizes` over `rows` rows (a run past the last group stays uncovered).
struct Groups {
  std::vector<int64_t> start, end;
  Groups(const std::vector<int64_t>& sizes, int64_t rows) {
    int64_t cum = 0;
    for (int64_t s : sizes) {
      start.push_back(std::min(cum, rows));
      end.push_back(std::min(cum + s, rows));
      cum += s;
    }
  }
  GroupRows rows() const { return {static_cast<int64_t>(start.size()), start.data(), end.data()}; }
};

struct Shape {
  int64_t rows, depth, cols;
  std::vector<int64_t> sizes;
};

const Shape kShapes[] = {
    {900, 300, 530, {0, 410, 3, 0, 400, 7}},
    {97, 513, 33, {97}},
    {40, 7, 5, {1, 0, 38, 1}},
    {20, 16, 40, {0, 0}},
    // Whole 32-row blocks and 32-deep steps, an empty group between.
    {256, 64, 64, {128, 0, 128}},
    // No contraction: every product is zero.
    {33, 0, 40, {10, 23}},
    // A contraction of 33 AMX steps (two passes), a group over two row chunks and two
    // contraction chunks of the groups product.
    {1100, 1056, 17, {1100}},
};

// |got - want| <= tol (1 + |want|) + 1e-6 sum |terms| (`magnitude`): float32 sums of long
// contractions cancel, so their rounding error scales with the terms, not with the result.
void ExpectNear(const std::vector<float>& got, const std::vector<double>& want,
                const std::vector<double>& magnitude, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::fabs(want[i])) + 1e-6 * magnitude[i])
        << what << " at " << i;
  }
}

TEST(RaggedDotKernel, RowsProductMatchesTheDefinition) {
  for (const Variant* vp : Running()) {
    const Variant& v = *vp;
    for (const Shape& s : kShapes) {
      for (bool transposed : {false, true}) {
        // float32 throughout; bfloat16 operands, float32 output; bfloat16 throughout.
        for (int types = 0; types < 3; ++types) {
          const bool bf16 = types > 0, bf16_out = types == 2;
          const int64_t g = s.sizes.size();
          const std::vector<float> x = Random(s.rows * s.depth, 1);
          const std::vector<float> w = Random(g * s.depth * s.cols, 2);
          const std::vector<uint16_t> xb = ToBf16(x), wb = ToBf16(w);
          const Groups groups(s.sizes, s.rows);
          std::vector<double> want(s.rows * s.cols, 0.0), magnitude(want.size(), 0.0);
          for (int64_t gi = 0; gi < g; ++gi) {
            for (int64_t r = groups.start[gi]; r < groups.end[gi]; ++r) {
              for (int64_t j = 0; j < s.cols; ++j) {
                double acc = 0, abs = 0;
                for (int64_t p = 0; p < s.depth; ++p) {
                  const int64_t wi = transposed ? (gi * s.cols + j) * s.depth + p
                                                : (gi * s.depth + p) * s.cols + j;
                  acc += double(x[r * s.depth + p]) * w[wi];
                  abs += std::fabs(double(x[r * s.depth + p]) * w[wi]);
                }
                want[r * s.cols + j] = acc;
                magnitude[r * s.cols + j] = abs;
              }
            }
          }
          RaggedRowsArgs a;
          a.rows = s.rows;
          a.depth = s.depth;
          a.cols = s.cols;
          a.groups = groups.rows();
          a.x_type = a.w_type = bf16 ? ElementType::kBF16 : ElementType::kF32;
          a.out_type = bf16_out ? ElementType::kBF16 : ElementType::kF32;
          a.x = bf16 ? static_cast<const void*>(xb.data()) : x.data();
          a.w = bf16 ? static_cast<const void*>(wb.data()) : w.data();
          a.w_transposed = transposed;
          a.amx = v.amx;
          std::vector<float> out(s.rows * s.cols, 7.f);
          std::vector<uint16_t> out_b(s.rows * s.cols, 7);
          a.out = bf16_out ? static_cast<void*>(out_b.data()) : out.data();
          v.rows(a);
          if (bf16_out) {
            for (size_t i = 0; i < out.size(); ++i) out[i] = Bf16ToFloat(out_b[i]);
          }
          ExpectNear(out, want, magnitude, bf16_out ? 8e-3 : 1e-5,
                     std::string(v.name) + (transposed ? " transposed" : "") + " types " +
                         std::to_string(types) + " rows " + std::to_string(s.rows));
        }
      }
    }
  }
}

TEST(RaggedDotKernel, GroupsProductMatchesTheDefinition) {
  for (const Variant* vp : Running()) {
    const Variant& v = *vp;
    for (const Shape& s : kShapes) {
      const int64_t g = s.sizes.size();
      const std::vector<float> x = Random(s.rows * s.depth, 3);
      const std::vector<float> y = Random(s.rows * s.cols, 4);
      const std::vector<uint16_t> xb = ToBf16(x), yb = ToBf16(y);
      const Groups groups(s.sizes, s.rows);
      std::vector<double> want(g * s.depth * s.cols, 0.0), magnitude(want.size(), 0.0);
      for (int64_t gi = 0; gi < g; ++gi) {
        for (int64_t r = groups.start[gi]; r < groups.end[gi]; ++r) {
          for (int64_t i = 0; i < s.depth; ++i) {
            for (int64_t j = 0; j < s.cols; ++j) {
              const double term = double(x[r * s.depth + i]) * y[r * s.cols + j];
              want[(gi * s.depth + i) * s.cols + j] += term;
              magnitude[(gi * s.depth + i) * s.cols + j] += std::fabs(term);
            }
          }
        }
      }
      // float32 operands and output; bfloat16 operands, float32 output; bfloat16 throughout.
      for (int types = 0; types < 3; ++types) {
        const bool bf16_in = types > 0, bf16_out = types == 2;
        RaggedGroupsArgs a;
        a.rows = s.rows;
        a.x_cols = s.depth;
        a.y_cols = s.cols;
        a.groups = groups.rows();
        a.x_type = a.y_type = bf16_in ? ElementType::kBF16 : ElementType::kF32;
        a.out_type = bf16_out ? ElementType::kBF16 : ElementType::kF32;
        a.x = bf16_in ? static_cast<const void*>(xb.data()) : x.data();
        a.y = bf16_in ? static_cast<const void*>(yb.data()) : y.data();
        a.amx = v.amx;
        std::vector<float> out(want.size(), 7.f);
        std::vector<uint16_t> out_b(want.size(), 7);
        a.out = bf16_out ? static_cast<void*>(out_b.data()) : out.data();
        v.groups(a);
        if (bf16_out) {
          for (size_t i = 0; i < out.size(); ++i) out[i] = Bf16ToFloat(out_b[i]);
        }
        ExpectNear(out, want, magnitude, bf16_out ? 8e-3 : 1e-5,
                   std::string(v.name) + " groups types " + std::to_string(types) + " rows " +
                       std::to_string(s.rows));
      }
    }
  }
}

// x and y wide enough (2100 and 2060 columns: 153 work items per group) that the AMX groups
// product packs each group's operands once per call instead of per work item; partial blocks,
// an empty group, groups shorter than a contraction step.
TEST(RaggedDotKernel, GroupsProductOfWideOperandsMatchesTheDefinition) {
  const int64_t rows = 70, x_cols = 2100, y_cols = 2060;
  const Groups groups({30, 0, 40}, rows);
  const std::vector<float> x = Random(rows * x_cols, 5), y = Random(rows * y_cols, 6);
  const std::vector<uint16_t> xb = ToBf16(x), yb = ToBf16(y);
  std::vector<double> want(3 * x_cols * y_cols, 0.0), magnitude(want.size(), 0.0);
  for (int64_t g = 0; g < 3; ++g) {
    for (int64_t r = groups.start[g]; r < groups.end[g]; ++r) {
      for (int64_t i = 0; i < x_cols; ++i) {
        const double xi = x[r * x_cols + i];
        double* w = want.data() + (g * x_cols + i) * y_cols;
        double* m = magnitude.data() + (g * x_cols + i) * y_cols;
        for (int64_t j = 0; j < y_cols; ++j) {
          w[j] += xi * y[r * y_cols + j];
          m[j] += std::fabs(xi * y[r * y_cols + j]);
        }
      }
    }
  }
  for (const Variant* v : Running()) {
    RaggedGroupsArgs a;
    a.rows = rows;
    a.x_cols = x_cols;
    a.y_cols = y_cols;
    a.groups = groups.rows();
    a.x_type = a.y_type = ElementType::kBF16;
    a.x = xb.data();
    a.y = yb.data();
    a.amx = v->amx;
    std::vector<float> out(want.size(), 7.f);
    a.out = out.data();
    v->groups(a);
    ExpectNear(out, want, magnitude, 1e-5, std::string(v->name) + " wide groups");
  }
}

}  // namespace
}  // namespace pjrtkit_kernels
