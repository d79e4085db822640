// Element moves shared by the reduction kernels: promotion of operands, fills, transposed copies,
// gathers and scatters by element offsets (all by element size, no per-element calls).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_REDUCTION_UTIL_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_REDUCTION_UTIL_H_

#include <cstdint>
#include <vector>

#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

// `data` (n elements of `from`) as elements of `to`: `data` itself when the types are equal, else
// converted into `storage` (resized) by the engine's ConvertArray.
const void* PromoteArray(ElementType from, const void* data, ElementType to, int64_t n,
                         std::vector<char>* storage);

// dst[k] = *scalar for k < n (elements of `bytes` bytes).
void FillWithScalar(void* dst, const void* scalar, int64_t bytes, int64_t n);

// dst = src transposed: dst dimension j is src dimension perm[j]; dst dense row-major.
void PermuteCopy(const void* src, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& perm, int64_t bytes, void* dst);

// dst[k] = src[offsets[k]] for k < count (element offsets).
void GatherElements(const void* src, const int64_t* offsets, int64_t count, int64_t bytes,
                    void* dst);

// dst[offsets[k]] = src[k] for k < count, in order of k.
void ScatterElements(const void* src, const int64_t* offsets, int64_t count, int64_t bytes,
                     void* dst);

// dst[k] = src[k * stride] for k < count.
void GatherStrided(const void* src, int64_t stride, int64_t count, int64_t bytes, void* dst);

// dst[k * stride] = src[k] for k < count.
void ScatterStrided(const void* src, int64_t count, int64_t bytes, void* dst, int64_t stride);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_REDUCTION_UTIL_H_
