// LocationTable: MLIR debug locations as TextParser reads them (inline `loc(...)` and `#loc`
// aliases, which MLIR prints before and after the module), resolved into one short Location once
// the whole text is read.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_LOCATION_TABLE_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_LOCATION_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/stablehlo/ir.h"
#include "xla_plugin/stablehlo/text_cursor.h"

namespace pjrtkit {
namespace stablehlo {

// Location nodes by index; -1 stands for "no location".
class LocationTable {
 public:
  // Reads a location body (what `loc(` ... `)` holds: unknown, "file":line:col[ to ...],
  // "name"[(child)], callsite(a at b), fused[<...>][a, b, ...], #alias) and returns its node.
  // `depth`/`max_depth` bound the nesting.
  StatusOr<int> ParseBody(TextCursor* cursor, int depth, int max_depth);
  // Reads `loc(` body `)` when the text continues with it; -1 when it does not.
  StatusOr<int> ParseOptional(TextCursor* cursor, int max_depth);
  // Records `#name = loc(...)` (the node of its body).
  void DefineAlias(std::string_view name, int node);

  // The Location of `node` (aliases followed, memoized; unknown or undefined aliases give an empty
  // Location). Call after the whole text has been read.
  Location Resolve(int node);

 private:
  struct Node {
    enum class Kind { kUnknown, kFile, kName, kCallSite, kFused, kAlias };
    Kind kind = Kind::kUnknown;
    std::string text;            // kFile: file; kName: name; kAlias: alias name.
    int64_t line = 0;            // kFile.
    int64_t column = 0;          // kFile.
    std::vector<int> children;   // kName: {child} or {}; kCallSite: {callee, caller}; kFused.
  };

  // The name and file position found under `node` (callee first), following aliases.
  void Collect(int node, int depth, Location* out);
  // Adds `node` and returns its index.
  int Add(Node node);

  std::vector<Node> nodes_;               // All nodes read.
  std::map<std::string, int> aliases_;    // Alias name -> node.
  std::map<int, Location> resolved_;      // Memo of Resolve() by alias node.
};

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_LOCATION_TABLE_H_
