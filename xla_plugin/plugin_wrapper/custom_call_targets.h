// CustomCallTargets: the custom-call targets a compiled program calls, read from its optimized
// HLO, so the reference device knows before it runs a program whether XLA:CPU will call FFI
// handlers during the execution.
//
// Why: XLA:CPU 0.0.1 dereferences a missing execute context when an FFI handler looks user data
// up (XLA_FFI_ExecutionContext_Get), which takes the process down. pjrtkit's host callbacks read
// their binding that way, and a program compiled or loaded outside JAX's compile path (e.g.
// backend.compile_and_load called directly) has no binding. Executions of programs with typed
// FFI custom calls therefore always get an inner context (an empty one when the caller has no
// user data): a lookup then answers "not found", and the handler reports a clear error.
//
// Field numbers (hlo.proto): HloModuleProtoWithConfig { hlo_module = 1 }, HloModuleProto
// { computations = 3 }, HloComputationProto { instructions = 2 }, HloInstructionProto
// { opcode = 2, custom_call_target = 28, custom_call_api_version = 77 (4: API_VERSION_TYPED_FFI) }.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_CUSTOM_CALL_TARGETS_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_CUSTOM_CALL_TARGETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

class CustomCallTargets {
 public:
  // From an optimized program of format "hlo_with_config" or "hlo". UNIMPLEMENTED for another
  // format; INVALID_ARGUMENT for malformed bytes.
  static StatusOr<CustomCallTargets> FromOptimizedProgram(const Program& program);
  // From a serialized HloModuleProto.
  static StatusOr<CustomCallTargets> FromHloModule(std::string_view module);

  // The targets of typed FFI custom calls (API_VERSION_TYPED_FFI), sorted, without repeats.
  const std::vector<std::string>& typed_ffi() const { return typed_ffi_; }
  // The targets of every other custom call, sorted, without repeats.
  const std::vector<std::string>& other() const { return other_; }

 private:
  CustomCallTargets(std::vector<std::string> typed_ffi, std::vector<std::string> other)
      : typed_ffi_(std::move(typed_ffi)), other_(std::move(other)) {}

  std::vector<std::string> typed_ffi_;  // See typed_ffi().
  std::vector<std::string> other_;      // See other().
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_CUSTOM_CALL_TARGETS_H_
