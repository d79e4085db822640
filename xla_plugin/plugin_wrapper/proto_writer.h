// Test helpers: hand-encoded protobuf fields (the wire format ProtoReader reads), for tests that
// build XLA protos byte by byte. Test-only (the `proto_writer` target is testonly).
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PROTO_WRITER_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PROTO_WRITER_H_

#include <cstdint>
#include <string>

namespace pjrtkit {
namespace plugin_wrapper {
namespace proto_writer {

// `value` as a base-128 varint.
inline std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

// A varint field (wire type 0); negative int64 values go as their two's complement.
inline std::string VarintField(int number, uint64_t value) {
  return Varint(static_cast<uint64_t>(number) << 3) + Varint(value);
}

// A length-delimited field (wire type 2): a string, bytes, a sub-message or a packed list.
inline std::string BytesField(int number, const std::string& bytes) {
  return Varint((static_cast<uint64_t>(number) << 3) | 2) + Varint(bytes.size()) + bytes;
}

}  // namespace proto_writer
}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PROTO_WRITER_H_
