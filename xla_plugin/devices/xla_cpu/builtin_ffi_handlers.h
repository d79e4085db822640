// BuiltinFfiHandlers: XLA FFI handlers the xla_cpu device registers with XLA:CPU itself, at
// client creation, for custom calls JAX emits on every platform but whose handlers jaxlib keeps
// inside its own XLA (XLA:CPU loaded as a plugin has none, so such programs failed to compile
// with NOT_FOUND "No FFI handler registered for dce_sink on a platform Host").
//
//   dce_sink  lax.dce_sink(x, prevent_mlir_dce=True) (and checkify's checks) lower to a typed FFI
//             custom call "dce_sink" with side effects, one operand of any type and no results,
//             so that XLA keeps the computation of x. jaxlib's handler (dce_sink_cpu_ffi,
//             DceSinkImpl(ffi::AnyBuffer) in libjax_common.so) does nothing and succeeds; this
//             one does the same, and fails with INVALID_ARGUMENT for another operand count.
//
// The handlers are written on the XLA FFI C ABI (no C++ binding), answer XLA's metadata query
// with XLA:CPU's own API version and are registered through InnerFfi (platform "Host"), whose
// registry is process-wide: registering the same (target, handler) again is a no-op.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_BUILTIN_FFI_HANDLERS_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_BUILTIN_FFI_HANDLERS_H_

#include <vector>

#include "xla_plugin/client/ffi_registration.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/plugin_wrapper/inner_ffi.h"

namespace pjrtkit {
namespace xla_cpu {

class BuiltinFfiHandlers {
 public:
  // The built-in handlers (target, platform "pjrtkit", handler), in registration order.
  static std::vector<FfiHandlerRegistration> All();
  // Registers every built-in handler with XLA:CPU through `ffi`; the first refusal is returned
  // (FAILED_PRECONDITION from InnerFfi, naming the target), for `platform` (XlaCpuPolicy's).
  static Status RegisterAll(const plugin_wrapper::InnerFfi& ffi,
                            const plugin_wrapper::FfiPlatform& platform);
};

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_BUILTIN_FFI_HANDLERS_H_
