#include "xla_plugin/client/proto_writer.h"

#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void AppendVarintField(uint64_t field, uint64_t value, std::string* out) {
  AppendVarint((field << 3) | static_cast<uint64_t>(WireType::kVarint), out);
  AppendVarint(value, out);
}

void AppendBytesField(uint64_t field, std::string_view bytes, std::string* out) {
  AppendVarint((field << 3) | static_cast<uint64_t>(WireType::kLengthDelimited), out);
  AppendVarint(bytes.size(), out);
  out->append(bytes.data(), bytes.size());
}

void AppendPackedField(uint64_t field, const std::vector<int64_t>& values, std::string* out) {
  std::string packed;
  for (int64_t v : values) AppendVarint(static_cast<uint64_t>(v), &packed);
  AppendBytesField(field, packed, out);
}

}  // namespace pjrtkit
