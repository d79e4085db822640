#include "xla_plugin/c_api/executable_binding.h"

// C++ standard library.
#include <cstdint>
#include <map>
#include <string>

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/host_buffer_pool_extension.h"

namespace pjrtkit {
namespace capi {
namespace {

// The calling thread's binding.
struct ThreadBinding {
  int64_t type_id = 0;   // 0: none.
  void* data = nullptr;  // The entry's data.
  size_t bound = 0;      // Executables loaded under it.
};

thread_local ThreadBinding current_binding;

}  // namespace

PJRT_Error* BindExecutables(abi::BindExecutablesArgs* args) {
  return Guard("PJRT_Pjrtkit_BindExecutables", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, abi::kBindExecutablesArgsSize));
    if (args->type_id < 0) {
      return InvalidArgument(std::string(fn) + ": args->type_id is " +
                             std::to_string(args->type_id) + " (not an FFI type id)");
    }
    args->previous_type_id = current_binding.type_id;
    args->previous_data = current_binding.data;
    args->previous_bound = current_binding.bound;
    current_binding = ThreadBinding{args->type_id, args->type_id == 0 ? nullptr : args->data, 0};
    return OkStatus();
  });
}

PJRT_Extension_Base* PjrtkitExtensionBase(PJRT_Extension_Base* next) {
  static abi::PjrtkitExtension extension = [next] {
    abi::PjrtkitExtension e{};
    e.base.struct_size = abi::kPjrtkitExtensionSize;
    e.base.type = static_cast<PJRT_Extension_Type>(abi::kPjrtkitExtensionType);
    e.base.next = next;
    e.bind_executables = &BindExecutables;
    e.host_buffer_pool = &HostBufferPool;
    return e;
  }();
  return &extension.base;
}

void ApplyThreadBinding(PJRT_LoadedExecutable* loaded) {
  if (current_binding.type_id == 0) return;
  auto context = std::make_unique<ExecuteContext>();
  // A new context has no entries, so the add cannot fail.
  (void)context->AddUserData(current_binding.type_id, current_binding.data);
  loaded->bound_context = std::move(context);
  ++current_binding.bound;
}

StatusOr<const ExecuteContext*> BoundContext(const char* fn, const PJRT_LoadedExecutable& loaded,
                                             const ExecuteContext* caller,
                                             std::unique_ptr<ExecuteContext>* merged) {
  if (caller == nullptr || caller->empty()) return loaded.bound_context.get();
  *merged = std::make_unique<ExecuteContext>();
  for (const auto& [type_id, data] : loaded.bound_context->user_data()) {
    (void)(*merged)->AddUserData(type_id, data);  // Cannot fail: the context was empty.
  }
  for (const auto& [type_id, data] : caller->user_data()) {
    Status added = (*merged)->AddUserData(type_id, data);
    if (!added.ok()) {
      return Status(StatusCode::kAlreadyExists,
                    std::string(fn) + ": the execute context has user data of FFI type id " +
                        std::to_string(type_id) +
                        ", which this executable already passes (bound at load)");
    }
  }
  return static_cast<const ExecuteContext*>(merged->get());
}

}  // namespace capi
}  // namespace pjrtkit
