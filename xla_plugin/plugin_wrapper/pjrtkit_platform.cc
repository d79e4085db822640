#include "xla_plugin/devices/inner/pjrtkit_platform.h"

namespace pjrtkit {
namespace inner {

std::string PlatformVersion(const std::string& backend, const std::string& inner_version) {
  std::string out = std::string(kPlatformName) + " " + kPjrtkitVersion + " (" + backend + ")";
  if (!inner_version.empty()) out += " " + inner_version;
  return out;
}

}  // namespace inner
}  // namespace pjrtkit
