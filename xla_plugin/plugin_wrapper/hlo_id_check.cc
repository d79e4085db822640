#include "xla_plugin/plugin_wrapper/hlo_id_check.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "xla_plugin/plugin_wrapper/hlo_module_bytes.h"
#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

constexpr int kComputationNameField = 1;          // HloComputationProto.name
constexpr int kInstructionIdField = 35;           // HloInstructionProto.id

// What one computation asks of the id tables.
struct ComputationIds {
  uint64_t instructions = 0;
  uint64_t entries = 0;  // Largest id's low 32 bits + 1 (0 without instructions).
  int64_t largest_id = 0;  // The id those low bits came from.
  std::string_view name;
};

Status Malformed(const char* what, const Status& status) {
  return InvalidArgument(std::string(what) +
                         ": program: the bytes are not a well-formed HloModuleProto (pjrtkit "
                         "reads its instruction ids before XLA does): " + status.message());
}

StatusOr<ComputationIds> ReadComputation(std::string_view computation) {
  ComputationIds out;
  ProtoReader reader(computation);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    if (field.number == kComputationNameField && field.type == WireType::kLengthDelimited) {
      out.name = field.bytes;
    } else if (field.number == hlo_fields::kComputationInstructions &&
               field.type == WireType::kLengthDelimited) {
      ++out.instructions;
      ProtoReader instruction(field.bytes);
      while (!instruction.done()) {
        PJRTKIT_ASSIGN_OR_RETURN(ProtoField f, instruction.Next());
        if (f.number != kInstructionIdField || f.type != WireType::kVarint) continue;
        const uint64_t entries = (f.varint & 0xffffffffu) + 1;
        if (entries > out.entries) {
          out.entries = entries;
          out.largest_id = static_cast<int64_t>(f.varint);
        }
      }
    }
  }
  return out;
}

}  // namespace

Status HloIdCheck::Check(const Program& program, const char* what) {
  if (program.format != "hlo" && program.format != "hlo_with_config") return OkStatus();
  StatusOr<HloModuleBytes> module =
      HloModuleBytes::FromProgram(program, std::string(what) + ": program");
  if (!module.ok()) return module.status();
  return CheckModule(module->bytes(), what);
}

Status HloIdCheck::CheckModule(std::string_view module, const char* what) {
  uint64_t instructions = 0;
  uint64_t computations = 0;
  uint64_t entries = 0;
  ComputationIds largest;
  ProtoReader reader(module);
  while (!reader.done()) {
    StatusOr<ProtoField> field = reader.Next();
    if (!field.ok()) return Malformed(what, field.status());
    if (field->number != hlo_fields::kModuleComputations ||
        field->type != WireType::kLengthDelimited) {
      continue;
    }
    StatusOr<ComputationIds> computation = ReadComputation(field->bytes);
    if (!computation.ok()) return Malformed(what, computation.status());
    ++computations;
    instructions += computation->instructions;
    entries += computation->entries;  // At most 2^32 per computation: no overflow.
    if (computation->entries > largest.entries) largest = *computation;
  }
  const uint64_t per_instruction = std::max(kEntriesPerInstruction, computations);
  const uint64_t allowed = std::max(kMinAllowedEntries, per_instruction * instructions);
  if (entries <= allowed) return OkStatus();
  std::string id = std::to_string(largest.entries - 1);
  if (static_cast<uint64_t>(largest.largest_id) != largest.entries - 1) {
    id += " (the low 32 bits of " + std::to_string(largest.largest_id) + ")";
  }
  return InvalidArgument(
      std::string(what) + ": program: the HLO module's instruction ids are too sparse for XLA, "
      "which allocates one table entry per id (low 32 bits) up to each computation's largest: " +
      std::to_string(entries) + " entries (" + std::to_string(entries >> 17) + " MiB) for " +
      std::to_string(instructions) + " instructions in " + std::to_string(computations) +
      " computations; computation '" + std::string(largest.name) + "' alone reaches id " + id +
      ". Accepted: at most max(" + std::to_string(kMinAllowedEntries) +
      ", instructions x max(" + std::to_string(kEntriesPerInstruction) +
      ", computations)) entries; number the instructions densely");
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
