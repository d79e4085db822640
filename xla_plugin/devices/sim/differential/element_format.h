// Element formats of the differential tests: how each element type's elements are read from a
// HostTensor, printed, classified (NaN, denormal) and measured apart (ulps). Exact and
// independent of the floating-point mode (the sim kernels flush denormals; these must not).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_ELEMENT_FORMAT_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_ELEMENT_FORMAT_H_

#include <cstdint>
#include <string>

#include "xla_plugin/client/types.h"
#include "xla_plugin/stablehlo/stablehlo_library.h"

namespace pjrtkit {
namespace sim {
namespace differential {

using stablehlo::HostTensor;

// pred.
bool IsPred(ElementType type);
// s8..s64.
bool IsSigned(ElementType type);
// u8..u64.
bool IsUnsigned(ElementType type);
// s8..s64 and u8..u64.
bool IsInteger(ElementType type);
// f16, bf16, f32, f64 and the 8-bit float types.
bool IsFloat(ElementType type);
// c64, c128.
bool IsComplex(ElementType type);
// f32 for c64, f64 for c128, `type` itself otherwise.
ElementType ComponentType(ElementType type);
// Stored bytes of one element (pred 1, c64 8).
int ElementBytes(ElementType type);
// Explicit mantissa bits of a float type (f32: 23, bf16: 7, f8E4M3FN: 3, f8E8M0FNU: 0).
int MantissaBits(ElementType type);
// 2^-MantissaBits: the relative spacing of the type's numbers at 1.
double Epsilon(ElementType type);

// Number of elements of `tensor`.
int64_t NumElements(const HostTensor& tensor);
// The bits of element `i` of `tensor` (complex: part 0 = real, 1 = imaginary), zero-extended.
uint64_t ElementBits(const HostTensor& tensor, int64_t i, int part = 0);
// Writes `bits` as element `i` (part) of `tensor`.
void SetElementBits(HostTensor* tensor, int64_t i, uint64_t bits, int part = 0);

// The value of a float type's `bits` (exact).
double FloatValue(ElementType type, uint64_t bits);
// The bits of `value` in float type `type` (round to nearest even).
uint64_t FloatBits(ElementType type, double value);
// Whether `bits` of float type `type` is a NaN.
bool IsNaN(ElementType type, uint64_t bits);
// Whether `bits` of float type `type` is +-inf.
bool IsInf(ElementType type, uint64_t bits);
// Whether the value of `bits` is a nonzero value that the sim kernels (like XLA:CPU, with
// flush-to-zero and denormals-are-zero) read and write as zero: an f64 denormal for f64, and for
// the types computed in f32 (f32, bf16, f16, the 8-bit floats) a value below f32's smallest normal
// (f32 and bf16 denormals, f8E8M0FNU's 2^-127; f16 and float8 denormals are normal in f32).
bool IsFlushedDenormal(ElementType type, uint64_t bits);
// The signed integer value of an integer or pred element's `bits`.
int64_t SignedValue(ElementType type, uint64_t bits);

// Ulps between two non-NaN values of float type `type` (+0 and -0 are 0 apart; crossing zero
// counts the ulps on both sides).
uint64_t UlpDistance(ElementType type, uint64_t a, uint64_t b);

// Element `i` of `tensor` as text: "1.5 [0x3fc00000]", "-3", "true", "(1.5, -2)".
std::string ElementText(const HostTensor& tensor, int64_t i);
// "f32[33,17]".
std::string ShapeText(ElementType type, const std::vector<int64_t>& dims);
// The first `limit` elements of `tensor` as text: "[1, 2, ...]".
std::string TensorValuesText(const HostTensor& tensor, int64_t limit);

}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_ELEMENT_FORMAT_H_
