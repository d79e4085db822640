// WrappedBufferInfo: what never changes about an inner buffer, shared by the buffers it describes.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_BUFFER_INFO_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_BUFFER_INFO_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/plugin_wrapper/wrapped_device.h"
#include "xla_plugin/plugin_wrapper/wrapped_memory.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Metadata of an inner buffer, read once (WrappedBuffer::ReadInfo, seven inner calls) and then
// shared read-only through std::shared_ptr<const WrappedBufferInfo>: every output `i` that an
// executable produces on one device has the same metadata (static shapes), so Execute reads it
// for the first execution only (see OutputInfoCache).
struct WrappedBufferInfo {
  WrappedDevice* device = nullptr;                     // Device holding the data.
  WrappedMemory* memory = nullptr;                     // Memory holding the data.
  ElementType element_type = ElementType::kInvalid;   // Element type.
  std::vector<int64_t> dims;                          // Dimensions.
  StatusOr<MemoryLayout> layout = MemoryLayout();     // Inner layout (or why it is unknown).
  // The data is dense row-major (a permutation layout equal to {rank-1..0}, or no layout: a
  // token). Host transfers and Execute take their fast paths on it without looking at `layout`.
  bool row_major = true;
  size_t on_device_size = 0;                          // Inner on-device size in bytes.
  bool is_on_cpu = true;                              // Inner IsOnCpu.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_BUFFER_INFO_H_
