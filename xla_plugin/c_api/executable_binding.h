// Executable bindings: pjrtkit's own PJRT extension (ABI in xla_plugin/abi/pjrtkit_extension.h).
//
// A caller (jax_plugins.pjrtkit's host callbacks) sets a binding {FFI type id, data} on its
// thread around a compile or a deserialization; every executable the thread loads meanwhile
// remembers the entry in its PJRT_LoadedExecutable handle, and each execution of it passes the
// entry to the FFI handlers as execute-context user data. So an FFI handler can tell which
// executable is running even when two hold the same program.
//
// State: the binding is thread-local (Python cannot name the PJRT_Client behind a JAX backend,
// and one compile runs on one thread), the entry is per executable handle. Nothing is
// process-wide, and executables loaded without a binding pay one null check per execution.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_EXECUTABLE_BINDING_H_
#define PJRTKIT_XLA_PLUGIN_C_API_EXECUTABLE_BINDING_H_

// C++ standard library.
#include <memory>

// PJRT C API and pjrtkit's extension ABI.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/abi/pjrtkit_extension.h"

// pjrtkit.
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/client/execute_context.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace capi {

// PjrtkitExtension::bind_executables: replaces the calling thread's binding (type_id 0 ends it)
// and reports the one it replaced, with the number of executables loaded under it.
PJRT_Error* BindExecutables(abi::BindExecutablesArgs* args);

// The extension struct (a function-local static, built on first call with `next` as the next
// extension of the chain), with both entry points (host_buffer_pool: host_buffer_pool_extension.h). Returns its PJRT_Extension_Base, ready to link into the chain.
PJRT_Extension_Base* PjrtkitExtensionBase(PJRT_Extension_Base* next);

// Gives `loaded` (just compiled or deserialized on this thread) the thread's binding, if one is
// set, and counts it.
void ApplyThreadBinding(PJRT_LoadedExecutable* loaded);

// The context an execution of `loaded` (which has a bound entry) runs with: its bound context
// when the caller gave none (or an empty one), else a merge of both, made in `*merged`.
// ALREADY_EXISTS when the caller's context has an entry of the bound type id.
StatusOr<const ExecuteContext*> BoundContext(const char* fn, const PJRT_LoadedExecutable& loaded,
                                             const ExecuteContext* caller,
                                             std::unique_ptr<ExecuteContext>* merged);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_EXECUTABLE_BINDING_H_
