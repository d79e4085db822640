// exp, log1p and tanh of f32 values, evaluated in f64 with polynomials instead of libm: straight
// line code (selects, no calls), so the block loops vectorize. Each is accurate to a few 1e-16
// relative in f64, so rounding to f32 gives the correctly rounded result except for values
// within that distance of a rounding boundary: what libm's f64 functions gave before, several
// times faster (internal to the kernels folder; float_kernels.cc uses them for f32).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FAST_MATH_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FAST_MATH_H_

#include <cstdint>
#include <cstring>
#include <limits>

namespace pjrtkit {
namespace sim {
namespace fast_math {

inline double BitsToDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

inline uint64_t DoubleToBits(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return bits;
}

// e^x for x in [-110, 90] (the caller clamps; NaN passes through as NaN). Cody-Waite reduction
// x = n ln2 + r, |r| <= ln2 / 2, then e^r by its Taylor polynomial to r^12 (error below 2e-16).
inline double ExpOfClamped(double x) {
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln 2 with its low 32 bits zero,
  constexpr double kLn2Lo = 1.90821492927058770002e-10;  // so that n * kLn2Hi is exact.
  constexpr double kShift = 6755399441055744.0;          // 1.5 * 2^52: rounds to an integer.
  const double shifted = x * kLog2e + kShift;
  const double n = shifted - kShift;
  const double r = (x - n * kLn2Hi) - n * kLn2Lo;
  double p = 1.0 / 479001600.0;  // 1/12!
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // 2^n: the low bits of `shifted` hold n; shifting them into the exponent drops the rest.
  const double scale = BitsToDouble((DoubleToBits(shifted) + 1023) << 52);
  return p * scale;
}

// e^x rounded to f32 (overflow to +inf, underflow to 0, NaN stays).
inline float Exp(float a) {
  double x = static_cast<double>(a);
  x = x < -110.0 ? -110.0 : x;
  x = x > 90.0 ? 90.0 : x;
  return static_cast<float>(ExpOfClamped(x));
}

// log(u) for u a positive normal finite f64. u = m 2^e with m in [sqrt(1/2), sqrt(2)); log m =
// 2 atanh(f), f = (m - 1) / (m + 1), |f| <= 0.1716, by its series to f^21 (error below 1e-16).
inline double LogOfPositive(double u) {
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kSqrt2 = 1.41421356237309504880;
  const uint64_t bits = DoubleToBits(u);
  // The biased exponent as a double: its 11 bits put into the mantissa of 2^52 (no integer to
  // double conversion, which SSE2 lacks for 64-bit lanes).
  double e = BitsToDouble((bits >> 52) | 0x4330000000000000ull) - 4503599627371519.0;  // 2^52+1023
  double m = BitsToDouble((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  const bool high = m > kSqrt2;
  m = high ? m * 0.5 : m;
  e = high ? e + 1.0 : e;
  const double f = (m - 1.0) / (m + 1.0);
  const double s = f * f;
  double p = 1.0 / 21;
  p = p * s + 1.0 / 19;
  p = p * s + 1.0 / 17;
  p = p * s + 1.0 / 15;
  p = p * s + 1.0 / 13;
  p = p * s + 1.0 / 11;
  p = p * s + 1.0 / 9;
  p = p * s + 1.0 / 7;
  p = p * s + 1.0 / 5;
  p = p * s + 1.0 / 3;
  p = p * s + 1.0;
  return e * kLn2Hi + (e * kLn2Lo + 2.0 * f * p);
}

// log(1 + a) rounded to f32, with libm's answers at the edges: -inf at -1, NaN below -1 and for
// NaN, +inf at +inf; |a| < 2^-29 gives a itself (its f32 rounding), a denormal a gives 0 (read as
// zero, as before).
inline float Log1p(float a) {
  const double x = static_cast<double>(a);
  const double ax = x < 0 ? -x : x;
  // Exact in f64 for an f32 a with |a| >= 2^-29; 1 + tiny a is handled apart.
  const double u = 1.0 + x;
  const double safe = u > 0.0 && u < std::numeric_limits<double>::infinity() ? u : 1.0;
  const double y = LogOfPositive(safe);
  double out = ax < 0x1p-29 ? x : y;  // A denormal a reads as 0 here (denormals are zero).
  out = u == 0.0 ? -std::numeric_limits<double>::infinity() : out;
  out = u < 0.0 ? std::numeric_limits<double>::quiet_NaN() : out;
  out = x == std::numeric_limits<double>::infinity() ? x : out;
  out = x != x ? x : out;
  return static_cast<float>(out);
}

// Whether the bits of `a` are an f32 denormal (read as bits: the kernels run with
// denormals-are-zero, under which a denormal compares equal to zero).
inline bool IsDenormalF32(float a) {
  uint32_t bits;
  std::memcpy(&bits, &a, sizeof(bits));
  return (bits & 0x7F800000u) == 0 && (bits & 0x007FFFFFu) != 0;
}

// tanh rounded to f32. |a| < 0.3: the odd Taylor series to a^21 (error below 2e-16); above:
// (1 - e) / (1 + e) with e = e^(-2|a|), which does not cancel there; |a| > 20 is +-1. A denormal
// a is returned as it is (as XLA's f32 tanh does).
inline float Tanh(float a) {
  const double x = static_cast<double>(a);
  const double ax = x < 0 ? -x : x;
  const double s = x * x;
  double p = 18888466084.0 / 194896477400625.0;
  p = p * s - 443861162.0 / 1856156927625.0;
  p = p * s + 6404582.0 / 10854718875.0;
  p = p * s - 929569.0 / 638512875.0;
  p = p * s + 21844.0 / 6081075.0;
  p = p * s - 1382.0 / 155925.0;
  p = p * s + 62.0 / 2835.0;
  p = p * s - 17.0 / 315.0;
  p = p * s + 2.0 / 15.0;
  p = p * s - 1.0 / 3.0;
  const double small = x + x * (s * p);
  const double e = ExpOfClamped(-2.0 * (ax > 20.0 ? 20.0 : ax));
  const double large = (1.0 - e) / (1.0 + e);
  double out = ax < 0.3 ? small : (x < 0 ? -large : large);
  out = x != x ? x : out;
  return IsDenormalF32(a) ? a : static_cast<float>(out);
}

}  // namespace fast_math
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FAST_MATH_H_
