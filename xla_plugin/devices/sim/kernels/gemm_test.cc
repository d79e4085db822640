#include "xla_plugin/devices/sim/kernels/gemm.h"

#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/kernels/gemm_micro_kernels.h"

namespace pjrtkit {
namespace sim {
namespace {

using GemmFn = void (*)(int64_t, int64_t, int64_t, F32MatrixView, F32MatrixView, float*, int64_t);

// One f32 case: a is m x k, b is k x n, each stored transposed or not, c has row stride ldc.
struct Case {
  int64_t m, n, k;
  bool a_transposed, b_transposed;
};

std::string Name(const Case& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) +
         (c.a_transposed ? " aT" : "") + (c.b_transposed ? " bT" : "");
}

// Runs `gemm` on `c` with integer-valued (exact) or random inputs and compares with a double
// reference: exactly for integers (every partial sum is an integer below 2^24), else within the
// bound of f32 recursive summation, |error| <= 2 k u sum |a b| with u = 2^-24 (Higham's gamma_k).
void RunCase(GemmFn gemm, const Case& c, bool integers, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::vector<float> a(c.m * c.k), b(c.k * c.n);
  for (float& x : a) x = integers ? static_cast<float>(small(rng)) : real(rng);
  for (float& x : b) x = integers ? static_cast<float>(small(rng)) : real(rng);
  // a(i, p) and b(p, j) as views.
  const F32MatrixView av = c.a_transposed ? F32MatrixView{a.data(), 1, c.m}
                                          : F32MatrixView{a.data(), c.k, 1};
  const F32MatrixView bv = c.b_transposed ? F32MatrixView{b.data(), 1, c.k}
                                          : F32MatrixView{b.data(), c.n, 1};
  const int64_t ldc = c.n + 3;
  std::vector<float> out(c.m * ldc + 1, 12345.0f);
  gemm(c.m, c.n, c.k, av, bv, out.data(), ldc);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double ref = 0, magnitude = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double x = a[c.a_transposed ? p * c.m + i : i * c.k + p];
        const double y = b[c.b_transposed ? j * c.k + p : p * c.n + j];
        ref += x * y;
        magnitude += std::fabs(x * y);
      }
      const double got = out[i * ldc + j];
      if (integers) {
        ASSERT_EQ(got, ref) << Name(c) << " at " << i << "," << j;
      } else {
        ASSERT_LE(std::fabs(got - ref), 2.0 * c.k * std::ldexp(1.0, -24) * magnitude + 1e-30)
            << Name(c) << " at " << i << "," << j;
      }
    }
    for (int64_t j = c.n; j < ldc && i * ldc + j < static_cast<int64_t>(out.size()); ++j) {
      ASSERT_EQ(out[i * ldc + j], 12345.0f) << Name(c) << ": wrote past n at row " << i;
    }
  }
}

const Case kCases[] = {
    {1, 1, 1, false, false},     {3, 5, 7, false, false},     {6, 16, 64, false, false},
    {7, 17, 65, false, false},   {64, 64, 64, true, false},   {64, 64, 64, false, true},
    {65, 33, 300, true, true},   {170, 20, 257, false, false}, {200, 50, 600, false, true},
    {13, 1, 500, false, false},  {13, 1, 500, true, true},    {1, 300, 300, false, false},
    {1, 300, 300, true, true},   {1, 40, 7, false, true},     {300, 1, 301, true, false},
    {2, 4100, 3, false, false},  {5, 4097, 2, false, true},    {0, 5, 5, false, false},
    {5, 0, 5, false, false},     {5, 5, 0, false, false},     {37, 29, 1, true, false},
};

TEST(GemmF32Test, SelectedKernelIntegersExact) {
  for (const Case& c : kCases) RunCase(GemmF32, c, true, 1);
}

TEST(GemmF32Test, SelectedKernelRandomWithinSummationBound) {
  for (const Case& c : kCases) RunCase(GemmF32, c, false, 2);
}

TEST(GemmF32Test, PortableKernelIntegersExact) {
  for (const Case& c : kCases) RunCase(GemmF32Portable, c, true, 3);
}

TEST(GemmF32Test, PortableKernelRandomWithinSummationBound) {
  for (const Case& c : kCases) RunCase(GemmF32Portable, c, false, 4);
}

TEST(GemmF32Test, KernelNameIsKnown) {
  const std::string name = GemmF32KernelName();
  EXPECT_TRUE(name == "avx2_fma" || name == "portable") << name;
  if (Avx2FmaAvailable()) EXPECT_EQ(name, "avx2_fma");
}

TEST(GemmF32Test, ZeroStrideBroadcastsARowAndAColumn) {
  // a(i, p) = v[p] for every i (row stride 0); b(p, j) = w[p] for every j (column stride 0).
  const int64_t m = 40, n = 50, k = 30;
  std::vector<float> v(k), w(k);
  float dot = 0;
  for (int64_t p = 0; p < k; ++p) {
    v[p] = static_cast<float>(p % 5);
    w[p] = static_cast<float>(3 - p % 7);
    dot += v[p] * w[p];
  }
  std::vector<float> c(m * n, -1.0f);
  GemmF32(m, n, k, F32MatrixView{v.data(), 0, 1}, F32MatrixView{w.data(), 1, 0}, c.data(), n);
  for (float x : c) ASSERT_EQ(x, dot);
}

TEST(GemmF32Test, StridedViewsOnEveryPath) {
  // a(i, p) at a[i * 3k + 2p], b(p, j) at b[p * 2 + j * 2k + 1]: no unit stride anywhere.
  for (auto [m, n, k] : {std::array<int64_t, 3>{50, 60, 70}, {50, 1, 300}, {1, 60, 300}}) {
    std::vector<float> a(m * 3 * k), b(2 * k * n + 1);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2;
    std::vector<float> c(m * n);
    GemmF32(m, n, k, F32MatrixView{a.data(), 3 * k, 2}, F32MatrixView{b.data() + 1, 2, 2 * k},
            c.data(), n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float want = 0;
        for (int64_t p = 0; p < k; ++p) want += a[i * 3 * k + 2 * p] * b[1 + 2 * p + j * 2 * k];
        ASSERT_EQ(c[i * n + j], want) << m << "x" << n << "x" << k << " at " << i << "," << j;
      }
    }
  }
}

TEST(GemmF32Test, ZeroKWritesZeros) {
  std::vector<float> c(12, 7.0f);
  GemmF32(3, 4, 0, F32MatrixView{nullptr, 0, 0}, F32MatrixView{nullptr, 0, 0}, c.data(), 4);
  for (float x : c) EXPECT_EQ(x, 0.0f);
}

template <typename T>
std::vector<T> Reference(int64_t m, int64_t n, int64_t k, const std::vector<T>& a,
                         const std::vector<T>& b) {
  std::vector<T> c(m * n, T(0));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum(0);
      for (int64_t p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
  }
  return c;
}

// Integer-valued inputs make every type's result exact, whatever the summation order.
template <typename T>
void CheckDense(int64_t m, int64_t n, int64_t k) {
  std::mt19937 rng(static_cast<uint32_t>(m * 131 + n * 17 + k));
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<T> a(m * k), b(k * n);
  for (T& x : a) x = T(small(rng));
  for (T& x : b) x = T(small(rng));
  std::vector<T> c(m * n, T(99));
  GemmDense<T>(m, n, k, a.data(), b.data(), c.data());
  EXPECT_EQ(c, Reference(m, n, k, a, b)) << m << "x" << n << "x" << k;
}

TEST(GemmDenseTest, EveryComputeTypeExactOnIntegerValues) {
  for (auto [m, n, k] : {std::array<int64_t, 3>{1, 1, 1}, {3, 300, 130}, {20, 7, 260},
                         {4, 5, 0}, {0, 3, 3}}) {
    CheckDense<double>(m, n, k);
    CheckDense<std::complex<float>>(m, n, k);
    CheckDense<std::complex<double>>(m, n, k);
    CheckDense<uint32_t>(m, n, k);
    CheckDense<uint64_t>(m, n, k);
  }
}

TEST(GemmDenseTest, ComplexUsesTheTextbookProduct) {
  const std::complex<float> a[2] = {{1, 2}, {3, -1}};
  const std::complex<float> b[2] = {{0.5f, -1}, {2, 4}};
  std::complex<float> c;
  GemmDense<std::complex<float>>(1, 1, 2, a, b, &c);
  // (1+2i)(0.5-i) = 2.5 + 0i; (3-i)(2+4i) = 10 + 10i.
  EXPECT_EQ(c, std::complex<float>(12.5f, 10.0f));
}

TEST(GemmDenseTest, UnsignedWraps) {
  const uint32_t a[2] = {0x80000000u, 3};
  const uint32_t b[2] = {2, 0xffffffffu};
  uint32_t c = 0;
  GemmDense<uint32_t>(1, 1, 2, a, b, &c);
  EXPECT_EQ(c, static_cast<uint32_t>(0x80000000ull * 2 + 3ull * 0xffffffffull));
  // As s32: INT_MIN * 2 + 3 * -1 wraps to -3.
  EXPECT_EQ(static_cast<int32_t>(c), -3);
}

TEST(GemmPredTest, OrOfAnds) {
  // a = [[1,0,1],[0,0,0]], b = [[0,1],[0,1],[1,0]] -> [[1,1],[0,0]].
  const uint8_t a[6] = {1, 0, 1, 0, 0, 0};
  const uint8_t b[6] = {0, 1, 0, 1, 1, 0};
  uint8_t c[4] = {7, 7, 7, 7};
  GemmPred(2, 2, 3, a, b, c);
  EXPECT_EQ(std::vector<uint8_t>(c, c + 4), (std::vector<uint8_t>{1, 1, 0, 0}));
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
