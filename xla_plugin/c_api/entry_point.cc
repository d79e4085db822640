#include "xla_plugin/c_api/entry_point.h"

// C++ standard library.
#include <string>

namespace pjrtkit {
namespace capi {

Status CheckArgsStruct(const char* fn, const void* args, size_t struct_size, size_t min_size) {
  if (args == nullptr) return InvalidArgument(std::string(fn) + ": args is null");
  if (struct_size < min_size) {
    return InvalidArgument(std::string(fn) + ": " + fn + "_Args struct_size is " +
                           std::to_string(struct_size) + ", expected at least " +
                           std::to_string(min_size) +
                           " (the caller was built against an incompatible pjrt_c_api.h)");
  }
  return OkStatus();
}

Status NullHandleError(const char* fn, const char* what) {
  return InvalidArgument(std::string(fn) + ": args->" + what + " is null");
}

PJRT_Error* NotImplemented(const char* fn) noexcept {
  return Guard(fn, [](const char* name) -> Status {
    return Unimplemented(std::string(name) + " is not implemented by pjrtkit");
  });
}

}  // namespace capi
}  // namespace pjrtkit
