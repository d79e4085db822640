// How the sim device's kernels hold elements: the storage format of each element type and the
// compute kind a fused elementwise block holds it in.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_ELEMENT_KIND_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_ELEMENT_KIND_H_

#include <cstdint>

#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

// The in-register representation of an element inside a block. Low-precision floats (f16, bf16,
// f8*) are held as float (kF32) holding a value exactly representable in their type.
enum class ComputeKind : uint8_t {
  kPred,  // uint8_t, 0 or 1
  kS8,
  kS16,
  kS32,
  kS64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF32,   // float (also f16, bf16, f8*)
  kF64,   // double
  kC64,   // Complex<float>
  kC128,  // Complex<double>
  kInvalid,
};

// Number of valid compute kinds (kInvalid excluded).
constexpr int kNumComputeKinds = static_cast<int>(ComputeKind::kInvalid);

// A complex number laid out as its storage (real, then imaginary).
template <typename T>
struct Complex {
  T re;  // Real part.
  T im;  // Imaginary part.
};

// Whether the sim device's kernels support `type` at all (pred, s/u 8..64, f16, bf16, f32, f64,
// c64, c128, the 1-byte float8 types). Sub-byte types and token are not.
bool IsSupportedElementType(ElementType type);

// The compute kind of `type` (kInvalid when unsupported).
ComputeKind ComputeKindOf(ElementType type);

// Bytes of one element of `kind` in a block.
int ComputeKindBytes(ComputeKind kind);

// Bytes of one stored element of a supported `type` (0 otherwise).
int StorageBytes(ElementType type);

// f16, bf16 and the float8 types: computed as float, rounded to the type after every op.
bool IsLowPrecisionFloat(ElementType type);

// f16, bf16, f32, f64 and the float8 types.
bool IsFloatType(ElementType type);

// c64 and c128.
bool IsComplexType(ElementType type);

// s8..s64.
bool IsSignedIntType(ElementType type);

// u8..u64.
bool IsUnsignedIntType(ElementType type);

// The component type of a complex type (f32 for c64, f64 for c128), kInvalid otherwise.
ElementType ComplexComponentType(ElementType type);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_ELEMENT_KIND_H_
