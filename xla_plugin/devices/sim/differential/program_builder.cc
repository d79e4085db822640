#include "xla_plugin/devices/sim/differential/program_builder.h"

#include <utility>

#include "xla_plugin/stablehlo/ir.h"

namespace pjrtkit {
namespace sim {
namespace differential {
namespace {

std::string Join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i > 0 ? separator : "") + items[i];
  return out;
}

std::string ElementText(ElementType type) { return stablehlo::MlirElementTypeName(type); }

// "(tensor<a>, tensor<b>)".
std::string TypeList(const std::vector<std::string>& types) { return "(" + Join(types, ", ") + ")"; }

// Appends op `name` in generic form to `lines`, its results named `value` (`value#i` when there
// are several) and their types recorded in `types`; returns the result names.
std::vector<std::string> WriteOp(const std::string& value, const std::string& name,
                                 const std::vector<std::string>& operands,
                                 const std::vector<ArrayType>& results,
                                 const std::string& attributes,
                                 const std::vector<std::string>& regions,
                                 std::map<std::string, ArrayType>* types,
                                 std::vector<std::string>* lines) {
  std::vector<std::string> operand_types, result_types, names;
  for (const std::string& operand : operands) operand_types.push_back(TensorText(types->at(operand)));
  for (size_t i = 0; i < results.size(); ++i) {
    result_types.push_back(TensorText(results[i]));
    names.push_back(results.size() == 1 ? value : value + "#" + std::to_string(i));
    (*types)[names.back()] = results[i];
  }
  std::string line = results.size() > 1 ? value + ":" + std::to_string(results.size()) : value;
  line += " = \"" + name + "\"(" + Join(operands, ", ") + ")";
  if (!attributes.empty()) line += " <{" + attributes + "}>";
  if (!regions.empty()) line += " (" + Join(regions, ", ") + ")";
  line += " : " + TypeList(operand_types) + " -> " +
          (results.size() == 1 ? result_types[0] : TypeList(result_types));
  lines->push_back(std::move(line));
  return names;
}

}  // namespace

std::string TensorText(const ArrayType& type) {
  std::string text = "tensor<";
  for (int64_t d : type.dims) text += std::to_string(d) + "x";
  return text + ElementText(type.type) + ">";
}

std::string ScalarText(ElementType type) { return TensorText(ArrayType{type, {}}); }

std::string I64Array(const std::vector<int64_t>& values) {
  std::string text = "array<i64";
  for (size_t i = 0; i < values.size(); ++i) text += (i == 0 ? ": " : ", ") + std::to_string(values[i]);
  return text + ">";
}

std::string IntList(const std::vector<int64_t>& values) {
  std::vector<std::string> items;
  for (int64_t v : values) items.push_back(std::to_string(v));
  return "[" + Join(items, ", ") + "]";
}

std::string I64Matrix(const std::vector<std::vector<int64_t>>& rows, int64_t columns) {
  std::vector<std::string> items;
  for (const auto& row : rows) items.push_back(IntList(row));
  return "dense<[" + Join(items, ", ") + "]> : tensor<" + std::to_string(rows.size()) + "x" +
         std::to_string(columns) + "xi64>";
}

std::string SplatAttribute(const std::string& value, const ArrayType& type) {
  return "dense<" + value + "> : " + TensorText(type);
}

std::string ComparisonDirection(const std::string& direction) {
  return "#stablehlo<comparison_direction " + direction + ">";
}

std::string ComparisonType(const std::string& type) {
  return "#stablehlo<comparison_type " + type + ">";
}

RegionBuilder::RegionBuilder(const std::string& prefix, const std::vector<ElementType>& arguments)
    : prefix_(prefix) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    arguments_.push_back("%" + prefix_ + "a" + std::to_string(i));
    types_[arguments_.back()] = ArrayType{arguments[i], {}};
  }
}

RegionBuilder::RegionBuilder(const std::string& prefix, const std::vector<ArrayType>& arguments)
    : prefix_(prefix) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    arguments_.push_back("%" + prefix_ + "a" + std::to_string(i));
    types_[arguments_.back()] = arguments[i];
  }
}

std::vector<std::string> RegionBuilder::Op(const std::string& name,
                                           const std::vector<std::string>& operands,
                                           const std::vector<ArrayType>& results,
                                           const std::string& attributes,
                                           const std::vector<std::string>& regions) {
  const std::string value = "%" + prefix_ + "v" + std::to_string(next_value_++);
  return WriteOp(value, name, operands, results, attributes, regions, &types_, &lines_);
}

std::string RegionBuilder::Op1(const std::string& name, const std::vector<std::string>& operands,
                               const ArrayType& result, const std::string& attributes,
                               const std::vector<std::string>& regions) {
  return Op(name, operands, std::vector<ArrayType>{result}, attributes, regions)[0];
}

std::string RegionBuilder::Op(const std::string& name, const std::vector<std::string>& operands,
                              ElementType result, const std::string& attributes) {
  return Op1(name, operands, ArrayType{result, {}}, attributes);
}

std::string RegionBuilder::Constant(const std::string& value, ElementType type) {
  return Op("stablehlo.constant", {}, type, "value = " + SplatAttribute(value, ArrayType{type, {}}));
}

std::string RegionBuilder::Build(const std::vector<std::string>& results) const {
  std::vector<std::string> arguments, result_types;
  for (const std::string& argument : arguments_) {
    arguments.push_back(argument + ": " + TensorText(types_.at(argument)));
  }
  for (const std::string& result : results) result_types.push_back(TensorText(types_.at(result)));
  // A block without arguments needs no label.
  std::string text = arguments.empty() ? "{\n" : "{\n    ^bb0(" + Join(arguments, ", ") + "):\n";
  for (const std::string& line : lines_) text += "      " + line + "\n";
  text += "      \"stablehlo.return\"(" + Join(results, ", ") + ") : " + TypeList(result_types) +
          " -> ()\n    }";
  return text;
}

std::string BinaryRegion(const std::string& prefix, const std::string& op, ElementType type) {
  RegionBuilder region(prefix, {type, type});
  const std::string r = region.Op(op, {region.Argument(0), region.Argument(1)}, type);
  return region.Build({r});
}

std::string ProgramBuilder::Parameter(const ArrayType& type) {
  const std::string name = "%p" + std::to_string(parameters_.size());
  parameters_.push_back(name + ": " + TensorText(type));
  types_[name] = type;
  return name;
}

std::vector<std::string> ProgramBuilder::Op(const std::string& name,
                                            const std::vector<std::string>& operands,
                                            const std::vector<ArrayType>& results,
                                            const std::string& attributes,
                                            const std::vector<std::string>& regions) {
  const std::string value = "%v" + std::to_string(next_value_++);
  return WriteOp(value, name, operands, results, attributes, regions, &types_, &lines_);
}

std::string ProgramBuilder::Op1(const std::string& name, const std::vector<std::string>& operands,
                                const ArrayType& result, const std::string& attributes,
                                const std::vector<std::string>& regions) {
  return Op(name, operands, {result}, attributes, regions)[0];
}

std::string ProgramBuilder::Constant(const std::string& value, const ArrayType& type) {
  return Op1("stablehlo.constant", {}, type, "value = " + SplatAttribute(value, type));
}

const ArrayType& ProgramBuilder::TypeOf(const std::string& name) const { return types_.at(name); }

std::string ProgramBuilder::Build(const std::vector<std::string>& results) const {
  std::vector<std::string> result_types;
  for (const std::string& result : results) result_types.push_back(TensorText(types_.at(result)));
  std::string text = "func.func @main(" + Join(parameters_, ", ") + ") -> " +
                     TypeList(result_types) + " {\n";
  for (const std::string& line : lines_) text += "  " + line + "\n";
  text += "  \"func.return\"(" + Join(results, ", ") + ") : " + TypeList(result_types) +
          " -> ()\n}\n";
  return text;
}

}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit
