// Typed element loops of the collectives' reductions (internal to collectives.cc; exposed for its
// tests): acc = acc op x for the combiners with a fast path, with XLA:CPU's semantics.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_COLLECTIVE_COMBINE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_COLLECTIVE_COMBINE_H_

#include <cstdint>

#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/program/op_params.h"

namespace pjrtkit {
namespace sim {

// acc[k] = acc[k] op x[k] for k < n when (combiner, type) has a typed loop, then true; false
// (nothing written) otherwise, e.g. kGeneric, f16/bf16/f8 (they round after every op: the scalar
// computation engine does that) and complex multiply/maximum/minimum. The loops: kAdd (pred: or;
// integers wrap; f32, f64, c64, c128), kMultiply (pred: and; integers wrap; f32, f64), kMaximum
// and kMinimum (pred, signed and unsigned integers; f32, f64 propagating NaN, with -0 < +0),
// kAnd, kOr, kXor (pred and integers, bitwise), kReplace (acc = x, any type).
bool CombineInPlace(Combiner combiner, ElementType type, int64_t n, void* acc, const void* x);

// Whether the collectives move arrays of `type`: pred, s8..s64, u8..u64, f16, bf16, f32, f64,
// c64, c128 and the one-byte float8 types (not sub-byte types, token or invalid).
bool IsCollectiveElementType(ElementType type);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_COLLECTIVE_COMBINE_H_
