// SerializedExecutable: the header naming the topology of a serialized executable.
#include "xla_plugin/devices/inner/serialized_executable.h"

#include <string>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace inner {
namespace {

const std::string kMagic("\0pjrtkit-xla-cpu-executable\0", 28);

TEST(SerializedExecutableTest, EncodeWritesTheHeaderThenTheInnerBytes) {
  const std::string bytes = SerializedExecutable::Encode("xla_cpu", 258, "\x0a\x03xyz");
  EXPECT_EQ(bytes, kMagic + std::string("\x01\x02\x01\x00\x00", 5) + "\x0a\x03xyz");
  EXPECT_EQ(SerializedExecutable::HeaderSize("xla_cpu"), 33u);
}

TEST(SerializedExecutableTest, DecodeRoundTrips) {
  const std::string bytes = SerializedExecutable::Encode("xla_cpu", 4, "\x0a\x01z");
  StatusOr<SerializedExecutable> parsed =
      SerializedExecutable::Decode(bytes, "xla_cpu", "XLA:CPU", "load");
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
  StatusOr<SerializedExecutable> parsed =
      SerializedExecutable::Decode("\x0a\x02hi", "xla_cpu", "XLA:CPU", "load");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->device_count(), 0);
  EXPECT_EQ(parsed->inner(), "\x0a\x02hi");
  EXPECT_TRUE(parsed->CheckDeviceCount(7, "load").ok());  // Nothing to check.
  parsed = SerializedExecutable::Decode("", "xla_cpu", "XLA:CPU", "load");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->inner(), "");
}

TEST(SerializedExecutableTest, MagicNamesTheBackend) {
  EXPECT_EQ(SerializedExecutable::Magic("xla_cpu"), kMagic);
  EXPECT_EQ(SerializedExecutable::Magic("xla_gpu"),
            std::string("\0pjrtkit-xla-gpu-executable\0", 28));
}

TEST(SerializedExecutableTest, AnotherDevicesBytesAreInvalidArgument) {
  const std::string gpu = SerializedExecutable::Encode("xla_gpu", 1, "\x0a\x01z");
  StatusOr<SerializedExecutable> parsed =
      SerializedExecutable::Decode(gpu, "xla_cpu", "XLA:CPU", "load");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable (36 bytes) is neither a pjrtkit xla_cpu executable "
            "nor XLA:CPU's own");
}

TEST(SerializedExecutableTest, BadHeadersAreInvalidArgument) {
  StatusOr<SerializedExecutable> parsed =
      SerializedExecutable::Decode(std::string("\0other", 6), "xla_cpu", "XLA:CPU", "load");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable (6 bytes) is neither a pjrtkit xla_cpu "
            "executable nor XLA:CPU's own");
  parsed = SerializedExecutable::Decode(kMagic + "\x01\x02", "xla_cpu", "XLA:CPU",
                                        "load");  // Cut short.
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable (30 bytes) is neither a pjrtkit xla_cpu "
            "executable nor XLA:CPU's own");
  parsed = SerializedExecutable::Decode(kMagic + std::string("\x02\x01\x00\x00\x00", 5), "xla_cpu",
                                        "XLA:CPU", "load");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable has format version 2; this pjrtkit reads version 1");
  parsed = SerializedExecutable::Decode(kMagic + std::string("\x01\x00\x00\x00\x00", 5), "xla_cpu",
                                        "XLA:CPU", "load");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable names a topology of 0 devices");
}

}  // namespace
}  // namespace inner
}  // namespace pjrtkit
