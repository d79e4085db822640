// Layout conversions the reference device does itself, because XLA:CPU (xla-cpu-pjrt 0.0.1)
// moves bytes without looking at layouts (checked by xla_cpu_buffer_test):
//   - PJRT_Buffer_ToHostBuffer writes the buffer's bytes as they are, whatever host_layout says;
//   - PJRT_Client_BufferFromHostBuffer copies dense host data as they are into a buffer labelled
//     with device_layout;
//   - PJRT_Buffer_CopyToDevice/_CopyToMemory copy the bytes and label the copy row-major.
// So pjrtkit permutes between the array's layouts with CopyStrided, for untiled layouts
// (permutations of the dimensions) of element types of whole bytes.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_LAYOUT_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

// True when `layout` is dense row-major for `rank` dimensions (minor_to_major rank-1..0, no
// tiles; the element size is not looked at).
bool IsRowMajor(const MemoryLayout& layout, size_t rank);

// OK when the wrapper can permute an array of `type` into or out of `layout`: an untiled
// permutation of `rank` dimensions, and an element type of whole bytes. UNIMPLEMENTED for tiles
// and sub-byte types (naming "the <backend> device", DevicePolicy::backend()), INVALID_ARGUMENT
// when minor_to_major is not a permutation; messages start with `operation` and name `what`
// ("ToHostBuffer: host layout minor_to_major {0,0} ...").
Status CheckPermutationLayout(const char* operation, const char* what, const MemoryLayout& layout,
                              ElementType type, size_t rank, const std::string& backend);

// Byte strides of a dense array of `dims` with `element_bytes` per element laid out as
// `minor_to_major` (a checked permutation).
std::vector<int64_t> DenseByteStrides(const std::vector<int64_t>& dims, size_t element_bytes,
                                      const std::vector<int64_t>& minor_to_major);

// Copies every element of an array of `dims` (`element_bytes` each) from `src`, where element
// (i0, i1, ...) is at byte sum(i_k * src_strides[k]), to `dst` at sum(i_k * dst_strides[k]).
void CopyStrided(const char* src, const std::vector<int64_t>& src_strides, char* dst,
                 const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& dims,
                 size_t element_bytes);

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_LAYOUT_H_
