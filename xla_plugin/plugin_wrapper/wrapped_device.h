// WrappedDevice: one device of a device built on an inner plugin, wrapping one inner PJRT_Device.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_DEVICE_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_DEVICE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/device.h"
#include "xla_plugin/client/device_description.h"
#include "xla_plugin/client/memory.h"
#include "xla_plugin/plugin_wrapper/host_buffer_pool.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"
#include "xla_plugin/plugin_wrapper/memory_counter.h"

namespace pjrtkit {
namespace plugin_wrapper {

// A device with pjrtkit's description (made by the DevicePolicy); its id equals the inner device
// id. Owned by WrappedClient.
class WrappedDevice : public Device {
 public:
  // Device described by `description`, wrapping `inner` of the inner plugin `api` (which must
  // outlive the device), whose local hardware id is `local_hardware_id` (< 0: unknown, the id
  // stands in). With `inner_stats` memory statistics are the inner plugin's; without, pjrtkit's
  // own counts (see GetMemoryStats). A device of another process (`addressable` false) has no
  // memories and local hardware id -1.
  WrappedDevice(DeviceDescription description, PJRT_Device* inner, int local_hardware_id,
                const InnerApi* api, bool inner_stats, bool addressable = true);

  // Sets the device's memories (default first).
  void SetMemories(std::vector<Memory*> memories);

  // The inner device.
  NativeHandle native_handle() const override { return {api_->api(), inner_}; }
  const DeviceDescription& description() const override { return description_; }
  bool IsAddressable() const override { return addressable_; }
  int local_hardware_id() const override { return local_hardware_id_; }
  const std::vector<Memory*>& memories() const override { return memories_; }
  Memory* default_memory() const override { return memories_.empty() ? nullptr : memories_[0]; }
  // Sets what counted statistics report besides the counter: `bytes_limit` (the host's memory,
  // which every device may fill) and the client's host buffer pool (null when off), whose kept
  // blocks count in pool_bytes. Called once, at client creation.
  void SetHostMemory(int64_t bytes_limit, std::shared_ptr<const HostBufferPool> pool);
  // The inner plugin's PJRT_Device_MemoryStats when the device forwards them (XLA:GPU: its
  // allocator's numbers). Otherwise pjrtkit's own accounting (XLA:CPU has none) of live buffers
  // in the device's "device" memory: bytes_in_use, peak_bytes_in_use, num_allocs,
  // largest_alloc_size; bytes_limit and bytes_reservable_limit are the host's memory,
  // bytes_reserved / peak_bytes_reserved are 0 (nothing is set aside), largest_free_block_bytes is
  // what is left of bytes_limit, pool_bytes is bytes_in_use plus the client's pooled host blocks
  // kept for reuse (shared by the devices).
  StatusOr<MemoryStats> GetMemoryStats() const override;
  // The inner plugin's PJRT_Device_ClearMemoryStats when statistics are the inner plugin's;
  // otherwise the counted peak starts over from what is in use now.
  Status ClearMemoryStats() override;
  // The inner plugin's PJRT_Device_PoisonExecution (UNIMPLEMENTED naming the inner version when
  // it has none: XLA:CPU 0.81).
  StatusOr<bool> PoisonExecution(int launch_id, const Status& error) override;
  // The inner plugin's PJRT_Device_CreateAsyncTrackingEvent, destroyed with the returned object;
  // null from an inner plugin without the slot (XLA:CPU 0.81), which tracks nothing.
  StatusOr<std::unique_ptr<AsyncTrackingEvent>> CreateAsyncTrackingEvent(
      const std::string& description) override;

  // The inner device.
  PJRT_Device* inner() const { return inner_; }
  // The device's allocation counter (used only when statistics are counted).
  MemoryCounter* counter() { return &counter_; }

 private:
  // The inner plugin's statistics.
  StatusOr<MemoryStats> InnerMemoryStats() const;

  DeviceDescription description_;  // pjrtkit's description.
  PJRT_Device* inner_;             // Owned by the inner client.
  int local_hardware_id_;          // Inner local hardware id, or the id; -1: not addressable.
  bool addressable_;               // False for a device of another process.
  const InnerApi* api_;            // The inner plugin.
  bool inner_stats_;               // Memory statistics are the inner plugin's.
  std::vector<Memory*> memories_;  // Default memory first; owned by the client.
  MemoryCounter counter_;          // Memory statistics.
  int64_t bytes_limit_ = 0;        // Reported limit (0: not reported); see SetHostMemory.
  std::shared_ptr<const HostBufferPool> pool_;  // The client's pool; may be null.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_DEVICE_H_
