// WrappedMemory: a memory space of the reference device, wrapping one inner PJRT_Memory.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_MEMORY_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_MEMORY_H_

#include <string>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/device.h"
#include "xla_plugin/client/memory.h"

namespace pjrtkit {
namespace plugin_wrapper {

// A memory with pjrtkit's id and strings and the inner kind ("device", "pinned_host",
// "unpinned_host": JAX relies on those names). Owned by WrappedClient.
class WrappedMemory : public Memory {
 public:
  // Memory `id` of `kind` (with pjrtkit's `kind_id`) wrapping `inner`.
  WrappedMemory(int id, std::string kind, int kind_id, PJRT_Memory* inner);

  // Sets the devices that address this memory and derives the strings from the first one:
  // debug_string "PJRTKIT_<device>:<kind>", to_string
  // "PjrtkitMemory(id=<id>, kind=<kind>, device=<device>)".
  void SetDevices(std::vector<Device*> devices);

  int id() const override { return id_; }
  const std::string& kind() const override { return kind_; }
  int kind_id() const override { return kind_id_; }
  const std::string& debug_string() const override { return debug_string_; }
  const std::string& to_string() const override { return to_string_; }
  const std::vector<Device*>& addressable_by_devices() const override { return devices_; }

  // The inner memory.
  PJRT_Memory* inner() const { return inner_; }
  // True for the "device" kind, the one whose buffers memory statistics count.
  bool is_device_kind() const { return kind_ == "device"; }

 private:
  int id_;                       // pjrtkit id, unique in the client.
  std::string kind_;             // Inner kind name.
  int kind_id_;                  // pjrtkit kind id (0 device, 1 pinned_host, 2 unpinned_host).
  PJRT_Memory* inner_;           // Owned by the inner client.
  std::vector<Device*> devices_; // Devices that address this memory.
  std::string debug_string_;     // Short name.
  std::string to_string_;        // Long name.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_MEMORY_H_
