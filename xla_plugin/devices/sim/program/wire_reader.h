// WireReader: reads what WireWriter wrote, bounds-checked, from untrusted bytes.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_WIRE_READER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_WIRE_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xla_plugin/client/status.h"

namespace pjrtkit {
namespace sim {

// Reads values one after another from a byte string. Nothing it does can crash, throw (short of
// the process running out of memory) or allocate more than the remaining bytes can hold: every
// read is bounds-checked, and a count of elements is refused unless the elements, at their
// smallest encoding, fit in the bytes left. The error is sticky: after the first failure every
// read stores a zero value, vectors stay empty and status() keeps that first error, so decoding
// code reads field after field and checks status() once. Each read names its field; the error
// says where it happened ("computations[0].instructions[3].padding") through the enclosing
// Scopes and Vector elements.
class WireReader {
 public:
  // Reads `bytes`, which must outlive the reader.
  explicit WireReader(std::string_view bytes) : bytes_(bytes) {}

  // Names the enclosing struct field (and element index, or -1) for error messages while alive.
  class Scope {
   public:
    // Enters `field` (a string literal) of `reader`.
    Scope(WireReader& reader, const char* field, int64_t index = -1) : reader_(reader) {
      reader_.frames_.push_back({field, index});
    }
    ~Scope() { reader_.frames_.pop_back(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    WireReader& reader_;  // The reader whose frame this is.
  };

  // True while no read has failed.
  bool ok() const { return status_.ok(); }
  // OK, or INVALID_ARGUMENT naming the byte offset, the field's path and the problem.
  const Status& status() const { return status_; }
  // Bytes not read yet.
  size_t remaining() const { return bytes_.size() - position_; }

  // An unsigned varint; refuses one that is cut off, longer than 10 bytes, over 64 bits, or not in
  // its shortest form.
  uint64_t Varint(const char* field);
  // A zigzag varint.
  void Int64(const char* field, int64_t* value);
  // A zigzag varint in int32's range.
  void Int32(const char* field, int32_t* value);
  // One byte, 0 or 1.
  void Bool(const char* field, bool* value);
  // A varint in [0, num_values), cast to E.
  template <typename E>
  void Enum(const char* field, int num_values, E* value) {
    *value = static_cast<E>(EnumValue(field, num_values));
  }
  // Fixed-width little-endian integers.
  uint32_t Fixed32(const char* field);
  uint64_t Fixed64(const char* field);
  // The next `size` bytes as they are (empty when fewer are left).
  std::string_view Raw(const char* field, size_t size);
  // A length-prefixed string.
  void String(const char* field, std::string* value);
  // A count of elements that each take at least `min_element_bytes` (>= 1) bytes; refuses a count
  // whose elements cannot fit in the bytes left. 0 after an error.
  size_t Count(const char* field, size_t min_element_bytes);
  // Length-prefixed vectors of primitives.
  void Int64s(const char* field, std::vector<int64_t>* values);
  void Int32s(const char* field, std::vector<int32_t>* values);
  void Bools(const char* field, std::vector<bool>* values);
  void Int64Pairs(const char* field, std::vector<std::pair<int64_t, int64_t>>* values);
  // A count, then read_one(reader, &element) for each element (inside a Scope naming
  // field[index]); `min_element_bytes` is the smallest encoding of one element.
  template <typename T, typename ReadOne>
  void Vector(const char* field, size_t min_element_bytes, std::vector<T>* values,
              ReadOne read_one) {
    const size_t count = Count(field, min_element_bytes);
    values->clear();
    values->reserve(count);
    for (size_t i = 0; i < count && ok(); ++i) {
      Scope scope(*this, field, static_cast<int64_t>(i));
      read_one(*this, &values->emplace_back());
    }
  }
  // Fails unless every byte was read ("N trailing bytes after `what`").
  void ExpectEnd(const char* what);
  // Records `problem` for `field` as the error, unless one is recorded already.
  void Fail(const char* field, const std::string& problem);

 private:
  // One enclosing field: its name and element index (-1: not an element).
  struct Frame {
    const char* field;
    int64_t index;
  };

  // EnumValue's varint in [0, num_values), or 0 after an error.
  uint64_t EnumValue(const char* field, int num_values);
  // True when `size` more bytes can be read; fails with a truncation error otherwise.
  bool Need(const char* field, size_t size);
  // "computations[0].instructions[3].padding" for `field` inside the current frames.
  std::string Path(const char* field) const;

  std::string_view bytes_;     // What is read.
  size_t position_ = 0;        // The next byte to read.
  size_t field_start_ = 0;     // Where the field being read started (for messages).
  std::vector<Frame> frames_;  // The enclosing fields, outermost first.
  Status status_;              // The first error, or OK.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_PROGRAM_WIRE_READER_H_
