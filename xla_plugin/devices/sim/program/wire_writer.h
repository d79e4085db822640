// WireWriter: appends the primitives of the sim program format (serialization.h) to a byte string:
// LEB128 varints for counts and enum values, zigzag varints for signed integers, fixed-width
// little-endian integers for the header, length-prefixed strings and vectors.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_WIRE_WRITER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_WIRE_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pjrtkit {
namespace sim {

// Writes values one after another; every encoding is canonical (one value, one byte sequence), so
// equal values give equal bytes and WireReader can refuse any other spelling.
class WireWriter {
 public:
  // An unsigned LEB128 varint (1 to 10 bytes; the shortest form).
  void Varint(uint64_t value);
  // A signed integer as a zigzag varint (small magnitudes take one byte).
  void Int64(int64_t value);
  // An int32 as Int64 (WireReader refuses values outside int32's range).
  void Int32(int32_t value) { Int64(value); }
  // A bool as one byte, 0 or 1.
  void Bool(bool value) { Varint(value ? 1 : 0); }
  // An enum's underlying value as a varint.
  template <typename E>
  void Enum(E value) {
    Varint(static_cast<uint64_t>(value));
  }
  // A 32-bit / 64-bit little-endian integer (the header's fixed fields).
  void Fixed32(uint32_t value);
  void Fixed64(uint64_t value);
  // Bytes as they are, no length (the header's magic).
  void Raw(std::string_view bytes) { bytes_.append(bytes.data(), bytes.size()); }
  // A length (varint), then the bytes.
  void String(std::string_view value);
  // A count (varint), then each element.
  void Int64s(const std::vector<int64_t>& values);
  void Int32s(const std::vector<int32_t>& values);
  void Bools(const std::vector<bool>& values);
  void Int64Pairs(const std::vector<std::pair<int64_t, int64_t>>& values);
  // A count (varint), then write_one(writer, element) for each element.
  template <typename T, typename WriteOne>
  void Vector(const std::vector<T>& values, WriteOne write_one) {
    Varint(values.size());
    for (const T& value : values) write_one(*this, value);
  }

  // The bytes written so far.
  const std::string& bytes() const { return bytes_; }
  // Moves the bytes out (the writer is empty afterwards).
  std::string Release() { return std::move(bytes_); }

 private:
  std::string bytes_;  // Everything written so far.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_WIRE_WRITER_H_
