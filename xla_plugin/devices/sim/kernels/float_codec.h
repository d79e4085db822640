// Codecs of the low-precision float types (f16, bf16, the float8 types): the bits of each format to
// and from float/double, with XLA:CPU's rounding, overflow and NaN rules (see README.md).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FLOAT_CODEC_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FLOAT_CODEC_H_

#include <cstdint>
#include <cstring>

#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

// The low-precision float formats.
enum class LowFloat : uint8_t {
  kF16,
  kBF16,
  kF8E5M2,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E5M2FNUZ,
  kF8E4M3FNUZ,
  kF8E4M3,
  kF8E3M4,
  kF8E8M0FNU,
};

// The format of `type`; false when `type` is not a low-precision float.
bool LowFloatOf(ElementType type, LowFloat* format);

// Encodes `x` into `format`'s bits: round to nearest even (f8e8m0fnu: ties away from zero, no
// zero, no sign), overflow to inf where the format has one and to NaN otherwise, NaN to the
// format's NaN (f16 keeps the top payload bits and sets the quiet bit, like x86's vcvtps2ph).
uint32_t EncodeFromF32(LowFloat format, float x);

// Encodes `x` as XLA:CPU converts f64: f16 and bf16 through f32 (double rounding; the f32 step
// flushes denormals when the caller runs under ScopedFlushDenormals; f16 NaN is 0x7e00 with the
// sign), the float8 types in one rounding (f8e8m0fnu: under 2^-127 gives NaN, between 2^-127 and
// 2^-126 gives 2^-126).
uint32_t EncodeFromF64(LowFloat format, double x);

// The value of `bits` in `format` (exact; f16 signaling NaNs come back quiet, float8 NaNs as the
// canonical quiet NaN with their sign, FNUZ/E8M0 NaN as +NaN).
float DecodeToF32(LowFloat format, uint32_t bits);

// The value of `bits` as f64, as XLA:CPU widens: exact, except that bf16 denormals read as zero
// (XLA widens bf16 through f32 with denormals-are-zero; no other format has f32 denormals but
// f8e8m0fnu's 2^-127, which XLA widens exactly). Independent of the floating-point mode.
double DecodeToF64(LowFloat format, uint32_t bits);

// The fused engine holds low-precision values as floats that keep every code: NaNs carry their
// code in the float's payload (f16: its payload bits, signaling ones included; float8: the code in
// the low byte, the sign for FNUZ's 0x80), so loads, stores, selects and bitcasts are lossless
// and the total order sees the codes. CanonicalizeBlock turns such floats into the values XLA's
// convert gives.

// dst[i] = the lossless float of code src[i * stride] (stride in elements, 0 broadcasts src[0]).
void DecodeBlock(LowFloat format, const void* src, int64_t stride, float* dst, int64_t n);

// dst[i] = the code of src[i]: the inverse of DecodeBlock; other NaNs get the format's NaN and
// other values are rounded as EncodeFromF32 does. dst dense.
void EncodeBlock(LowFloat format, const float* src, void* dst, int64_t n);

// dst[i] = DecodeBlock(EncodeFromF32(src[i])): rounds float results to `format` (dst may equal
// src).
void RoundBlock(LowFloat format, const float* src, float* dst, int64_t n);

// data[i] = DecodeToF32(code of data[i]) for the lossless floats of `format`: only NaNs change
// (f16: quiet bit set; float8: the canonical quiet NaN, positive for FNUZ and E8M0).
void CanonicalizeBlock(LowFloat format, float* data, int64_t n);

// dst[i] = decode(EncodeFromF64(src[i])): f64 values converted to `format`, held as float.
void RoundF64Block(LowFloat format, const double* src, float* dst, int64_t n);

// Reinterprets the bits of `from` as `To` (same size).
template <typename To, typename From>
inline To BitCast(From from) {
  static_assert(sizeof(To) == sizeof(From), "BitCast needs types of one size");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_FLOAT_CODEC_H_
