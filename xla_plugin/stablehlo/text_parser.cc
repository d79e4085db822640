#include "xla_plugin/stablehlo/text_parser.h"

#include <utility>

namespace pjrtkit {
namespace stablehlo {
namespace {

constexpr std::string_view kGenericFormHint =
    "an operation name in quotes (TextParser reads MLIR's generic op form, which "
    "StablehloLibrary::ToGenericText prints)";

// Moves the attribute named `name` out of `list` into `out`; false when absent.
bool TakeAttribute(AttributeList* list, std::string_view name, Attribute* out) {
  for (auto it = list->begin(); it != list->end(); ++it) {
    if (it->name == name) {
      *out = std::move(it->value);
      list->erase(it);
      return true;
    }
  }
  return false;
}

// arg_attrs / res_attrs: an array of `count` dictionaries (absent: `count` empty lists).
StatusOr<std::vector<AttributeList>> PerValueAttributes(AttributeList* list,
                                                        std::string_view name, size_t count,
                                                        const std::string& function) {
  std::vector<AttributeList> out(count);
  Attribute array;
  if (!TakeAttribute(list, name, &array)) return out;
  if (array.kind != Attribute::Kind::kArray || array.elements.size() != count) {
    return InvalidArgument("func.func @" + function + ": " + std::string(name) + " is not an " +
                           "array of " + std::to_string(count) + " dictionaries");
  }
  for (size_t i = 0; i < count; ++i) {
    if (array.elements[i].kind != Attribute::Kind::kDictionary) {
      return InvalidArgument("func.func @" + function + ": " + std::string(name) + "[" +
                             std::to_string(i) + "] is not a dictionary");
    }
    out[i] = std::move(array.elements[i].entries);
  }
  return out;
}

}  // namespace

StatusOr<Module> TextParser::Parse(std::string_view text) {
  TextParser parser(text);
  return parser.Run();
}

StatusOr<Type> TextParser::ParseType(std::string_view text) {
  TextParser parser(text);
  PJRTKIT_ASSIGN_OR_RETURN(Type type, parser.attributes_.ParseType(0));
  if (!parser.cursor_.AtEnd()) return parser.cursor_.Error("the end of the type");
  return type;
}

StatusOr<Module> TextParser::Run() {
  scopes_.emplace_back();  // The module-level table.
  std::vector<Operation> top_level;
  while (!cursor_.AtEnd()) {
    char c = cursor_.Peek();
    if (c == '#' || c == '!') {
      PJRTKIT_RETURN_IF_ERROR(ParseAliasDefinition());
    } else if (cursor_.TryConsume("{-#")) {  // Resources (dense_resource blobs): not read.
      size_t end = cursor_.text().find("#-}", cursor_.offset());
      if (end == std::string_view::npos) return cursor_.Error("'#-}' closing '{-#'");
      cursor_.set_offset(end + 3);
    } else {
      PJRTKIT_ASSIGN_OR_RETURN(Operation op, ParseOperation(0, true));
      top_level.push_back(std::move(op));
    }
  }
  size_t next = 0, next_argument = 0;
  for (Operation& op : top_level) {
    PJRTKIT_RETURN_IF_ERROR(AssignLocations(&op, &next, &next_argument, 0));
  }
  return BuildModule(std::move(top_level));
}

Status TextParser::ParseAliasDefinition() {
  bool is_type = cursor_.Peek() == '!';
  cursor_.TryConsume(is_type ? "!" : "#");
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view name, cursor_.SuffixIdentifier("an alias name"));
  PJRTKIT_RETURN_IF_ERROR(cursor_.Expect("=", "'=' in an alias definition"));
  cursor_.SkipSpace();
  size_t at = cursor_.offset();
  if (is_type) {
    PJRTKIT_ASSIGN_OR_RETURN(Type type, attributes_.ParseType(0));
    attributes_.DefineTypeAlias(name, std::move(type), cursor_.offset() - at);
    return OkStatus();
  }
  if (cursor_.TryConsumeKeyword("loc") && cursor_.Peek() == '(') {
    cursor_.set_offset(at);
    PJRTKIT_ASSIGN_OR_RETURN(int node, locations_.ParseOptional(&cursor_, kMaxDepth));
    locations_.DefineAlias(name, node);
    return OkStatus();
  }
  cursor_.set_offset(at);
  PJRTKIT_ASSIGN_OR_RETURN(Attribute value, attributes_.ParseAttribute(0));
  attributes_.DefineAttributeAlias(name, std::move(value), cursor_.offset() - at);
  return OkStatus();
}

ValueId TextParser::AddValue(const std::string& name, const Type& type) {
  ValueTable& table = scopes_.back();
  table.types.push_back(type);
  table.names.push_back(name);
  return static_cast<ValueId>(table.types.size() - 1);
}

Status TextParser::DefineName(const std::string& name, ValueId first, int count, size_t offset) {
  ValueTable& table = scopes_.back();
  if (!table.in_scope.Insert(name, ValueNames::Entry{first, count})) {
    return cursor_.ErrorAt(offset, "redefinition of %" + name);
  }
  table.defined.push_back(name);
  return OkStatus();
}

StatusOr<ValueId> TextParser::ParseOperand() {
  cursor_.SkipSpace();
  size_t at = cursor_.offset();
  PJRTKIT_RETURN_IF_ERROR(cursor_.Expect("%", "an operand (%name)"));
  PJRTKIT_ASSIGN_OR_RETURN(std::string_view name, cursor_.SuffixIdentifier("a value name"));
  int64_t index = -1;
  if (cursor_.PeekAt(0) == '#') {
    cursor_.TryConsume("#");
    PJRTKIT_ASSIGN_OR_RETURN(index, cursor_.DecimalInteger("a result number after '#'"));
  }
  const ValueTable& table = scopes_.back();
  const ValueNames::Entry* group = table.in_scope.Find(name);
  if (group == nullptr) {
    return cursor_.ErrorAt(at, "use of undefined value %" + std::string(name) +
                                   " (values must be defined before use)");
  }
  if (index < 0 && group->count != 1) {
    return cursor_.ErrorAt(at, "%" + std::string(name) + " has " + std::to_string(group->count) +
                                   " results: name one as %" + std::string(name) + "#i");
  }
  if (index >= group->count) {
    return cursor_.ErrorAt(at, "%" + std::string(name) + " has only " +
                                   std::to_string(group->count) + " results");
  }
  return group->first + static_cast<ValueId>(index < 0 ? 0 : index);
}

StatusOr<Operation> TextParser::ParseOperation(int depth, bool module_body) {
  if (depth > kMaxDepth) return cursor_.Error("regions nested at most 100 deep");
  cursor_.SkipSpace();
  const size_t begin = cursor_.offset();
  // Result names: `%a, %b:2 =`.
  std::vector<std::pair<std::string, int>> result_names;
  if (cursor_.Peek() == '%') {
    do {
      PJRTKIT_RETURN_IF_ERROR(cursor_.Expect("%", "a result name (%name)"));
      PJRTKIT_ASSIGN_OR_RETURN(std::string_view name, cursor_.SuffixIdentifier("a result name"));
      int64_t count = 1;
      if (cursor_.TryConsume(":")) {
        PJRTKIT_ASSIGN_OR_RETURN(count, cursor_.DecimalInteger("a result count"));
        if (count < 1 || count > (1 << 20)) return cursor_.Error("a result count in 1..2^20");
      }
      result_names.emplace_back(std::string(name), static_cast<int>(count));
    } while (cursor_.TryConsume(","));
    PJRTKIT_RETURN_IF_ERROR(cursor_.Expect("=", "'=' after result names"));
  }
  Operation op;
  PJRTKIT_ASSIGN_OR_RETURN(op.name, cursor_.StringLiteral(kGenericFormHint));
  // Error texts name the op; built only on failure.
  auto where = [&op] { return "\"" + op.name + "\""; };
  auto expect = [&](std::string_view token, const char* what) -> Status {
    if (cursor_.TryConsume(token)) return OkStatus();
    return cursor_.Error(what + where());
  };
  PJRTKIT_RETURN_IF_ERROR(expect("(", "'(' and the operands of "));
  if (!cursor_.TryConsume(")")) {
    do {
      PJRTKIT_ASSIGN_OR_RETURN(ValueId operand, ParseOperand());
      op.operands.push_back(operand);
    } while (cursor_.TryConsume(","));
    PJRTKIT_RETURN_IF_ERROR(expect(")", "',' or ')' after the operands of "));
  }
  if (cursor_.Peek() == '[') {
    return cursor_.Error("no successor list: unstructured control flow is not supported");
  }
  if (cursor_.TryConsume("<")) {
    PJRTKIT_RETURN_IF_ERROR(expect("{", "'{' opening the properties of "));
    PJRTKIT_ASSIGN_OR_RETURN(op.attributes, attributes_.ParseDictionaryBody(0));
    PJRTKIT_RETURN_IF_ERROR(expect(">", "'>' closing the properties of "));
  }
  const bool new_scope = module_body && op.name == "func.func";
  if (new_scope) scopes_.emplace_back();
  if (cursor_.TryConsume("(")) {
    const bool body = depth == 0 && op.name == "builtin.module";
    do {
      op.regions.emplace_back();
      PJRTKIT_RETURN_IF_ERROR(ParseRegion(&op.regions.back(), depth + 1, body));
    } while (cursor_.TryConsume(","));
    PJRTKIT_RETURN_IF_ERROR(expect(")", "',' or ')' after the regions of "));
  }
  if (new_scope) {
    functions_.push_back(std::move(scopes_.back()));
    scopes_.pop_back();
  }
  if (cursor_.TryConsume("{")) {
    PJRTKIT_ASSIGN_OR_RETURN(AttributeList attributes, attributes_.ParseDictionaryBody(0));
    for (NamedAttribute& attribute : attributes) op.attributes.push_back(std::move(attribute));
  }
  PJRTKIT_RETURN_IF_ERROR(expect(":", "':' and the type of "));
  cursor_.SkipSpace();
  const size_t type_offset = cursor_.offset();
  PJRTKIT_ASSIGN_OR_RETURN(Type type, attributes_.ParseType(0));
  if (type.kind != Type::Kind::kFunction) {
    return cursor_.ErrorAt(type_offset, "the type of " + where() + " is not a function type");
  }
  if (type.elements.size() != op.operands.size()) {
    return cursor_.ErrorAt(type_offset, where() + " has " + std::to_string(op.operands.size()) +
                                            " operands but its type lists " +
                                            std::to_string(type.elements.size()));
  }
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Type& actual = scopes_.back().types[op.operands[i]];
    if (actual != type.elements[i]) {
      return cursor_.ErrorAt(type_offset, "operand #" + std::to_string(i) + " of " + where() +
                                              " is " + actual.ToString() + " but its type says " +
                                              type.elements[i].ToString());
    }
  }
  size_t declared = 0;
  for (const auto& name : result_names) declared += name.second;
  if (declared != type.results.size()) {
    return cursor_.ErrorAt(begin, where() + " defines " + std::to_string(declared) +
                                      " results but its type has " +
                                      std::to_string(type.results.size()));
  }
  size_t result = 0;
  for (const auto& [name, count] : result_names) {
    ValueId first = static_cast<ValueId>(scopes_.back().types.size());
    for (int i = 0; i < count; ++i, ++result) {
      std::string value_name = count == 1 ? name : name + "#" + std::to_string(i);
      op.results.push_back(AddValue(value_name, type.results[result]));
    }
    PJRTKIT_RETURN_IF_ERROR(DefineName(name, first, count, begin));
  }
  PJRTKIT_ASSIGN_OR_RETURN(int location, locations_.ParseOptional(&cursor_, kMaxDepth));
  operation_locations_.push_back(location);
  return op;
}

Status TextParser::ParseRegion(Region* region, int depth, bool module_body) {
  PJRTKIT_RETURN_IF_ERROR(cursor_.Expect("{", "'{' opening a region"));
  const size_t scope_mark = scopes_.back().defined.size();
  while (!cursor_.TryConsume("}")) {
    region->blocks.emplace_back();
    Block& block = region->blocks.back();
    if (cursor_.TryConsume("^")) {
      PJRTKIT_RETURN_IF_ERROR(cursor_.SuffixIdentifier("a block label").status());
      if (cursor_.TryConsume("(")) PJRTKIT_RETURN_IF_ERROR(ParseBlockArguments(&block));
      PJRTKIT_RETURN_IF_ERROR(cursor_.Expect(":", "':' after a block label"));
    } else if (region->blocks.size() > 1) {
      return cursor_.Error("a block label (^bb1) or '}'");
    }
    while (cursor_.Peek() != '}' && cursor_.Peek() != '^') {
      if (cursor_.AtEnd()) return cursor_.Error("'}' closing a region");
      PJRTKIT_ASSIGN_OR_RETURN(Operation op, ParseOperation(depth, module_body));
      block.operations.push_back(std::move(op));
    }
  }
  // Names defined inside the region go out of scope.
  ValueTable& table = scopes_.back();
  for (size_t i = scope_mark; i < table.defined.size(); ++i) {
    table.in_scope.Erase(table.defined[i]);
  }
  table.defined.resize(scope_mark);
  return OkStatus();
}

Status TextParser::ParseBlockArguments(Block* block) {
  if (cursor_.TryConsume(")")) return OkStatus();
  do {
    cursor_.SkipSpace();
    size_t at = cursor_.offset();
    PJRTKIT_RETURN_IF_ERROR(cursor_.Expect("%", "a block argument (%name: type)"));
    PJRTKIT_ASSIGN_OR_RETURN(std::string_view name, cursor_.SuffixIdentifier("an argument name"));
    PJRTKIT_RETURN_IF_ERROR(cursor_.Expect(":", "':' and the argument's type"));
    PJRTKIT_ASSIGN_OR_RETURN(Type type, attributes_.ParseType(0));
    PJRTKIT_ASSIGN_OR_RETURN(int location, locations_.ParseOptional(&cursor_, kMaxDepth));
    argument_locations_.push_back(location);
    ValueId id = AddValue(std::string(name), type);
    PJRTKIT_RETURN_IF_ERROR(DefineName(std::string(name), id, 1, at));
    block->arguments.push_back(id);
  } while (cursor_.TryConsume(","));
  return cursor_.Expect(")", "',' or ')' after block arguments");
}

Status TextParser::AssignLocations(Operation* op, size_t* next, size_t* next_argument,
                                   int depth) {
  if (depth > kMaxDepth + 1) return Internal("location assignment nested too deeply");
  for (Region& region : op->regions) {
    for (Block& block : region.blocks) {
      for (size_t i = 0; i < block.arguments.size(); ++i) {
        if (*next_argument >= argument_locations_.size()) {
          return Internal("more block arguments than locations");
        }
        block.argument_locations.push_back(
            locations_.Resolve(argument_locations_[(*next_argument)++]));
      }
      for (Operation& inner : block.operations) {
        PJRTKIT_RETURN_IF_ERROR(AssignLocations(&inner, next, next_argument, depth + 1));
      }
    }
  }
  if (*next >= operation_locations_.size()) return Internal("more operations than locations");
  op->location = locations_.Resolve(operation_locations_[(*next)++]);
  return OkStatus();
}

StatusOr<Module> TextParser::BuildModule(std::vector<Operation> top_level) {
  Module module;
  std::vector<Operation> body;
  bool has_module_op = false;
  for (const Operation& op : top_level) has_module_op |= op.name == "builtin.module";
  if (has_module_op) {
    if (top_level.size() != 1) {
      return InvalidArgument("MLIR text: a \"builtin.module\" must be the only top-level op");
    }
    Operation& op = top_level[0];
    if (op.regions.size() != 1 || op.regions[0].blocks.size() > 1 || !op.operands.empty() ||
        !op.results.empty()) {
      return InvalidArgument("MLIR text: \"builtin.module\" needs one region of one block");
    }
    Attribute name;
    if (TakeAttribute(&op.attributes, "sym_name", &name)) {
      if (name.kind != Attribute::Kind::kString) {
        return InvalidArgument("MLIR text: the module's sym_name is not a string");
      }
      module.name = std::move(name.string_value);
    }
    module.attributes = std::move(op.attributes);
    module.location = std::move(op.location);
    if (!op.regions[0].blocks.empty()) body = std::move(op.regions[0].blocks[0].operations);
  } else {
    body = std::move(top_level);
  }
  size_t next_function = 0;
  for (Operation& op : body) {
    if (op.name != "func.func") {
      module.other_operations.push_back(std::move(op));
      continue;
    }
    if (next_function >= functions_.size()) return Internal("function value tables out of step");
    PJRTKIT_ASSIGN_OR_RETURN(Function function,
                             BuildFunction(std::move(op), std::move(functions_[next_function++])));
    module.functions.push_back(std::move(function));
  }
  module.value_types = std::move(scopes_.front().types);
  return module;
}

StatusOr<Function> TextParser::BuildFunction(Operation op, ValueTable table) {
  Function function;
  Attribute attribute;
  if (!TakeAttribute(&op.attributes, "sym_name", &attribute) ||
      attribute.kind != Attribute::Kind::kString) {
    return InvalidArgument("func.func at " + op.location.text + " has no string sym_name");
  }
  function.name = std::move(attribute.string_value);
  const std::string& name = function.name;
  if (!TakeAttribute(&op.attributes, "function_type", &attribute) ||
      attribute.kind != Attribute::Kind::kType ||
      attribute.type.kind != Type::Kind::kFunction) {
    return InvalidArgument("func.func @" + name + " has no function_type");
  }
  function.argument_types = std::move(attribute.type.elements);
  function.result_types = std::move(attribute.type.results);
  if (TakeAttribute(&op.attributes, "sym_visibility", &attribute)) {
    function.is_public = attribute.kind == Attribute::Kind::kString &&
                         attribute.string_value == "public";
  }
  PJRTKIT_ASSIGN_OR_RETURN(function.argument_attributes,
                           PerValueAttributes(&op.attributes, "arg_attrs",
                                              function.argument_types.size(), name));
  PJRTKIT_ASSIGN_OR_RETURN(function.result_attributes,
                           PerValueAttributes(&op.attributes, "res_attrs",
                                              function.result_types.size(), name));
  function.attributes = std::move(op.attributes);
  if (op.regions.size() != 1 || !op.operands.empty() || !op.results.empty()) {
    return InvalidArgument("func.func @" + name + " needs one region, no operands, no results");
  }
  function.body = std::move(op.regions[0]);
  if (!function.body.blocks.empty()) {
    const Block& entry = function.body.blocks[0];
    if (entry.arguments.size() != function.argument_types.size()) {
      return InvalidArgument("func.func @" + name + ": the entry block has " +
                             std::to_string(entry.arguments.size()) + " arguments, " +
                             "function_type " + std::to_string(function.argument_types.size()));
    }
    for (size_t i = 0; i < entry.arguments.size(); ++i) {
      if (table.types[entry.arguments[i]] != function.argument_types[i]) {
        return InvalidArgument("func.func @" + name + ": argument #" + std::to_string(i) +
                               " is " + table.types[entry.arguments[i]].ToString() +
                               " but function_type says " + function.argument_types[i].ToString());
      }
    }
  }
  function.value_types = std::move(table.types);
  function.value_names = std::move(table.names);
  function.location = std::move(op.location);
  return function;
}

}  // namespace stablehlo
}  // namespace pjrtkit
