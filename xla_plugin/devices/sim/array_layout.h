// How the sim device lays out arrays: dense row-major, whole bytes per element. Sizes, shape
// names, byte strides, and copies between dense row-major and strided host memory.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_ARRAY_LAYOUT_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_ARRAY_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace sim {

// "f32[2,3]", "pred[]".
std::string ShapeString(ElementType type, const std::vector<int64_t>& dims);

// Bytes one element of `type` takes in sim memory: its size, and one byte for the sub-byte types
// (s1, u1, s2, u2, s4, u4, f4e2m1fn, f6e2m3fn, f6e3m2fn), held one element per byte in its low
// bits as jaxlib's host arrays hold them. Buffers of sub-byte types can be made and read back;
// programs on them are refused by the compiler.
int64_t StoredElementBytes(ElementType type);

// OK for the element types the sim device stores (everything with data); UNIMPLEMENTED naming
// the type and `where` (the call) for tokens and invalid types.
Status CheckStorableType(ElementType type, const std::string& where);

// Bytes of a dense array of `type` (storable) and `dims`: CheckStorableType's error, or
// INVALID_ARGUMENT naming `where` for a negative dimension or a size beyond 2^63 - 1 bytes.
StatusOr<int64_t> DenseBytes(ElementType type, const std::vector<int64_t>& dims,
                             const std::string& where);

// The byte strides of the dense row-major layout of `dims` with `element_bytes` per element.
std::vector<int64_t> RowMajorByteStrides(int64_t element_bytes, const std::vector<int64_t>& dims);

// True when `strides` address the elements of `dims` exactly as dense row-major does (strides of
// dimensions of size 1 do not matter; any strides do for an array without elements).
bool IsDenseRowMajor(int64_t element_bytes, const std::vector<int64_t>& dims,
                     const std::vector<int64_t>& strides);

// The byte strides with which a host buffer laid out as `layout` (a permutation of the
// dimensions, minor_to_major, dense, no tiles) holds an array of `type` and `dims`.
// UNIMPLEMENTED naming `where` for tiled layouts and packed element sizes the sim cannot write.
StatusOr<std::vector<int64_t>> HostLayoutByteStrides(ElementType type,
                                                     const std::vector<int64_t>& dims,
                                                     const MemoryLayout& layout,
                                                     const std::string& where);

// OK when `layout` stores an array of `type` and `dims` exactly as dense row-major does (the
// order of dimensions of size 1 does not matter); UNIMPLEMENTED naming `where` and the layout
// otherwise: the sim device keeps every array dense row-major.
Status CheckDeviceLayout(const MemoryLayout& layout, ElementType type,
                         const std::vector<int64_t>& dims, const std::string& where);

// Copies an array of `dims` with `element_bytes` per element from `src` (element i at
// src + sum(i_d * src_strides[d]); strides may be negative or zero) to dense row-major `dst`.
void CopyStridedToDense(int64_t element_bytes, const std::vector<int64_t>& dims, const uint8_t* src,
                        const std::vector<int64_t>& src_strides, uint8_t* dst);

// The inverse: dense row-major `src` to `dst` laid out with `dst_strides`.
void CopyDenseToStrided(int64_t element_bytes, const std::vector<int64_t>& dims, const uint8_t* src,
                        uint8_t* dst, const std::vector<int64_t>& dst_strides);

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_ARRAY_LAYOUT_H_
