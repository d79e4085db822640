#include "xla_plugin/plugin_wrapper/pjrtkit_platform.h"

namespace pjrtkit {
namespace plugin_wrapper {

std::string PlatformVersion(const std::string& backend, const std::string& inner_version) {
  std::string out = std::string(kPlatformName) + " " + kPjrtkitVersion + " (" + backend + ")";
  if (!inner_version.empty()) out += " " + inner_version;
  return out;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
