#include "xla_plugin/c_api/trace/args_printer.h"

// C++ standard library.
#include <cstring>

namespace pjrtkit {
namespace capi {
namespace trace {

void AppendQuoted(std::string& out, const char* text, size_t size, size_t limit) {
  const char* newline = static_cast<const char*>(std::memchr(text, '\n', size));
  const size_t line = newline ? static_cast<size_t>(newline - text) : size;
  for (size_t i = 0; i < line; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c > 0x7e) {
      out += "<" + std::to_string(size) + " bytes>";
      return;
    }
  }
  out += "\"";
  for (size_t i = 0; i < line && i < limit; ++i) {
    if (text[i] == '"' || text[i] == '\\') out += '\\';
    out += text[i];
  }
  out += line > limit || line < size ? "...\"" : "\"";
}

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit
