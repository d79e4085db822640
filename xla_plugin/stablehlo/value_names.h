// ValueNames: the SSA names in scope while TextParser reads a function. MLIR's printer names
// values %0, %1, ... and %arg0, %arg1, ...: those live in vectors indexed by number (a large
// function has hundreds of thousands, and hashing each made up a quarter of parse time); any
// other name is hashed.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_VALUE_NAMES_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_VALUE_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xla_plugin/stablehlo/ir.h"

namespace pjrtkit {
namespace stablehlo {

class ValueNames {
 public:
  // What a name refers to: `count` values from `first` (`%0:3` -> 3).
  struct Entry {
    ValueId first = 0;
    int count = 0;  // 0: no entry.
  };

  // The entry of `name` (without '%'), or nullptr when it is not in scope.
  const Entry* Find(std::string_view name) const;
  // Brings `name` into scope; false when it is in scope already.
  bool Insert(std::string_view name, Entry entry);
  // Takes `name` out of scope.
  void Erase(std::string_view name);

 private:
  // Names %<prefix>N: N - base indexes `entries`.
  struct Numbered {
    int64_t base = -1;             // N of the first name seen (-1: none yet).
    std::vector<Entry> entries;    // Grows by at most kMaxGrowth past its end per name.
  };
  // How far past its end a Numbered vector grows for one name (bounds memory per name).
  static constexpr int64_t kMaxGrowth = 64;

  // The vector slot of `name`, or nullptr when it is not a numbered name or out of range.
  Entry* Slot(std::string_view name, bool grow);

  Numbered numbers_;                                 // %0, %1, ...
  Numbered arguments_;                               // %arg0, %arg1, ...
  std::unordered_map<std::string, Entry> others_;    // Every other name, and numbered ones
                                                     // that fell outside the vectors.
};

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_VALUE_NAMES_H_
