#include "xla_plugin/devices/sim/program/wire_reader.h"

#include <algorithm>
#include <limits>

namespace pjrtkit {
namespace sim {

uint64_t WireReader::Varint(const char* field) {
  if (!ok()) return 0;
  field_start_ = position_;
  uint64_t value = 0;
  for (int i = 0; i < 10; ++i) {
    if (!Need(field, 1)) return 0;
    const uint8_t byte = static_cast<uint8_t>(bytes_[position_++]);
    if (i == 9 && byte > 1) {
      Fail(field, "varint does not fit in 64 bits");
      return 0;
    }
    value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      if (byte == 0 && i > 0) {
        Fail(field, "varint not in its shortest form");
        return 0;
      }
      return value;
    }
  }
  return 0;  // Not reached: the tenth byte either ends the varint or fails above.
}

void WireReader::Int64(const char* field, int64_t* value) {
  const uint64_t bits = Varint(field);
  *value = static_cast<int64_t>((bits >> 1) ^ (~(bits & 1) + 1));
}

void WireReader::Int32(const char* field, int32_t* value) {
  int64_t wide = 0;
  Int64(field, &wide);
  *value = 0;
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
    Fail(field, "value " + std::to_string(wide) + " does not fit in int32");
    return;
  }
  *value = static_cast<int32_t>(wide);
}

void WireReader::Bool(const char* field, bool* value) {
  const uint64_t bits = Varint(field);
  *value = false;
  if (bits > 1) {
    Fail(field, "value " + std::to_string(bits) + " is not a bool (0 or 1)");
    return;
  }
  *value = bits == 1;
}

uint64_t WireReader::EnumValue(const char* field, int num_values) {
  const uint64_t value = Varint(field);
  if (value >= static_cast<uint64_t>(num_values)) {
    Fail(field, "enum value " + std::to_string(value) + " out of range [0, " +
                    std::to_string(num_values) + ")");
    return 0;
  }
  return value;
}

uint32_t WireReader::Fixed32(const char* field) {
  const std::string_view bytes = Raw(field, 4);
  uint32_t value = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    value |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  }
  return value;
}

uint64_t WireReader::Fixed64(const char* field) {
  const std::string_view bytes = Raw(field, 8);
  uint64_t value = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  }
  return value;
}

std::string_view WireReader::Raw(const char* field, size_t size) {
  if (!ok()) return {};
  field_start_ = position_;
  if (!Need(field, size)) return {};
  const std::string_view bytes = bytes_.substr(position_, size);
  position_ += size;
  return bytes;
}

void WireReader::String(const char* field, std::string* value) {
  value->clear();
  const uint64_t size = Varint(field);
  if (!ok()) return;
  if (size > remaining()) {
    Fail(field, "string of " + std::to_string(size) + " bytes does not fit in the " +
                    std::to_string(remaining()) + " bytes left");
    return;
  }
  value->assign(bytes_.data() + position_, size);
  position_ += size;
}

size_t WireReader::Count(const char* field, size_t min_element_bytes) {
  const uint64_t count = Varint(field);
  if (!ok()) return 0;
  if (count > remaining() / std::max<size_t>(min_element_bytes, 1)) {
    Fail(field, "count " + std::to_string(count) + " does not fit in the " +
                    std::to_string(remaining()) + " bytes left (each element takes at least " +
                    std::to_string(min_element_bytes) + ")");
    return 0;
  }
  return static_cast<size_t>(count);
}

void WireReader::Int64s(const char* field, std::vector<int64_t>* values) {
  Vector(field, 1, values, [](WireReader& r, int64_t* value) { r.Int64("", value); });
}

void WireReader::Int32s(const char* field, std::vector<int32_t>* values) {
  Vector(field, 1, values, [](WireReader& r, int32_t* value) { r.Int32("", value); });
}

void WireReader::Bools(const char* field, std::vector<bool>* values) {
  // std::vector<bool> has no element pointers: read into a bool, then append.
  const size_t count = Count(field, 1);
  values->clear();
  values->reserve(count);
  for (size_t i = 0; i < count && ok(); ++i) {
    Scope scope(*this, field, static_cast<int64_t>(i));
    bool value = false;
    Bool("", &value);
    values->push_back(value);
  }
}

void WireReader::Int64Pairs(const char* field, std::vector<std::pair<int64_t, int64_t>>* values) {
  Vector(field, 2, values, [](WireReader& r, std::pair<int64_t, int64_t>* pair) {
    r.Int64("first", &pair->first);
    r.Int64("second", &pair->second);
  });
}

void WireReader::ExpectEnd(const char* what) {
  if (ok() && remaining() != 0) {
    field_start_ = position_;
    Fail("", std::to_string(remaining()) + " trailing bytes after " + what);
  }
}

void WireReader::Fail(const char* field, const std::string& problem) {
  if (!ok()) return;
  const std::string path = Path(field);
  status_ = InvalidArgument("at payload byte " + std::to_string(field_start_) +
                            (path.empty() ? "" : " (" + path + ")") + ": " + problem);
}

bool WireReader::Need(const char* field, size_t size) {
  if (size <= remaining()) return true;
  Fail(field, "truncated: " + std::to_string(size) + " more bytes needed, " +
                  std::to_string(remaining()) + " left");
  return false;
}

std::string WireReader::Path(const char* field) const {
  std::string path;
  const auto append = [&path](const char* name, int64_t index) {
    if (name[0] == '\0' && index < 0) return;
    if (!path.empty() && name[0] != '\0') path += ".";
    path += name;
    if (index >= 0) path += "[" + std::to_string(index) + "]";
  };
  for (const Frame& frame : frames_) append(frame.field, frame.index);
  append(field, -1);
  return path;
}

}  // namespace sim
}  // namespace pjrtkit
