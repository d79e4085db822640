// Forwarding: what every forwarded extension shares. pjrtkit's table carries, after its own
// extensions (FFI, Layouts, pjrtkit's), copies of the extensions of the process device's inner
// plugin (the factory's ForwardedPluginApi), whose entry points translate pjrtkit's handles to
// the inner plugin's (NativeHandle) and the inner plugin's errors to pjrtkit's.
//
// The inner PJRT_Api is installed once, while the PJRT_Api table is built (a function-local
// static of CreatePjrtApi, so before any framework can read the chain), and never changes: the
// one piece of state here, written once and read only afterwards.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_FORWARDING_FORWARDING_H_
#define PJRTKIT_XLA_PLUGIN_C_API_FORWARDING_FORWARDING_H_

// C++ standard library.
#include <cstddef>
#include <string>
#include <type_traits>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/client/native_handle.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {

// Sets the inner plugin (null: none); only the first call has an effect.
void Install(const PJRT_Api* inner);
// The inner plugin installed, or null.
const PJRT_Api* Inner();
// "<display name> (PJRT C API <major>.<minor>)" of the inner plugin, for messages.
std::string InnerName();

// The inner plugin's extension of `type` (null when it has none or is shorter than `min_size`).
const PJRT_Extension_Base* FindInner(PJRT_Extension_Type type, size_t min_size);

// The Status of an inner error (code, "<fn>: <message>", payloads); destroys it. OK for null.
Status FromInner(const char* fn, PJRT_Error* error);

// UNIMPLEMENTED "<fn> is not provided by <InnerName()>" for an entry point the inner plugin's
// extension lacks.
Status Missing(const char* fn);

// The inner object of `native` as a `T*`: INVALID_ARGUMENT naming `what` when the object has none,
// or belongs to another plugin than the one whose extension this is.
Status CheckNative(const char* fn, const char* what, const NativeHandle& native);
template <typename T>
StatusOr<T*> NativeOf(const char* fn, const char* what, const NativeHandle& native) {
  PJRTKIT_RETURN_IF_ERROR(CheckNative(fn, what, native));
  return static_cast<T*>(native.handle);
}

// The inner handles behind pjrtkit's handles (null handles are INVALID_ARGUMENT naming `what`).
StatusOr<PJRT_Client*> InnerClient(const char* fn, const char* what, const PJRT_Client* client);
StatusOr<PJRT_Device*> InnerDevice(const char* fn, const char* what, const PJRT_Device* device);
StatusOr<PJRT_Buffer*> InnerBuffer(const char* fn, const char* what, const PJRT_Buffer* buffer);
StatusOr<PJRT_Executable*> InnerExecutable(const char* fn, const char* what,
                                           const PJRT_Executable* executable);
StatusOr<PJRT_LoadedExecutable*> InnerLoadedExecutable(const char* fn, const char* what,
                                                       const PJRT_LoadedExecutable* executable);
StatusOr<PJRT_TopologyDescription*> InnerTopology(const char* fn, const char* what,
                                                  const PJRT_TopologyDescription* topology);
// A device description: a client device's (through its device) or a topology's (by index).
StatusOr<PJRT_DeviceDescription*> InnerDeviceDescription(
    const char* fn, const char* what, const PJRT_DeviceDescription* description);

// Copies the first `bytes` of `inner` (an extension struct of the inner plugin) into `ours`, of
// `our_size` bytes, zero-filling the rest, and sets its struct_size to the smaller of the two
// and its `next`: the entry points the caller will replace are the ones both know.
void CopyExtension(const PJRT_Extension_Base* inner, PJRT_Extension_Base* ours, size_t our_size,
                   PJRT_Extension_Base* next);

// True when the inner extension struct `inner` holds the field at `offset` of `size` bytes.
inline bool Has(const PJRT_Extension_Base* inner, size_t offset, size_t size) {
  return inner != nullptr && inner->struct_size >= offset + size;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit

// Sets `ours.member` to `wrapper` when the inner extension `theirs` (same struct type) has a
// non-null `member`, else to null: pjrtkit's copy offers exactly the entry points the inner
// plugin does (XLA:CPU 0.0.1's PhaseCompile extension, for one, has null ones), and never one
// of the inner plugin's own functions, which would see pjrtkit's handles.
#define PJRTKIT_FORWARD_ENTRY(ours, theirs, member, wrapper)                                    \
  (ours).member = (::pjrtkit::capi::forwarding::Has(                                            \
                       &(theirs)->base, offsetof(std::remove_reference_t<decltype(ours)>, member), \
                       sizeof(void*)) &&                                                        \
                   (theirs)->member != nullptr)                                                 \
                      ? (wrapper)                                                               \
                      : nullptr

#endif  // PJRTKIT_XLA_PLUGIN_C_API_FORWARDING_FORWARDING_H_
