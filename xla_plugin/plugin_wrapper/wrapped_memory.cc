#include "xla_plugin/plugin_wrapper/wrapped_memory.h"

#include <utility>

namespace pjrtkit {
namespace plugin_wrapper {

WrappedMemory::WrappedMemory(int id, std::string kind, int kind_id, PJRT_Memory* inner)
    : id_(id), kind_(std::move(kind)), kind_id_(kind_id), inner_(inner) {}

void WrappedMemory::SetDevices(std::vector<Device*> devices) {
  devices_ = std::move(devices);
  const std::string device =
      devices_.empty() ? std::string("none") : std::to_string(devices_[0]->description().id());
  debug_string_ = "PJRTKIT_" + device + ":" + kind_;
  to_string_ = "PjrtkitMemory(id=" + std::to_string(id_) + ", kind=" + kind_ +
               ", device=" + device + ")";
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
