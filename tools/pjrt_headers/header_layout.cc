#include "tools/pjrt_headers/header_layout.h"

// C++ standard library.
#include <cctype>
#include <cstring>

namespace pjrt_headers {

HeaderLayout::HeaderLayout(int major, int minor, const StructLayout* structs, size_t num_structs,
                           const ExtensionType* extensions, size_t num_extensions)
    : major_(major),
      minor_(minor),
      structs_(structs),
      num_structs_(num_structs),
      extensions_(extensions),
      num_extensions_(num_extensions) {}

const StructLayout* HeaderLayout::FindStruct(const std::string& name) const {
  for (size_t i = 0; i < num_structs_; ++i) {
    if (name == structs_[i].name) return &structs_[i];
  }
  return nullptr;
}

const StructLayout* HeaderLayout::FindStructIgnoringCase(const std::string& name) const {
  for (size_t i = 0; i < num_structs_; ++i) {
    const char* candidate = structs_[i].name;
    if (std::strlen(candidate) != name.size()) continue;
    bool same = true;
    for (size_t c = 0; same && c < name.size(); ++c) {
      same = std::tolower(static_cast<unsigned char>(candidate[c])) ==
             std::tolower(static_cast<unsigned char>(name[c]));
    }
    if (same) return &structs_[i];
  }
  return nullptr;
}

const ExtensionType* HeaderLayout::FindExtension(int value) const {
  for (size_t i = 0; i < num_extensions_; ++i) {
    if (extensions_[i].value == value) return &extensions_[i];
  }
  return nullptr;
}

const FieldEnd* HeaderLayout::FieldEndingAt(const StructLayout& layout, size_t size) {
  for (size_t i = 0; i < layout.num_fields; ++i) {
    if (layout.fields[i].end == size) return &layout.fields[i];
  }
  return nullptr;
}

}  // namespace pjrt_headers
