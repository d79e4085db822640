#include "xla_plugin/devices/inner/serialized_executable.h"

#include <cstdint>

namespace pjrtkit {
namespace inner {

std::string SerializedExecutable::Magic(const std::string& backend) {
  std::string magic = std::string(1, '\0') + "pjrtkit-" + backend + "-executable" + '\0';
  for (char& c : magic) {
    if (c == '_') c = '-';
  }
  return magic;
}

size_t SerializedExecutable::HeaderSize(const std::string& backend) {
  return Magic(backend).size() + 1 + 4;
}

std::string SerializedExecutable::Encode(const std::string& backend, int device_count,
                                         std::string_view inner) {
  const std::string magic = Magic(backend);
  std::string out;
  out.reserve(magic.size() + 5 + inner.size());
  out.append(magic);
  out.push_back(static_cast<char>(kVersion));
  const uint32_t count = static_cast<uint32_t>(device_count);
  for (int shift = 0; shift < 32; shift += 8) {
    out.push_back(static_cast<char>((count >> shift) & 0xff));
  }
  out.append(inner.data(), inner.size());
  return out;
}

StatusOr<SerializedExecutable> SerializedExecutable::Decode(std::string_view bytes,
                                                            const std::string& backend,
                                                            const std::string& inner_name,
                                                            const char* what) {
  // The inner plugin's own bytes: a protobuf never starts with a zero byte.
  if (bytes.empty() || bytes[0] != '\0') return SerializedExecutable(0, bytes);
  const std::string magic = Magic(backend);
  const size_t header_size = magic.size() + 1 + 4;
  if (bytes.size() < header_size || bytes.substr(0, magic.size()) != magic) {
    return InvalidArgument(std::string(what) + ": the serialized executable (" +
                           std::to_string(bytes.size()) + " bytes) is neither a pjrtkit " +
                           backend + " executable nor " + inner_name + "'s own");
  }
  const auto version = static_cast<unsigned char>(bytes[magic.size()]);
  if (version != kVersion) {
    return InvalidArgument(std::string(what) + ": the serialized executable has format version " +
                           std::to_string(version) + "; this pjrtkit reads version " +
                           std::to_string(kVersion));
  }
  uint32_t count = 0;
  for (int i = 0; i < 4; ++i) {
    const auto byte = static_cast<unsigned char>(bytes[magic.size() + 1 + i]);
    count |= static_cast<uint32_t>(byte) << (8 * i);
  }
  if (count == 0 || count > (uint32_t{1} << 30)) {
    return InvalidArgument(std::string(what) + ": the serialized executable names a topology of " +
                           std::to_string(count) + " devices");
  }
  return SerializedExecutable(static_cast<int>(count), bytes.substr(header_size));
}

Status SerializedExecutable::CheckDeviceCount(int client_device_count, const char* what) const {
  if (device_count_ == 0 || device_count_ == client_device_count) return OkStatus();
  return InvalidArgument(std::string(what) + ": the executable was compiled for a pjrtkit topology "
                         "of " + std::to_string(device_count_) + " devices, but this client has " +
                         std::to_string(client_device_count) + " (create the client with "
                         "device_count=" + std::to_string(device_count_) + " to load it)");
}

}  // namespace inner
}  // namespace pjrtkit
