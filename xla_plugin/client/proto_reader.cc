#include "xla_plugin/client/proto_reader.h"

#include <string>

namespace pjrtkit {

Status ProtoReader::Malformed(const char* what) const {
  return InvalidArgument(std::string("malformed protobuf message: ") + what + " at byte " +
                         std::to_string(pos_) + " of " + std::to_string(data_.size()));
}

Status ProtoReader::ReadVarint(uint64_t* value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size()) return Malformed("truncated varint");
    const uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return OkStatus();
    }
  }
  return Malformed("varint longer than 10 bytes");
}

StatusOr<ProtoField> ProtoReader::Next() {
  if (done()) return Malformed("read past the last field");
  uint64_t key = 0;
  PJRTKIT_RETURN_IF_ERROR(ReadVarint(&key));
  ProtoField field;
  const uint64_t number = key >> 3;
  if (number == 0 || number > 0x1fffffff) return Malformed("invalid field number");
  field.number = static_cast<int>(number);
  switch (key & 7) {
    case 0:
      field.type = WireType::kVarint;
      PJRTKIT_RETURN_IF_ERROR(ReadVarint(&field.varint));
      return field;
    case 1:
    case 5: {
      const size_t size = (key & 7) == 1 ? 8 : 4;
      field.type = (key & 7) == 1 ? WireType::kFixed64 : WireType::kFixed32;
      if (data_.size() - pos_ < size) return Malformed("truncated fixed-size field");
      for (size_t i = 0; i < size; ++i) {  // Little-endian.
        field.varint |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
      }
      pos_ += size;
      return field;
    }
    case 2: {
      field.type = WireType::kLengthDelimited;
      uint64_t length = 0;
      PJRTKIT_RETURN_IF_ERROR(ReadVarint(&length));
      if (length > data_.size() - pos_) return Malformed("length past the end of the message");
      field.bytes = data_.substr(pos_, static_cast<size_t>(length));
      pos_ += static_cast<size_t>(length);
      return field;
    }
    default:
      return Malformed("unsupported wire type (group or invalid)");
  }
}

StatusOr<std::vector<int64_t>> ProtoReader::PackedVarints(std::string_view bytes) {
  ProtoReader reader(bytes);
  std::vector<int64_t> values;
  while (!reader.done()) {
    uint64_t value = 0;
    PJRTKIT_RETURN_IF_ERROR(reader.ReadVarint(&value));
    values.push_back(static_cast<int64_t>(value));
  }
  return values;
}

}  // namespace pjrtkit
