#include "xla_plugin/devices/xla_cpu/device_model.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace pjrtkit {
namespace xla_cpu {

std::string PlatformVersion(const std::string& inner_version) {
  return plugin_wrapper::PlatformVersion(kBackendName, inner_version);
}

DeviceDescription MakeDeviceDescription(int id, int process_index) {
  const std::string ids = std::to_string(id);
  AttributeMap attributes;
  attributes["backend"] = std::string(kBackendName);
  attributes["core_count"] = int64_t{1};
  return DeviceDescription(id, process_index, kDeviceKind, "PJRTKIT_" + ids,
                           "PjrtkitDevice(id=" + ids + ", process_index=" +
                               std::to_string(process_index) + ", kind=" + kDeviceKind + ")",
                           std::move(attributes));
}

}  // namespace xla_cpu
}  // namespace pjrtkit
