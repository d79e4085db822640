// FfiHandlerShims: fixed native trampolines placed between XLA:CPU and the typed FFI handlers
// registered with it, so that handlers built against a newer minor XLA FFI API than XLA:CPU's can
// run, and so that a handler XLA:CPU refuses is reported instead of silently dropped.
//
// Why: XLA asks every handler for its XLA FFI API version when it is registered (a call with the
// metadata extension) and drops handlers whose version is newer than its own. jaxlib 0.12's
// handlers (LAPACK, ...) declare FFI API 0.5; xla-cpu-pjrt 0.0.1's XLA:CPU implements 0.2, and its
// PJRT FFI extension ignores the refusal (programs then fail with "No FFI handler registered").
// Minor FFI versions only append fields and functions (xla/ffi/api/c_api.h), and a handler checks
// the struct sizes it is given, so a same-major, newer-minor handler is declared to XLA:CPU with
// XLA:CPU's own version ("downgraded"). A different major version is passed through unchanged,
// and XLA:CPU refuses it as usual.
//
// Process-wide state: the trampolines are plain function pointers stored in XLA:CPU's
// process-wide FFI registry and receive no user data, so the handler each one forwards to lives in
// a fixed, process-wide slot table (kCapacity slots, one per distinct handler, never freed). This
// table and xla_plugin/c_api/ffi_registry.h are pjrtkit's only process-wide FFI state.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_FFI_HANDLER_SHIMS_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_FFI_HANDLER_SHIMS_H_

#include <cstddef>

namespace pjrtkit {
namespace plugin_wrapper {

// What the last metadata query through a shim saw.
struct FfiShimQuery {
  bool queried = false;        // XLA has asked (registration happened).
  int handler_major = -1;      // The handler's own API version.
  int handler_minor = -1;
  int framework_major = -1;    // XLA:CPU's API version.
  int framework_minor = -1;
  bool downgraded = false;     // The shim declared the framework's minor version instead.
  bool handler_failed = false;  // The handler returned an error to the query.
};

class FfiHandlerShims {
 public:
  // Number of distinct handlers that can be shimmed in one process.
  static constexpr size_t kCapacity = 256;

  // The shim (an XLA_FFI_Handler*) forwarding to `handler` (an XLA_FFI_Handler*); the same shim
  // for the same handler. nullptr when `handler` is null or all kCapacity slots are in use
  // (InnerFfi::RegisterHandler then refuses the handler with RESOURCE_EXHAUSTED).
  static void* Wrap(void* handler);

  // What the last metadata query through `shim` (a pointer Wrap returned) saw; a default
  // FfiShimQuery for an unknown pointer.
  static FfiShimQuery LastQuery(void* shim);

  // Forgets the last query of `shim` (call before registering it, to see the new query).
  static void ResetQuery(void* shim);
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_FFI_HANDLER_SHIMS_H_
