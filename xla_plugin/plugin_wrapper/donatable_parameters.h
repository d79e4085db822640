// DonatableParameters: which arguments an executable may donate, read from its optimized HLO.
//
// XLA:CPU deletes (donates) an argument buffer only when its entry parameter is aliased with an
// output or is a buffer donor. The optimized program (format "hlo_with_config", a serialized
// xla.HloModuleProtoWithConfig { HloModuleProto hlo_module = 1; ... }) says which:
//   HloModuleProto           { input_output_alias = 8; buffer_donor = 18 }
//   HloInputOutputAliasProto { repeated AliasEntryProto entries = 1 }
//     AliasEntryProto        { parameter_number = 2; repeated parameter_shape_index = 3 }
//   HloBufferDonorProto      { repeated BufferDonorEntryProto entries = 1 }
//     BufferDonorEntryProto  { parameter_number = 1; repeated parameter_shape_index = 2 }
// (field numbers from xla/service/hlo.proto). Execute asks the inner plugin whether an argument
// was deleted only for the arguments that may be donated: one inner call per argument saved on
// every execution of a program that donates nothing.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DONATABLE_PARAMETERS_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DONATABLE_PARAMETERS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

// The arguments of one program that XLA:CPU may donate.
class DonatableParameters {
 public:
  // From an optimized program of format "hlo_with_config" or "hlo"; UNIMPLEMENTED for another
  // format, INVALID_ARGUMENT for bytes that are not such a proto.
  static StatusOr<DonatableParameters> FromOptimizedProgram(const Program& program);
  // From a serialized HloModuleProto.
  static StatusOr<DonatableParameters> FromHloModule(std::string_view module);

  // True when argument `index` may be donated. An alias or donor inside a tuple parameter (a
  // non-empty parameter shape index: the arguments are the tuple's elements) makes every
  // argument donatable, conservatively.
  bool MayDonate(size_t index) const;
  // True when no argument can be donated.
  bool none() const { return !all_ && parameters_.empty(); }

 private:
  DonatableParameters(std::vector<int64_t> parameters, bool all)
      : parameters_(std::move(parameters)), all_(all) {}

  std::vector<int64_t> parameters_;  // Donatable parameter numbers, sorted, unique.
  bool all_ = false;                 // Every argument may be donated.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_DONATABLE_PARAMETERS_H_
