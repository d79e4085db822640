// SerializedExecutable: the header naming the topology of a serialized executable.
#include "xla_plugin/devices/xla_cpu/serialized_executable.h"

#include <string>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace xla_cpu {
namespace {

const std::string kMagic("\0pjrtkit-xla-cpu-executable\0", 28);

TEST(SerializedExecutableTest, EncodeWritesTheHeaderThenTheInnerBytes) {
  const std::string bytes = SerializedExecutable::Encode(258, "\x0a\x03xyz");
  EXPECT_EQ(bytes, kMagic + std::string("\x01\x02\x01\x00\x00", 5) + "\x0a\x03xyz");
  EXPECT_EQ(SerializedExecutable::kHeaderSize, 33u);
}

TEST(SerializedExecutableTest, DecodeRoundTrips) {
  const std::string bytes = SerializedExecutable::Encode(4, "\x0a\x01z");
  StatusOr<SerializedExecutable> parsed = SerializedExecutable::Decode(bytes, "load");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->device_count(), 4);
  EXPECT_EQ(parsed->inner(), "\x0a\x01z");
  EXPECT_TRUE(parsed->CheckDeviceCount(4, "load").ok());
  Status refused = parsed->CheckDeviceCount(1, "load");
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(),
            "load: the executable was compiled for a pjrtkit topology of 4 devices, but this "
            "client has 1 (create the client with device_count=4 to load it)");
}

TEST(SerializedExecutableTest, BytesWithoutTheHeaderAreXlaCpusOwn) {
  // A serialized protobuf never starts with a zero byte.
  StatusOr<SerializedExecutable> parsed = SerializedExecutable::Decode("\x0a\x02hi", "load");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->device_count(), 0);
  EXPECT_EQ(parsed->inner(), "\x0a\x02hi");
  EXPECT_TRUE(parsed->CheckDeviceCount(7, "load").ok());  // Nothing to check.
  parsed = SerializedExecutable::Decode("", "load");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->inner(), "");
}

TEST(SerializedExecutableTest, BadHeadersAreInvalidArgument) {
  StatusOr<SerializedExecutable> parsed =
      SerializedExecutable::Decode(std::string("\0other", 6), "load");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable (6 bytes) is neither a pjrtkit reference-device "
            "executable nor XLA:CPU's own");
  parsed = SerializedExecutable::Decode(kMagic + "\x01\x02", "load");  // Cut short.
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable (30 bytes) is neither a pjrtkit reference-device "
            "executable nor XLA:CPU's own");
  parsed = SerializedExecutable::Decode(kMagic + std::string("\x02\x01\x00\x00\x00", 5), "load");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable has format version 2; this pjrtkit reads version 1");
  parsed = SerializedExecutable::Decode(kMagic + std::string("\x01\x00\x00\x00\x00", 5), "load");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable names a topology of 0 devices");
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
