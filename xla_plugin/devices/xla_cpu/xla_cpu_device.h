// XlaCpuDevice: one device of the reference device, wrapping one inner PJRT_Device.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_DEVICE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_DEVICE_H_

#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/device.h"
#include "xla_plugin/client/device_description.h"
#include "xla_plugin/client/memory.h"
#include "xla_plugin/devices/xla_cpu/memory_counter.h"

namespace pjrtkit {
namespace xla_cpu {

// A device with pjrtkit's description (see device_model.h); its id equals the inner device id.
// Owned by XlaCpuClient.
class XlaCpuDevice : public Device {
 public:
  // Device described by `description`, wrapping `inner`.
  XlaCpuDevice(DeviceDescription description, PJRT_Device* inner);

  // Sets the device's memories (default first).
  void SetMemories(std::vector<Memory*> memories);

  const DeviceDescription& description() const override { return description_; }
  bool IsAddressable() const override { return true; }
  int local_hardware_id() const override { return description_.id(); }
  const std::vector<Memory*>& memories() const override { return memories_; }
  Memory* default_memory() const override { return memories_.empty() ? nullptr : memories_[0]; }
  // Bytes held by live buffers in the device's "device" memory (pjrtkit's own accounting).
  StatusOr<MemoryStats> GetMemoryStats() const override { return counter_.Snapshot(); }

  // The inner device.
  PJRT_Device* inner() const { return inner_; }
  // The device's allocation counter.
  MemoryCounter* counter() { return &counter_; }

 private:
  DeviceDescription description_;  // pjrtkit's description.
  PJRT_Device* inner_;             // Owned by the inner client.
  std::vector<Memory*> memories_;  // Default memory first; owned by the client.
  MemoryCounter counter_;          // Memory statistics.
};

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_DEVICE_H_
