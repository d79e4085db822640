#include "xla_plugin/plugin_wrapper/inner_ffi.h"

// C++ standard library.
#include <algorithm>
#include <cctype>
#include <utility>

// pjrtkit.
#include "xla_plugin/plugin_wrapper/ffi_handler_shims.h"
#include "xla_plugin/plugin_wrapper/pjrtkit_platform.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// `s` in lower case (ASCII).
std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

StatusOr<InnerFfi> InnerFfi::Find(std::shared_ptr<const InnerApi> inner) {
  const PJRT_Extension_Base* ext = inner->api()->extension_start;
  for (; ext != nullptr; ext = ext->next) {
    if (ext->type != PJRT_Extension_Type_FFI) continue;
    if (ext->struct_size < abi::kFfiExtensionSize) {
      return Unimplemented("the " + inner->name() + " plugin at " + inner->path() +
                           " has an FFI extension of " + std::to_string(ext->struct_size) +
                           " bytes; pjrtkit needs PJRT C API 0.81's (" +
                           std::to_string(abi::kFfiExtensionSize) + " bytes)");
    }
    const auto* ffi = reinterpret_cast<const abi::FfiExtension*>(ext);
    return InnerFfi(std::move(inner), ffi);
  }
  return Unimplemented("the " + inner->name() + " plugin at " + inner->path() +
                       " has no PJRT FFI extension (PJRT C API " + inner->ApiVersionString() + ")");
}

StatusOr<std::string> InnerFfi::InnerPlatformName(const std::string& platform_name,
                                                  const FfiPlatform& platform) {
  const std::string lower = Lower(platform_name);
  if (lower == kPlatformName) return platform.inner_name;
  std::string accepted;
  for (const std::string& alias : platform.aliases) {
    if (lower == Lower(alias)) return platform.inner_name;
    accepted += (accepted.empty() ? "'" : " / '") + alias + "'";
  }
  return InvalidArgument("FFI registrations for platform '" + platform_name + "' cannot run on " +
                         platform.device_label + "; use '" + kPlatformName + "'" +
                         (accepted.empty() ? std::string() : " (or " + accepted + ")"));
}

Status InnerFfi::RegisterHandler(const FfiHandlerRegistration& registration,
                                 const FfiPlatform& ffi_platform) const {
  PJRTKIT_ASSIGN_OR_RETURN(std::string platform,
                           InnerPlatformName(registration.platform_name, ffi_platform));
  if (extension_->register_handler == nullptr) {
    return Unimplemented(inner_->name() + "'s FFI extension has no register_handler");
  }
  // Through a shim (ffi_handler_shims.h): it adapts the declared version and tells us what the
  // inner metadata query saw. Without a free slot the handler is refused: registered bare, a
  // newer-minor handler would be dropped by XLA without a word.
  void* shim =
      ffi_platform.version_shims ? FfiHandlerShims::Wrap(registration.handler) : nullptr;
  if (ffi_platform.version_shims && shim == nullptr) {
    return ResourceExhausted("cannot register FFI handler '" + registration.target_name +
                             "': all " + std::to_string(FfiHandlerShims::kCapacity) +
                             " FFI handler slots of this process are in use (one per distinct "
                             "handler function)");
  }
  if (shim != nullptr) FfiHandlerShims::ResetQuery(shim);
  abi::FfiRegisterHandlerArgs args{};
  args.struct_size = abi::kFfiRegisterHandlerArgsSize;
  args.target_name = registration.target_name.data();
  args.target_name_size = registration.target_name.size();
  args.handler = shim != nullptr ? shim : registration.handler;
  args.platform_name = platform.data();
  args.platform_name_size = platform.size();
  args.traits = registration.traits;
  PJRTKIT_RETURN_IF_ERROR(
      inner_->ToStatus(extension_->register_handler(&args), "PJRT_FFI_Register_Handler"));
  return shim != nullptr
             ? CheckAccepted(registration, FfiHandlerShims::LastQuery(shim), inner_->name())
             : OkStatus();
}

Status InnerFfi::CheckAccepted(const FfiHandlerRegistration& registration,
                               const FfiShimQuery& query, const std::string& inner_name) {
  // No query: the inner plugin already had this (target, handler) and did not ask again.
  if (!query.queried) return OkStatus();
  const std::string what = inner_name + " refused FFI handler '" + registration.target_name + "'";
  if (query.handler_failed) {
    return FailedPrecondition(what + ": the handler failed XLA's metadata query");
  }
  if (!query.downgraded && (query.handler_major != query.framework_major ||
                            query.handler_minor > query.framework_minor)) {
    return FailedPrecondition(
        what + ": it is built against XLA FFI API " + std::to_string(query.handler_major) + "." +
        std::to_string(query.handler_minor) + ", " + inner_name + " implements " +
        std::to_string(query.framework_major) + "." + std::to_string(query.framework_minor));
  }
  return OkStatus();
}

Status InnerFfi::AddUserData(PJRT_ExecuteContext* inner_context, int64_t type_id,
                             void* data) const {
  if (extension_->user_data_add == nullptr) {
    return Unimplemented(inner_->name() + "'s FFI extension has no user_data_add");
  }
  abi::FfiUserDataAddArgs args{};
  args.struct_size = abi::kFfiUserDataAddArgsSize;
  args.context = inner_context;
  args.user_data.type_id = type_id;
  args.user_data.data = data;
  return inner_->ToStatus(extension_->user_data_add(&args), "PJRT_FFI_UserData_Add");
}

StatusOr<std::shared_ptr<PJRT_ExecuteContext>> InnerFfi::ForwardContext(
    const ExecuteContext& context) const {
  PJRTKIT_INNER_ARGS(PJRT_ExecuteContext_Create, create);
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*inner_, PJRT_ExecuteContext_Create, &create));
  if (create.context == nullptr) {
    return Internal(inner_->name() + " PJRT_ExecuteContext_Create returned no context");
  }
  std::shared_ptr<const InnerApi> inner = inner_;
  std::shared_ptr<PJRT_ExecuteContext> forwarded(create.context, [inner](PJRT_ExecuteContext* c) {
    PJRTKIT_INNER_ARGS(PJRT_ExecuteContext_Destroy, destroy);
    destroy.context = c;
    PJRTKIT_INNER_CALL(*inner, PJRT_ExecuteContext_Destroy, &destroy);  // Nothing to do on error.
  });
  for (const auto& [type_id, data] : context.user_data()) {
    PJRTKIT_RETURN_IF_ERROR(AddUserData(forwarded.get(), type_id, data));
  }
  return forwarded;
}

Status InnerFfi::RegisterType(const FfiTypeRegistration& registration) const {
  if (registration.type_id == 0) {
    return InvalidArgument("FFI type '" + registration.type_name + "' has no type id");
  }
  if (extension_->type_register == nullptr) {
    return Unimplemented(inner_->name() + "'s FFI extension has no type_register");
  }
  abi::FfiTypeInfo info{registration.deleter, registration.serialize, registration.deserialize};
  abi::FfiTypeRegisterArgs args{};
  args.struct_size = abi::kFfiTypeRegisterArgsSize;
  args.type_name = registration.type_name.data();
  args.type_name_size = registration.type_name.size();
  args.type_id = registration.type_id;
  args.type_info = &info;
  PJRTKIT_RETURN_IF_ERROR(
      inner_->ToStatus(extension_->type_register(&args), "PJRT_FFI_Type_Register"));
  if (args.type_id != registration.type_id) {
    return Internal(inner_->name() + " registered FFI type '" + registration.type_name +
                    "' as id " +
                    std::to_string(args.type_id) + ", not " +
                    std::to_string(registration.type_id));
  }
  return OkStatus();
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
