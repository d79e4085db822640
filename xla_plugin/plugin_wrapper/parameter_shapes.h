// ParameterShapes: the parameter shapes of a compiled program, read from its optimized HLO, and
// the check of Execute arguments against them.
//
// XLA:CPU checks only the byte size of an argument (it accepts s32[4] or f32[2,2] for an f32[4]
// parameter); pjrtkit checks element type and dimensions itself. The shapes come from
// PJRT_Executable_OptimizedProgram, whose format "hlo_with_config" is a serialized
// xla.HloModuleProtoWithConfig { HloModuleProto hlo_module = 1; ... } and "hlo" a serialized
// HloModuleProto. Field numbers used (hlo.proto / xla_data.proto, checked against real bytes):
//   HloModuleProto     { computations = 3; host_program_shape = 4; entry_computation_id = 6 }
//   HloComputationProto { program_shape = 4; id = 5 }
//   ProgramShapeProto  { parameters = 1 (repeated ShapeProto) }
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PARAMETER_SHAPES_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PARAMETER_SHAPES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/plugin_wrapper/hlo_shape.h"

namespace pjrtkit {
namespace plugin_wrapper {

// The shapes of the arguments a program takes, in order. A program compiled with its arguments
// tupled (one TUPLE parameter) takes the tuple's elements as its arguments.
class ParameterShapes {
 public:
  // From an optimized program of format "hlo_with_config" or "hlo". UNIMPLEMENTED for another
  // format or for tuple-typed arguments (they cannot be checked); INVALID_ARGUMENT for bytes that
  // are not such a proto or have no program shape.
  static StatusOr<ParameterShapes> FromOptimizedProgram(const Program& program);
  // From a serialized HloModuleProto (see FromOptimizedProgram for the errors).
  static StatusOr<ParameterShapes> FromHloModule(std::string_view module);

  // Number of arguments.
  size_t size() const { return shapes_.size(); }
  // The argument shapes.
  const std::vector<HloShape>& shapes() const { return shapes_; }

  // INVALID_ARGUMENT "'<name>' takes N arguments, got M" unless `count` is size().
  Status CheckCount(size_t count, const std::string& executable_name) const;
  // OK when an array of `type` and `dims` may be passed as argument `index` (< size()): equal
  // element type, rank and static dimensions, dynamic ones within their bound. Parameters of
  // types pjrtkit does not know (tokens, opaque, ...) accept anything. Otherwise
  // INVALID_ARGUMENT "argument 0 of 'add' must be f32[4], got s32[4]".
  Status CheckArgument(size_t index, ElementType type, const std::vector<int64_t>& dims,
                       const std::string& executable_name) const;

  // True when parameter `index` (< size()) is dense row-major or has no layout: an argument
  // whose buffer is row-major too needs no layout check (Execute's fast path).
  bool row_major(size_t index) const { return row_major_[index]; }

  // OK when an argument laid out as `layout` (with `dims`) stores its elements in the order
  // parameter `index` (< size()) expects, for an inner plugin that never converts layouts but
  // reads the bytes in the program's layout (DevicePolicy::moves_bytes_ignoring_layouts).
  // INVALID_ARGUMENT "argument 0 of 'f' must be laid out {1,0}, got {0,1} (<inner_name> would
  // read ...)" otherwise. Parameters without a layout accept anything.
  Status CheckArgumentLayout(size_t index, const MemoryLayout& layout,
                             const std::vector<int64_t>& dims, const std::string& executable_name,
                             const std::string& inner_name) const;

 private:
  explicit ParameterShapes(std::vector<HloShape> shapes);

  std::vector<HloShape> shapes_;  // One per argument.
  std::vector<bool> row_major_;   // Per argument: see row_major().
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PARAMETER_SHAPES_H_
