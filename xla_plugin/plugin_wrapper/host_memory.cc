#include "xla_plugin/plugin_wrapper/host_memory.h"

#include <unistd.h>

#include <string>

#include "xla_plugin/client/shape_checks.h"

namespace pjrtkit {
namespace plugin_wrapper {

int64_t HostPhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page_size);
}

Status CheckFitsInHostMemory(const char* what, ElementType type, const std::vector<int64_t>& dims,
                             int64_t host_bytes) {
  // CheckShape made sure this fits in 63 bits (DenseByteSize wraps around past 2^64 bits).
  unsigned __int128 bits = static_cast<unsigned __int128>(ElementTypeBits(type));
  for (int64_t d : dims) bits *= static_cast<uint64_t>(d);
  const uint64_t bytes = static_cast<uint64_t>((bits + 7) / 8);
  if (host_bytes <= 0 || bytes <= static_cast<uint64_t>(host_bytes)) return OkStatus();
  return ResourceExhausted(std::string(what) + ": an array of " + DimensionsText(dims) + " needs " +
                           std::to_string(bytes) + " bytes, more than the host's " +
                           std::to_string(host_bytes) + " bytes of memory");
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
