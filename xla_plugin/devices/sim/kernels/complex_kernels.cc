// Complex kernels on c64 and c128, with XLA:CPU's formulas and special cases (README.md):
// arithmetic in the component type; transcendental functions through f64 math for c64 and
// rounded once per component.
#include <cmath>
#include <limits>

#include "xla_plugin/devices/sim/kernels/ew_kernels.h"

namespace pjrtkit {
namespace sim {
namespace {

using D = double;
using CD = Complex<double>;

constexpr D kInf = std::numeric_limits<D>::infinity();
constexpr D kNaN = std::numeric_limits<D>::quiet_NaN();

template <typename T>
CD Widen(Complex<T> z) {
  return {static_cast<D>(z.re), static_cast<D>(z.im)};
}
template <typename T>
Complex<T> Narrow(CD z) {
  return {static_cast<T>(z.re), static_cast<T>(z.im)};
}

// |z| with XLA's NaN rule: a NaN component gives NaN (even beside an infinity).
D AbsD(CD z) {
  if (std::isnan(z.re) || std::isnan(z.im)) return kNaN;
  return std::hypot(z.re, z.im);
}

// cos(x) - 1 without cancellation.
D Cosm1(D x) {
  const D s = std::sin(x / 2);
  return -2 * s * s;
}

// exp(a + bi) = e^a (cos b + i sin b), with a zero imaginary part for b == 0 (also when e^a is
// infinite or NaN).
CD ExpD(CD z) {
  const D e = std::exp(z.re);
  return {e * std::cos(z.im), z.im == 0 ? 0.0 : e * std::sin(z.im)};
}

CD Expm1D(CD z) {
  const D em1 = std::expm1(z.re);
  const D real = em1 * std::cos(z.im) + Cosm1(z.im);
  const D imag = z.im == 0 ? 0 : (em1 + 1) * std::sin(z.im);
  return {real, imag};
}

CD LogD(CD z) { return {std::log(AbsD(z)), std::atan2(z.im, z.re)}; }

// log1p(z) = log|1 + z| + i arg(1 + z); the real part as log1p(a (2 + a) + b^2) / 2 near zero
// (no cancellation), else log(hypot(1 + a, b)). A NaN part gives NaN there.
CD Log1pD(CD z) {
  const D a = z.re;
  const D b = z.im;
  D real;
  if (std::fabs(a) < 0.5 && std::fabs(b) < 0.5) {
    real = 0.5 * std::log1p(a * (2 + a) + b * b);
  } else {
    real = std::log(std::hypot(1 + a, b));
  }
  if (std::isnan(a) || std::isnan(b)) real = kNaN;
  return {real, std::atan2(b, 1 + a)};
}

// tanh(a + bi) = (e^2a - e^-2a + 4i sin(b)cos(b)) / (e^2a + e^-2a + 4cos(b)^2 - 2), with XLA's
// limits for infinite and NaN parts.
CD TanhD(CD z) {
  const D a = z.re;
  const D b = z.im;
  const D em1_2a = std::expm1(2 * a);
  const D em1_neg_2a = std::expm1(-2 * a);
  const D cos_b = std::cos(b);
  const D sin_b = std::sin(b);
  const D imag_num = 4 * cos_b * sin_b;
  const D exp_sum_m2 = em1_2a + em1_neg_2a;
  const D denom = exp_sum_m2 + 4 * cos_b * cos_b;
  D real = exp_sum_m2 == kInf ? std::copysign(1.0, a) : (em1_2a - em1_neg_2a) / denom;
  D imag = imag_num / denom;
  const bool a_is_inf = std::fabs(a) == kInf;
  const bool sin_2b_is_nan = std::isnan(imag_num);
  if (sin_2b_is_nan && !a_is_inf) real = kNaN;
  if (b == 0 || (a_is_inf && sin_2b_is_nan)) imag = 0;
  return {real, imag};
}

// tan(a + bi) = -i tanh(-b + ai).
CD TanD(CD z) {
  const CD t = TanhD({-z.im, z.re});
  return {t.im, -t.re};
}

CD SinD(CD z) {
  const D e = std::exp(z.im);
  const D sinh_y = 0.5 * e - 0.5 / e;
  const D cosh_y = 0.5 * e + 0.5 / e;
  return {std::sin(z.re) * cosh_y, std::cos(z.re) * sinh_y};
}

CD CosD(CD z) {
  const D e = std::exp(z.im);
  const D sinh_y = 0.5 * e - 0.5 / e;
  const D cosh_y = 0.5 * e + 0.5 / e;
  return {std::cos(z.re) * cosh_y, -(std::sin(z.re) * sinh_y)};
}

// sqrt(x + iy) without angles: u = sqrt((|x| + |z|) / 2); x >= 0 gives (u, y / 2u), x < 0 gives
// (|y| / 2u, +-u) with the sign of y (+ for -0); an infinite y gives (inf, y); a NaN part NaN.
CD SqrtD(CD z) {
  const D x = z.re;
  const D y = z.im;
  if (x == 0 && y == 0) return {0, y};
  const D u = std::sqrt((std::fabs(x) + AbsD(z)) * 0.5);
  if (std::isnan(u)) return {kNaN, kNaN};
  if (std::fabs(y) == kInf) return {kInf, y};
  if (x >= 0) return {u, y / (2 * u)};
  return {std::fabs(y) / (2 * u), y >= 0 ? u : -u};
}

// rsqrt(z) = |z|^-1/2 (cos(-t/2) + i sin(-t/2)).
CD RsqrtD(CD z) {
  const D a = z.re;
  const D b = z.im;
  const D r = 1 / std::sqrt(AbsD(z));
  const D angle = std::atan2(b, a) * -0.5;
  D real = r * std::cos(angle);
  D imag = r * std::sin(angle);
  const D abs_a = std::fabs(a);
  const D abs_b = std::fabs(b);
  if (b == 0 && a == 0) return {kInf, kNaN};
  if ((abs_b == kInf && std::isnan(a)) || abs_a == kInf) {
    real = std::copysign(0.0, a);
    imag = -std::copysign(0.0, b);
  }
  return {real, imag};
}

// Smith's division with XLA's corner cases (zero denominator, infinite parts).
template <typename T>
Complex<T> Divide(Complex<T> x, Complex<T> y) {
  const T ar = x.re, ai = x.im, br = y.re, bi = y.im;
  const T inf = std::numeric_limits<T>::infinity();
  T cr, ci;
  if (std::fabs(br) < std::fabs(bi)) {
    const T ratio = br / bi;
    const T denom = bi + ratio * br;
    cr = (ratio * ar + ai) / denom;
    ci = (ratio * ai - ar) / denom;
  } else {
    const T ratio = bi / br;
    const T denom = br + ratio * bi;
    cr = (ratio * ai + ar) / denom;
    ci = (ai - ratio * ar) / denom;
  }
  if (!(std::isnan(cr) && std::isnan(ci))) return {cr, ci};
  if (br == 0 && bi == 0 && (!std::isnan(ar) || !std::isnan(ai))) {
    const T s = std::copysign(inf, br);
    return {s * ar, s * ai};
  }
  const bool b_finite = std::fabs(br) != inf && std::fabs(bi) != inf && !std::isnan(br) &&
                        !std::isnan(bi);
  const bool a_inf = std::fabs(ar) == inf || std::fabs(ai) == inf;
  if (a_inf && b_finite) {
    const T sr = std::copysign(std::fabs(ar) == inf ? T(1) : T(0), ar);
    const T si = std::copysign(std::fabs(ai) == inf ? T(1) : T(0), ai);
    return {inf * (sr * br + si * bi), inf * (si * br - sr * bi)};
  }
  const bool a_finite = std::fabs(ar) != inf && std::fabs(ai) != inf && !std::isnan(ar) &&
                        !std::isnan(ai);
  const bool b_inf = std::fabs(br) == inf || std::fabs(bi) == inf;
  if (b_inf && a_finite) {
    const T sr = std::copysign(std::fabs(br) == inf ? T(1) : T(0), br);
    const T si = std::copysign(std::fabs(bi) == inf ? T(1) : T(0), bi);
    return {T(0) * (ar * sr + ai * si), T(0) * (ai * sr - ar * si)};
  }
  return {cr, ci};
}

// x^y = |x|^c e^(-d arg x) (cos q + i sin q), q = c arg x + d log|x|, with XLA's cutoffs.
CD PowD(CD x, CD y) {
  const D a = x.re, b = x.im, c = y.re, d = y.im;
  const D abs = AbsD(x);
  const D arg = std::atan2(b, a);
  const D coeff = std::pow(abs, c) * std::exp(-d * arg);
  const D q = c * arg + d * std::log(abs);
  CD result = {coeff * std::cos(q), coeff * std::sin(q)};
  if (abs == 0 && d == 0 && 0 <= c) result = {c == 0 ? 1.0 : 0.0, 0};
  if (c == 0 && d == 0) result = {1, 0};
  if (a == 1 && b == 0) result = {1, 0};
  if (a == kInf && b == 0 && d == 0 && c > 0) result = {kInf, 0};
  if (a == kInf && b == 0 && d == 0 && c < 0) result = {0, 0};
  return result;
}

CD LogisticD(CD z) {
  const CD e = ExpD({-z.re, -z.im});
  return Divide<D>({1, 0}, {1 + e.re, e.im});
}

template <CD (*F)(CD)>
struct ViaDouble {
  template <typename T>
  static Complex<T> Apply(Complex<T> z) { return Narrow<T>(F(Widen(z))); }
};
// x, or zero when x is a denormal.
template <typename T>
T Flush(T x) {
  return std::fabs(x) < std::numeric_limits<T>::min() ? std::copysign(T(0), x) : x;
}

// |z| in the component type as XLA computes it: hi * sqrt(1 + (lo / hi)^2), falling back to lo
// when that is NaN ((0, 0), (inf, inf)); NaN when a part is NaN.
template <typename T>
T XlaAbs(Complex<T> z) {
  const T a = Flush(std::fabs(z.re));  // XLA's max/min read (and return) denormals as zero.
  const T b = Flush(std::fabs(z.im));
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  const T hi = a > b ? a : b;
  const T lo = a > b ? b : a;
  const T div = lo / hi;
  const T r = hi * std::sqrt(std::fma(div, div, T(1)));
  return std::isnan(r) ? lo : r;
}

struct AbsOp {
  template <typename T>
  static T Apply(Complex<T> z) { return XlaAbs(z); }
};
// z / |z|; z itself when |z| is zero.
struct SignOp {
  template <typename T>
  static Complex<T> Apply(Complex<T> z) {
    const T abs = XlaAbs(z);
    if (abs == 0) return z;
    return {z.re / abs, z.im / abs};
  }
};
struct NegateOp {
  template <typename T>
  static Complex<T> Apply(Complex<T> z) { return {-z.re, -z.im}; }
};
struct RealOp {
  template <typename T>
  static T Apply(Complex<T> z) { return z.re; }
};
struct ImagOp {
  template <typename T>
  static T Apply(Complex<T> z) { return z.im; }
};
struct AddOp {
  template <typename T>
  static Complex<T> Apply(Complex<T> x, Complex<T> y) { return {x.re + y.re, x.im + y.im}; }
};
struct SubtractOp {
  template <typename T>
  static Complex<T> Apply(Complex<T> x, Complex<T> y) { return {x.re - y.re, x.im - y.im}; }
};
struct MultiplyOp {
  template <typename T>
  static Complex<T> Apply(Complex<T> x, Complex<T> y) {
    // XLA contracts both parts into one fused multiply-add each.
    return {std::fma(x.re, y.re, -(x.im * y.im)), std::fma(x.re, y.im, x.im * y.re)};
  }
};
struct DivideOp {
  template <typename T>
  static Complex<T> Apply(Complex<T> x, Complex<T> y) { return Divide<T>(x, y); }
};
struct PowerOp {
  template <typename T>
  static Complex<T> Apply(Complex<T> x, Complex<T> y) {
    return Narrow<T>(PowD(Widen(x), Widen(y)));
  }
};
struct MakeComplexOp {
  template <typename T>
  static Complex<T> Apply(T re, T im) { return {re, im}; }
};

template <typename T>
KernelFn ComplexKernelFor(EwOp op) {
  using C = Complex<T>;
  switch (op) {
    case EwOp::kAbs: return &UnaryKernel<AbsOp, T, C>;
    case EwOp::kNegate: return &UnaryKernel<NegateOp, C, C>;
    case EwOp::kSign: return &UnaryKernel<SignOp, C, C>;
    case EwOp::kExp: return &UnaryKernel<ViaDouble<ExpD>, C, C>;
    case EwOp::kExpm1: return &UnaryKernel<ViaDouble<Expm1D>, C, C>;
    case EwOp::kLog: return &UnaryKernel<ViaDouble<LogD>, C, C>;
    case EwOp::kLog1p: return &UnaryKernel<ViaDouble<Log1pD>, C, C>;
    case EwOp::kLogistic: return &UnaryKernel<ViaDouble<LogisticD>, C, C>;
    case EwOp::kTanh: return &UnaryKernel<ViaDouble<TanhD>, C, C>;
    case EwOp::kSine: return &UnaryKernel<ViaDouble<SinD>, C, C>;
    case EwOp::kCosine: return &UnaryKernel<ViaDouble<CosD>, C, C>;
    case EwOp::kTan: return &UnaryKernel<ViaDouble<TanD>, C, C>;
    case EwOp::kSqrt: return &UnaryKernel<ViaDouble<SqrtD>, C, C>;
    case EwOp::kRsqrt: return &UnaryKernel<ViaDouble<RsqrtD>, C, C>;
    case EwOp::kReal: return &UnaryKernel<RealOp, T, C>;
    case EwOp::kImag: return &UnaryKernel<ImagOp, T, C>;
    case EwOp::kAdd: return &BinaryKernel<AddOp, C, C>;
    case EwOp::kSubtract: return &BinaryKernel<SubtractOp, C, C>;
    case EwOp::kMultiply: return &BinaryKernel<MultiplyOp, C, C>;
    case EwOp::kDivide: return &BinaryKernel<DivideOp, C, C>;
    case EwOp::kPower: return &BinaryKernel<PowerOp, C, C>;
    case EwOp::kComplex: return &BinaryKernel<MakeComplexOp, C, T>;
    default: return nullptr;
  }
}

}  // namespace

KernelFn ComplexKernel(EwOp op, ComputeKind kind) {
  if (kind == ComputeKind::kC64) return ComplexKernelFor<float>(op);
  if (kind == ComputeKind::kC128) return ComplexKernelFor<double>(op);
  return nullptr;
}

}  // namespace sim
}  // namespace pjrtkit
