// Memory: one memory space (device memory, pinned host memory, ...) that devices can address.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_MEMORY_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_MEMORY_H_

#include <string>
#include <vector>

#include "xla_plugin/client/native_handle.h"

namespace pjrtkit {

class Device;

// A memory space. Owned by its Client; lives as long as the Client.
class Memory {
 public:
  virtual ~Memory() = default;

  // The other PJRT plugin's object behind this one (native_handle.h); default: none.
  virtual NativeHandle native_handle() const { return {}; }
  // Id, unique within the client.
  virtual int id() const = 0;
  // Kind as JAX names it: "device", "pinned_host" or "unpinned_host".
  virtual const std::string& kind() const = 0;
  // Small integer identifying the kind, equal for memories of one kind within the platform.
  virtual int kind_id() const = 0;
  // Short name, e.g. "PJRTKIT_0:device".
  virtual const std::string& debug_string() const = 0;
  // Verbose description.
  virtual const std::string& to_string() const = 0;
  // The devices that can address this memory.
  virtual const std::vector<Device*>& addressable_by_devices() const = 0;
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_MEMORY_H_
