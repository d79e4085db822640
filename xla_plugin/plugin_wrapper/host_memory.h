// The host's memory, as the reference device reports it in its memory statistics, and the check
// that an array fits in it.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_MEMORY_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_MEMORY_H_

#include <cstdint>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Bytes of physical memory of the host (sysconf _SC_PHYS_PAGES x _SC_PAGESIZE); 0 when the
// system does not say.
int64_t HostPhysicalMemoryBytes();

// RESOURCE_EXHAUSTED (starting with `what`) when an array of `type` x `dims` is larger than
// `host_bytes`, the host's physical memory (a device whose memory is host memory could never hold
// it; asking the inner plugin would make it try the allocation); `host_bytes` <= 0 (unknown)
// accepts any size. Call after CheckShape (client/shape_checks.h). Callers read
// HostPhysicalMemoryBytes() once: it is a system call (sysinfo), too slow for every transfer.
Status CheckFitsInHostMemory(const char* what, ElementType type, const std::vector<int64_t>& dims,
                             int64_t host_bytes);

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_MEMORY_H_
