// The compiled layout of one PJRT C API header set: every struct's sizeof, its _STRUCT_SIZE and
// where each field ends, and the PJRT_Extension_Type values with their structs. The tables are
// generated at build time by gen_layout_table.py and compiled against that header set (see
// BUILD: one target per header version), so this header includes no PJRT header itself and
// tools can hold several versions at once.
#ifndef PJRTKIT_TOOLS_PJRT_HEADERS_HEADER_LAYOUT_H_
#define PJRTKIT_TOOLS_PJRT_HEADERS_HEADER_LAYOUT_H_

// C++ standard library.
#include <cstddef>
#include <string>

namespace pjrt_headers {

// One member of a struct and PJRT_STRUCT_SIZE(struct, member).
struct FieldEnd {
  const char* name;  // The member.
  size_t end;        // offsetof + sizeof of the member.
};

// One struct of the header set.
struct StructLayout {
  const char* name;         // The struct tag.
  size_t size;              // sizeof.
  size_t struct_size;       // NAME_STRUCT_SIZE, or 0 when the header defines none.
  const FieldEnd* fields;   // In declaration order.
  size_t num_fields;        // Entries of `fields`.
  // The integer member called `version` or `*_version`, when the struct has one.
  const char* version_field;
  size_t version_offset;    // Its offsetof (when version_field is set).
  size_t version_size;      // Its sizeof: 4 or 8 (when version_field is set).
};

// One PJRT_Extension_Type enumerator.
struct ExtensionType {
  int value;                  // The enumerator's value.
  const char* name;           // "PJRT_Extension_Type_FFI".
  const char* struct_name;    // Its extension struct, or nullptr when the set declares none.
};

// A header set's tables, with lookups.
class HeaderLayout {
 public:
  HeaderLayout(int major, int minor, const StructLayout* structs, size_t num_structs,
               const ExtensionType* extensions, size_t num_extensions);

  // PJRT_API_MAJOR / PJRT_API_MINOR of the set.
  int major() const { return major_; }
  int minor() const { return minor_; }

  // The struct called `name`, or nullptr.
  const StructLayout* FindStruct(const std::string& name) const;

  // The struct whose name equals `name` ignoring ASCII case, or nullptr.
  const StructLayout* FindStructIgnoringCase(const std::string& name) const;

  // The extension type with value `value`, or nullptr.
  const ExtensionType* FindExtension(int value) const;

  // All extension types, in enumerator order.
  const ExtensionType* extensions() const { return extensions_; }
  size_t num_extensions() const { return num_extensions_; }

  // The member of `layout` that `size` ends right after, or nullptr when no member ends there.
  // With several (a union), the first.
  static const FieldEnd* FieldEndingAt(const StructLayout& layout, size_t size);

 private:
  int major_;                         // PJRT_API_MAJOR.
  int minor_;                         // PJRT_API_MINOR.
  const StructLayout* structs_;       // Every struct with a body.
  size_t num_structs_;                // Entries of `structs_`.
  const ExtensionType* extensions_;   // Every PJRT_Extension_Type enumerator.
  size_t num_extensions_;             // Entries of `extensions_`.
};

// The pinned header set's tables (target //tools/pjrt_headers:pinned_layout).
const HeaderLayout& PinnedHeaderLayout();

// The tables of the 0.81 header xla-cpu-pjrt ships (target //tools/pjrt_headers:layout_0_81).
const HeaderLayout& HeaderLayout0_81();

}  // namespace pjrt_headers

#endif  // PJRTKIT_TOOLS_PJRT_HEADERS_HEADER_LAYOUT_H_
