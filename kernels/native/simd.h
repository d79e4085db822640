// Vector helpers for the native kernels, on GCC/Clang vector extensions.
//
// Each kernel source is compiled once per instruction set (BUILD: avx512, avx2, generic) with
// PJRTKIT_ISA naming the namespace and PJRTKIT_VEC_WIDTH the float lanes (16, 8, 4); the FFI
// handlers pick the variant the CPU supports at run time. Everything here is inline and lives in
// that per-ISA namespace, so the variants never collide.
#ifndef PJRTKIT_ISA
#error "compile with -DPJRTKIT_ISA=<namespace> -DPJRTKIT_VEC_WIDTH=<lanes>"
#endif

#include <cmath>
#include <cstdint>
#include <cstring>

// The instruction set, from here to the end of the including source, which includes every
// standard and shared header before this one: their inline functions and templates (std::vector,
// std::function, ...) stay baseline x86-64 code, since the linker keeps one copy of each for all
// variants; only what follows (this namespace's helpers and the kernels) uses the wider set.
#if defined(PJRTKIT_ISA_AVX512)
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma")
#elif defined(PJRTKIT_ISA_AVX2)
#pragma GCC target("avx2,fma")
#endif

namespace pjrtkit_kernels {
namespace PJRTKIT_ISA {

constexpr int kLanes = PJRTKIT_VEC_WIDTH;
typedef float VecF __attribute__((vector_size(kLanes * 4), aligned(4)));
typedef int32_t VecI __attribute__((vector_size(kLanes * 4), aligned(4)));

// x in every lane: one broadcast (x - 0 is x for every x, -0 and NaN included; a lane-by-lane
// loop instead left GCC building the vector through memory, 6x slower in a tile product).
inline VecF Splat(float x) { return x - VecF{}; }

// Unaligned vector access through a may_alias type, not memcpy: GCC expands a 32-byte memcpy
// as two 16-byte moves through the stack (its generic tuning moves by 16-byte pieces), which
// made the AVX2 variant slower than the SSE one.
typedef float VecFAlias __attribute__((vector_size(kLanes * 4), aligned(4), may_alias));

inline VecF Load(const float* p) { return *reinterpret_cast<const VecFAlias*>(p); }

inline void Store(float* p, VecF v) { *reinterpret_cast<VecFAlias*>(p) = v; }

inline float Sum(VecF v) {
  float s = 0.f;
  for (int i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

inline float Max(VecF v) {
  float m = v[0];
  for (int i = 1; i < kLanes; ++i) m = v[i] > m ? v[i] : m;
  return m;
}

inline VecF VMax(VecF a, VecF b) { return a > b ? a : b; }

// exp(x) for float lanes: Cody-Waite range reduction and a degree-6 polynomial (relative error
// below 2e-7 on [-87, 88]); below -87.3 (including -inf) the result is 0, above 88.7 it saturates.
inline VecF Exp(VecF x_in) {
  VecF x = x_in < Splat(-87.3f) ? Splat(-87.3f) : x_in;
  x = x > Splat(88.7f) ? Splat(88.7f) : x;
  // Round x * log2(e) to the nearest integer: adding 1.5 * 2^23 leaves it in the low bits.
  const VecF n = (x * Splat(1.44269504f) + Splat(12582912.f)) - Splat(12582912.f);
  VecF r = x - n * Splat(0.693359375f);
  r = r - n * Splat(-2.12194440e-4f);
  VecF p = Splat(1.9875691500e-4f);
  p = p * r + Splat(1.3981999507e-3f);
  p = p * r + Splat(8.3334519073e-3f);
  p = p * r + Splat(4.1665795894e-2f);
  p = p * r + Splat(1.6666665459e-1f);
  p = p * r + Splat(5.0000001201e-1f);
  p = p * r * r + r + Splat(1.f);
  const VecI bits = (__builtin_convertvector(n, VecI) + 127) << 23;
  VecF scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return x_in < Splat(-87.3f) ? Splat(0.f) : p * scale;
}

// tanh(x) for float lanes: 1 - 2 / (exp(2|x|) + 1) written as (1 - e) / (1 + e), e = exp(-2|x|),
// and an odd Taylor polynomial below |x| = 0.125 where 1 - e would cancel (absolute error below
// 3e-7 everywhere, relative below 1e-6); NaN stays NaN.
inline VecF Tanh(VecF x) {
  const VecF ax = x < Splat(0.f) ? -x : x;
  const VecF e = Exp(Splat(-2.f) * ax);
  const VecF big = (Splat(1.f) - e) / (Splat(1.f) + e);
  const VecF x2 = x * x;
  VecF p = Splat(62.f / 2835.f);
  p = p * x2 + Splat(-17.f / 315.f);
  p = p * x2 + Splat(2.f / 15.f);
  p = p * x2 + Splat(-1.f / 3.f);
  const VecF small = x * (Splat(1.f) + x2 * p);  // odd: keeps the sign, -0 included
  return ax < Splat(0.125f) ? small : (x < Splat(0.f) ? -big : big);
}

// Scalar exp with the same clamping (tails of rows shorter than a vector).
inline float ExpScalar(float x) { return x < -87.3f ? 0.f : std::exp(x); }

}  // namespace PJRTKIT_ISA
}  // namespace pjrtkit_kernels
