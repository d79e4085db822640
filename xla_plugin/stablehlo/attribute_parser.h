// AttributeParser: MLIR types and attributes as TextParser meets them (builtin forms decoded,
// dialect forms kept as text), with the text's `#name = ...` and `!name = ...` aliases.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_ATTRIBUTE_PARSER_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_ATTRIBUTE_PARSER_H_

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/stablehlo/ir.h"
#include "xla_plugin/stablehlo/text_cursor.h"

namespace pjrtkit {
namespace stablehlo {

// Reads types and attributes from a cursor it does not own. `depth` arguments count nesting; past
// max_depth() a reader fails instead of recursing further.
class AttributeParser {
 public:
  // Reads from `cursor`; nesting deeper than `max_depth` is an error.
  AttributeParser(TextCursor* cursor, int max_depth)
      : cursor_(cursor),
        max_depth_(max_depth),
        alias_budget_(kAliasExpansion * cursor->text().size() + (size_t{1} << 20)) {}

  // A type: tensor<...>, an element type (i32, bf16, complex<f32>, ...), !stablehlo.token,
  // tuple<...>, a function type (a, b) -> c, or any other type (kept as text).
  StatusOr<Type> ParseType(int depth);
  // A comma-separated type list in parentheses: "(a, b)" ("()" for none).
  StatusOr<std::vector<Type>> ParseTypeList(int depth);
  // A function type's results: one type, or a parenthesized list.
  StatusOr<std::vector<Type>> ParseResultTypes(int depth);
  // An attribute value (see Attribute::Kind).
  StatusOr<Attribute> ParseAttribute(int depth);
  // After '{': entries `name = value` or `name` (unit) up to and including '}'.
  StatusOr<AttributeList> ParseDictionaryBody(int depth);

  // Records `#name = value` / `!name = type` aliases (defined before use, as MLIR requires),
  // whose definition text is `size` bytes long.
  void DefineAttributeAlias(std::string_view name, Attribute value, size_t size);
  void DefineTypeAlias(std::string_view name, Type type, size_t size);

  // Every use of an alias copies its value: all uses together may copy at most this many times
  // the text's size (plus 1 MiB), so that a short text cannot expand without bound.
  static constexpr size_t kAliasExpansion = 64;

  // The nesting bound.
  int max_depth() const { return max_depth_; }

 private:
  // The type named by a bare identifier that was just read (i32, f32, index, tensor, ...).
  StatusOr<Type> ParseKeywordType(std::string_view keyword, size_t begin, int depth);
  // The body of tensor<...> after '<'.
  StatusOr<Type> ParseTensorBody(size_t begin, int depth);
  // `#...`: an alias use or a dialect attribute.
  StatusOr<Attribute> ParseHashAttribute(int depth);
  // A number with an optional `: type`.
  StatusOr<Attribute> ParseNumberAttribute(int depth);
  // dense<...> : type.
  StatusOr<Attribute> ParseDenseAttribute(size_t begin, int depth);
  // array<type[: values]>.
  StatusOr<Attribute> ParseDenseArrayAttribute(int depth);
  // @a::@b.
  StatusOr<Attribute> ParseSymbolRef();
  // keyword<...> [: type] kept as text (affine_map, dense_resource, sparse, ...).
  StatusOr<Attribute> ParseOpaqueBuiltin(std::string_view keyword, size_t begin, int depth);
  // An error when `depth` is past the bound.
  Status CheckDepth(int depth);
  // Charges one use of an alias whose definition is `size` bytes against alias_budget_.
  Status ChargeAliasUse(size_t size, size_t offset);

  TextCursor* cursor_;                            // Not owned.
  int max_depth_;                                 // Nesting bound.
  size_t alias_budget_;                            // Bytes alias uses may still copy.
  // Simple tensor types (`tensor<2x?xf32>`: dims and an element type name) by their text: a
  // program repeats a few types thousands of times.
  std::unordered_map<std::string_view, Type> tensor_types_;
  std::map<std::string, std::pair<Attribute, size_t>> attr_aliases_;  // #name -> value, size.
  std::map<std::string, std::pair<Type, size_t>> type_aliases_;       // !name -> type, size.
};

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_ATTRIBUTE_PARSER_H_
