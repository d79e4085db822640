// Conversions between the PJRT C types and the pjrtkit client layer: Status <-> PJRT_Error,
// PJRT_Buffer_Type <-> ElementType, PJRT_NamedValue <-> AttributeMap, and memory layouts.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_CONVERT_H_
#define PJRTKIT_XLA_PLUGIN_C_API_CONVERT_H_

// C++ standard library.
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit client layer.
#include "xla_plugin/abi/raw_enum.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace capi {

// ---- Status <-> PJRT_Error --------------------------------------------------------------------

// Returns nullptr for an OK `status`, else a new PJRT_Error the caller frees with
// PJRT_Error_Destroy. The message is made valid UTF-8 (see ToValidUtf8).
PJRT_Error* ToPjrtError(Status status);

// `text` with every byte that is not part of a valid UTF-8 sequence written as "\xNN".
std::string ToValidUtf8(const std::string& text);

// A preallocated RESOURCE_EXHAUSTED error returned when even building an error fails (out of
// memory). PJRT_Error_Destroy leaves it alone. MakePjrtApi creates it up front.
PJRT_Error* EmergencyError() noexcept;

// Frees an error pjrtkit made (nullptr and EmergencyError() are left alone).
void DestroyError(PJRT_Error* error);

// The error a framework describes by fields (PJRT_Client_CreateErrorBuffer,
// PJRT_Device_PoisonExecution): `code` (not OK), `message` and `num_payload` string-valued
// PJRT_NamedValues as payloads, written to `*error`. Returns INVALID_ARGUMENT naming `fn` (and
// leaves `*error` alone) for an OK or unknown code, a null message with a size, or a payload that
// is not a string. `code` is the framework's field, taken by reference and read as an int (see
// RawEnumValue): any value may be there.
Status ErrorFromFields(const char* fn, const PJRT_Error_Code& code, const char* message,
                       size_t message_size, const PJRT_NamedValue* payload, size_t num_payload,
                       Status* error);

// The code of `code` as a pjrtkit StatusCode (the values are equal; see convert.cc).
StatusCode ToStatusCode(PJRT_Error_Code code);

// The PJRT_Error_Code equal to `code`.
PJRT_Error_Code ToPjrtErrorCode(StatusCode code);

// ---- Element types ----------------------------------------------------------------------------

// The PJRT_Buffer_Type equal to `type`.
PJRT_Buffer_Type ToPjrtBufferType(ElementType type);

// RawEnumValue (xla_plugin/abi/raw_enum.h) reads the C enum fields the framework filled in.
using ::pjrtkit::RawEnumValue;

// The ElementType equal to `type`; INVALID_ARGUMENT (naming `fn`) when `type` is out of range or
// PJRT_Buffer_Type_INVALID.
StatusOr<ElementType> FromPjrtBufferType(const char* fn, const PJRT_Buffer_Type& type);

// ---- Strings ----------------------------------------------------------------------------------

// A std::string of `size` bytes at `data`; INVALID_ARGUMENT naming `fn` and `what` when `data` is
// null but `size` is not 0.
StatusOr<std::string> ToString(const char* fn, const char* what, const char* data, size_t size);

// ---- Programs ---------------------------------------------------------------------------------

// The Program `program` describes (format and code copied). INVALID_ARGUMENT naming `fn`: null
// `program`, a struct_size short of `format_size`, null code or format with a nonzero size.
StatusOr<Program> ToProgram(const char* fn, const PJRT_Program* program);

// ---- Named values -----------------------------------------------------------------------------

// Converts `count` PJRT_NamedValues (create options) into an AttributeMap. Errors
// (INVALID_ARGUMENT, naming `fn` and the option): null array with count > 0, short struct_size,
// null name, unknown value type, null string/list data, duplicate names.
StatusOr<AttributeMap> ToAttributeMap(const char* fn, const PJRT_NamedValue* values, size_t count);

// Owns an AttributeMap and the PJRT_NamedValue array that points into it, so the array lives as
// long as this object. Neither copyable nor movable: the array holds pointers into the map.
class NamedValueList {
 public:
  // Builds the PJRT_NamedValue view of `attributes` (in name order).
  explicit NamedValueList(AttributeMap attributes);
  NamedValueList(const NamedValueList&) = delete;
  NamedValueList& operator=(const NamedValueList&) = delete;

  // The array (nullptr when empty).
  const PJRT_NamedValue* data() const { return values_.empty() ? nullptr : values_.data(); }
  // Number of entries.
  size_t size() const { return values_.size(); }

 private:
  const AttributeMap attributes_;        // The owned values.
  std::vector<PJRT_NamedValue> values_;  // Views into attributes_.
};

// ---- Memory layouts ---------------------------------------------------------------------------

// Dense row-major minor_to_major for `rank` dimensions: {rank-1, ..., 0}.
std::vector<int64_t> RowMajorMinorToMajor(size_t rank);

// True when `layout` is dense row-major (default minor_to_major, no tiles).
bool IsRowMajor(const MemoryLayout& layout);

// Converts a caller-given C layout of an array of `type` and `dims` into a MemoryLayout. Tiled
// layouts convert directly (minor_to_major must be a permutation of the dimensions); byte-stride
// layouts convert when they describe a compact array (a permutation of dense row-major) and are
// UNIMPLEMENTED otherwise. Other errors are INVALID_ARGUMENT naming `fn`. The struct_size fields
// of `layout` and of its tiled/strides part are not read (jaxlib leaves them unset).
StatusOr<MemoryLayout> FromPjrtLayout(const char* fn, const PJRT_Buffer_MemoryLayout& layout,
                                      ElementType type, const std::vector<int64_t>& dims);

// Dense byte strides for `dims` of `type` laid out as `minor_to_major`; INVALID_ARGUMENT for
// sub-byte element types.
StatusOr<std::vector<int64_t>> DenseByteStrides(ElementType type, const std::vector<int64_t>& dims,
                                                const std::vector<int64_t>& minor_to_major);

// Owns a MemoryLayout and the flattened tile arrays a PJRT_Buffer_MemoryLayout points into.
class TiledLayoutView {
 public:
  // Keeps `layout` and flattens its tiles.
  explicit TiledLayoutView(MemoryLayout layout);
  TiledLayoutView(const TiledLayoutView&) = delete;
  TiledLayoutView& operator=(const TiledLayoutView&) = delete;

  // Fills `out` as a tiled layout pointing into this object.
  void Fill(PJRT_Buffer_MemoryLayout* out) const;

 private:
  const MemoryLayout layout_;           // The layout.
  std::vector<int64_t> tile_dims_;      // All tile dimensions, concatenated.
  std::vector<size_t> tile_dim_sizes_;  // Number of dimensions of each tile.
};

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_CONVERT_H_
