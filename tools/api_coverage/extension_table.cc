#include "tools/api_coverage/extension_table.h"

// C++ standard library.
#include <cstdio>
#include <cstring>

// pjrtkit.
#include "tools/pjrt_headers/header_layout.h"
#include "xla_plugin/abi/pjrtkit_extension.h"

namespace api_coverage {
namespace {

// The cell of one extension: "48", or "48, version 3".
std::string Cell(const ExtensionEntry& entry) {
  std::string cell = std::to_string(entry.struct_size);
  if (entry.has_version) cell += ", version " + std::to_string(entry.version);
  return cell;
}

// The entry of `type` in `chain`, or nullptr.
const ExtensionEntry* Find(const std::vector<ExtensionEntry>& chain, int type) {
  for (const ExtensionEntry& entry : chain) {
    if (entry.type == type) return &entry;
  }
  return nullptr;
}

}  // namespace

std::vector<ExtensionEntry> ReadExtensionChain(const PJRT_Api* api) {
  std::vector<ExtensionEntry> chain;
  const pjrt_headers::HeaderLayout& pinned = pjrt_headers::PinnedHeaderLayout();
  for (const PJRT_Extension_Base* ext = api->extension_start; ext != nullptr && chain.size() < 64;
       ext = ext->next) {
    ExtensionEntry entry;
    entry.type = static_cast<int>(ext->type);
    entry.struct_size = ext->struct_size;
    const pjrt_headers::ExtensionType* info = pinned.FindExtension(entry.type);
    const pjrt_headers::StructLayout* layout =
        info != nullptr && info->struct_name != nullptr ? pinned.FindStruct(info->struct_name)
                                                        : nullptr;
    if (layout != nullptr && layout->version_field != nullptr &&
        layout->version_offset + layout->version_size <= ext->struct_size) {
      const char* bytes = reinterpret_cast<const char*>(ext) + layout->version_offset;
      if (layout->version_size == sizeof(int64_t)) {
        int64_t value;
        std::memcpy(&value, bytes, sizeof(value));
        entry.version = value;
      } else {
        int32_t value;
        std::memcpy(&value, bytes, sizeof(value));
        entry.version = value;
      }
      entry.has_version = true;
    }
    chain.push_back(entry);
  }
  return chain;
}

std::string ExtensionTypeName(int type) {
  if (type == pjrtkit::abi::kPjrtkitExtensionType) return "pjrtkit (0x706A6B74)";
  const pjrt_headers::ExtensionType* info = pjrt_headers::PinnedHeaderLayout().FindExtension(type);
  const std::string name = info != nullptr ? info->name : "(unknown to this header)";
  return name + " (" + std::to_string(type) + ")";
}

std::string ExtensionTable(const std::vector<std::string>& columns,
                           const std::vector<std::vector<ExtensionEntry>>& chains) {
  std::string out = "| # | type |";
  std::string rule = "| --- | --- |";
  for (const std::string& column : columns) {
    out += " " + (chains.size() == 1 ? std::string("struct_size") : column) + " |";
    rule += " --- |";
  }
  out += "\n" + rule + "\n";
  std::vector<int> types;  // Row order: first chain, then types only the others have.
  for (const std::vector<ExtensionEntry>& chain : chains) {
    for (const ExtensionEntry& entry : chain) {
      bool seen = false;
      for (int t : types) seen = seen || t == entry.type;
      if (!seen) types.push_back(entry.type);
    }
  }
  int row = 0;
  for (int type : types) {
    out += "| " + std::to_string(++row) + " | " + ExtensionTypeName(type) + " |";
    for (const std::vector<ExtensionEntry>& chain : chains) {
      const ExtensionEntry* entry = Find(chain, type);
      out += " " + (entry != nullptr ? Cell(*entry) : std::string("absent")) + " |";
    }
    out += "\n";
  }
  return out;
}

}  // namespace api_coverage
