// TextParser: MLIR generic op form (as StablehloLibrary::ToGenericText prints it) -> Module.
//
// Reads `#alias = ...` / `!alias = ...` definitions, top-level operations (one "builtin.module", or
// bare operations, which then form the module's body), `#loc` aliases after the module and a
// trailing `{-# ... #-}` resource section (skipped). Operations are in generic form:
//   %r:2 = "dialect.op"(%a, %b#1) <{properties}> ({ ^bb0(%x: type loc(...)): ... }) {attributes}
//       : (operand types) -> (result types) loc(...)
// Checks what the text itself states: values defined before use (no forward references), each
// operand's type equal to the op's stated type, result counts, function signatures against
// their entry blocks. Successor lists (`[^bb1]`, unstructured control flow) are not supported.
// Never crashes or hangs on any input: nesting is bounded, every read is checked, and every error
// carries line:column and what was expected.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_TEXT_PARSER_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_TEXT_PARSER_H_

#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/stablehlo/attribute_parser.h"
#include "xla_plugin/stablehlo/ir.h"
#include "xla_plugin/stablehlo/location_table.h"
#include "xla_plugin/stablehlo/text_cursor.h"
#include "xla_plugin/stablehlo/value_names.h"

namespace pjrtkit {
namespace stablehlo {

class TextParser {
 public:
  // The deepest nesting accepted, of regions and of attributes/types separately.
  static constexpr int kMaxDepth = 100;

  // Parses `text`, MLIR generic op form, into a Module.
  static StatusOr<Module> Parse(std::string_view text);
  // Parses `text`, one MLIR type ("tensor<2x3xf32>", "i1"), and nothing else.
  static StatusOr<Type> ParseType(std::string_view text);

 private:
  // The values of one function (or of the module's other operations).
  struct ValueTable {
    std::vector<Type> types;            // By ValueId.
    std::vector<std::string> names;     // By ValueId.
    ValueNames in_scope;                // Names in scope.
    std::vector<std::string> defined;   // Names in definition order, for scoping.
  };

  explicit TextParser(std::string_view text)
      : cursor_(text), attributes_(&cursor_, kMaxDepth) {}

  // The whole text -> Module.
  StatusOr<Module> Run();
  // `#name = ...` or `!name = ...` at the top level.
  Status ParseAliasDefinition();
  // One operation. `module_body` is true for operations whose func.func gets its own value
  // table (top-level ones, and those directly inside a top-level builtin.module).
  StatusOr<Operation> ParseOperation(int depth, bool module_body);
  // `{ blocks }` into `region`.
  Status ParseRegion(Region* region, int depth, bool module_body);
  // `(%a: type loc(...), ...)` after a block label.
  Status ParseBlockArguments(Block* block);
  // `%name` or `%name#index`, an existing value.
  StatusOr<ValueId> ParseOperand();
  // Adds a value named `name` of `type` to the current table.
  ValueId AddValue(const std::string& name, const Type& type);
  // Makes `name` refer to `count` values from `first`; an error when it is in scope already.
  Status DefineName(const std::string& name, ValueId first, int count, size_t offset);
  // Resolves the recorded location nodes into `op` and its regions (operations post-order, block
  // arguments in the order read). `next` counts operations, `next_argument` block arguments.
  Status AssignLocations(Operation* op, size_t* next, size_t* next_argument, int depth);
  // Builds the Module from the top-level operations.
  StatusOr<Module> BuildModule(std::vector<Operation> top_level);
  // A module-level func.func -> Function, with the value table its body was parsed into.
  StatusOr<Function> BuildFunction(Operation op, ValueTable table);

  TextCursor cursor_;                      // The text.
  AttributeParser attributes_;             // Types and attributes, with aliases.
  LocationTable locations_;                // Locations and #loc aliases.
  std::vector<ValueTable> scopes_;         // Open value tables; back() is the current one.
  std::vector<ValueTable> functions_;      // Closed tables of module-level functions, in order.
  std::vector<int> operation_locations_;   // Location node of each operation, post-order.
  std::vector<int> argument_locations_;    // Location node of each block argument, as read.
};

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_TEXT_PARSER_H_
