#include "xla_plugin/plugin_wrapper/parameter_shapes.h"

#include <optional>
#include <utility>

#include "xla_plugin/client/layout_codec.h"
#include "xla_plugin/plugin_wrapper/hlo_module_bytes.h"
#include "xla_plugin/plugin_wrapper/host_layout.h"
#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// HloModuleProto.
constexpr int kModuleHostProgramShapeField = 4;
constexpr int kModuleEntryComputationIdField = 6;
// HloComputationProto.
constexpr int kComputationProgramShapeField = 4;
constexpr int kComputationIdField = 5;
// ProgramShapeProto.
constexpr int kProgramShapeParametersField = 1;

// The bytes of the last length-delimited field `number` of `message`; nullopt when absent.
StatusOr<std::optional<std::string_view>> FindMessage(std::string_view message, int number) {
  std::optional<std::string_view> found;
  ProtoReader reader(message);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    if (field.number == number && field.type == WireType::kLengthDelimited) found = field.bytes;
  }
  return found;
}

// The program shape of the entry computation listed in `module`'s computations (used when the
// module has no host_program_shape).
StatusOr<std::optional<std::string_view>> EntryComputationProgramShape(std::string_view module) {
  std::optional<int64_t> entry_id;
  std::vector<std::string_view> computations;
  ProtoReader reader(module);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    if (field.number == kModuleEntryComputationIdField && field.type == WireType::kVarint) {
      entry_id = static_cast<int64_t>(field.varint);
    } else if (field.number == hlo_fields::kModuleComputations &&
               field.type == WireType::kLengthDelimited) {
      computations.push_back(field.bytes);
    }
  }
  if (!entry_id.has_value()) return std::optional<std::string_view>();
  for (std::string_view computation : computations) {
    std::optional<int64_t> id;
    std::optional<std::string_view> shape;
    ProtoReader fields(computation);
    while (!fields.done()) {
      PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, fields.Next());
      if (field.number == kComputationIdField && field.type == WireType::kVarint) {
        id = static_cast<int64_t>(field.varint);
      } else if (field.number == kComputationProgramShapeField &&
                 field.type == WireType::kLengthDelimited) {
        shape = field.bytes;
      }
    }
    if (id == entry_id) return shape;
  }
  return std::optional<std::string_view>();
}

}  // namespace

StatusOr<ParameterShapes> ParameterShapes::FromOptimizedProgram(const Program& program) {
  PJRTKIT_ASSIGN_OR_RETURN(HloModuleBytes module,
                           HloModuleBytes::FromProgram(program, "parameter shapes"));
  return FromHloModule(module.bytes());
}

StatusOr<ParameterShapes> ParameterShapes::FromHloModule(std::string_view module) {
  PJRTKIT_ASSIGN_OR_RETURN(std::optional<std::string_view> program_shape,
                           FindMessage(module, kModuleHostProgramShapeField));
  if (!program_shape.has_value()) {
    PJRTKIT_ASSIGN_OR_RETURN(program_shape, EntryComputationProgramShape(module));
  }
  if (!program_shape.has_value()) {
    return InvalidArgument("parameter shapes: the HloModuleProto has no program shape");
  }
  std::vector<HloShape> parameters;
  ProtoReader reader(*program_shape);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    if (field.number != kProgramShapeParametersField) continue;
    if (field.type != WireType::kLengthDelimited) {
      return InvalidArgument("parameter shapes: ProgramShapeProto.parameters is not a message");
    }
    PJRTKIT_ASSIGN_OR_RETURN(HloShape shape, ParseShapeProto(field.bytes));
    parameters.push_back(std::move(shape));
  }
  // Tupled arguments: the caller passes the elements of the one tuple parameter.
  if (parameters.size() == 1 && parameters[0].is_tuple()) {
    std::vector<HloShape> elements = std::move(parameters[0].tuple_shapes);
    parameters = std::move(elements);
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].is_tuple()) {
      return Unimplemented("parameter shapes: parameter " + std::to_string(i) + " is a tuple " +
                           parameters[i].ToString());
    }
  }
  return ParameterShapes(std::move(parameters));
}

Status ParameterShapes::CheckCount(size_t count, const std::string& executable_name) const {
  if (count == shapes_.size()) return OkStatus();
  return InvalidArgument("'" + executable_name + "' takes " + std::to_string(shapes_.size()) +
                         " argument(s), got " + std::to_string(count));
}

Status ParameterShapes::CheckArgument(size_t index, ElementType type,
                                      const std::vector<int64_t>& dims,
                                      const std::string& executable_name) const {
  if (index >= shapes_.size()) return CheckCount(index + 1, executable_name);
  const HloShape& expected = shapes_[index];
  if (!expected.is_checkable_array()) return OkStatus();
  bool matches = type == expected.element_type && dims.size() == expected.dims.size();
  for (size_t i = 0; matches && i < dims.size(); ++i) {
    matches = expected.is_dynamic(i) ? dims[i] <= expected.dims[i] : dims[i] == expected.dims[i];
  }
  if (matches) return OkStatus();
  return InvalidArgument("argument " + std::to_string(index) + " of '" + executable_name +
                         "' must be " + expected.ToString() + ", got " +
                         ArrayShapeString(type, dims));
}

ParameterShapes::ParameterShapes(std::vector<HloShape> shapes) : shapes_(std::move(shapes)) {
  for (const HloShape& shape : shapes_) {
    row_major_.push_back(!shape.layout.has_value() ||
                         IsRowMajor(*shape.layout, shape.dims.size()));
  }
}

Status ParameterShapes::CheckArgumentLayout(size_t index, const MemoryLayout& layout,
                                            const std::vector<int64_t>& dims,
                                            const std::string& executable_name,
                                            const std::string& inner_name) const {
  if (index >= shapes_.size()) return CheckCount(index + 1, executable_name);
  const HloShape& expected = shapes_[index];
  if (!expected.is_checkable_array() || !expected.layout.has_value()) return OkStatus();
  MemoryLayout order = layout, expected_order = *expected.layout;
  order.element_size_in_bits = expected_order.element_size_in_bits = 0;  // Not an order.
  if (SameElementOrder(order, expected_order, dims)) return OkStatus();
  return InvalidArgument("argument " + std::to_string(index) + " of '" + executable_name +
                         "' must be laid out " + EncodeXlaLayout(expected_order) + ", got " +
                         EncodeXlaLayout(order) +
                         " (" + inner_name +
                         " would read its bytes in the program's layout; copy the array "
                         "into that layout first)");
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
