// Checks of the element types and dimensions the framework gives WrappedClient (buffers from host
// data, uninitialized buffers, views, async transfers) before they reach the inner plugin.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_SHAPE_CHECKS_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_SHAPE_CHECKS_H_

#include <cstdint>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Checks an element type and dimensions given by the framework: INVALID_ARGUMENT (prefixed with
// `what`) for an unknown element type, a negative dimension, or an array of more than 2^63 bytes.
Status CheckShape(const char* what, ElementType type, const std::vector<int64_t>& dims);

// RESOURCE_EXHAUSTED when an array of `type` x `dims` is larger than the host's physical memory
// (a device whose memory is host memory could never hold it; asking the inner plugin would make
// it try the allocation). Call after CheckShape.
Status CheckFitsInHostMemory(const char* what, ElementType type, const std::vector<int64_t>& dims);

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_SHAPE_CHECKS_H_
