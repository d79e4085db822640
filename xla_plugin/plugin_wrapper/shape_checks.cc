#include "xla_plugin/plugin_wrapper/shape_checks.h"

#include <cstdint>
#include <string>
#include <vector>

#include "xla_plugin/plugin_wrapper/host_memory.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// "[2,3]" for dims {2, 3}.
std::string DimsString(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

}  // namespace

// Checks an element type and dimensions given by the framework.
Status CheckShape(const char* what, ElementType type, const std::vector<int64_t>& dims) {
  const int value = static_cast<int>(type);
  if (value <= 0 || value > kMaxElementType) {
    return InvalidArgument(std::string(what) + ": invalid element type " + std::to_string(value));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return InvalidArgument(std::string(what) + ": dimension " + std::to_string(i) + " is " +
                             std::to_string(dims[i]) + "; dimensions must be >= 0");
    }
  }
  // The byte size must fit in 63 bits (DenseByteSize would wrap around).
  unsigned __int128 bits = static_cast<unsigned __int128>(ElementTypeBits(type));
  const unsigned __int128 limit = static_cast<unsigned __int128>(INT64_MAX) * 8;
  for (int64_t d : dims) {
    bits *= static_cast<uint64_t>(d);
    if (bits > limit) {
      return InvalidArgument(std::string(what) + ": the dimensions " + DimsString(dims) +
                             " make an array of more than 2^63 bytes");
    }
  }
  return OkStatus();
}

// RESOURCE_EXHAUSTED when an array of `type` x `dims` is larger than the host's physical memory
// (a device whose memory is host memory could never hold it; asking the inner plugin would make
// it try the allocation).
Status CheckFitsInHostMemory(const char* what, ElementType type, const std::vector<int64_t>& dims) {
  // CheckShape made sure this fits in 63 bits (DenseByteSize wraps around past 2^64 bits).
  unsigned __int128 bits = static_cast<unsigned __int128>(ElementTypeBits(type));
  for (int64_t d : dims) bits *= static_cast<uint64_t>(d);
  const uint64_t bytes = static_cast<uint64_t>((bits + 7) / 8);
  const int64_t host = HostPhysicalMemoryBytes();
  if (host <= 0 || bytes <= static_cast<uint64_t>(host)) return OkStatus();
  return ResourceExhausted(std::string(what) + ": an array of " + DimsString(dims) + " needs " +
                           std::to_string(bytes) + " bytes, more than the host's " +
                           std::to_string(host) + " bytes of memory");
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
