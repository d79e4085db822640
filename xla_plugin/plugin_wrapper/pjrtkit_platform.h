// What every device built on the shared wrapper has in common: the platform name JAX sees and
// pjrtkit's version string.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PJRTKIT_PLATFORM_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PJRTKIT_PLATFORM_H_

#include <string>

namespace pjrtkit {
namespace plugin_wrapper {

// Platform name JAX sees, whatever the device.
inline constexpr char kPlatformName[] = "pjrtkit";
// pjrtkit's version.
inline constexpr char kPjrtkitVersion[] = "0.1.0";

// "pjrtkit 0.1.0 (<backend>) <inner_version>", or "pjrtkit 0.1.0 (<backend>)" when
// `inner_version` is empty (a topology made without the inner plugin). The inner plugin's
// version comes last, as it is: code that reads a CUDA version as the last word of
// platform_version ("... 13000", as JAX's tests do) reads it from pjrtkit's too.
std::string PlatformVersion(const std::string& backend, const std::string& inner_version);

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PJRTKIT_PLATFORM_H_
