// The f32 micro-kernels GemmF32 drives (internal to gemm.cc; exposed for its tests).
//
// A micro-kernel multiplies a packed kMr x kc panel of A (for each p: kMr values of column p) by
// a packed kc x kNr panel of B (for each p: kNr values of row p) into the kMr x kNr tile at c
// (row stride ldc), accumulating in f32 in increasing p; it adds to the tile when `accumulate`,
// else overwrites it.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_GEMM_MICRO_KERNELS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_GEMM_MICRO_KERNELS_H_

#include <cstdint>

namespace pjrtkit {
namespace sim {

// Micro-tile shape: 6 rows x 16 columns (12 AVX registers of accumulators).
inline constexpr int64_t kMr = 6;
inline constexpr int64_t kNr = 16;

using MicroKernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                             bool accumulate);

// Plain C++ (the compiler vectorizes it for the baseline instruction set).
void MicroKernelPortable(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                         bool accumulate);

// AVX2 + FMA intrinsics; only call when Avx2FmaAvailable(). On other architectures it is the
// portable kernel.
void MicroKernelAvx2Fma(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                        bool accumulate);

// sum over t < n of a[t] * b[t] in f32 (several partial sums, combined at the end).
using DotKernel = float (*)(int64_t n, const float* a, const float* b);
// y[t] += alpha * x[t] for t < n.
using AxpyKernel = void (*)(int64_t n, float alpha, const float* x, float* y);

float DotPortable(int64_t n, const float* a, const float* b);
float DotAvx2Fma(int64_t n, const float* a, const float* b);
void AxpyPortable(int64_t n, float alpha, const float* x, float* y);
void AxpyAvx2Fma(int64_t n, float alpha, const float* x, float* y);

// Whether this CPU (and its OS) runs AVX2 and FMA instructions.
bool Avx2FmaAvailable();

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_GEMM_MICRO_KERNELS_H_
