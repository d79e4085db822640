// DeviceDescription: what is known of a device without a client (ids, kind, strings, attributes).
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_DEVICE_DESCRIPTION_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_DEVICE_DESCRIPTION_H_

#include <cstdint>
#include <string>

#include "xla_plugin/client/types.h"

namespace pjrtkit {

// Immutable description of one device, shared by a Client's Device and a Topology.
class DeviceDescription {
 public:
  // Describes device `id` of process `process_index`, of `kind`, with `attributes`.
  // `debug_string` and `to_string` are what PJRT_DeviceDescription_DebugString / ToString return.
  DeviceDescription(int id, int process_index, std::string kind, std::string debug_string,
                    std::string to_string, AttributeMap attributes);

  // Globally unique device id.
  int id() const { return id_; }
  // Index of the process that owns the device.
  int process_index() const { return process_index_; }
  // Device kind, identical for devices of one kind ("pjrtkit_cpu", ...).
  const std::string& kind() const { return kind_; }
  // Short human-readable name, e.g. "PJRTKIT_0".
  const std::string& debug_string() const { return debug_string_; }
  // Verbose description, e.g. "PjrtkitDevice(id=0, kind=pjrtkit_cpu, ...)".
  const std::string& to_string() const { return to_string_; }
  // Vendor attributes.
  const AttributeMap& attributes() const { return attributes_; }

 private:
  int id_;                    // Global id.
  int process_index_;         // Owning process.
  std::string kind_;          // Device kind.
  std::string debug_string_;  // Short name.
  std::string to_string_;     // Long name.
  AttributeMap attributes_;   // Vendor attributes.
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_DEVICE_DESCRIPTION_H_
