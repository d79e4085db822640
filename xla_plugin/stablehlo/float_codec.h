// Floating-point formats of StableHLO constants: decimal or hex literals -> the bits of any float
// element type (f64 ... f4E2M1FN), and bits -> double. Round to nearest, ties to even.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_FLOAT_CODEC_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_FLOAT_CODEC_H_

#include <cstdint>
#include <string_view>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace stablehlo {

// True for the real floating-point element types (f16, bf16, f32, f64, every f8/f6/f4).
bool IsFloatElementType(ElementType type);

// The bits of `value` in `type` (a float type): f32 and f64 as the machine converts, narrower
// formats by their exponent/mantissa widths. Overflow gives infinity where the format has one,
// NaN where it has NaN only, the largest finite value where it has neither; NaN gives the
// format's quiet NaN (0 for formats without NaN); -0 gives +0 where the format has no -0 (FNUZ).
uint64_t EncodeFloat(double value, ElementType type);

// The value of `bits` in `type` (a float type).
double DecodeFloat(uint64_t bits, ElementType type);

// A float literal as MLIR prints it: decimal ("1.5", "-2.1858087E-4", "3") or a hex bit pattern of
// the type's width ("0x7FC00000" for f32). Returns the bits in `type`.
StatusOr<uint64_t> FloatLiteralBits(std::string_view literal, ElementType type);

// A decimal literal as a double (locale-independent); INVALID_ARGUMENT when it is not one.
StatusOr<double> ParseDecimal(std::string_view literal);

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_FLOAT_CODEC_H_
