#include "xla_plugin/devices/sim/kernels/gemm_micro_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PJRTKIT_SIM_HAVE_AVX2_KERNEL 1
#endif

namespace pjrtkit {
namespace sim {

void MicroKernelPortable(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                         bool accumulate) {
  float acc[kMr][kNr] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* a_p = a + p * kMr;
    const float* b_p = b + p * kNr;
    for (int64_t i = 0; i < kMr; ++i) {
      const float a_ip = a_p[i];
      for (int64_t j = 0; j < kNr; ++j) acc[i][j] += a_ip * b_p[j];
    }
  }
  for (int64_t i = 0; i < kMr; ++i) {
    float* c_row = c + i * ldc;
    if (accumulate) {
      for (int64_t j = 0; j < kNr; ++j) c_row[j] += acc[i][j];
    } else {
      for (int64_t j = 0; j < kNr; ++j) c_row[j] = acc[i][j];
    }
  }
}

float DotPortable(int64_t n, const float* a, const float* b) {
  float partial[8] = {};
  int64_t t = 0;
  for (; t + 8 <= n; t += 8) {
    for (int u = 0; u < 8; ++u) partial[u] += a[t + u] * b[t + u];
  }
  float sum = 0.0f;
  for (; t < n; ++t) sum += a[t] * b[t];
  for (int u = 0; u < 8; ++u) sum += partial[u];
  return sum;
}

void AxpyPortable(int64_t n, float alpha, const float* x, float* y) {
  for (int64_t t = 0; t < n; ++t) y[t] += alpha * x[t];
}

#if PJRTKIT_SIM_HAVE_AVX2_KERNEL

__attribute__((target("avx2,fma"))) float DotAvx2Fma(int64_t n, const float* a,
                                                       const float* b) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  int64_t t = 0;
  for (; t + 32 <= n; t += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + t), _mm256_loadu_ps(b + t), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + t + 8), _mm256_loadu_ps(b + t + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + t + 16), _mm256_loadu_ps(b + t + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + t + 24), _mm256_loadu_ps(b + t + 24), s3);
  }
  for (; t + 8 <= n; t += 8) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + t), _mm256_loadu_ps(b + t), s0);
  }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  float sum = 0.0f;
  for (; t < n; ++t) sum += a[t] * b[t];
  for (int u = 0; u < 8; ++u) sum += lanes[u];
  return sum;
}

__attribute__((target("avx2,fma"))) void AxpyAvx2Fma(int64_t n, float alpha, const float* x,
                                                       float* y) {
  const __m256 va = _mm256_set1_ps(alpha);
  int64_t t = 0;
  for (; t + 8 <= n; t += 8) {
    _mm256_storeu_ps(y + t, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + t), _mm256_loadu_ps(y + t)));
  }
  for (; t < n; ++t) y[t] += alpha * x[t];
}


__attribute__((target("avx2,fma"))) void MicroKernelAvx2Fma(int64_t kc, const float* a,
                                                              const float* b, float* c,
                                                              int64_t ldc, bool accumulate) {
  static_assert(kMr == 6 && kNr == 16, "the AVX2 kernel is written for 6 x 16 tiles");
  for (int i = 0; i < kMr; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + kNr - 1), _MM_HINT_T0);
  }
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
    __m256 a_i = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(a_i, b0, c00);
    c01 = _mm256_fmadd_ps(a_i, b1, c01);
    a_i = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(a_i, b0, c10);
    c11 = _mm256_fmadd_ps(a_i, b1, c11);
    a_i = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(a_i, b0, c20);
    c21 = _mm256_fmadd_ps(a_i, b1, c21);
    a_i = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(a_i, b0, c30);
    c31 = _mm256_fmadd_ps(a_i, b1, c31);
    a_i = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(a_i, b0, c40);
    c41 = _mm256_fmadd_ps(a_i, b1, c41);
    a_i = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(a_i, b0, c50);
    c51 = _mm256_fmadd_ps(a_i, b1, c51);
    a += kMr;
    b += kNr;
  }
  const __m256 rows[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                               {c30, c31}, {c40, c41}, {c50, c51}};
  for (int i = 0; i < kMr; ++i) {
    float* c_row = c + i * ldc;
    __m256 lo = rows[i][0], hi = rows[i][1];
    if (accumulate) {
      lo = _mm256_add_ps(lo, _mm256_loadu_ps(c_row));
      hi = _mm256_add_ps(hi, _mm256_loadu_ps(c_row + 8));
    }
    _mm256_storeu_ps(c_row, lo);
    _mm256_storeu_ps(c_row + 8, hi);
  }
}

bool Avx2FmaAvailable() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

#else  // !PJRTKIT_SIM_HAVE_AVX2_KERNEL

void MicroKernelAvx2Fma(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                        bool accumulate) {
  MicroKernelPortable(kc, a, b, c, ldc, accumulate);
}

float DotAvx2Fma(int64_t n, const float* a, const float* b) { return DotPortable(n, a, b); }

void AxpyAvx2Fma(int64_t n, float alpha, const float* x, float* y) {
  AxpyPortable(n, alpha, x, y);
}

bool Avx2FmaAvailable() { return false; }

#endif  // PJRTKIT_SIM_HAVE_AVX2_KERNEL

}  // namespace sim
}  // namespace pjrtkit
