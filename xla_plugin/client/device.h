// Device: one device of a Client.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_DEVICE_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "xla_plugin/client/async_tracking_event.h"
#include "xla_plugin/client/device_description.h"
#include "xla_plugin/client/native_handle.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

class Memory;

// A device. Owned by its Client; lives as long as the Client.
class Device {
 public:
  virtual ~Device() = default;

  // The other PJRT plugin's object behind this one (native_handle.h); default: none.
  virtual NativeHandle native_handle() const { return {}; }
  // The device's description (id, kind, attributes, ...).
  virtual const DeviceDescription& description() const = 0;
  // True when this process can put buffers on and run programs on the device.
  virtual bool IsAddressable() const = 0;
  // Hardware id local to this process; -1 when not addressable.
  virtual int local_hardware_id() const = 0;
  // The memories the device can address, default first.
  virtual const std::vector<Memory*>& memories() const = 0;
  // The memory buffers go to when no memory is named.
  virtual Memory* default_memory() const = 0;
  // Memory statistics; UNIMPLEMENTED unless the device tracks them.
  virtual StatusOr<MemoryStats> GetMemoryStats() const {
    return Unimplemented("Device::GetMemoryStats is not implemented by this device");
  }
  // Resets what GetMemoryStats reports as peaks to the current figures
  // (PJRT_Device_ClearMemoryStats); UNIMPLEMENTED unless the device tracks them.
  virtual Status ClearMemoryStats() {
    return Unimplemented("Device::ClearMemoryStats is not implemented by this device");
  }
  // The device's attributes now (PJRT_Device_GetAttributes). Default: its description's.
  virtual StatusOr<AttributeMap> GetAttributes() const { return description().attributes(); }
  // Makes the earliest unfinished execution launched with `launch_id` on this device fail with
  // `error` (non-OK; its outputs become errors): PJRT_Device_PoisonExecution. Returns whether
  // such an execution was found. UNIMPLEMENTED unless the device can.
  virtual StatusOr<bool> PoisonExecution(int launch_id, const Status& error) {
    return Unimplemented("Device::PoisonExecution is not implemented by this device");
  }
  // A marker of asynchronous work named `description`, alive until destroyed
  // (PJRT_Device_CreateAsyncTrackingEvent); null when the device tracks nothing (the default:
  // jaxlib aborts on an error here, and a null event is what it expects of such a device).
  virtual StatusOr<std::unique_ptr<AsyncTrackingEvent>> CreateAsyncTrackingEvent(
      const std::string& description) {
    return std::unique_ptr<AsyncTrackingEvent>();
  }
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_DEVICE_H_
