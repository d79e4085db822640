// The literal of a `dense<...>` attribute: parsed before its type is known (the type follows the
// closing '>'), then decoded into the storage bytes of that type.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_DENSE_ELEMENTS_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_DENSE_ELEMENTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/stablehlo/ir.h"
#include "xla_plugin/stablehlo/text_cursor.h"

namespace pjrtkit {
namespace stablehlo {

// What was written between `dense<` and `>`.
struct DenseLiteral {
  enum class Form {
    kEmpty,     // dense<>: no elements.
    kHex,       // dense<"0x...">: raw storage bytes (every element, or one for a splat).
    kElements,  // A scalar (a splat), or nested lists of scalars.
  };
  Form form = Form::kEmpty;
  std::string hex_bytes;                    // kHex: the decoded bytes.
  std::vector<int64_t> shape;               // kElements: the lists' shape; {} for a splat.
  std::vector<std::string_view> elements;   // kElements: the scalars as written, row-major;
                                            // complex values as two (real, imaginary).
  bool complex = false;                     // kElements: scalars are (re, im) pairs.
  size_t offset = 0;                        // Where the literal starts, for errors.
};

// Reads a dense literal; `cursor` is just after `dense<` and is left after the closing '>'.
// `max_depth` bounds the list nesting.
StatusOr<DenseLiteral> ParseDenseLiteral(TextCursor* cursor, int max_depth);

// Decodes `literal` for the ranked tensor `type` (static dims, element type known) into
// attribute->data and attribute->is_splat (Attribute's kDenseElements storage rules).
Status DecodeDenseLiteral(const DenseLiteral& literal, const Type& type, const TextCursor& cursor,
                          Attribute* attribute);

// The integer literal `literal` ("-3", "255", "0x1F", "true") as the `bits` low bits of a value
// of an integer type of that width (signed or unsigned range accepted, as MLIR's signless
// integers do).
StatusOr<uint64_t> IntegerLiteralBits(std::string_view literal, int bits);

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_DENSE_ELEMENTS_H_
