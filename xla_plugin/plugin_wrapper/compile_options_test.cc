// The serialized CompileOptionsProto helpers (no plugin needed).
#include "xla_plugin/plugin_wrapper/compile_options.h"

#include <string>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

TEST(CompileOptionsTest, MinimalBytes) {
  EXPECT_EQ(MinimalCompileOptions(1, 1, false), std::string("\x1a\x04\x20\x01\x28\x01", 6));
  EXPECT_EQ(MinimalCompileOptions(2, 1, true), std::string("\x1a\x04\x20\x02\x28\x01\x20\x01", 8));
}

TEST(CompileOptionsTest, ReadsWhatMinimalWrites) {
  StatusOr<CompileOptionsSummary> summary = ReadCompileOptions(MinimalCompileOptions(3, 2, true));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->num_replicas, 3);
  EXPECT_EQ(summary->num_partitions, 2);
  EXPECT_TRUE(summary->compile_portable_executable);
}

TEST(CompileOptionsTest, EmptyBecomesOneByOne) {
  StatusOr<std::string> normalized = NormalizeCompileOptions("", 4);
  ASSERT_TRUE(normalized.ok());
  EXPECT_EQ(*normalized, std::string("\x1a\x04\x20\x01\x28\x01", 6));
}

TEST(CompileOptionsTest, OnlyUnsetFieldsAreAppended) {
  // executable_build_options { num_replicas: 2 } and an unrelated fixed32, fixed64 and string.
  const std::string given("\x1a\x02\x20\x02\x3d\x01\x02\x03\x04\x41\x01\x02\x03\x04\x05\x06\x07"
                          "\x08\x32\x01x",
                          21);
  StatusOr<std::string> normalized = NormalizeCompileOptions(given, 4);
  ASSERT_TRUE(normalized.ok()) << normalized.status().ToString();
  EXPECT_EQ(*normalized, given + std::string("\x1a\x02\x28\x01", 4));
  StatusOr<CompileOptionsSummary> summary = ReadCompileOptions(*normalized);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->num_replicas, 2);
  EXPECT_EQ(summary->num_partitions, 1);
  const std::string complete = MinimalCompileOptions(2, 2, false);
  EXPECT_EQ(*NormalizeCompileOptions(complete, 4), complete);
}

TEST(CompileOptionsTest, Rejections) {
  EXPECT_EQ(NormalizeCompileOptions(std::string("\x1a\x05\x20", 3), 4).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(NormalizeCompileOptions(std::string("\x0b", 1), 4).status().code(),
            StatusCode::kInvalidArgument);  // A group: not used by XLA.
  EXPECT_EQ(NormalizeCompileOptions(MinimalCompileOptions(-1, 1, false), 4).status().code(),
            StatusCode::kInvalidArgument);
  Status status = NormalizeCompileOptions(MinimalCompileOptions(3, 2, false), 4).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "compile options ask for 3 replicas x 2 partitions; this client has 4 devices "
            "(create option 'device_count')");
  EXPECT_TRUE(NormalizeCompileOptions(MinimalCompileOptions(2, 2, false), 4).ok());
}

TEST(CompileOptionsTest, DeviceOrdinalOutsideTheClientIsRefused) {
  // executable_build_options { device_ordinal: -1 } and { device_ordinal: 1 } pass on 2 devices.
  const std::string minus_one("\x1a\x0b\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 13);
  EXPECT_TRUE(NormalizeCompileOptions(minus_one, 2).ok());
  EXPECT_TRUE(NormalizeCompileOptions(std::string("\x1a\x02\x08\x01", 4), 2).ok());
  // The fuzzer's finding: an int64 whose low 32 bits are -1 (XLA:CPU CHECK-failed on it).
  const std::string narrowed("\x1a\x0b\x08\xff\xff\xff\xff\xff\xfc\xff\xff\xff\x01", 13);
  Status status = NormalizeCompileOptions(narrowed, 2).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "compile options: executable_build_options.device_ordinal must be -1 (any device) or "
            "in [0, 2) on this client; got -103079215105");
  EXPECT_EQ(NormalizeCompileOptions(std::string("\x1a\x02\x08\x02", 4), 2).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CompileOptionsTest, DebugOptionsThatAbortAreRefused) {
  // executable_build_options { debug_options { xla_unsupported_crash_on_hlo_pass_noop_change
  // (379): 2 } }: the fuzzer's finding (XLA:CPU's layout assignment then CHECK-fails).
  const std::string noop("\x1a\x05\x1a\x03\xd8\x17\x02", 7);
  Status status = NormalizeCompileOptions(noop, 2).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "compile options: executable_build_options.debug_options."
            "xla_unsupported_crash_on_hlo_pass_noop_change makes XLA abort the process instead of "
            "returning an error; pjrtkit refuses it (leave it false)");
  // 363, 380 and 101 likewise; a later debug_options message setting it false wins.
  EXPECT_EQ(ReadCompileOptions(std::string("\x1a\x05\x1a\x03\xd8\x16\x01", 7))->crash_option,
            "xla_unsupported_crash_on_hlo_pass_fix_max_iterations");
  EXPECT_EQ(ReadCompileOptions(std::string("\x1a\x05\x1a\x03\xe0\x17\x01", 7))->crash_option,
            "xla_unsupported_crash_on_hlo_pass_silent_hlo_change");
  EXPECT_EQ(ReadCompileOptions(std::string("\x1a\x05\x1a\x03\xa8\x06\x01", 7))->crash_option,
            "xla_gpu_crash_on_verification_failures");
  const std::string unset = noop + std::string("\x1a\x05\x1a\x03\xd8\x17\x00", 7);
  EXPECT_EQ(ReadCompileOptions(unset)->crash_option, "");
  EXPECT_TRUE(NormalizeCompileOptions(unset, 2).ok());
  // Other debug options (xla_dump_max_hlo_modules = 132: 1) pass.
  EXPECT_TRUE(NormalizeCompileOptions(std::string("\x1a\x05\x1a\x03\xa0\x08\x01", 7), 2).ok());
  // A malformed debug_options message is named.
  status = NormalizeCompileOptions(std::string("\x1a\x03\x1a\x01\x80", 5), 2).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("malformed executable_build_options.debug_options"),
            std::string::npos)
      << status.message();
}

TEST(CompileOptionsTest, AutomaticPartitioningUnderShardyIsRefused) {
  // executable_build_options { num_replicas: 1 num_partitions: 2 use_auto_spmd_partitioning: true
  // use_shardy_partitioner: true }: the fuzzer's finding (XLA:CPU's Shardy pass then ends the
  // process: "auto-partitioner callback wasn't registered").
  const std::string both("\x1a\x09\x20\x01\x28\x02\x38\x01\x98\x01\x01", 11);
  StatusOr<CompileOptionsSummary> summary = ReadCompileOptions(both);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_TRUE(summary->use_auto_spmd_partitioning);
  EXPECT_TRUE(summary->use_shardy_partitioner);
  Status status = NormalizeCompileOptions(both, 2).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "compile options: executable_build_options.use_auto_spmd_partitioning with "
            "use_shardy_partitioner over 2 partitions needs XLA's automatic partitioner, which the "
            "wrapped plugin does not register (XLA would abort the process); pjrtkit refuses it: "
            "give every input and output a sharding instead of AUTO");
  // One partition, either flag alone, or a later false passes.
  const std::string one_partition("\x1a\x09\x20\x01\x28\x01\x38\x01\x98\x01\x01", 11);
  EXPECT_TRUE(NormalizeCompileOptions(one_partition, 2).ok());
  EXPECT_TRUE(NormalizeCompileOptions(std::string("\x1a\x06\x20\x01\x28\x02\x38\x01", 8), 2).ok());
  EXPECT_TRUE(
      NormalizeCompileOptions(std::string("\x1a\x07\x20\x01\x28\x02\x98\x01\x01", 9), 2).ok());
  EXPECT_TRUE(NormalizeCompileOptions(both + std::string("\x1a\x02\x38\x00", 4), 2).ok());
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
