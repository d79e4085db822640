// SerializedExecutable: the bytes Executable::Serialize writes for the reference device, and
// their check before DeserializeAndLoad.
//
// Format: a header, then XLA:CPU's own serialized executable:
//   the 28 bytes "\0pjrtkit-xla-cpu-executable\0" (kMagic),
//   1 byte format version (1),
//   4 bytes little-endian: the device count of the topology it was compiled for,
//   XLA:CPU's bytes (PJRT_Executable_Serialize of the inner executable).
// The device count is all a reference-device topology is made of, so it is what a client checks
// before it loads the bytes. A serialized protobuf (what XLA:CPU writes) never starts with a zero
// byte (field number 0 is invalid), so bytes without the header are told apart: XLA:CPU's own
// bytes, e.g. written to JAX's persistent compilation cache by a pjrtkit that had no header, are
// loaded as they are, without the check.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_SERIALIZED_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_SERIALIZED_EXECUTABLE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace xla_cpu {

// A parsed view of serialized bytes; points into the string it was parsed from.
class SerializedExecutable {
 public:
  // The header's first bytes.
  static constexpr char kMagic[] = "\0pjrtkit-xla-cpu-executable";  // + the terminating '\0'.
  static constexpr size_t kMagicSize = sizeof(kMagic);               // 28, both zeros included.
  // The format version this build writes and reads.
  static constexpr unsigned char kVersion = 1;
  // Size of the whole header.
  static constexpr size_t kHeaderSize = kMagicSize + 1 + 4;

  // The header for a topology of `device_count` devices followed by XLA:CPU's `inner` bytes.
  static std::string Encode(int device_count, std::string_view inner);
  // Parses `bytes` (which must outlive the result). Bytes without the header parse as XLA:CPU's
  // own (device_count() 0). INVALID_ARGUMENT, naming `what`, for a header that is cut short, of
  // another format version, or with a device count of 0.
  static StatusOr<SerializedExecutable> Decode(std::string_view bytes, const char* what);

  // The device count of the topology it was compiled for; 0 when the bytes had no header.
  int device_count() const { return device_count_; }
  // XLA:CPU's serialized executable.
  std::string_view inner() const { return inner_; }
  // OK when a client of `client_device_count` devices may load it: the counts are equal or the
  // bytes had no header. INVALID_ARGUMENT naming `what` and both counts otherwise.
  Status CheckDeviceCount(int client_device_count, const char* what) const;

 private:
  SerializedExecutable(int device_count, std::string_view inner)
      : device_count_(device_count), inner_(inner) {}

  int device_count_;        // 0: no header.
  std::string_view inner_;  // XLA:CPU's bytes.
};

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_SERIALIZED_EXECUTABLE_H_
