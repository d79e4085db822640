// What every C entry point does first: guard against exceptions, check the Args struct and the
// handles. An entry point reads
//
//   PJRT_Error* BufferDimensions(PJRT_Buffer_Dimensions_Args* args) {
//     return Guard("PJRT_Buffer_Dimensions", [&](const char* fn) -> Status {
//       PJRTKIT_RETURN_IF_ERROR(
//           CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Buffer_Dimensions_Args, num_dims)));
//       PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
//       ...call C++, fill outputs...
//       return OkStatus();
//     });
//   }
#ifndef PJRTKIT_XLA_PLUGIN_C_API_ENTRY_POINT_H_
#define PJRTKIT_XLA_PLUGIN_C_API_ENTRY_POINT_H_

// C++ standard library.
#include <cstddef>
#include <exception>
#include <string>
#include <utility>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/client/status.h"

// Bytes of `Type` up to and including `field`: the smallest struct_size an entry point accepts
// when `field` is the last field it reads or writes. Newer callers send bigger structs (accepted,
// the extra fields are ignored); older callers that lack `field` are rejected.
#define PJRTKIT_ARGS_SIZE(Type, field) (offsetof(Type, field) + sizeof(((Type*)0)->field))

namespace pjrtkit {
namespace capi {

// INVALID_ARGUMENT unless `args` is non-null and `struct_size >= min_size`. The message names
// `fn` and its Args struct ("PJRT_Foo: PJRT_Foo_Args struct_size is 0, expected at least 24").
Status CheckArgsStruct(const char* fn, const void* args, size_t struct_size, size_t min_size);

// CheckArgsStruct for a typed Args pointer. The passing case is inline: every call pays it.
template <typename Args>
inline Status CheckArgs(const char* fn, const Args* args, size_t min_size) {
  if (args != nullptr && args->struct_size >= min_size) return Status();
  return CheckArgsStruct(fn, args, args == nullptr ? 0 : args->struct_size, min_size);
}

// INVALID_ARGUMENT "PJRT_Foo: args-><what> is null".
Status NullHandleError(const char* fn, const char* what);

// NullHandleError when `pointer` is null (inline: the passing case is on every call's path).
inline Status CheckHandle(const char* fn, const char* what, const void* pointer) {
  if (pointer != nullptr) return Status();
  return NullHandleError(fn, what);
}

// Runs `body(fn)` (which returns a Status) and converts its result to a PJRT_Error. Exceptions
// never cross the C boundary: they become INTERNAL errors naming `fn`.
template <typename Body>
PJRT_Error* Guard(const char* fn, Body&& body) noexcept {
  try {
    Status status = body(fn);
    if (status.ok()) return nullptr;  // The common case, without a call.
    return ToPjrtError(std::move(status));
  } catch (const std::exception& e) {
    try {
      return ToPjrtError(Internal(std::string(fn) + ": unexpected exception: " + e.what()));
    } catch (...) {
      return EmergencyError();  // Out of memory while reporting the error.
    }
  } catch (...) {
    try {
      return ToPjrtError(Internal(std::string(fn) + ": unexpected non-standard exception"));
    } catch (...) {
      return EmergencyError();
    }
  }
}

// The error every unimplemented slot returns: UNIMPLEMENTED "<fn> is not implemented by pjrtkit".
PJRT_Error* NotImplemented(const char* fn) noexcept;

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_ENTRY_POINT_H_
