#include "xla_plugin/plugin_wrapper/hlo_shape.h"

#include <utility>

#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// ShapeProto field numbers (xla_data.proto).
constexpr int kElementTypeField = 2;
constexpr int kDimensionsField = 3;
constexpr int kTupleShapesField = 4;
constexpr int kLayoutField = 5;
constexpr int kIsDynamicDimensionField = 6;

// LayoutProto and TileProto field numbers (xla_data.proto).
constexpr int kMinorToMajorField = 1;
constexpr int kTilesField = 6;
constexpr int kElementSizeInBitsField = 7;
constexpr int kMemorySpaceField = 8;
constexpr int kTileDimensionsField = 1;

// Deepest tuple nesting accepted (keeps a hostile message from exhausting the stack).
constexpr int kMaxTupleDepth = 64;

// Appends the values of a repeated varint field, packed (length-delimited) or not.
Status AppendVarints(const ProtoField& field, std::vector<int64_t>* out) {
  if (field.type == WireType::kVarint) {
    out->push_back(static_cast<int64_t>(field.varint));
    return OkStatus();
  }
  if (field.type != WireType::kLengthDelimited) {
    return InvalidArgument("ShapeProto field " + std::to_string(field.number) +
                           " has an unexpected wire type");
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> values, ProtoReader::PackedVarints(field.bytes));
  out->insert(out->end(), values.begin(), values.end());
  return OkStatus();
}

// Parses a serialized LayoutProto: minor_to_major, tiles and the element size (the fields a
// MemoryLayout has), and the memory space into `*memory_space`.
StatusOr<MemoryLayout> ParseLayout(std::string_view bytes, int64_t* memory_space) {
  MemoryLayout layout;
  ProtoReader reader(bytes);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    if (field.number == kMinorToMajorField) {
      PJRTKIT_RETURN_IF_ERROR(AppendVarints(field, &layout.minor_to_major));
    } else if (field.number == kTilesField) {
      if (field.type != WireType::kLengthDelimited) {
        return InvalidArgument("LayoutProto tiles is not a message");
      }
      std::vector<int64_t> tile;
      ProtoReader tile_reader(field.bytes);
      while (!tile_reader.done()) {
        PJRTKIT_ASSIGN_OR_RETURN(ProtoField tile_field, tile_reader.Next());
        if (tile_field.number == kTileDimensionsField) {
          PJRTKIT_RETURN_IF_ERROR(AppendVarints(tile_field, &tile));
        }
      }
      layout.tiles.push_back(std::move(tile));
    } else if (field.number == kElementSizeInBitsField) {
      if (field.type != WireType::kVarint) {
        return InvalidArgument("LayoutProto element_size_in_bits is not a varint");
      }
      layout.element_size_in_bits = static_cast<int64_t>(field.varint);
    } else if (field.number == kMemorySpaceField) {
      if (field.type != WireType::kVarint) {
        return InvalidArgument("LayoutProto memory_space is not a varint");
      }
      *memory_space = static_cast<int64_t>(field.varint);
    }
  }
  return layout;
}

StatusOr<HloShape> ParseShape(std::string_view bytes, int depth) {
  if (depth > kMaxTupleDepth) return InvalidArgument("ShapeProto tuples nest too deeply");
  HloShape shape;
  std::vector<int64_t> dynamic;
  ProtoReader reader(bytes);
  while (!reader.done()) {
    PJRTKIT_ASSIGN_OR_RETURN(ProtoField field, reader.Next());
    switch (field.number) {
      case kElementTypeField:
        if (field.type != WireType::kVarint) {
          return InvalidArgument("ShapeProto element_type is not a varint");
        }
        shape.primitive_type = static_cast<int>(field.varint);
        break;
      case kDimensionsField:
        PJRTKIT_RETURN_IF_ERROR(AppendVarints(field, &shape.dims));
        break;
      case kTupleShapesField: {
        if (field.type != WireType::kLengthDelimited) {
          return InvalidArgument("ShapeProto tuple_shapes is not a message");
        }
        PJRTKIT_ASSIGN_OR_RETURN(HloShape element, ParseShape(field.bytes, depth + 1));
        shape.tuple_shapes.push_back(std::move(element));
        break;
      }
      case kIsDynamicDimensionField:
        PJRTKIT_RETURN_IF_ERROR(AppendVarints(field, &dynamic));
        break;
      case kLayoutField: {
        if (field.type != WireType::kLengthDelimited) {
          return InvalidArgument("ShapeProto layout is not a message");
        }
        PJRTKIT_ASSIGN_OR_RETURN(MemoryLayout layout,
                                 ParseLayout(field.bytes, &shape.memory_space));
        shape.layout = std::move(layout);
        break;
      }
      default:  // Anything newer: not needed.
        break;
    }
  }
  for (int64_t flag : dynamic) shape.dynamic.push_back(flag != 0);
  shape.element_type = ElementTypeFromPrimitiveType(shape.primitive_type);
  return shape;
}

}  // namespace

ElementType ElementTypeFromPrimitiveType(int primitive_type) {
  // xla_data.proto PrimitiveType -> pjrtkit (== PJRT_Buffer_Type) values.
  switch (primitive_type) {
    case 1: return ElementType::kPred;
    case 2: return ElementType::kS8;
    case 3: return ElementType::kS16;
    case 4: return ElementType::kS32;
    case 5: return ElementType::kS64;
    case 6: return ElementType::kU8;
    case 7: return ElementType::kU16;
    case 8: return ElementType::kU32;
    case 9: return ElementType::kU64;
    case 10: return ElementType::kF16;
    case 11: return ElementType::kF32;
    case 12: return ElementType::kF64;
    case 15: return ElementType::kC64;
    case 16: return ElementType::kBF16;
    case 17: return ElementType::kToken;
    case 18: return ElementType::kC128;
    case 19: return ElementType::kF8E5M2;
    case 20: return ElementType::kF8E4M3FN;
    case 21: return ElementType::kS4;
    case 22: return ElementType::kU4;
    case 23: return ElementType::kF8E4M3B11FNUZ;
    case 24: return ElementType::kF8E5M2FNUZ;
    case 25: return ElementType::kF8E4M3FNUZ;
    case 26: return ElementType::kS2;
    case 27: return ElementType::kU2;
    case 28: return ElementType::kF8E4M3;
    case 29: return ElementType::kF8E3M4;
    case 32: return ElementType::kF4E2M1FN;
    case 33: return ElementType::kF8E8M0FNU;
    default: return ElementType::kInvalid;  // INVALID, TUPLE, OPAQUE_TYPE, S1, U1, F6*, newer.
  }
}

std::string ArrayShapeString(ElementType type, const std::vector<int64_t>& dims) {
  std::string out = std::string(ElementTypeName(type)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

std::string HloShape::ToString() const {
  if (is_tuple()) {
    std::string out = "(";
    for (size_t i = 0; i < tuple_shapes.size(); ++i) {
      if (i > 0) out += ", ";
      out += tuple_shapes[i].ToString();
    }
    return out + ")";
  }
  if (primitive_type == kPrimitiveTypeOpaque) return "opaque[]";
  std::string out = element_type == ElementType::kInvalid
                        ? "type" + std::to_string(primitive_type)
                        : std::string(ElementTypeName(element_type));
  out += "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ",";
    if (is_dynamic(i)) out += "<=";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

StatusOr<HloShape> ParseShapeProto(std::string_view bytes) { return ParseShape(bytes, 0); }

}  // namespace plugin_wrapper
}  // namespace pjrtkit
