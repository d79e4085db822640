// The extension chains of PJRT plugins as a markdown table: one row per extension type, one
// column per plugin (a plugin and the inner plugin it wraps, side by side), each cell the
// extension's struct_size and, where the pinned header's struct has one, its version field.
#ifndef PJRTKIT_TOOLS_API_COVERAGE_EXTENSION_TABLE_H_
#define PJRTKIT_TOOLS_API_COVERAGE_EXTENSION_TABLE_H_

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

namespace api_coverage {

// One extension of a chain.
struct ExtensionEntry {
  int type = 0;              // PJRT_Extension_Base::type.
  size_t struct_size = 0;    // PJRT_Extension_Base::struct_size.
  bool has_version = false;  // The struct has a version field and struct_size covers it.
  int64_t version = 0;       // Its value (has_version).
};

// The chain of `api` (PJRT_Api::extension_start), at most 64 entries.
std::vector<ExtensionEntry> ReadExtensionChain(const PJRT_Api* api);

// "PJRT_Extension_Type_FFI (5)" for the types of the pinned header, "pjrtkit (0x706A6B74)" for
// pjrtkit's own, else "(unknown to this header) (N)".
std::string ExtensionTypeName(int type);

// The markdown table of `chains`, titled by `columns` (one per chain). With one chain:
// `| # | type | struct_size |`; with more, one column per chain ("absent" where a chain lacks
// the type), rows in the order of the first chain, then of the others.
std::string ExtensionTable(const std::vector<std::string>& columns,
                           const std::vector<std::vector<ExtensionEntry>>& chains);

}  // namespace api_coverage

#endif  // PJRTKIT_TOOLS_API_COVERAGE_EXTENSION_TABLE_H_
