// SimFfiHandlers: the typed XLA FFI handlers registered for the sim device's platform, per client
// (what PJRT_FFI_Register_Handler and jax.ffi.register_ffi_target reach through the C-API layer's
// FfiRegistry). Programs' custom calls run them (sim_ffi_calls.h).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_FFI_HANDLERS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_FFI_HANDLERS_H_

#include <map>
#include <mutex>
#include <string>

#include "xla_plugin/client/ffi_registration.h"
#include "xla_plugin/client/status.h"

namespace pjrtkit {
namespace sim {

// Thread-safe.
class SimFfiHandlers {
 public:
  // Keeps `registration`'s execute handler for its target. The platform must be the client's
  // (`platform`, compared ignoring case; JAX passes the name it knows the backend by) or "Host"
  // (XLA's name for host handlers), else INVALID_ARGUMENT naming both. The same handler for the
  // same target again is accepted; another one is ALREADY_EXISTS.
  Status Register(const FfiHandlerRegistration& registration, const std::string& platform);
  // The handler (XLA_FFI_Handler*) of `target`, or nullptr.
  void* Find(const std::string& target) const;

 private:
  mutable std::mutex mu_;                 // Guards handlers_.
  std::map<std::string, void*> handlers_;  // By target name.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_FFI_HANDLERS_H_
