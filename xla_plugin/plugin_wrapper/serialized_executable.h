// SerializedExecutable: the bytes Executable::Serialize writes for a device built on an inner
// plugin, and their check before DeserializeAndLoad.
//
// Format (version 2): a header, then the inner plugin's own serialized executable:
//   the magic "\0pjrtkit-<backend with '-' for '_'>-executable\0" (Magic(); 28 bytes
//   "\0pjrtkit-xla-cpu-executable\0" for the xla_cpu device),
//   1 byte format version (2),
//   4 bytes little-endian: the device count of the topology it was compiled for,
//   8 bytes little-endian: FNV-1a (64 bits) of the inner bytes,
//   the inner bytes (PJRT_Executable_Serialize of the inner executable).
// The checksum is there because XLA:CPU does not survive corrupted bytes: it aborts the process
// on some (an LLVM CHECK while it links the object code; found by tests/fuzz executable_fuzzer),
// so bytes pjrtkit wrote are checked before XLA:CPU sees them. It guards against corruption (a
// damaged cache file), not against bytes crafted to match it: serialized executables are code,
// to be loaded only from a trusted source, as with XLA itself.
// The device count is all an xla_cpu topology is made of, so it is what a client checks before it
// loads the bytes; the magic keeps one device's bytes away from another device's client. A
// serialized protobuf (what XLA:CPU writes) never starts with a zero byte (field number 0 is
// invalid), so bytes without the header are told apart: XLA:CPU's own bytes, e.g. written to JAX's
// persistent compilation cache by a pjrtkit that had no header, are loaded as they are, without
// the check.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_SERIALIZED_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_SERIALIZED_EXECUTABLE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace plugin_wrapper {

// A parsed view of serialized bytes; points into the string it was parsed from.
class SerializedExecutable {
 public:
  // The format version this build writes and reads.
  static constexpr unsigned char kVersion = 2;

  // The header's first bytes for `backend` ("xla_cpu"), both zeros included.
  static std::string Magic(const std::string& backend);
  // Size of the whole header for `backend` (41 for "xla_cpu").
  static size_t HeaderSize(const std::string& backend);

  // The header of `backend` for a topology of `device_count` devices followed by the inner
  // plugin's `inner` bytes.
  static std::string Encode(const std::string& backend, int device_count, std::string_view inner);
  // Parses `bytes` (which must outlive the result) for a client of `backend` whose inner plugin
  // is `inner_name` ("XLA:CPU"). Bytes without the header parse as the inner plugin's own
  // (device_count() 0). INVALID_ARGUMENT, naming `what`, for another backend's header, a header
  // that is cut short, of another format version (1 had no checksum), with a device count of 0,
  // or inner bytes that do not match the checksum.
  static StatusOr<SerializedExecutable> Decode(std::string_view bytes, const std::string& backend,
                                               const std::string& inner_name, const char* what);

  // The device count of the topology it was compiled for; 0 when the bytes had no header.
  int device_count() const { return device_count_; }
  // The inner plugin's serialized executable.
  std::string_view inner() const { return inner_; }
  // OK when a client of `client_device_count` devices may load it: the counts are equal or the
  // bytes had no header. INVALID_ARGUMENT naming `what`, both counts and `remedy` (how to make a
  // client of the executable's count: DevicePolicy::DeviceCountRemedy) otherwise.
  Status CheckDeviceCount(int client_device_count, const char* what,
                          const std::string& remedy) const;

 private:
  SerializedExecutable(int device_count, std::string_view inner)
      : device_count_(device_count), inner_(inner) {}

  int device_count_;        // 0: no header.
  std::string_view inner_;  // The inner plugin's bytes.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_SERIALIZED_EXECUTABLE_H_
