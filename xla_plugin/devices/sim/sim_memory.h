// SimMemory: the one memory space of a sim device (kind "device").
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_MEMORY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_MEMORY_H_

#include <string>
#include <vector>

#include "xla_plugin/client/device.h"
#include "xla_plugin/client/memory.h"

namespace pjrtkit {
namespace sim {

class SimDevice;

// The memory of `device` as PJRT sees it: id = the device's id, kind "device" (kind id 0),
// debug string "PJRTKIT_SIM_<id>:device". Its bytes are the device's DeviceMemory. Owned by
// SimClient.
class SimMemory : public Memory {
 public:
  // The memory of `device` (not null; outlives it).
  explicit SimMemory(SimDevice* device);

  // The device whose memory this is.
  SimDevice* sim_device() const { return device_; }

  // Memory:
  int id() const override { return id_; }
  const std::string& kind() const override { return kind_; }
  int kind_id() const override;
  const std::string& debug_string() const override { return debug_string_; }
  const std::string& to_string() const override { return to_string_; }
  const std::vector<Device*>& addressable_by_devices() const override { return devices_; }

 private:
  SimDevice* device_;             // The device.
  int id_;                        // The device's id.
  std::string kind_;              // "device".
  std::string debug_string_;      // "PJRTKIT_SIM_<id>:device".
  std::string to_string_;         // "SimMemory(id=<id>, kind=device, device=PJRTKIT_SIM_<id>)".
  std::vector<Device*> devices_;  // {device}.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_MEMORY_H_
