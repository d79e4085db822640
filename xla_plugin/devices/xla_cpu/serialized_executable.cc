#include "xla_plugin/devices/xla_cpu/serialized_executable.h"

#include <cstdint>

namespace pjrtkit {
namespace xla_cpu {

std::string SerializedExecutable::Encode(int device_count, std::string_view inner) {
  std::string out;
  out.reserve(kHeaderSize + inner.size());
  out.append(kMagic, kMagicSize);
  out.push_back(static_cast<char>(kVersion));
  const uint32_t count = static_cast<uint32_t>(device_count);
  for (int shift = 0; shift < 32; shift += 8) {
    out.push_back(static_cast<char>((count >> shift) & 0xff));
  }
  out.append(inner.data(), inner.size());
  return out;
}

StatusOr<SerializedExecutable> SerializedExecutable::Decode(std::string_view bytes,
                                                            const char* what) {
  if (bytes.empty() || bytes[0] != '\0') return SerializedExecutable(0, bytes);  // XLA:CPU's own.
  const std::string_view magic(kMagic, kMagicSize);
  if (bytes.size() < kHeaderSize || bytes.substr(0, kMagicSize) != magic) {
    return InvalidArgument(std::string(what) + ": the serialized executable (" +
                           std::to_string(bytes.size()) +
                           " bytes) is neither a pjrtkit reference-device executable nor "
                           "XLA:CPU's own");
  }
  const auto version = static_cast<unsigned char>(bytes[kMagicSize]);
  if (version != kVersion) {
    return InvalidArgument(std::string(what) + ": the serialized executable has format version " +
                           std::to_string(version) + "; this pjrtkit reads version " +
                           std::to_string(kVersion));
  }
  uint32_t count = 0;
  for (int i = 0; i < 4; ++i) {
    const auto byte = static_cast<unsigned char>(bytes[kMagicSize + 1 + i]);
    count |= static_cast<uint32_t>(byte) << (8 * i);
  }
  if (count == 0 || count > (uint32_t{1} << 30)) {
    return InvalidArgument(std::string(what) + ": the serialized executable names a topology of " +
                           std::to_string(count) + " devices");
  }
  return SerializedExecutable(static_cast<int>(count), bytes.substr(kHeaderSize));
}

Status SerializedExecutable::CheckDeviceCount(int client_device_count, const char* what) const {
  if (device_count_ == 0 || device_count_ == client_device_count) return OkStatus();
  return InvalidArgument(std::string(what) + ": the executable was compiled for a pjrtkit topology "
                         "of " + std::to_string(device_count_) + " devices, but this client has " +
                         std::to_string(client_device_count) + " (create the client with "
                         "device_count=" + std::to_string(device_count_) + " to load it)");
}

}  // namespace xla_cpu
}  // namespace pjrtkit
