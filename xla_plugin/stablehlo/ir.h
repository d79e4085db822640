// The parsed IR: a StableHLO module as plain C++ data (no MLIR types), as TextParser builds it from
// MLIR's generic op form. A device compiler walks it: Module -> Function -> Region -> Block ->
// Operation, with every value a ValueId into its function's value table.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_IR_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_IR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace stablehlo {

// A dimension written '?' (dynamic) in a tensor type.
constexpr int64_t kDynamicDim = -1;

// A type: a ranked tensor, a bare element type (integer and float attributes carry one: `1 : i32`),
// StableHLO's token, a tuple, a function type (func.func's `function_type`) or any other type,
// kept as text (`index`, `none`, `!quant.uniform<...>`, unranked tensors).
struct Type {
  enum class Kind { kTensor, kScalar, kToken, kTuple, kFunction, kOther };
  Kind kind = Kind::kOther;
  ElementType element_type = ElementType::kInvalid;  // kTensor, kScalar.
  std::vector<int64_t> dims;  // kTensor: sizes, kDynamicDim for '?'; empty for a scalar tensor.
  std::string encoding;       // kTensor: the encoding attribute's text (`#stablehlo.bounds<?, 3>`).
  std::vector<Type> elements;  // kTuple: the elements; kFunction: the inputs.
  std::vector<Type> results;   // kFunction: the results.
  std::string text;            // kOther: the type as written.

  // MLIR's spelling: "tensor<2x?xbf16>", "f32", "!stablehlo.token", "(tensor<f32>) -> tensor<i1>".
  std::string ToString() const;
  // Structural equality (encodings and kOther texts compared as text).
  bool operator==(const Type& other) const;
  bool operator!=(const Type& other) const { return !(*this == other); }
  // Number of elements of a kTensor with static dims (1 for rank 0; -1 when a dim is dynamic or
  // the product overflows int64).
  int64_t NumElements() const;
};

// Index of a value in its function's value table (Function::value_types).
using ValueId = int32_t;

// Where an operation came from, resolved from MLIR's debug locations (aliases, name, call-site and
// fused locations): the outermost name and the innermost file position.
struct Location {
  std::string text;    // One readable line: "jit(f)/add" at f.py:12:3; "" when unknown.
  std::string name;    // The name location's text ("jit(f)/add"), or "".
  std::string file;    // The file of the first file position found, or "".
  int64_t line = 0;    // Its line (0 when there is no file).
  int64_t column = 0;  // Its column.
};

struct NamedAttribute;

// An attribute value. Integers and floats keep their MLIR type; dense elements are decoded into the
// storage bytes of their tensor type (see `data`); dialect attributes keep their text.
struct Attribute {
  enum class Kind {
    kUnit,           // `unit`, or a name without a value in a dictionary.
    kBool,           // true / false.
    kInteger,        // `3 : i64` (int_value; `type` is the integer type, i64 when unwritten).
    kFloat,          // `1.5 : f32` (float_value; `type` is the float type, f64 when unwritten).
    kString,         // "text" (string_value, escapes decoded).
    kType,           // A type as an attribute (`type`), e.g. function_type.
    kSymbolRef,      // @name (string_value = "name"; nested refs @a::@b in `elements`).
    kArray,          // [a, b, ...] (elements).
    kDenseArray,     // array<i64: 1, 2> (type = element type; ints or floats).
    kDenseElements,  // dense<...> : tensor<...> (type = the tensor type; data, is_splat).
    kDictionary,     // {a = 1, b} (entries).
    kDialect,        // #dialect<...>, #dialect.mnemonic<...>, or a builtin form kept as text
                     // (affine_map<...>, dense_resource<...>): text, dialect, mnemonic.
  };
  Kind kind = Kind::kUnit;
  bool bool_value = false;  // kBool.
  int64_t int_value = 0;    // kInteger: the value (two's complement bits for ui64 above 2^63-1).
  double float_value = 0;   // kFloat: the value.
  std::string string_value;  // kString: the decoded bytes; kSymbolRef: the root symbol name.
  Type type;                 // kInteger, kFloat, kType, kDenseArray (element), kDenseElements.
  std::vector<int64_t> ints;  // kDenseArray of integers (and i1: 0 / 1): the values.
  std::vector<double> floats;  // kDenseArray of floats: the values.
  // kDenseElements: row-major storage bytes of `type`, little-endian: i1 one byte (0 or 1) per
  // element; sub-byte types (i4, ui2, f4E2M1FN, ...) one byte per element holding the low bits, as
  // MLIR stores them; bf16/f16 their 16 bits; complex real then imaginary. A splat holds ONE
  // element (is_splat), so that `dense<0.0> : tensor<4096x4096xf32>` costs 4 bytes, not 64 MiB:
  // ExpandedData() or ElementBytes() give every element.
  std::string data;
  bool is_splat = false;       // kDenseElements: `data` is one element repeated over the tensor.
  std::string text;            // kDialect: the whole attribute as written.
  std::string dialect;         // kDialect: "stablehlo", "sdy", "builtin", ...
  std::string mnemonic;        // kDialect: "comparison_direction", "dot", "dense_resource", ...
  std::vector<Attribute> elements;       // kArray, kSymbolRef (nested references).
  std::vector<NamedAttribute> entries;   // kDictionary.

  // kDenseElements: every element's bytes (a splat repeated NumElements() times).
  std::string ExpandedData() const;
  // kDictionary: the entry named `name`, or nullptr.
  const Attribute* Find(std::string_view name) const;
};

// A name with its attribute value.
struct NamedAttribute {
  std::string name;  // As written, unquoted ("mhlo.sharding").
  Attribute value;   // kUnit for a name written alone.
};

// Named attributes in the order written.
using AttributeList = std::vector<NamedAttribute>;

// The attribute named `name` in `list`, or nullptr.
const Attribute* FindAttribute(const AttributeList& list, std::string_view name);

struct Region;

// One operation: name, operands and results (ValueIds), attributes (the properties `<{...}>` and
// the attributes `{...}` merged, properties first), regions and where it came from.
struct Operation {
  std::string name;               // "stablehlo.add", "func.return", "sdy.mesh", ...
  std::vector<ValueId> operands;  // In order.
  std::vector<ValueId> results;   // In order.
  AttributeList attributes;       // Properties, then attributes, each in the order written.
  std::vector<Region> regions;    // In order (while: cond, body; case: one per branch).
  Location location;              // Resolved debug location.

  // The attribute named `name`, or nullptr.
  const Attribute* Find(std::string_view name) const;
};

// A block: its arguments (values in the enclosing function's table) and its operations.
struct Block {
  std::vector<ValueId> arguments;            // In order.
  std::vector<Location> argument_locations;  // One per argument (JAX names a function's: "x").
  std::vector<Operation> operations;         // In order; the last is the terminator.
};

// A region: its blocks (StableHLO regions have one).
struct Region {
  std::vector<Block> blocks;  // Empty for a function declaration.
};

// A func.func. Values of nested regions live in this function's value table too: regions of
// while/case/reduce/sort... may use values defined above them.
struct Function {
  std::string name;                  // sym_name.
  bool is_public = true;             // sym_visibility absent or "public".
  std::vector<Type> argument_types;  // From function_type.
  std::vector<Type> result_types;    // From function_type.
  std::vector<AttributeList> argument_attributes;  // arg_attrs, one list per argument.
  std::vector<AttributeList> result_attributes;    // res_attrs, one list per result.
  AttributeList attributes;  // The func.func's other attributes (not the five above).
  Region body;                    // Empty for a declaration; entry block arguments = arguments.
  std::vector<Type> value_types;  // Type of each ValueId.
  std::vector<std::string> value_names;  // Its SSA name as written ("arg0", "4#1").
  Location location;
};

// A module: its functions and other top-level operations.
struct Module {
  std::string name;          // sym_name ("jit_f"), or "".
  AttributeList attributes;  // The module op's attributes (sym_name excluded).
  std::vector<Function> functions;  // In order.
  // Top-level operations that are not func.func (e.g. sdy.mesh); their values, if any, live in
  // value_types below.
  std::vector<Operation> other_operations;
  std::vector<Type> value_types;  // Values of other_operations.
  Location location;

  // The function named `name`, or nullptr.
  const Function* FindFunction(std::string_view name) const;
};

// Bytes one element of `type` takes in dense storage (constants, Interpret): 1 for i1 and every
// sub-byte type, 2 for bf16/f16, 8 for complex<f32>; 0 for kInvalid and kToken.
size_t StorageBytes(ElementType type);

// MLIR's name of `type` ("i1", "ui32", "bf16", "f8E4M3FN", "complex<f32>"); "" for kInvalid and
// kToken.
const char* MlirElementTypeName(ElementType type);

// The ElementType MLIR's element type name `name` denotes (signless and signed integers are
// signed: i32, si32 -> kS32; i1 -> kPred), or kInvalid.
ElementType ElementTypeFromMlirName(std::string_view name);

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_IR_H_
