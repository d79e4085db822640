#include "xla_plugin/devices/sim/program/wire_writer.h"

namespace pjrtkit {
namespace sim {

void WireWriter::Varint(uint64_t value) {
  while (value >= 0x80) {
    bytes_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  bytes_.push_back(static_cast<char>(value));
}

void WireWriter::Int64(int64_t value) {
  // Zigzag: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ... (computed on unsigned values: no overflow).
  const uint64_t bits = static_cast<uint64_t>(value);
  Varint((bits << 1) ^ (value < 0 ? ~uint64_t{0} : uint64_t{0}));
}

void WireWriter::Fixed32(uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void WireWriter::Fixed64(uint64_t value) {
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void WireWriter::String(std::string_view value) {
  Varint(value.size());
  Raw(value);
}

void WireWriter::Int64s(const std::vector<int64_t>& values) {
  Varint(values.size());
  for (int64_t value : values) Int64(value);
}

void WireWriter::Int32s(const std::vector<int32_t>& values) {
  Varint(values.size());
  for (int32_t value : values) Int32(value);
}

void WireWriter::Bools(const std::vector<bool>& values) {
  Varint(values.size());
  for (bool value : values) Bool(value);
}

void WireWriter::Int64Pairs(const std::vector<std::pair<int64_t, int64_t>>& values) {
  Varint(values.size());
  for (const auto& [first, second] : values) {
    Int64(first);
    Int64(second);
  }
}

}  // namespace sim
}  // namespace pjrtkit
