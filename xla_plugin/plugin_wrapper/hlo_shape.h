// HloShape: the parts of an XLA ShapeProto pjrtkit checks arguments against, read with
// ProtoReader from the serialized proto.
//
// Field numbers (xla_data.proto; checked against HloModuleProto bytes made by jaxlib, see
// testdata/gen_hlo_test_data.py, and by XLA:CPU, see parameter_shapes_test): ShapeProto {
// element_type = 2 (PrimitiveType), dimensions = 3 (packed int64), tuple_shapes = 4, layout = 5,
// is_dynamic_dimension = 6 (packed bool) }, LayoutProto { minor_to_major = 1 (packed int64),
// tiles = 6 (TileProto { dimensions = 1 }), element_size_in_bits = 7, memory_space = 8 }.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HLO_SHAPE_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HLO_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace plugin_wrapper {

// xla::PrimitiveType values that are not array element types.
constexpr int kPrimitiveTypeTuple = 13;   // TUPLE.
constexpr int kPrimitiveTypeOpaque = 14;  // OPAQUE_TYPE.

// The pjrtkit element type of XLA PrimitiveType `primitive_type` (the numbering differs from
// PJRT_Buffer_Type: e.g. BF16 is 16 in XLA, 13 in PJRT). kInvalid for TUPLE, OPAQUE_TYPE and types
// pjrtkit does not know (S1, U1, F6*). TOKEN maps to kToken.
ElementType ElementTypeFromPrimitiveType(int primitive_type);

// "f32[4]", "s32[2,3]", "pred[]": an array shape as error messages print it.
std::string ArrayShapeString(ElementType type, const std::vector<int64_t>& dims);

// A ShapeProto: an array (element type and dimensions), a tuple, a token or an opaque value.
struct HloShape {
  int primitive_type = 0;                     // The xla::PrimitiveType value.
  ElementType element_type = ElementType::kInvalid;  // Array element type; kInvalid otherwise.
  std::vector<int64_t> dims;                  // Dimensions (bounds of dynamic ones).
  std::vector<bool> dynamic;                  // Per dimension: dynamic (empty: all static).
  std::vector<HloShape> tuple_shapes;         // Elements of a tuple.
  std::optional<MemoryLayout> layout;         // The array's layout, when the proto has one.
  // Its LayoutProto.memory_space (field 8): 0, the default, is device memory; XLA puts arrays in
  // host memory (a pinned_host parameter) in space 5.
  int64_t memory_space = 0;

  // True for a TUPLE shape.
  bool is_tuple() const { return primitive_type == kPrimitiveTypeTuple; }
  // True for an array pjrtkit can check (a known element type that is not TOKEN).
  bool is_checkable_array() const {
    return element_type != ElementType::kInvalid && element_type != ElementType::kToken;
  }
  // True when dimension `i` is dynamic (its dims[i] is an upper bound).
  bool is_dynamic(size_t i) const { return i < dynamic.size() && dynamic[i]; }
  // "f32[4]", "f32[<=8]" (dynamic), "(f32[4], s32[])" (tuple), "token[]", "opaque[]".
  std::string ToString() const;
};

// Parses a serialized ShapeProto. INVALID_ARGUMENT when the bytes are malformed or tuples nest
// deeper than 64 levels.
StatusOr<HloShape> ParseShapeProto(std::string_view bytes);

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_HLO_SHAPE_H_
