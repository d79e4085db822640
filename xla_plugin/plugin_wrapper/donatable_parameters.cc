#include "xla_plugin/plugin_wrapper/donatable_parameters.h"

#include <algorithm>
#include <utility>

#include "xla_plugin/plugin_wrapper/hlo_module_bytes.h"
#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

constexpr int kModuleInputOutputAliasField = 8;  // HloModuleProto.input_output_alias
constexpr int kModuleBufferDonorField = 18;      // HloModuleProto.buffer_donor
constexpr int kEntriesField = 1;                 // Both protos' repeated entries.
constexpr int kAliasParameterNumberField = 2;    // AliasEntryProto.parameter_number
constexpr int kAliasParameterShapeIndexField = 3;
constexpr int kDonorParameterNumberField = 1;    // BufferDonorEntryProto.parameter_number
constexpr int kDonorParameterShapeIndexField = 2;

// Field numbers of one kind of entry.
struct EntryFields {
  int parameter_number;
  int parameter_shape_index;
};

// Adds the parameters named by the entries of `message` (an HloInputOutputAliasProto or an
// HloBufferDonorProto) to `parameters`; sets `*all` for an entry with a shape index.
Status ReadEntries(std::string_view message, EntryFields fields, std::vector<int64_t>* parameters,
                   bool* all) {
  ProtoReader entries(message);
  while (!entries.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField entry, entries.Next());
    if (entry.number != kEntriesField || entry.type != WireType::kLengthDelimited) continue;
    int64_t parameter = 0;  // proto3 default.
    ProtoReader reader(entry.bytes);
    while (!reader.done()) {
      PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
      if (field.number == fields.parameter_number && field.type == WireType::kVarint) {
        parameter = static_cast<int64_t>(field.varint);
      } else if (field.number == fields.parameter_shape_index) {
        // Packed (length-delimited, possibly empty) or one unpacked varint.
        if (field.type != WireType::kLengthDelimited || !field.bytes.empty()) *all = true;
      }
    }
    parameters->push_back(parameter);
  }
  return OkStatus();
}

}  // namespace

StatusOr<DonatableParameters> DonatableParameters::FromOptimizedProgram(const Program& program) {
  PJRTKIT_ASSIGN_OR_RETURN(HloModuleBytes module,
                           HloModuleBytes::FromProgram(program, "donatable parameters"));
  return FromHloModule(module.bytes());
}

StatusOr<DonatableParameters> DonatableParameters::FromHloModule(std::string_view module) {
  std::vector<int64_t> parameters;
  bool all = false;
  ProtoReader reader(module);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    if (field.type != WireType::kLengthDelimited) continue;
    if (field.number == kModuleInputOutputAliasField) {
      PJRTKIT_RETURN_IF_ERROR(ReadEntries(
          field.bytes, {kAliasParameterNumberField, kAliasParameterShapeIndexField}, &parameters,
          &all));
    } else if (field.number == kModuleBufferDonorField) {
      PJRTKIT_RETURN_IF_ERROR(ReadEntries(
          field.bytes, {kDonorParameterNumberField, kDonorParameterShapeIndexField}, &parameters,
          &all));
    }
  }
  std::sort(parameters.begin(), parameters.end());
  parameters.erase(std::unique(parameters.begin(), parameters.end()), parameters.end());
  return DonatableParameters(std::move(parameters), all);
}

bool DonatableParameters::MayDonate(size_t index) const {
  return all_ ||
         std::binary_search(parameters_.begin(), parameters_.end(), static_cast<int64_t>(index));
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
