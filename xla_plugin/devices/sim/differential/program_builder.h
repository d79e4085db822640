// ProgramBuilder: writes the MLIR text of one StableHLO function `main` op by op, in MLIR's
// generic op form (which every op accepts, so the cases never depend on an op's pretty syntax).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_PROGRAM_BUILDER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_PROGRAM_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/program/array_type.h"

namespace pjrtkit {
namespace sim {
namespace differential {

// "tensor<33x17xf32>", "tensor<complex<f64>>", "tensor<0x3xi1>".
std::string TensorText(const ArrayType& type);
// "tensor<f32>" of a scalar of `type`.
std::string ScalarText(ElementType type);
// "array<i64: 1, 2>" (MLIR's dense i64 array attribute).
std::string I64Array(const std::vector<int64_t>& values);
// "[1, 2]" (as dimension numbers write their lists).
std::string IntList(const std::vector<int64_t>& values);
// "dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>" (padding attributes: one row per dimension).
std::string I64Matrix(const std::vector<std::vector<int64_t>>& rows, int64_t columns);
// "dense<V> : tensor<T>": a splat constant of `type`'s element type and shape; `value` is an
// MLIR literal of that type ("0.0", "0xFF800000", "true", "-3").
std::string SplatAttribute(const std::string& value, const ArrayType& type);
// "#stablehlo<comparison_direction LT>" etc.
std::string ComparisonDirection(const std::string& direction);
std::string ComparisonType(const std::string& type);

// The body of a region: block arguments of the given types and ops in generic form. Regions of
// reductions, sorts and scatters take scalars (the ElementType overloads); loop and branch
// regions take arrays.
class RegionBuilder {
 public:
  // `prefix` keeps the names of sibling regions apart ("%r0_a0", ...).
  RegionBuilder(const std::string& prefix, const std::vector<ElementType>& arguments);
  RegionBuilder(const std::string& prefix, const std::vector<ArrayType>& arguments);

  // The name of block argument `i`.
  const std::string& Argument(size_t i) const { return arguments_[i]; }
  // Makes `name`, a value of the enclosing function or region, usable here.
  void Capture(const std::string& name, const ArrayType& type) { types_[name] = type; }
  // Adds an op (generic form) with `results`, `attributes` (inside "<{...}>") and `regions`
  // ("{ ... }" each); returns the result names.
  std::vector<std::string> Op(const std::string& name, const std::vector<std::string>& operands,
                              const std::vector<ArrayType>& results, const std::string& attributes,
                              const std::vector<std::string>& regions);
  // An op with one array result.
  std::string Op1(const std::string& name, const std::vector<std::string>& operands,
                  const ArrayType& result, const std::string& attributes = "",
                  const std::vector<std::string>& regions = {});
  // An op with one scalar result.
  std::string Op(const std::string& name, const std::vector<std::string>& operands,
                 ElementType result, const std::string& attributes = "");
  // Adds "stablehlo.constant" of `value` (an MLIR literal) and returns its name.
  std::string Constant(const std::string& value, ElementType type);
  // The type of value `name`.
  const ArrayType& TypeOf(const std::string& name) const { return types_.at(name); }
  // The region text "{ ^bb0(...): ... stablehlo.return ... }" returning `results`.
  std::string Build(const std::vector<std::string>& results) const;

 private:
  std::string prefix_;                      // Name prefix of this region's values.
  std::vector<std::string> arguments_;      // Block argument names.
  std::map<std::string, ArrayType> types_;  // Type of every value.
  std::vector<std::string> lines_;          // Op lines.
  int next_value_ = 0;                      // Counter of result names.
};

// "{ ^bb0(%a: tensor<T>, %b: tensor<T>): %r = <op>(%a, %b) ... }": a region combining two
// scalars of `type` with the binary op `op` ("stablehlo.add", ...).
std::string BinaryRegion(const std::string& prefix, const std::string& op, ElementType type);

// A function `main` written op by op.
class ProgramBuilder {
 public:
  ProgramBuilder() = default;

  // Adds an argument of `type`; returns its name ("%p0").
  std::string Parameter(const ArrayType& type);
  // Adds the op `name` (generic form): operands (names from this builder), results' types,
  // `attributes` (the text inside "<{...}>", empty for none) and `regions` (each region's text
  // "{ ... }", as RegionBuilder::Build writes it). Returns the result names.
  std::vector<std::string> Op(const std::string& name, const std::vector<std::string>& operands,
                              const std::vector<ArrayType>& results,
                              const std::string& attributes = "",
                              const std::vector<std::string>& regions = {});
  // Op with one result.
  std::string Op1(const std::string& name, const std::vector<std::string>& operands,
                  const ArrayType& result, const std::string& attributes = "",
                  const std::vector<std::string>& regions = {});
  // A constant splat of `value` (an MLIR literal) with `type`.
  std::string Constant(const std::string& value, const ArrayType& type);
  // The type of value `name`.
  const ArrayType& TypeOf(const std::string& name) const;
  // The module text of `main` returning `results`.
  std::string Build(const std::vector<std::string>& results) const;

 private:
  std::vector<std::string> parameters_;       // "%p0: tensor<...>".
  std::map<std::string, ArrayType> types_;    // Type of every value.
  std::vector<std::string> lines_;            // Op lines.
  int next_value_ = 0;                        // Counter of result names.
};

}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_DIFFERENTIAL_PROGRAM_BUILDER_H_
