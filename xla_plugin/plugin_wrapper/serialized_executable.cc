#include "xla_plugin/plugin_wrapper/serialized_executable.h"

#include <cstdint>

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// FNV-1a, 64 bits: enough to tell corrupted bytes from what pjrtkit wrote.
uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// Appends `value` as `bytes` little-endian bytes.
void AppendLittleEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// Reads `bytes` little-endian bytes of `data` from `pos`.
uint64_t ReadLittleEndian(std::string_view data, size_t pos, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(data[pos + i])) << (8 * i);
  }
  return value;
}

}  // namespace

std::string SerializedExecutable::Magic(const std::string& backend) {
  std::string magic = std::string(1, '\0') + "pjrtkit-" + backend + "-executable" + '\0';
  for (char& c : magic) {
    if (c == '_') c = '-';
  }
  return magic;
}

size_t SerializedExecutable::HeaderSize(const std::string& backend) {
  return Magic(backend).size() + 1 + 4 + 8;
}

std::string SerializedExecutable::Encode(const std::string& backend, int device_count,
                                         std::string_view inner) {
  const std::string magic = Magic(backend);
  std::string out;
  out.reserve(HeaderSize(backend) + inner.size());
  out.append(magic);
  out.push_back(static_cast<char>(kVersion));
  AppendLittleEndian(static_cast<uint32_t>(device_count), 4, &out);
  AppendLittleEndian(Fnv1a64(inner), 8, &out);
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
  const size_t header_size = HeaderSize(backend);
  // The version byte is read before the size check: a version-1 header (no checksum) is shorter.
  if (bytes.size() <= magic.size() || bytes.substr(0, magic.size()) != magic) {
    return InvalidArgument(std::string(what) + ": the serialized executable (" +
                           std::to_string(bytes.size()) + " bytes) is neither a pjrtkit " +
                           backend + " executable nor " + inner_name + "'s own");
  }
  const auto version = static_cast<unsigned char>(bytes[magic.size()]);
  if (version != kVersion) {
    return InvalidArgument(std::string(what) + ": the serialized executable has format version " +
                           std::to_string(version) + "; this pjrtkit reads version " +
                           std::to_string(kVersion) + " (compile it again)");
  }
  if (bytes.size() < header_size) {
    return InvalidArgument(std::string(what) + ": the serialized executable (" +
                           std::to_string(bytes.size()) + " bytes) is cut short inside its " +
                           std::to_string(header_size) + "-byte header");
  }
  const uint32_t count = static_cast<uint32_t>(ReadLittleEndian(bytes, magic.size() + 1, 4));
  if (count == 0 || count > (uint32_t{1} << 30)) {
    return InvalidArgument(std::string(what) + ": the serialized executable names a topology of " +
                           std::to_string(count) + " devices");
  }
  const std::string_view inner = bytes.substr(header_size);
  if (ReadLittleEndian(bytes, magic.size() + 5, 8) != Fnv1a64(inner)) {
    return InvalidArgument(std::string(what) + ": the serialized executable is corrupted (its " +
                           std::to_string(inner.size()) + " bytes after the header do not match "
                           "the header's checksum)");
  }
  return SerializedExecutable(static_cast<int>(count), inner);
}

Status SerializedExecutable::CheckDeviceCount(int client_device_count, const char* what,
                                              const std::string& remedy) const {
  if (device_count_ == 0 || device_count_ == client_device_count) return OkStatus();
  return InvalidArgument(std::string(what) + ": the executable was compiled for a pjrtkit topology "
                         "of " + std::to_string(device_count_) + " devices, but this client has " +
                         std::to_string(client_device_count) + " (" + remedy + " to load it)");
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
