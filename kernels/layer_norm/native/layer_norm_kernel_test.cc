// Every instruction-set variant of the native layer norm (the ones this CPU runs), forward and
// backward, layer norm (subtract_mean) and RMS norm, against a plain double-precision definition:
// channel counts on and off the vector widths (64, 40, 36, 7, 3, 1, 4099), one row to tens of
// thousands (row counts past 32768 / channels split the work into several items, so over
// threads), random and unit parameters (scale 1, offset 0: what the FFI gets when the layer has
// none; the kernel has no null scale/offset), rows of one constant value (variance 0, or an
// all-zero row for RMS norm, where epsilon alone bounds rstd), param_grads on and off, float32
// and bfloat16 x / dy / y / dx. The definition's gradients are checked against central finite
// differences first.
//
// Tolerances, as |got - want| <= tol * (max |want| over the tensor): 1e-5 for every float32
// output (y and dx in float32 mode; mean, rstd, dscale and doffset, float32 in both modes), but
// 1e-5 * rows / 10000 for dscale and doffset past 10000 rows (float32 sums down the rows, whose
// rounding grows with their length: 1.1e-5 at 40000 rows, one channel); 1e-2 for y and dx in
// bfloat16 (one bfloat16 rounding is up to 2^-8 of the value; 3.7e-3 seen). So a tensor whose
// definition is all zero must be exactly zero: RMS norm's mean, dscale/doffset with param_grads
// off, and (one channel, layer norm) dx and dscale. Inputs are bfloat16-exact, so both modes share
// one reference. Outputs start as NaN: an element the kernel leaves fails.
#include "kernels/layer_norm/native/layer_norm_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/native/cpu_features.h"
#include "kernels/native/test_buffer.h"

namespace pjrtkit_kernels {
namespace {

using LayerNormFn = void (*)(const LayerNormArgs&);

struct Variant {
  const char* name;
  Isa isa;
  LayerNormFn forward, backward;
};

const Variant kVariants[] = {
    {"generic", Isa::kGeneric, generic::LayerNormForward, generic::LayerNormBackward},
    {"avx2", Isa::kAvx2, avx2::LayerNormForward, avx2::LayerNormBackward},
    {"avx512", Isa::kAvx512, avx512::LayerNormForward, avx512::LayerNormBackward},
};

bool Runs(Isa isa) { return static_cast<int>(isa) <= static_cast<int>(CpuFeatures::Best()); }

struct Case {
  const char* name;
  int64_t rows, channels;
  bool subtract_mean;
  float epsilon;
  bool unit_params;    // scale 1, offset 0
  int constant_every;  // > 0: rows r with r % constant_every == 1 hold one value (0 among them)
};

// Channels: 64 a multiple of every width (16, 8, 4 lanes); 40 of 8 and 4, not 16; 36 of 4 only;
// 7, 3 and 1 under the AVX2 and AVX-512 widths (7: one generic vector and a tail of 3); 4099 a
// tail of 3 after 256 AVX-512 vectors. Rows per work item are 32768 / channels (7 at 4099), so
// 1100 x 64, 1000 x 40, 950 x 36, 5000 x 7, 11000 x 3, 40000 x 1 and 300 x 4099 are cut into
// 2 to 43 items. Constant rows come with epsilon 0.25, so their rstd (2 for variance 0) is of the
// random rows' size and does not swamp the tensor-wide tolerance.
const Case kCases[] = {
    {"layer C64 R1100", 1100, 64, true, 1e-5f, false, 0},
    {"rms C64 R1 unit", 1, 64, false, 1e-5f, true, 0},
    {"rms C40 R1000", 1000, 40, false, 1e-5f, false, 0},
    {"layer C40 R3 unit", 3, 40, true, 1e-6f, true, 0},
    {"layer C36 R950 constant rows eps 0.25", 950, 36, true, 0.25f, false, 5},
    {"rms C36 R17 unit constant rows eps 0.25", 17, 36, false, 0.25f, true, 3},
    {"rms C7 R5000", 5000, 7, false, 1e-5f, false, 0},
    {"layer C7 R2 unit", 2, 7, true, 1e-5f, true, 0},
    {"layer C3 R11000", 11000, 3, true, 1e-3f, false, 0},
    {"rms C3 R300 constant rows eps 0.25", 300, 3, false, 0.25f, false, 4},
    {"rms C1 R40000 eps 0.1", 40000, 1, false, 0.1f, false, 0},
    {"layer C1 R5", 5, 1, true, 1e-5f, false, 0},
    {"layer C4099 R300", 300, 4099, true, 1e-5f, false, 0},
    {"rms C4099 R200 unit", 200, 4099, false, 1e-5f, true, 0},
    {"layer C4099 R64 constant rows eps 0.25", 64, 4099, true, 0.25f, false, 7},
    {"rms C4099 R50 constant rows eps 0.25", 50, 4099, false, 0.25f, false, 6},
};

// One case's inputs, all bfloat16-exact: x (mean 0.75, so subtracting it matters), dy, scale,
// offset.
struct Inputs {
  std::vector<float> x, dy, scale, offset;
  Inputs(const Case& c, int seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist;
    auto draw = [&](float mean, float sd) {
      return Bf16ToFloat(FloatToBf16(mean + sd * dist(gen)));  // exact in bfloat16 too
    };
    const float kConstants[] = {0.f, 0.5f, -2.f, 1.25f};
    for (int64_t r = 0; r < c.rows; ++r) {
      const bool constant = c.constant_every > 0 && r % c.constant_every == 1;
      for (int64_t i = 0; i < c.channels; ++i) {
        x.push_back(constant ? kConstants[(r / c.constant_every) % 4] : draw(0.75f, 1.f));
        dy.push_back(draw(0.f, 1.f));
      }
    }
    for (int64_t i = 0; i < c.channels; ++i) {
      scale.push_back(c.unit_params ? 1.f : draw(1.f, 0.5f));
      offset.push_back(c.unit_params ? 0.f : draw(0.f, 0.5f));
    }
  }
};

// The definition, per row: mean m (0 for RMS norm), v = mean((x - m)^2), r = 1 / sqrt(v + eps),
// xhat = (x - m) r, y = xhat scale + offset. Backward of L = sum(y dy), with g = dy scale:
// dL/dx_j = r (g_j - mean(g) - xhat_j mean(g xhat)), from dxhat_i/dx_j = r (delta_ij - 1/N)
// - xhat_i xhat_j r / N; for RMS norm m = 0 drops the 1/N and the mean(g) term. dscale = sum over
// rows of dy xhat, doffset = sum over rows of dy.
struct Reference {
  std::vector<double> y, mean, rstd, dx, dscale, doffset;
};

Reference Compute(const Case& c, const Inputs& in) {
  const int64_t n = c.channels;
  Reference ref{std::vector<double>(c.rows * n), std::vector<double>(c.rows),
                std::vector<double>(c.rows), std::vector<double>(c.rows * n),
                std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
  std::vector<double> xhat(n), g(n);
  for (int64_t r = 0; r < c.rows; ++r) {
    const float* x = &in.x[r * n];
    const float* dy = &in.dy[r * n];
    double m = 0, v = 0, mg = 0, mgx = 0;
    for (int64_t i = 0; i < n && c.subtract_mean; ++i) m += double(x[i]) / n;
    for (int64_t i = 0; i < n; ++i) v += (x[i] - m) * (x[i] - m) / n;
    const double rs = 1.0 / std::sqrt(v + double(c.epsilon));
    for (int64_t i = 0; i < n; ++i) {
      xhat[i] = (x[i] - m) * rs;
      g[i] = double(dy[i]) * in.scale[i];
      ref.y[r * n + i] = xhat[i] * in.scale[i] + in.offset[i];
      mg += c.subtract_mean ? g[i] / n : 0.0;
      mgx += g[i] * xhat[i] / n;
      ref.dscale[i] += dy[i] * xhat[i];
      ref.doffset[i] += dy[i];
    }
    for (int64_t i = 0; i < n; ++i) ref.dx[r * n + i] = rs * (g[i] - mg - xhat[i] * mgx);
    ref.mean[r] = m;
    ref.rstd[r] = rs;
  }
  return ref;
}

std::vector<float> Nans(int64_t n) {
  return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN());
}

// got against want (tolerance in the header comment); cols > 0 names an index [row, col].
void Expect(const std::vector<float>& got, const std::vector<double>& want, int64_t cols,
            double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double max_abs = 0;
  for (double w : want) max_abs = std::max(max_abs, std::fabs(w));
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(got[i] - want[i]) <= tol * max_abs) continue;  // false for NaN
    const std::string at = cols > 0 ? "[" + std::to_string(i / cols) + ", " +
                                          std::to_string(i % cols) + "]"
                                    : "[" + std::to_string(i) + "]";
    FAIL() << what << at << ": got " << got[i] << ", want " << want[i] << ", tolerance "
           << tol * max_abs;
  }
}

LayerNormArgs Args(const Case& c, bool bf16) {
  LayerNormArgs a;
  a.rows = c.rows;
  a.channels = c.channels;
  a.epsilon = c.epsilon;
  a.subtract_mean = c.subtract_mean;
  a.type = bf16 ? ElementType::kBF16 : ElementType::kF32;
  return a;
}

// The definition's gradients against central differences of L = sum(y dy), in double.
TEST(LayerNormKernel, DefinitionGradientsMatchFiniteDifferences) {
  for (bool subtract_mean : {true, false}) {
    const Case c{"finite differences", 3, 5, subtract_mean, 0.05f, false, 0};
    const Inputs in(c, 7);
    const Reference ref = Compute(c, in);
    // in.x etc. are float: steps of 2^-10 on values of order 1 stay exact, and L is a smooth
    // function, so the central difference is good to O(h^2) ~ 1e-6.
    const float h = 1.f / 1024;
    auto loss = [&](const Inputs& p) {
      const Reference r = Compute(c, p);
      double l = 0;
      for (size_t i = 0; i < r.y.size(); ++i) l += r.y[i] * p.dy[i];
      return l;
    };
    auto check = [&](std::vector<float> Inputs::*field, const std::vector<double>& want,
                     const char* name) {
      for (size_t i = 0; i < want.size(); ++i) {
        Inputs plus = in, minus = in;
        (plus.*field)[i] += h;
        (minus.*field)[i] -= h;
        const double fd = (loss(plus) - loss(minus)) / (2.0 * h);
        EXPECT_NEAR(fd, want[i], 1e-4 * (1.0 + std::fabs(want[i])))
            << (subtract_mean ? "layer " : "rms ") << name << "[" << i << "]";
      }
    };
    check(&Inputs::x, ref.dx, "dx");
    check(&Inputs::scale, ref.dscale, "dscale");
    check(&Inputs::offset, ref.doffset, "doffset");
  }
}

TEST(LayerNormKernel, ForwardMatchesTheDefinition) {
  for (const Case& c : kCases) {
    const Inputs in(c, static_cast<int>(&c - kCases) + 1);
    const Reference ref = Compute(c, in);
    for (bool bf16 : {false, true}) {
      for (const Variant& var : kVariants) {
        if (!Runs(var.isa)) continue;
        TestBuffer x(in.x, bf16), y(c.rows * c.channels, bf16);
        std::vector<float> mean = Nans(c.rows), rstd = Nans(c.rows);
        LayerNormArgs a = Args(c, bf16);
        a.x = x.data(), a.scale = in.scale.data(), a.offset = in.offset.data();
        a.y = y.data(), a.mean = mean.data(), a.rstd = rstd.data();
        var.forward(a);
        const std::string what = std::string(var.name) + (bf16 ? " bf16 " : " f32 ") + c.name;
        Expect(y.Floats(), ref.y, c.channels, bf16 ? 1e-2 : 1e-5, what + ": y");
        Expect(mean, ref.mean, 0, 1e-5, what + ": mean");
        Expect(rstd, ref.rstd, 0, 1e-5, what + ": rstd");
      }
    }
  }
}

TEST(LayerNormKernel, BackwardMatchesTheDefinition) {
  for (const Case& c : kCases) {
    const Inputs in(c, static_cast<int>(&c - kCases) + 101);
    const Reference ref = Compute(c, in);
    const std::vector<double> zeros(c.channels, 0.0);
    const double sum_tol = 1e-5 * std::max<double>(1.0, c.rows / 10000.0);
    for (bool bf16 : {false, true}) {
      for (const Variant& var : kVariants) {
        if (!Runs(var.isa)) continue;
        for (bool param_grads : {true, false}) {
          TestBuffer x(in.x, bf16), dy(in.dy, bf16), dx(c.rows * c.channels, bf16);
          std::vector<float> dscale = Nans(c.channels), doffset = Nans(c.channels);
          LayerNormArgs a = Args(c, bf16);
          a.param_grads = param_grads;
          a.x = x.data(), a.scale = in.scale.data(), a.dy = dy.data();
          a.dx = dx.data(), a.dscale = dscale.data(), a.doffset = doffset.data();
          var.backward(a);
          const std::string what = std::string(var.name) + (bf16 ? " bf16 " : " f32 ") + c.name +
                                   (param_grads ? "" : " no param grads");
          Expect(dx.Floats(), ref.dx, c.channels, bf16 ? 1e-2 : 1e-5, what + ": dx");
          Expect(dscale, param_grads ? ref.dscale : zeros, 0, sum_tol, what + ": dscale");
          Expect(doffset, param_grads ? ref.doffset : zeros, 0, sum_tol, what + ": doffset");
        }
      }
    }
  }
}

}  // namespace
}  // namespace pjrtkit_kernels
