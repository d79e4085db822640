// InnerFfi: the inner plugin's PJRT FFI extension, through which a device registers the FFI
// handlers and types that reach pjrtkit's own FFI extension (see xla_plugin/c_api/ffi_registry.h).
// The inner plugin (XLA:CPU, XLA:GPU) keeps them in its process-wide XLA FFI registry and runs
// them for custom calls of the programs it compiles.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_FFI_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_FFI_H_

// C++ standard library.
#include <memory>
#include <string>

// The FFI extension ABI and the pjrtkit client layer.
#include "xla_plugin/abi/ffi_extension.h"
#include "xla_plugin/client/execute_context.h"
#include "xla_plugin/client/ffi_registration.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/plugin_wrapper/device_policy.h"
#include "xla_plugin/plugin_wrapper/ffi_handler_shims.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"

namespace pjrtkit {
namespace plugin_wrapper {

class InnerFfi {
 public:
  // The FFI extension of `inner`: UNIMPLEMENTED when its extension chain has none, or one smaller
  // than PJRT C API 0.81's (abi::kFfiExtensionSize).
  static StatusOr<InnerFfi> Find(std::shared_ptr<const InnerApi> inner);

  // The inner platform for a registration's `platform_name`: pjrtkit's platform name and
  // `platform`'s aliases (any case) are all `platform.inner_name` (XLA:CPU's "Host" for "cpu" and
  // "host"); anything else is INVALID_ARGUMENT naming `platform.device_label`.
  static StatusOr<std::string> InnerPlatformName(const std::string& platform_name,
                                                 const FfiPlatform& platform);

  // Registers the typed FFI handler with the inner plugin for `platform` (see InnerPlatformName),
  // through a version shim (ffi_handler_shims.h). FAILED_PRECONDITION when the inner metadata
  // query shows it refuses the handler (an incompatible XLA FFI API version, or a handler that
  // fails the query); XLA's own PJRT FFI extension would drop it silently. RESOURCE_EXHAUSTED
  // when the platform uses shims and all FfiHandlerShims::kCapacity slots hold other handlers.
  Status RegisterHandler(const FfiHandlerRegistration& registration,
                         const FfiPlatform& platform) const;

  // Adds user data to an inner execute context (the inner PJRT_FFI_UserData_Add); the data is
  // borrowed. For passing a pjrtkit::ExecuteContext on to the inner plugin in Execute.
  Status AddUserData(PJRT_ExecuteContext* inner_context, int64_t type_id, void* data) const;

  // A new inner execute context (the inner PJRT_ExecuteContext_Create) holding every entry of
  // `context` (borrowed data, as there), destroyed when the last holder lets go.
  StatusOr<std::shared_ptr<PJRT_ExecuteContext>> ForwardContext(
      const ExecuteContext& context) const;

  // OK unless `query` (what the shim saw when the inner plugin `inner_name` registered
  // `registration`) shows a refusal.
  static Status CheckAccepted(const FfiHandlerRegistration& registration,
                              const FfiShimQuery& query, const std::string& inner_name);

  // Registers the FFI type with the inner plugin under `registration.type_id` (nonzero).
  Status RegisterType(const FfiTypeRegistration& registration) const;

 private:
  InnerFfi(std::shared_ptr<const InnerApi> inner, const abi::FfiExtension* extension)
      : inner_(std::move(inner)), extension_(extension) {}

  std::shared_ptr<const InnerApi> inner_;  // Keeps the table (and the extension) alive.
  const abi::FfiExtension* extension_;     // In the inner plugin's extension chain.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_FFI_H_
