// Writing the protobuf wire format without libprotobuf (ProtoReader's counterpart): the few
// messages pjrtkit builds itself (compile options for an inner plugin, a device assignment, an
// xla.OpSharding) append their fields with these.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_PROTO_WRITER_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_PROTO_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pjrtkit {

// Appends `value` as a varint.
void AppendVarint(uint64_t value, std::string* out);
// Appends field `field` of wire type varint.
void AppendVarintField(uint64_t field, uint64_t value, std::string* out);
// Appends field `field` of wire type length-delimited holding `bytes` (a string, bytes or a
// sub-message).
void AppendBytesField(uint64_t field, std::string_view bytes, std::string* out);
// Appends a packed repeated integer field (int64/uint64: negative values as 10-byte varints).
void AppendPackedField(uint64_t field, const std::vector<int64_t>& values, std::string* out);

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_PROTO_WRITER_H_
