#include "xla_plugin/devices/sim/sim_ffi_handlers.h"

#include <cctype>

namespace pjrtkit {
namespace sim {
namespace {

std::string Lower(const std::string& text) {
  std::string out = text;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Status SimFfiHandlers::Register(const FfiHandlerRegistration& registration,
                                const std::string& platform) {
  if (registration.handler == nullptr) {
    return InvalidArgument("FFI handler for " + registration.target_name + " is null");
  }
  if (registration.target_name.empty()) {
    return InvalidArgument("an FFI handler needs a target name");
  }
  const std::string given = Lower(registration.platform_name);
  if (given != Lower(platform) && given != "host") {
    return InvalidArgument("FFI handler for " + registration.target_name + ": platform '" +
                           registration.platform_name + "' is not this device's; accepted: '" +
                           platform + "' or 'Host'");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = handlers_.emplace(registration.target_name, registration.handler);
  if (!inserted && it->second != registration.handler) {
    return Status(StatusCode::kAlreadyExists,
                  "a different FFI handler is already registered for " +
                         registration.target_name + " on platform " + platform);
  }
  return OkStatus();
}

void* SimFfiHandlers::Find(const std::string& target) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = handlers_.find(target);
  return it == handlers_.end() ? nullptr : it->second;
}

}  // namespace sim
}  // namespace pjrtkit
