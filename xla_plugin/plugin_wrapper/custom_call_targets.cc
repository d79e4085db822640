#include "xla_plugin/plugin_wrapper/custom_call_targets.h"

#include <algorithm>
#include <utility>

#include "xla_plugin/plugin_wrapper/hlo_module_bytes.h"
#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

constexpr int kInstructionOpcodeField = 2;        // HloInstructionProto.opcode.
constexpr int kInstructionTargetField = 28;       // HloInstructionProto.custom_call_target.
constexpr int kInstructionApiVersionField = 77;   // HloInstructionProto.custom_call_api_version.
constexpr uint64_t kApiVersionTypedFfi = 4;       // CustomCallApiVersion.API_VERSION_TYPED_FFI.

// `names` sorted, without repeats.
std::vector<std::string> SortedUnique(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// Adds the custom calls of one serialized HloComputationProto to `typed_ffi` / `other`.
Status ReadComputation(std::string_view computation, std::vector<std::string>* typed_ffi,
                       std::vector<std::string>* other) {
  ProtoReader reader(computation);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    if (field.number != hlo_fields::kComputationInstructions ||
        field.type != WireType::kLengthDelimited) {
      continue;
    }
    std::string_view opcode, target;
    uint64_t api_version = 0;
    ProtoReader instruction(field.bytes);
    while (!instruction.done()) {
      PJRTKIT_ASSIGN_OR_RETURN(ProtoField f, instruction.Next());
      if (f.number == kInstructionOpcodeField && f.type == WireType::kLengthDelimited) {
        opcode = f.bytes;
      } else if (f.number == kInstructionTargetField && f.type == WireType::kLengthDelimited) {
        target = f.bytes;
      } else if (f.number == kInstructionApiVersionField && f.type == WireType::kVarint) {
        api_version = f.varint;
      }
    }
    if (opcode != "custom-call") continue;
    (api_version == kApiVersionTypedFfi ? typed_ffi : other)->emplace_back(target);
  }
  return OkStatus();
}

}  // namespace

StatusOr<CustomCallTargets> CustomCallTargets::FromOptimizedProgram(const Program& program) {
  PJRTKIT_ASSIGN_OR_RETURN(HloModuleBytes module,
                           HloModuleBytes::FromProgram(program, "custom-call targets"));
  return FromHloModule(module.bytes());
}

StatusOr<CustomCallTargets> CustomCallTargets::FromHloModule(std::string_view module) {
  std::vector<std::string> typed_ffi, other;
  ProtoReader reader(module);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    if (field.number == hlo_fields::kModuleComputations &&
        field.type == WireType::kLengthDelimited) {
      PJRTKIT_RETURN_IF_ERROR(ReadComputation(field.bytes, &typed_ffi, &other));
    }
  }
  return CustomCallTargets(SortedUnique(std::move(typed_ffi)), SortedUnique(std::move(other)));
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
