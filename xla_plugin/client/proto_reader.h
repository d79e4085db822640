// ProtoReader: a minimal reader of the protobuf wire format (no generated code, no libprotobuf).
//
// pjrtkit reads a few fields of XLA's protos (the parameter shapes of an optimized HloModuleProto)
// without linking protobuf: the plugin may link only libc/libm/libstdc++/libgcc_s. The reader
// walks the fields of one message; a length-delimited field's bytes can be read with another
// ProtoReader (sub-messages) or PackedVarints (packed repeated integers).
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_PROTO_READER_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_PROTO_READER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {

// Wire types of the protobuf encoding (groups, 3 and 4, are not supported).
enum class WireType : int {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kFixed32 = 5,
};

// One field of a message.
struct ProtoField {
  int number = 0;                        // Field number (>= 1).
  WireType type = WireType::kVarint;     // How the value is encoded.
  uint64_t varint = 0;                   // The value of a kVarint field; fixed ones, zero-extended.
  std::string_view bytes;                // The bytes of a kLengthDelimited field.
};

// Reads the fields of one serialized message in order. Never reads outside `data`: a truncated
// or malformed message is an INVALID_ARGUMENT error naming the byte offset.
class ProtoReader {
 public:
  // Reads `data`, which must outlive the reader and the fields it returns.
  explicit ProtoReader(std::string_view data) : data_(data) {}

  // True when every field has been read.
  bool done() const { return pos_ >= data_.size(); }
  // The next field; INVALID_ARGUMENT when the bytes are not a valid encoding (a group, a field
  // number 0, a varint longer than 10 bytes, a length past the end).
  StatusOr<ProtoField> Next();

  // The integers of a packed repeated varint field (`bytes` of a kLengthDelimited field), as
  // int64 (two's complement, as protobuf encodes negative int64/int32/enum values).
  static StatusOr<std::vector<int64_t>> PackedVarints(std::string_view bytes);

 private:
  // Reads a varint at pos_ into `value`.
  Status ReadVarint(uint64_t* value);
  // INVALID_ARGUMENT "<what> at byte <pos_>".
  Status Malformed(const char* what) const;

  std::string_view data_;  // The message.
  size_t pos_ = 0;         // Offset of the next unread byte.
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_PROTO_READER_H_
