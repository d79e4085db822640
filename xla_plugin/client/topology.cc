#include "xla_plugin/client/topology.h"

#include <sstream>
#include <utility>

namespace pjrtkit {

Topology::Topology(std::string platform_name, std::string platform_version,
                   std::vector<DeviceDescription> devices, AttributeMap attributes)
    : platform_name_(std::move(platform_name)),
      platform_version_(std::move(platform_version)),
      devices_(std::move(devices)),
      attributes_(std::move(attributes)) {}

StatusOr<std::string> Topology::Serialize() const {
  // One line per fact: "platform <name>", "version <v>", then "device <id> <process> <kind>".
  std::ostringstream out;
  out << "pjrtkit-topology 1\n";
  out << "platform " << platform_name_ << "\n";
  out << "version " << platform_version_ << "\n";
  for (const DeviceDescription& d : devices_) {
    out << "device " << d.id() << " " << d.process_index() << " " << d.kind() << "\n";
  }
  return out.str();
}

}  // namespace pjrtkit
