// ProtoWriter's fields, read back with ProtoReader, and exact bytes.
#include "xla_plugin/client/proto_writer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/proto_reader.h"

namespace pjrtkit {
namespace {

TEST(ProtoWriterTest, ExactBytes) {
  std::string out;
  AppendVarint(300, &out);
  EXPECT_EQ(out, std::string("\xac\x02", 2));
  out.clear();
  AppendVarintField(1, 3, &out);
  AppendBytesField(2, "ab", &out);
  AppendPackedField(4, {0, 1, 128}, &out);
  EXPECT_EQ(out, std::string("\x08\x03\x12\x02" "ab" "\x22\x04\x00\x01\x80\x01", 12));
}

TEST(ProtoWriterTest, ReadsBackWithProtoReader) {
  std::string sub;
  AppendVarintField(1, 7, &sub);
  std::string out;
  AppendVarintField(1, uint64_t{1} << 40, &out);
  AppendBytesField(3, sub, &out);
  AppendPackedField(5, {-1, 2}, &out);
  ProtoReader reader(out);
  StatusOr<ProtoField> a = reader.Next();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->number, 1);
  EXPECT_EQ(a->varint, uint64_t{1} << 40);
  StatusOr<ProtoField> b = reader.Next();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->number, 3);
  EXPECT_EQ(b->bytes, sub);
  StatusOr<ProtoField> c = reader.Next();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->number, 5);
  EXPECT_EQ(c->bytes.size(), 11u);  // -1 takes ten bytes as a varint, 2 one.
  EXPECT_TRUE(reader.done());
}

}  // namespace
}  // namespace pjrtkit
