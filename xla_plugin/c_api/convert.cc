#include "xla_plugin/c_api/convert.h"

// C++ standard library.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>
#include <utility>
#include <variant>

// pjrtkit C API layer.
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {
namespace {

// The client layer promises that its enums equal the C API's; check every value.
#define PJRTKIT_SAME_CODE(ours, theirs) \
  static_assert(static_cast<int>(StatusCode::ours) == PJRT_Error_Code_##theirs, #theirs)
PJRTKIT_SAME_CODE(kOk, OK);
PJRTKIT_SAME_CODE(kCancelled, CANCELLED);
PJRTKIT_SAME_CODE(kUnknown, UNKNOWN);
PJRTKIT_SAME_CODE(kInvalidArgument, INVALID_ARGUMENT);
PJRTKIT_SAME_CODE(kDeadlineExceeded, DEADLINE_EXCEEDED);
PJRTKIT_SAME_CODE(kNotFound, NOT_FOUND);
PJRTKIT_SAME_CODE(kAlreadyExists, ALREADY_EXISTS);
PJRTKIT_SAME_CODE(kPermissionDenied, PERMISSION_DENIED);
PJRTKIT_SAME_CODE(kResourceExhausted, RESOURCE_EXHAUSTED);
PJRTKIT_SAME_CODE(kFailedPrecondition, FAILED_PRECONDITION);
PJRTKIT_SAME_CODE(kAborted, ABORTED);
PJRTKIT_SAME_CODE(kOutOfRange, OUT_OF_RANGE);
PJRTKIT_SAME_CODE(kUnimplemented, UNIMPLEMENTED);
PJRTKIT_SAME_CODE(kInternal, INTERNAL);
PJRTKIT_SAME_CODE(kUnavailable, UNAVAILABLE);
PJRTKIT_SAME_CODE(kDataLoss, DATA_LOSS);
PJRTKIT_SAME_CODE(kUnauthenticated, UNAUTHENTICATED);
#undef PJRTKIT_SAME_CODE

#define PJRTKIT_SAME_TYPE(ours, theirs) \
  static_assert(static_cast<int>(ElementType::ours) == PJRT_Buffer_Type_##theirs, #theirs)
PJRTKIT_SAME_TYPE(kInvalid, INVALID);
PJRTKIT_SAME_TYPE(kPred, PRED);
PJRTKIT_SAME_TYPE(kS8, S8);
PJRTKIT_SAME_TYPE(kS16, S16);
PJRTKIT_SAME_TYPE(kS32, S32);
PJRTKIT_SAME_TYPE(kS64, S64);
PJRTKIT_SAME_TYPE(kU8, U8);
PJRTKIT_SAME_TYPE(kU16, U16);
PJRTKIT_SAME_TYPE(kU32, U32);
PJRTKIT_SAME_TYPE(kU64, U64);
PJRTKIT_SAME_TYPE(kF16, F16);
PJRTKIT_SAME_TYPE(kF32, F32);
PJRTKIT_SAME_TYPE(kF64, F64);
PJRTKIT_SAME_TYPE(kBF16, BF16);
PJRTKIT_SAME_TYPE(kC64, C64);
PJRTKIT_SAME_TYPE(kC128, C128);
PJRTKIT_SAME_TYPE(kF8E5M2, F8E5M2);
PJRTKIT_SAME_TYPE(kF8E4M3FN, F8E4M3FN);
PJRTKIT_SAME_TYPE(kF8E4M3B11FNUZ, F8E4M3B11FNUZ);
PJRTKIT_SAME_TYPE(kF8E5M2FNUZ, F8E5M2FNUZ);
PJRTKIT_SAME_TYPE(kF8E4M3FNUZ, F8E4M3FNUZ);
PJRTKIT_SAME_TYPE(kS4, S4);
PJRTKIT_SAME_TYPE(kU4, U4);
PJRTKIT_SAME_TYPE(kToken, TOKEN);
PJRTKIT_SAME_TYPE(kS2, S2);
PJRTKIT_SAME_TYPE(kU2, U2);
PJRTKIT_SAME_TYPE(kF8E4M3, F8E4M3);
PJRTKIT_SAME_TYPE(kF8E3M4, F8E3M4);
PJRTKIT_SAME_TYPE(kF8E8M0FNU, F8E8M0FNU);
PJRTKIT_SAME_TYPE(kF4E2M1FN, F4E2M1FN);
PJRTKIT_SAME_TYPE(kS1, S1);
PJRTKIT_SAME_TYPE(kU1, U1);
PJRTKIT_SAME_TYPE(kF6E2M3FN, F6E2M3FN);
PJRTKIT_SAME_TYPE(kF6E3M2FN, F6E3M2FN);
#undef PJRTKIT_SAME_TYPE
static_assert(kMaxElementType == PJRT_Buffer_Type_F6E3M2FN,
              "pjrt_c_api.h has element types pjrtkit does not know");

static_assert(static_cast<int>(HostBufferSemantics::kImmutableOnlyDuringCall) ==
              PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
static_assert(static_cast<int>(HostBufferSemantics::kImmutableUntilTransferCompletes) ==
              PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes);
static_assert(static_cast<int>(HostBufferSemantics::kImmutableZeroCopy) ==
              PJRT_HostBufferSemantics_kImmutableZeroCopy);
static_assert(static_cast<int>(HostBufferSemantics::kMutableZeroCopy) ==
              PJRT_HostBufferSemantics_kMutableZeroCopy);

// "PJRT_Foo: " + text.
Status Invalid(const char* fn, const std::string& text) {
  return InvalidArgument(std::string(fn) + ": " + text);
}

// Checks that `minor_to_major` is a permutation of 0..rank-1.
Status CheckPermutation(const char* fn, const std::vector<int64_t>& minor_to_major, size_t rank) {
  if (minor_to_major.size() != rank) {
    return Invalid(fn, "layout minor_to_major has " + std::to_string(minor_to_major.size()) +
                           " entries but the array has " + std::to_string(rank) + " dimensions");
  }
  std::vector<bool> seen(rank, false);
  for (int64_t d : minor_to_major) {
    if (d < 0 || static_cast<size_t>(d) >= rank || seen[d]) {
      return Invalid(fn, "layout minor_to_major is not a permutation of the dimensions");
    }
    seen[d] = true;
  }
  return OkStatus();
}

// Converts a tiled C layout. Its struct_size is not read: see FromPjrtLayout.
StatusOr<MemoryLayout> FromTiled(const char* fn, const PJRT_Buffer_MemoryLayout_Tiled& tiled,
                                 size_t rank) {
  if (tiled.minor_to_major_size != rank) {  // Checked before anything is read.
    return Invalid(fn, "layout minor_to_major has " + std::to_string(tiled.minor_to_major_size) +
                           " entries but the array has " + std::to_string(rank) + " dimensions");
  }
  if (tiled.minor_to_major == nullptr && tiled.minor_to_major_size > 0) {
    return Invalid(fn, "layout minor_to_major is null");
  }
  MemoryLayout layout;
  layout.minor_to_major.assign(tiled.minor_to_major,
                               tiled.minor_to_major + tiled.minor_to_major_size);
  PJRTKIT_RETURN_IF_ERROR(CheckPermutation(fn, layout.minor_to_major, rank));
  if (tiled.num_tiles > 0 && tiled.tile_dim_sizes == nullptr) {
    return Invalid(fn, "layout has tiles but tile_dim_sizes is null");
  }
  size_t offset = 0;
  for (size_t t = 0; t < tiled.num_tiles; ++t) {
    const size_t n = tiled.tile_dim_sizes[t];
    if (n > rank) {
      return Invalid(fn, "layout tile " + std::to_string(t) + " has " + std::to_string(n) +
                             " dimensions but the array has " + std::to_string(rank));
    }
    if (n > 0 && tiled.tile_dims == nullptr) return Invalid(fn, "layout tile_dims is null");
    layout.tiles.emplace_back(tiled.tile_dims + offset, tiled.tile_dims + offset + n);
    offset += n;
  }
  return layout;
}

// Converts byte strides into the minor_to_major of a compact array, when they describe one. Its
// struct_size is not read: see FromPjrtLayout.
StatusOr<MemoryLayout> FromStrides(const char* fn, const PJRT_Buffer_MemoryLayout_Strides& strides,
                                   ElementType type, const std::vector<int64_t>& dims) {
  const size_t rank = dims.size();
  if (strides.num_byte_strides != rank) {
    return Invalid(fn, "layout has " + std::to_string(strides.num_byte_strides) +
                           " byte strides but the array has " + std::to_string(rank) +
                           " dimensions");
  }
  if (rank > 0 && strides.byte_strides == nullptr) return Invalid(fn, "byte_strides is null");
  for (int64_t d : dims) {
    if (d == 0) {  // An empty array: every stride describes it; report row-major.
      MemoryLayout layout;
      layout.minor_to_major = RowMajorMinorToMajor(rank);
      return layout;
    }
  }
  if (ElementTypeBits(type) % 8 != 0 || ElementTypeBits(type) == 0) {
    return Unimplemented(std::string(fn) + ": byte-stride layouts of " + ElementTypeName(type) +
                         " arrays are not supported by pjrtkit");
  }
  // Order the dimensions by increasing stride (ties: the later dimension is more minor).
  std::vector<int64_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (strides.byte_strides[a] != strides.byte_strides[b]) {
      return strides.byte_strides[a] < strides.byte_strides[b];
    }
    return a > b;
  });
  int64_t expected = ElementTypeBits(type) / 8;
  for (int64_t d : order) {
    if (dims[d] != 1 && strides.byte_strides[d] != expected) {
      return Unimplemented(std::string(fn) +
                           ": byte strides that do not describe a compact array (padding, "
                           "negative or overlapping strides) are not supported by pjrtkit");
    }
    expected *= dims[d];
  }
  MemoryLayout layout;
  layout.minor_to_major = order;
  return layout;
}

// Length of the valid UTF-8 sequence at `s[i]`, or 0 when the bytes there are not one.
size_t Utf8SequenceLength(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // Allowed range of the second byte.
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) {
    length = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    length = 3;
    if (b == 0xE0) low = 0xA0;   // No overlong forms.
    if (b == 0xED) high = 0x9F;  // No surrogates.
  } else if (b >= 0xF0 && b <= 0xF4) {
    length = 4;
    if (b == 0xF0) low = 0x90;   // No overlong forms.
    if (b == 0xF4) high = 0x8F;  // Nothing above U+10FFFF.
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

// ---- Status <-> PJRT_Error --------------------------------------------------------------------

std::string ToValidUtf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      static const char kHex[] = "0123456789abcdef";
      const auto b = static_cast<unsigned char>(text[i]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
      ++i;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out;
}

PJRT_Error* ToPjrtError(Status status) {
  if (status.ok()) return nullptr;
  // Frameworks decode the message as UTF-8 (jaxlib raises UnicodeDecodeError otherwise), and
  // device errors may quote binary program bytes.
  Status text(status.code(), ToValidUtf8(status.message()));
  for (const auto& [key, value] : status.payloads()) text.SetPayload(key, value);
  return new ErrorImpl(std::move(text));
}

PJRT_Error* EmergencyError() noexcept {
  // Never destroyed: PJRT_Error_Destroy recognises it. Built on the first call (from MakePjrtApi).
  static PJRT_Error* const error = new ErrorImpl(
      Status(StatusCode::kResourceExhausted, "pjrtkit: out of memory while reporting an error"));
  return error;
}

void DestroyError(PJRT_Error* error) {
  if (error == nullptr || error == EmergencyError()) return;  // The latter is never freed.
  delete static_cast<ErrorImpl*>(error);
}

Status ErrorFromFields(const char* fn, const PJRT_Error_Code& code, const char* message,
                       size_t message_size, const PJRT_NamedValue* payload, size_t num_payload,
                       Status* error) {
  const int value = RawEnumValue(code);
  if (value <= 0 || value > static_cast<int>(StatusCode::kUnauthenticated)) {
    return Invalid(fn, "error_code must be an error (1..16), got " + std::to_string(value));
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::string text,
                           ToString(fn, "error_message", message, message_size));
  Status status(static_cast<StatusCode>(value), std::move(text));
  if (num_payload > 0) {
    PJRTKIT_ASSIGN_OR_RETURN(AttributeMap values, ToAttributeMap(fn, payload, num_payload));
    for (auto& [key, entry] : values) {
      if (!std::holds_alternative<std::string>(entry)) {
        return Invalid(fn, "payload '" + key + "' must be a string");
      }
      status.SetPayload(key, std::get<std::string>(entry));
    }
  }
  *error = std::move(status);
  return OkStatus();
}

StatusCode ToStatusCode(PJRT_Error_Code code) { return static_cast<StatusCode>(code); }

PJRT_Error_Code ToPjrtErrorCode(StatusCode code) { return static_cast<PJRT_Error_Code>(code); }

// ---- Element types ----------------------------------------------------------------------------

PJRT_Buffer_Type ToPjrtBufferType(ElementType type) { return static_cast<PJRT_Buffer_Type>(type); }

StatusOr<ElementType> FromPjrtBufferType(const char* fn, const PJRT_Buffer_Type& type) {
  const int value = RawEnumValue(type);  // The framework may put any int there.
  if (value <= 0 || value > kMaxElementType) {
    return Invalid(fn, "invalid PJRT_Buffer_Type " + std::to_string(value));
  }
  return static_cast<ElementType>(value);
}

// ---- Strings ----------------------------------------------------------------------------------

StatusOr<std::string> ToString(const char* fn, const char* what, const char* data, size_t size) {
  if (size == 0) return std::string();
  if (data == nullptr) {
    return Invalid(fn, std::string(what) + " is null but its size is " + std::to_string(size));
  }
  return std::string(data, size);
}

// ---- Programs ---------------------------------------------------------------------------------

StatusOr<Program> ToProgram(const char* fn, const PJRT_Program* program) {
  if (program == nullptr) return Invalid(fn, "args->program is null");
  if (program->struct_size < PJRTKIT_ARGS_SIZE(PJRT_Program, format_size)) {
    return Invalid(fn, "PJRT_Program struct_size is " + std::to_string(program->struct_size) +
                           ", expected at least " + std::to_string(PJRT_Program_STRUCT_SIZE));
  }
  Program out;
  PJRTKIT_ASSIGN_OR_RETURN(out.format,
                           ToString(fn, "program->format", program->format, program->format_size));
  PJRTKIT_ASSIGN_OR_RETURN(out.code,
                           ToString(fn, "program->code", program->code, program->code_size));
  return out;
}

// ---- Named values -----------------------------------------------------------------------------

StatusOr<AttributeMap> ToAttributeMap(const char* fn, const PJRT_NamedValue* values, size_t count) {
  AttributeMap out;
  if (count == 0) return out;
  if (values == nullptr) {
    return Invalid(fn, "the options array is null but num_options is " + std::to_string(count));
  }
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& v = values[i];
    const std::string index = "option #" + std::to_string(i);
    if (v.struct_size < PJRTKIT_ARGS_SIZE(PJRT_NamedValue, value_size)) {
      return Invalid(fn, index + " has PJRT_NamedValue struct_size " +
                             std::to_string(v.struct_size) + ", expected at least " +
                             std::to_string(PJRT_NamedValue_STRUCT_SIZE));
    }
    if (v.name == nullptr || v.name_size == 0) return Invalid(fn, index + " has no name");
    std::string name(v.name, v.name_size);
    const std::string label = "option '" + name + "'";
    AttributeValue value;
    const int type = RawEnumValue(v.type);  // tests/fuzz found 255 here.
    switch (type) {
      case PJRT_NamedValue_kString:
        if (v.string_value == nullptr && v.value_size > 0) {
          return Invalid(fn, label + " has a null string value");
        }
        value = v.value_size == 0 ? std::string() : std::string(v.string_value, v.value_size);
        break;
      case PJRT_NamedValue_kInt64:
        value = v.int64_value;
        break;
      case PJRT_NamedValue_kInt64List:
        if (v.int64_array_value == nullptr && v.value_size > 0) {
          return Invalid(fn, label + " has a null int64 list");
        }
        value = v.value_size == 0
                    ? std::vector<int64_t>()
                    : std::vector<int64_t>(v.int64_array_value, v.int64_array_value + v.value_size);
        break;
      case PJRT_NamedValue_kFloat:
        value = v.float_value;
        break;
      case PJRT_NamedValue_kBool:
        value = v.bool_value;
        break;
      default:
        return Invalid(fn, label + " has unknown PJRT_NamedValue_Type " + std::to_string(type));
    }
    if (!out.emplace(std::move(name), std::move(value)).second) {
      return Invalid(fn, label + " is given more than once");
    }
  }
  return out;
}

NamedValueList::NamedValueList(AttributeMap attributes) : attributes_(std::move(attributes)) {
  values_.reserve(attributes_.size());
  for (const auto& [name, value] : attributes_) {
    PJRT_NamedValue v{};
    v.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    v.extension_start = nullptr;
    v.name = name.c_str();
    v.name_size = name.size();
    v.value_size = 1;
    if (const auto* i = std::get_if<int64_t>(&value)) {
      v.type = PJRT_NamedValue_kInt64;
      v.int64_value = *i;
    } else if (const auto* s = std::get_if<std::string>(&value)) {
      v.type = PJRT_NamedValue_kString;
      v.string_value = s->c_str();
      v.value_size = s->size();
    } else if (const auto* b = std::get_if<bool>(&value)) {
      v.type = PJRT_NamedValue_kBool;
      v.bool_value = *b;
    } else if (const auto* f = std::get_if<float>(&value)) {
      v.type = PJRT_NamedValue_kFloat;
      v.float_value = *f;
    } else {
      const auto& list = std::get<std::vector<int64_t>>(value);
      v.type = PJRT_NamedValue_kInt64List;
      v.int64_array_value = list.data();
      v.value_size = list.size();
    }
    values_.push_back(v);
  }
}

// ---- Memory layouts ---------------------------------------------------------------------------

std::vector<int64_t> RowMajorMinorToMajor(size_t rank) {
  std::vector<int64_t> m2m(rank);
  for (size_t i = 0; i < rank; ++i) m2m[i] = static_cast<int64_t>(rank - 1 - i);
  return m2m;
}

bool IsRowMajor(const MemoryLayout& layout) {
  return layout.tiles.empty() &&
         layout.minor_to_major == RowMajorMinorToMajor(layout.minor_to_major.size());
}

StatusOr<MemoryLayout> FromPjrtLayout(const char* fn, const PJRT_Buffer_MemoryLayout& layout,
                                      ElementType type, const std::vector<int64_t>& dims) {
  // No struct_size is read here, neither the outer one nor the tiled/strides one: jaxlib builds
  // these structs with XLA's ConvertToBufferMemoryLayoutData, which sets neither (0.11.2 and
  // 0.12.0.1 send whatever was on the stack: 0, 1, 2, ...), and XLA's own plugins never read
  // them. Every field that matters is checked instead.
  const int layout_type = RawEnumValue(layout.type);
  switch (layout_type) {
    case PJRT_Buffer_MemoryLayout_Type_Tiled:
      return FromTiled(fn, layout.tiled, dims.size());
    case PJRT_Buffer_MemoryLayout_Type_Strides:
      return FromStrides(fn, layout.strides, type, dims);
  }
  return Invalid(fn, "unknown PJRT_Buffer_MemoryLayout_Type " + std::to_string(layout_type));
}

StatusOr<std::vector<int64_t>> DenseByteStrides(ElementType type, const std::vector<int64_t>& dims,
                                                const std::vector<int64_t>& minor_to_major) {
  const int bits = ElementTypeBits(type);
  if (bits == 0 || bits % 8 != 0) {
    return InvalidArgument(std::string("byte strides are undefined for ") + ElementTypeName(type));
  }
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t stride = bits / 8;
  for (int64_t d : minor_to_major) {
    strides[d] = stride;
    stride *= dims[d];
  }
  return strides;
}

TiledLayoutView::TiledLayoutView(MemoryLayout layout) : layout_(std::move(layout)) {
  for (const std::vector<int64_t>& tile : layout_.tiles) {
    tile_dims_.insert(tile_dims_.end(), tile.begin(), tile.end());
    tile_dim_sizes_.push_back(tile.size());
  }
}

void TiledLayoutView::Fill(PJRT_Buffer_MemoryLayout* out) const {
  *out = PJRT_Buffer_MemoryLayout{};
  out->struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  out->type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  out->tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  out->tiled.minor_to_major = layout_.minor_to_major.data();
  out->tiled.minor_to_major_size = layout_.minor_to_major.size();
  out->tiled.tile_dims = tile_dims_.empty() ? nullptr : tile_dims_.data();
  out->tiled.tile_dim_sizes = tile_dim_sizes_.empty() ? nullptr : tile_dim_sizes_.data();
  out->tiled.num_tiles = tile_dim_sizes_.size();
}

}  // namespace capi
}  // namespace pjrtkit
