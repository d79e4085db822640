#include "xla_plugin/stablehlo/location_table.h"

#include <utility>

namespace pjrtkit {
namespace stablehlo {
namespace {

// How deep alias chains and nested locations are followed when resolving.
constexpr int kMaxResolveDepth = 64;
// The longest name or file kept in a Location (longer ones are cut).
constexpr size_t kMaxLocationText = 512;

}  // namespace

int LocationTable::Add(Node node) {
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size()) - 1;
}

StatusOr<int> LocationTable::ParseOptional(TextCursor* cursor, int max_depth) {
  if (!cursor->TryConsumeKeyword("loc")) return -1;
  PJRTKIT_RETURN_IF_ERROR(cursor->Expect("(", "'(' after loc"));
  PJRTKIT_ASSIGN_OR_RETURN(int node, ParseBody(cursor, 0, max_depth));
  PJRTKIT_RETURN_IF_ERROR(cursor->Expect(")", "')' closing loc(...)"));
  return node;
}

StatusOr<int> LocationTable::ParseBody(TextCursor* cursor, int depth, int max_depth) {
  if (depth > max_depth) return cursor->Error("a location nested less deeply");
  Node node;
  if (cursor->TryConsumeKeyword("unknown")) return Add(node);
  if (cursor->TryConsumeKeyword("loc")) {  // A nested loc(...), accepted as its body.
    PJRTKIT_RETURN_IF_ERROR(cursor->Expect("(", "'(' after loc"));
    PJRTKIT_ASSIGN_OR_RETURN(int inner, ParseBody(cursor, depth + 1, max_depth));
    PJRTKIT_RETURN_IF_ERROR(cursor->Expect(")", "')' closing loc(...)"));
    return inner;
  }
  if (cursor->TryConsume("#")) {
    PJRTKIT_ASSIGN_OR_RETURN(std::string_view name, cursor->SuffixIdentifier("a location alias"));
    node.kind = Node::Kind::kAlias;
    node.text = std::string(name);
    return Add(std::move(node));
  }
  if (cursor->TryConsumeKeyword("callsite")) {
    PJRTKIT_RETURN_IF_ERROR(cursor->Expect("(", "'(' after callsite"));
    PJRTKIT_ASSIGN_OR_RETURN(int callee, ParseBody(cursor, depth + 1, max_depth));
    if (!cursor->TryConsumeKeyword("at")) {
      return cursor->Error("'at' in callsite(callee at caller)");
    }
    PJRTKIT_ASSIGN_OR_RETURN(int caller, ParseBody(cursor, depth + 1, max_depth));
    PJRTKIT_RETURN_IF_ERROR(cursor->Expect(")", "')' closing callsite(...)"));
    node.kind = Node::Kind::kCallSite;
    node.children = {callee, caller};
    return Add(std::move(node));
  }
  if (cursor->TryConsumeKeyword("fused")) {
    if (cursor->TryConsume("<")) {  // Fusion metadata: kept out of the resolved text.
      PJRTKIT_RETURN_IF_ERROR(cursor->BalancedBody('<', "fused<...>").status());
    }
    PJRTKIT_RETURN_IF_ERROR(cursor->Expect("[", "'[' after fused"));
    node.kind = Node::Kind::kFused;
    if (!cursor->TryConsume("]")) {
      do {
        PJRTKIT_ASSIGN_OR_RETURN(int child, ParseBody(cursor, depth + 1, max_depth));
        node.children.push_back(child);
      } while (cursor->TryConsume(","));
      PJRTKIT_RETURN_IF_ERROR(cursor->Expect("]", "',' or ']' in fused[...]"));
    }
    return Add(std::move(node));
  }
  PJRTKIT_ASSIGN_OR_RETURN(node.text, cursor->StringLiteral("a location"));
  if (cursor->TryConsume(":")) {  // "file":line[:col][ to [line][:col]]
    node.kind = Node::Kind::kFile;
    PJRTKIT_ASSIGN_OR_RETURN(node.line, cursor->DecimalInteger("a line number"));
    if (cursor->TryConsume(":")) {
      PJRTKIT_ASSIGN_OR_RETURN(node.column, cursor->DecimalInteger("a column number"));
    }
    if (cursor->TryConsumeKeyword("to")) {
      if (cursor->Peek() != ':') {
        PJRTKIT_RETURN_IF_ERROR(cursor->DecimalInteger("an end line").status());
      }
      if (cursor->TryConsume(":")) {
        PJRTKIT_RETURN_IF_ERROR(cursor->DecimalInteger("an end column").status());
      }
    }
    return Add(std::move(node));
  }
  node.kind = Node::Kind::kName;
  if (cursor->TryConsume("(")) {
    PJRTKIT_ASSIGN_OR_RETURN(int child, ParseBody(cursor, depth + 1, max_depth));
    PJRTKIT_RETURN_IF_ERROR(cursor->Expect(")", "')' closing a name location's child"));
    node.children.push_back(child);
  }
  return Add(std::move(node));
}

void LocationTable::DefineAlias(std::string_view name, int node) {
  aliases_[std::string(name)] = node;
}

void LocationTable::Collect(int index, int depth, Location* out) {
  if (index < 0 || index >= static_cast<int>(nodes_.size()) || depth > kMaxResolveDepth) return;
  if (!out->name.empty() && !out->file.empty()) return;
  const Node& node = nodes_[index];
  switch (node.kind) {
    case Node::Kind::kUnknown:
      return;
    case Node::Kind::kFile:
      if (out->file.empty()) {
        out->file = node.text;
        out->line = node.line;
        out->column = node.column;
      }
      return;
    case Node::Kind::kName:
      if (out->name.empty()) out->name = node.text;
      break;
    case Node::Kind::kAlias: {
      auto it = aliases_.find(node.text);
      if (it == aliases_.end()) return;
      // Memoized per alias: shared sub-locations are resolved once. The entry is made before
      // resolving, so a cycle (#a = fused[#b, #b], #b = fused[#a, #a]) meets it empty instead of
      // branching again at every level.
      auto memo = resolved_.find(it->second);
      if (memo == resolved_.end()) {
        memo = resolved_.emplace(it->second, Location()).first;
        Location location;
        Collect(it->second, depth + 1, &location);
        memo->second = std::move(location);
      }
      const Location& found = memo->second;
      if (out->name.empty()) out->name = found.name;
      if (out->file.empty() && !found.file.empty()) {
        out->file = found.file;
        out->line = found.line;
        out->column = found.column;
      }
      return;
    }
    case Node::Kind::kCallSite:
    case Node::Kind::kFused:
      break;
  }
  for (int child : node.children) Collect(child, depth + 1, out);
}

Location LocationTable::Resolve(int node) {
  Location location;
  Collect(node, 0, &location);
  // Each operation gets its own copy: keep it one short line.
  if (location.name.size() > kMaxLocationText) location.name.resize(kMaxLocationText);
  if (location.file.size() > kMaxLocationText) location.file.resize(kMaxLocationText);
  if (!location.name.empty()) location.text = "\"" + location.name + "\"";
  if (!location.file.empty()) {
    if (!location.text.empty()) location.text += " at ";
    location.text += location.file + ":" + std::to_string(location.line) + ":" +
                     std::to_string(location.column);
  }
  return location;
}

}  // namespace stablehlo
}  // namespace pjrtkit
