#include "xla_plugin/devices/xla_cpu/xla_cpu_device.h"

#include <utility>

namespace pjrtkit {
namespace xla_cpu {

XlaCpuDevice::XlaCpuDevice(DeviceDescription description, PJRT_Device* inner)
    : description_(std::move(description)), inner_(inner) {}

void XlaCpuDevice::SetMemories(std::vector<Memory*> memories) { memories_ = std::move(memories); }

}  // namespace xla_cpu
}  // namespace pjrtkit
