#include "xla_plugin/plugin_wrapper/host_memory.h"

#include <unistd.h>

namespace pjrtkit {
namespace plugin_wrapper {

int64_t HostPhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page_size);
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
