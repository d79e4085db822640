// The host's memory, as the reference device reports it in its memory statistics.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_MEMORY_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_MEMORY_H_

#include <cstdint>

namespace pjrtkit {
namespace plugin_wrapper {

// Bytes of physical memory of the host (sysconf _SC_PHYS_PAGES x _SC_PAGESIZE); 0 when the
// system does not say.
int64_t HostPhysicalMemoryBytes();

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HOST_MEMORY_H_
