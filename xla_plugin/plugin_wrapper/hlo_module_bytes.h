// HloModuleBytes: the serialized HloModuleProto inside a program, for the parts of pjrtkit that
// read XLA's HLO protos with ProtoReader (custom-call targets, parameter shapes, donatable
// parameters, the instruction-id check), and the field numbers they read (xla/service/hlo.proto).
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HLO_MODULE_BYTES_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HLO_MODULE_BYTES_H_

#include <string>
#include <string_view>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Field numbers of XLA's HLO protos that more than one reader uses.
namespace hlo_fields {
constexpr int kWithConfigModule = 1;         // HloModuleProtoWithConfig.hlo_module
constexpr int kModuleComputations = 3;       // HloModuleProto.computations
constexpr int kComputationInstructions = 2;  // HloComputationProto.instructions
}  // namespace hlo_fields

class HloModuleBytes {
 public:
  // The module of `program`: "hlo" is one; "hlo_with_config" (an HloModuleProtoWithConfig)
  // holds it in hlo_module, whose repeated copies protobuf merges (their bytes one after the
  // other). Errors begin with `prefix`: UNIMPLEMENTED for another format, INVALID_ARGUMENT for
  // an hlo_with_config without hlo_module or whose fields cannot be read. The result refers to
  // `program.code`, which must outlive it (unless the module was merged from several fields).
  static StatusOr<HloModuleBytes> FromProgram(const Program& program, const std::string& prefix);

  // The module's serialized bytes.
  std::string_view bytes() const { return merged_ ? std::string_view(storage_) : view_; }

 private:
  std::string_view view_;  // Into the program's code (one module field, or "hlo").
  std::string storage_;    // The merged fields, where there were several.
  bool merged_ = false;
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HLO_MODULE_BYTES_H_
