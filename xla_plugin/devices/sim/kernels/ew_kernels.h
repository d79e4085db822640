// The block kernels of each op family, looked up by op and compute kind (internal to the kernels
// folder; kernel_registry.h resolves a whole EwStep). Each returns nullptr when the family has no
// kernel for the pair.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_EW_KERNELS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_EW_KERNELS_H_

#include "xla_plugin/devices/sim/kernels/element_kind.h"
#include "xla_plugin/devices/sim/kernels/ew_kernel.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"

namespace pjrtkit {
namespace sim {

// pred and integer ops (unary, binary, clamp) on operands of `kind` (int_kernels.cc).
KernelFn IntKernel(EwOp op, ComputeKind kind);

// Real floating-point ops (unary, binary, clamp) on f32 or f64 operands (float_kernels.cc).
// kIsFinite returns pred.
KernelFn FloatKernel(EwOp op, ComputeKind kind);

// Complex ops on c64 or c128 operands (abs, real and imag return the component type), and
// kComplex building c64/c128 (`kind`: the result's) from two components (complex_kernels.cc).
KernelFn ComplexKernel(EwOp op, ComputeKind kind);

// kCompare on operands of `kind` (compare_kernels.cc). `total_order` (floats only) compares as
// XLA's total order; otherwise IEEE for floats, and by the kind's own signedness for integers.
KernelFn CompareKernel(ComputeKind kind, ComparisonDirection direction, bool total_order);

// kSelect of `kind` values (compare_kernels.cc).
KernelFn SelectKernel(ComputeKind kind);

// kConvert between compute kinds with XLA semantics (convert_kernels.cc): float -> integer
// saturates (NaN -> 0), complex -> real takes the real part, x -> pred is x != 0 (complex: its
// real part).
KernelFn ConvertKernel(ComputeKind from, ComputeKind to);

// Rounding of float results to a low-precision type, as a LowRounding value: the LowFloat in the
// low byte, plus these flags.
constexpr int32_t kRoundLow = 1 << 8;     // Round to the format (unset: no rounding).
constexpr int32_t kRoundViaF16 = 1 << 9;  // Round to f16 first (XLA computes float8 ops in f16).

// How results of `type` are rounded (0 for types that are not low-precision floats): op results
// of the float8 types other than f8e8m0fnu go through f16, conversions round once.
int32_t LowRounding(ElementType type, bool op_result);

// Rounds n float results in place as `rounding` (a LowRounding value) says.
void ApplyRounding(int32_t rounding, float* data, int64_t n);

// Kernels whose semantics depend on the float type itself (low_float_kernels.cc): logistic (aux:
// the LowRounding of its intermediate steps), reduce_precision (low types: aux = the LowFloat in
// whose bits it works, f16 or bf16), bf16 maximum/minimum/clamp, f8e8m0fnu sign/ceil. nullptr
// otherwise.
KernelFn TypedFloatKernel(EwOp op, ElementType type);

// convert from a low-precision float (aux = its LowFloat) to f32, f64, c64 or c128, with XLA's
// NaNs and denormals (low_float_kernels.cc); nullptr for other targets.
KernelFn ConvertFromLowFloat(ElementType to);

// convert from bf16 to pred, counting denormals as nonzero as XLA does (low_float_kernels.cc).
KernelFn ConvertBf16ToPred();

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_EW_KERNELS_H_
