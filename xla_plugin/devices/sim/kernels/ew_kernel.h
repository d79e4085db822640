// The typed block kernels of the fused elementwise engine: the call convention and the loop
// templates every op family instantiates (internal to the kernels folder).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_EW_KERNEL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_EW_KERNEL_H_

#include <cstdint>
#include <type_traits>

#include "xla_plugin/devices/sim/kernels/element_kind.h"

namespace pjrtkit {
namespace sim {

// The arguments of one kernel call: n elements of each operand block (compute representation),
// the result block (never one of the operands), and the step's attribute.
struct KernelArgs {
  const void* in[3] = {nullptr, nullptr, nullptr};  // Operand blocks.
  void* out = nullptr;                              // Result block.
  int64_t n = 0;                                    // Elements.
  int64_t attr = 0;                                 // EwStep::attr.
  int32_t aux = 0;                                  // Kernel-specific constant from resolution.
};

// A block kernel: out[i] = op(in[0][i], ...) for i < n.
using KernelFn = void (*)(const KernelArgs& args);

// out[i] = Op::Apply(a[i]).
template <typename Op, typename R, typename A>
void UnaryKernel(const KernelArgs& args) {
  const A* __restrict a = static_cast<const A*>(args.in[0]);
  R* __restrict out = static_cast<R*>(args.out);
  const int64_t n = args.n;
  for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(a[i]);
}

// out[i] = Op::Apply(a[i], b[i]).
template <typename Op, typename R, typename A>
void BinaryKernel(const KernelArgs& args) {
  const A* __restrict a = static_cast<const A*>(args.in[0]);
  const A* __restrict b = static_cast<const A*>(args.in[1]);
  R* __restrict out = static_cast<R*>(args.out);
  const int64_t n = args.n;
  for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(a[i], b[i]);
}

// out[i] = Op::Apply(a[i], b[i], c[i]).
template <typename Op, typename R, typename A>
void TernaryKernel(const KernelArgs& args) {
  const A* __restrict a = static_cast<const A*>(args.in[0]);
  const A* __restrict b = static_cast<const A*>(args.in[1]);
  const A* __restrict c = static_cast<const A*>(args.in[2]);
  R* __restrict out = static_cast<R*>(args.out);
  const int64_t n = args.n;
  for (int64_t i = 0; i < n; ++i) out[i] = Op::Apply(a[i], b[i], c[i]);
}

// The C++ type of each compute kind.
template <ComputeKind K>
struct KindType;
template <> struct KindType<ComputeKind::kPred> { using T = uint8_t; };
template <> struct KindType<ComputeKind::kS8> { using T = int8_t; };
template <> struct KindType<ComputeKind::kS16> { using T = int16_t; };
template <> struct KindType<ComputeKind::kS32> { using T = int32_t; };
template <> struct KindType<ComputeKind::kS64> { using T = int64_t; };
template <> struct KindType<ComputeKind::kU8> { using T = uint8_t; };
template <> struct KindType<ComputeKind::kU16> { using T = uint16_t; };
template <> struct KindType<ComputeKind::kU32> { using T = uint32_t; };
template <> struct KindType<ComputeKind::kU64> { using T = uint64_t; };
template <> struct KindType<ComputeKind::kF32> { using T = float; };
template <> struct KindType<ComputeKind::kF64> { using T = double; };
template <> struct KindType<ComputeKind::kC64> { using T = Complex<float>; };
template <> struct KindType<ComputeKind::kC128> { using T = Complex<double>; };

// Calls fn(T{}) with T the C++ type of the integer kind `kind` (s8..u64); returns fn's result, or
// `fallback` for other kinds.
template <typename Fn, typename R>
R DispatchInt(ComputeKind kind, R fallback, Fn&& fn) {
  switch (kind) {
    case ComputeKind::kS8: return fn(int8_t{});
    case ComputeKind::kS16: return fn(int16_t{});
    case ComputeKind::kS32: return fn(int32_t{});
    case ComputeKind::kS64: return fn(int64_t{});
    case ComputeKind::kU8: return fn(uint8_t{});
    case ComputeKind::kU16: return fn(uint16_t{});
    case ComputeKind::kU32: return fn(uint32_t{});
    case ComputeKind::kU64: return fn(uint64_t{});
    default: return fallback;
  }
}

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_EW_KERNEL_H_
