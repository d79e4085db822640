// SerializedExecutable: the header naming the topology of a serialized executable.
#include "xla_plugin/plugin_wrapper/serialized_executable.h"

#include <string>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

const std::string kMagic("\0pjrtkit-xla-cpu-executable\0", 28);

TEST(SerializedExecutableTest, EncodeWritesTheHeaderThenTheInnerBytes) {
  const std::string bytes = SerializedExecutable::Encode("xla_cpu", 258, "\x0a\x03xyz");
  // Version 2, 258 devices, FNV-1a 64 of the inner bytes, the inner bytes.
  EXPECT_EQ(bytes, kMagic + std::string("\x02\x02\x01\x00\x00", 5) +
                       std::string("\x15\xc5\x5f\x88\x8a\x13\x99\x49", 8) + "\x0a\x03xyz");
  EXPECT_EQ(SerializedExecutable::HeaderSize("xla_cpu"), 41u);
}

TEST(SerializedExecutableTest, DecodeRoundTrips) {
  const std::string bytes = SerializedExecutable::Encode("xla_cpu", 4, "\x0a\x01z");
  StatusOr<SerializedExecutable> parsed =
      SerializedExecutable::Decode(bytes, "xla_cpu", "XLA:CPU", "load");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->device_count(), 4);
  EXPECT_EQ(parsed->inner(), "\x0a\x01z");
  EXPECT_TRUE(parsed->CheckDeviceCount(4, "load", "make one").ok());
  Status refused = parsed->CheckDeviceCount(1, "load", "create the client with device_count=4");
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
  EXPECT_TRUE(parsed->CheckDeviceCount(7, "load", "make one").ok());  // Nothing to check.
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
            "load: the serialized executable (44 bytes) is neither a pjrtkit xla_cpu executable "
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
  parsed = SerializedExecutable::Decode(kMagic + "\x02\x02", "xla_cpu", "XLA:CPU",
                                        "load");  // Cut short.
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable (30 bytes) is cut short inside its 41-byte header");
  parsed = SerializedExecutable::Decode(kMagic + std::string("\x01\x01\x00\x00\x00", 5) + "\x0a",
                                        "xla_cpu", "XLA:CPU", "load");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable has format version 1; this pjrtkit reads version 2 "
            "(compile it again)");
  std::string zero_devices = SerializedExecutable::Encode("xla_cpu", 1, "\x0a\x01z");
  zero_devices[kMagic.size() + 1] = '\0';
  parsed = SerializedExecutable::Decode(zero_devices, "xla_cpu", "XLA:CPU", "load");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable names a topology of 0 devices");
}

TEST(SerializedExecutableTest, CorruptedBytesAreRefusedBeforeXlaCpuSeesThem) {
  std::string bytes = SerializedExecutable::Encode("xla_cpu", 2, "\x0a\x05hello");
  ASSERT_TRUE(SerializedExecutable::Decode(bytes, "xla_cpu", "XLA:CPU", "load").ok());
  bytes.back() ^= 1;  // One bit of the inner bytes.
  StatusOr<SerializedExecutable> parsed =
      SerializedExecutable::Decode(bytes, "xla_cpu", "XLA:CPU", "load");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(),
            "load: the serialized executable is corrupted (its 7 bytes after the header do not "
            "match the header's checksum)");
  bytes.pop_back();  // Truncated.
  EXPECT_EQ(SerializedExecutable::Decode(bytes, "xla_cpu", "XLA:CPU", "load").status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
