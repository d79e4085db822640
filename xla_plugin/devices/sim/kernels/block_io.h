// Moving elements between storage and the engine's compute representation (internal to the
// kernels folder).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_BLOCK_IO_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_BLOCK_IO_H_

#include <cstdint>

#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

// Whether `type`'s compute representation is its storage format (all supported types but the
// low-precision floats, which compute as float).
bool ComputeIsStorage(ElementType type);

// dst[i] = compute value of src[i * stride] for i < n (stride in elements; 0 broadcasts src[0]).
void LoadElements(ElementType type, const void* src, int64_t stride, void* dst, int64_t n);

// Writes n compute values of `type` to dense storage at dst.
void StoreElements(ElementType type, const void* src, void* dst, int64_t n);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_BLOCK_IO_H_
