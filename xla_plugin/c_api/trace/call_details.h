// What the generic rule of ArgsPrinter cannot see, for the slots that need it: the argument and
// output buffers of PJRT_LoadedExecutable_Execute, the program of PJRT_Client_Compile and
// PJRT_Compile, and the devices and memories a PJRT_Client_Destroy lets go of.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TRACE_CALL_DETAILS_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TRACE_CALL_DETAILS_H_

// C++ standard library.
#include <utility>
#include <vector>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "xla_plugin/c_api/trace/args_printer.h"
#include "xla_plugin/c_api/trace/handle_ids.h"

namespace pjrtkit {
namespace capi {
namespace trace {

using HandleList = std::vector<std::pair<HandleKind, const void*>>;

// Words a slot adds to the generic ones, in either phase (printer.inputs()): none by default.
template <typename Args>
void Details(ArgsPrinter<Args>&) {}
// Inputs: " args=[[buffer#1,...],...]" (per device); outputs: " outputs=[[buffer#3],...]" and,
// when asked for, " device_complete_events=[event#4,...]".
void Details(ArgsPrinter<PJRT_LoadedExecutable_Execute_Args>& printer);
// Inputs: " format=\"mlir\" code_size=N".
void Details(ArgsPrinter<PJRT_Client_Compile_Args>& printer);
void Details(ArgsPrinter<PJRT_Compile_Args>& printer);

// Handles a successful call makes invalid besides its own inputs, read before the call: none by
// default.
template <typename Args>
HandleList InvalidatedBefore(const Args*) {
  return {};
}
// The client's devices, their descriptions and its memories.
HandleList InvalidatedBefore(const PJRT_Client_Destroy_Args* args);

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TRACE_CALL_DETAILS_H_
