// Matrix products for dot_general and convolution: the device's f32 matmul (GotoBLAS-style packing
// around a register-blocked micro-kernel: AVX2+FMA when the CPU has it, portable C++ otherwise)
// and a blocked kernel for the other compute types (f64, complex, wrapping integers, pred).
//
// Single-threaded; scratch is allocated per call. No global mutable state: the micro-kernel
// choice is a function-local static computed once from the CPU's features.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_GEMM_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_GEMM_H_

#include <complex>
#include <cstdint>

namespace pjrtkit {
namespace sim {

// A strided view of an f32 matrix: element (i, j) is at data[i * row_stride + j * col_stride].
// Strides may be 0 (a broadcast row or column) or anything else: the packing reads them.
struct F32MatrixView {
  const float* data = nullptr;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

// c[i * ldc + j] = sum over p of a(i, p) * b(p, j) for i < m, j < n, p < k (c overwritten; k = 0
// writes zeros). Accumulates in f32 (with fused multiply-adds on the AVX2 path): matrix products
// in increasing p within blocks of 256, block by block; matrix-vector products (m or n = 1) in
// eight or more interleaved partial sums. c must not overlap a or b.
void GemmF32(int64_t m, int64_t n, int64_t k, F32MatrixView a, F32MatrixView b, float* c,
             int64_t ldc);

// Which f32 micro-kernel GemmF32 uses on this CPU: "avx2_fma" or "portable".
const char* GemmF32KernelName();

// GemmF32 forced onto the portable micro-kernel (for tests of the fallback on any CPU).
void GemmF32Portable(int64_t m, int64_t n, int64_t k, F32MatrixView a, F32MatrixView b, float* c,
                     int64_t ldc);

// Dense row-major c[m, n] = a[m, k] x b[k, n] in T (c overwritten), for the compute types other
// than f32: double, std::complex<float>, std::complex<double>, uint32_t and uint64_t (integers
// wrap: signed results are computed in their unsigned type of the same width). Blocked over k and
// n for the caches; accumulates in increasing k.
template <typename T>
void GemmDense(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c);

// Boolean product of dense row-major 0/1 bytes: c[i, j] = OR over p of (a[i, p] AND b[p, j]).
void GemmPred(int64_t m, int64_t n, int64_t k, const uint8_t* a, const uint8_t* b, uint8_t* c);

extern template void GemmDense<double>(int64_t, int64_t, int64_t, const double*, const double*,
                                       double*);
extern template void GemmDense<std::complex<float>>(int64_t, int64_t, int64_t,
                                                    const std::complex<float>*,
                                                    const std::complex<float>*,
                                                    std::complex<float>*);
extern template void GemmDense<std::complex<double>>(int64_t, int64_t, int64_t,
                                                     const std::complex<double>*,
                                                     const std::complex<double>*,
                                                     std::complex<double>*);
extern template void GemmDense<uint32_t>(int64_t, int64_t, int64_t, const uint32_t*,
                                         const uint32_t*, uint32_t*);
extern template void GemmDense<uint64_t>(int64_t, int64_t, int64_t, const uint64_t*,
                                         const uint64_t*, uint64_t*);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_GEMM_H_
