#include "xla_plugin/devices/sim/sim_memory.h"

#include "xla_plugin/devices/sim/sim_device.h"
#include "xla_plugin/devices/sim/sim_platform.h"

namespace pjrtkit {
namespace sim {

SimMemory::SimMemory(SimDevice* device)
    : device_(device),
      id_(device->id()),
      kind_(kMemoryKind),
      debug_string_(device->description().debug_string() + ":" + kMemoryKind),
      to_string_("SimMemory(id=" + std::to_string(id_) + ", kind=" + kMemoryKind +
                 ", device=" + device->description().debug_string() + ")"),
      devices_({device}) {}

int SimMemory::kind_id() const { return kMemoryKindId; }

}  // namespace sim
}  // namespace pjrtkit
