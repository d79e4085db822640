// ProtoReader on hand-encoded messages: every wire type, packed varints, and malformed input.
#include "xla_plugin/client/proto_reader.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace {

std::string Bytes(std::initializer_list<unsigned char> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

TEST(ProtoReaderTest, ReadsEveryWireType) {
  // 1: varint 150; 2: "hi"; 3: fixed32 0x04030201; 4: fixed64 1; 15: varint 1.
  const std::string message =
      Bytes({0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i', 0x1d, 0x01, 0x02, 0x03, 0x04, 0x21, 0x01,
             0, 0, 0, 0, 0, 0, 0, 0x78, 0x01});
  ProtoReader reader(message);
  StatusOr<ProtoField> f = reader.Next();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->number, 1);
  EXPECT_EQ(f->type, WireType::kVarint);
  EXPECT_EQ(f->varint, 150u);
  f = reader.Next();
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->number, 2);
  EXPECT_EQ(f->type, WireType::kLengthDelimited);
  EXPECT_EQ(f->bytes, "hi");
  f = reader.Next();
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->number, 3);
  EXPECT_EQ(f->type, WireType::kFixed32);
  EXPECT_EQ(f->varint, 0x04030201u);
  f = reader.Next();
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->number, 4);
  EXPECT_EQ(f->type, WireType::kFixed64);
  EXPECT_EQ(f->varint, 1u);
  f = reader.Next();
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->number, 15);
  EXPECT_EQ(f->varint, 1u);
  EXPECT_TRUE(reader.done());
  EXPECT_EQ(reader.Next().status().code(), StatusCode::kInvalidArgument);
}

TEST(ProtoReaderTest, EmptyMessageIsDone) {
  ProtoReader reader("");
  EXPECT_TRUE(reader.done());
}

TEST(ProtoReaderTest, ReadsTenByteNegativeVarint) {
  // Field 1 = -1 as int64: ten bytes.
  const std::string message =
      Bytes({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  ProtoReader reader(message);
  StatusOr<ProtoField> f = reader.Next();
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(static_cast<int64_t>(f->varint), -1);
}

TEST(ProtoReaderTest, PackedVarints) {
  StatusOr<std::vector<int64_t>> values =
      ProtoReader::PackedVarints(Bytes({0x02, 0x03, 0x96, 0x01, 0x00}));
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::vector<int64_t>{2, 3, 150, 0}));
  EXPECT_FALSE(ProtoReader::PackedVarints(Bytes({0x02, 0x80})).ok());  // Truncated.
}

// The error of reading the first field of `message`.
Status FirstError(const std::string& message) {
  ProtoReader reader(message);
  return reader.Next().status();
}

TEST(ProtoReaderTest, RejectsMalformedMessages) {
  EXPECT_EQ(FirstError(Bytes({0x08})).code(), StatusCode::kInvalidArgument);  // No value.
  EXPECT_EQ(FirstError(Bytes({0x08, 0x80})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FirstError(Bytes({0x12, 0x05, 'a'})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FirstError(Bytes({0x1d, 0x01, 0x02})).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FirstError(Bytes({0x0b})).code(), StatusCode::kInvalidArgument);  // Group.
  EXPECT_EQ(FirstError(Bytes({0x00, 0x01})).code(), StatusCode::kInvalidArgument);  // Field 0.
  // Eleven continuation bytes: longer than any varint.
  EXPECT_EQ(FirstError(Bytes({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                              0x01}))
                .code(),
            StatusCode::kInvalidArgument);
  // A length that would wrap around size_t.
  EXPECT_EQ(FirstError(Bytes({0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}))
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(ProtoReaderTest, ErrorNamesTheOffset) {
  const Status status = FirstError(Bytes({0x12, 0x05, 'a'}));
  EXPECT_EQ(status.message(),
            "malformed protobuf message: length past the end of the message at byte 2 of 3");
}

}  // namespace
}  // namespace pjrtkit
