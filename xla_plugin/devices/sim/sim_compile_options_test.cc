// SimCompileOptions::Read on hand-encoded CompileOptionsProto bytes: replica and partition counts,
// and env_option_overrides (JAX's compiler_options), which sim accepts only by name and type.
#include "xla_plugin/devices/sim/sim_compile_options.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace pjrtkit {
namespace sim {
namespace {

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

std::string VarintField(int number, uint64_t v) { return Varint(number << 3) + Varint(v); }

std::string BytesField(int number, const std::string& bytes) {
  return Varint((number << 3) | 2) + Varint(bytes.size()) + bytes;
}

std::string DoubleField(int number, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  std::string out = Varint((number << 3) | 1);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  return out;
}

// One env_option_overrides entry (CompileOptionsProto field 7): key = 1, value = 2, where the
// value (OptionOverrideProto) is string_field = 1, bool_field = 2, int_field = 3, double_field = 4.
std::string Override(const std::string& name, const std::string& value_field) {
  return BytesField(7, BytesField(1, name) + BytesField(2, value_field));
}
std::string BoolOverride(const std::string& name, bool v) {
  return Override(name, VarintField(2, v ? 1 : 0));
}
std::string IntOverride(const std::string& name, int64_t v) {
  return Override(name, VarintField(3, static_cast<uint64_t>(v)));
}
std::string StringOverride(const std::string& name, const std::string& v) {
  return Override(name, BytesField(1, v));
}
std::string DoubleOverride(const std::string& name, double v) {
  return Override(name, DoubleField(4, v));
}

// executable_build_options (3) with num_replicas (4) and num_partitions (5).
std::string BuildOptions(int replicas, int partitions) {
  return BytesField(3, VarintField(4, replicas) + VarintField(5, partitions));
}

TEST(SimCompileOptionsTest, CountsAndDefaultAssignment) {
  StatusOr<SimCompileOptions> options = SimCompileOptions::Read(BuildOptions(1, 2), 4);
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->num_replicas, 1);
  EXPECT_EQ(options->num_partitions, 2);
  EXPECT_EQ(options->devices, (std::vector<int>{0, 1}));
  EXPECT_TRUE(options->overrides.empty());

  StatusOr<SimCompileOptions> empty = SimCompileOptions::Read("", 4);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->num_replicas, 1);
  EXPECT_EQ(empty->num_partitions, 1);
  EXPECT_EQ(empty->devices, (std::vector<int>{0}));
}

TEST(SimCompileOptionsTest, AcceptsTheOptionsJaxTestsPassWithTheirTypes) {
  // api_test's compiler_options, as jaxlib serializes them (bool, int, double), and strings
  // where XLA reads a number from text.
  const std::string serialized =
      BuildOptions(1, 1) + BoolOverride("xla_embed_ir_in_executable", true) +
      IntOverride("xla_dump_max_hlo_modules", 200) +
      DoubleOverride("xla_gpu_auto_spmd_partitioning_memory_budget_ratio", 0.5) +
      StringOverride("xla_dump_to", "") + StringOverride("xla_dump_max_hlo_modules", "12") +
      IntOverride("xla_dump_max_hlo_modules", -5);
  StatusOr<SimCompileOptions> options = SimCompileOptions::Read(serialized, 4);
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->overrides,
            (std::vector<std::string>{"xla_embed_ir_in_executable", "xla_dump_max_hlo_modules",
                                      "xla_gpu_auto_spmd_partitioning_memory_budget_ratio",
                                      "xla_dump_to", "xla_dump_max_hlo_modules",
                                      "xla_dump_max_hlo_modules"}));
}

TEST(SimCompileOptionsTest, RefusesAnUnknownOptionByName) {
  StatusOr<SimCompileOptions> options =
      SimCompileOptions::Read(BuildOptions(1, 1) + StringOverride("invalid_key", "v"), 4);
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument);
  // JAX's api_test matches "No such compile option: 'invalid_key'", XLA:CPU's wording.
  EXPECT_EQ(options.status().message().rfind("No such compile option: 'invalid_key' (", 0), 0u)
      << options.status().message();
  EXPECT_NE(options.status().message().find("xla_embed_ir_in_executable"), std::string::npos);

  // A real XLA option that would change code generation is refused too: sim cannot honour it.
  options = SimCompileOptions::Read(BoolOverride("xla_cpu_enable_fast_math", true), 4);
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(options.status().message().find("'xla_cpu_enable_fast_math'"), std::string::npos);
}

TEST(SimCompileOptionsTest, RefusesAValueOfTheWrongType) {
  struct Case {
    std::string serialized;
    std::string message;
  };
  const std::vector<Case> cases = {
      {StringOverride("xla_embed_ir_in_executable", "invalid_value"),
       "While setting option xla_embed_ir_in_executable, 'invalid_value' is not a valid bool "
       "value."},
      {IntOverride("xla_embed_ir_in_executable", 3),
       "While setting option xla_embed_ir_in_executable, '3' is not a valid bool value."},
      {StringOverride("xla_dump_max_hlo_modules", "abc"),
       "While setting option xla_dump_max_hlo_modules, 'abc' is not a valid int32 value."},
      {DoubleOverride("xla_dump_max_hlo_modules", 2.5),
       "While setting option xla_dump_max_hlo_modules, '2.5' is not a valid int32 value."},
      {IntOverride("xla_dump_max_hlo_modules", int64_t{1} << 40),
       "While setting option xla_dump_max_hlo_modules, '1099511627776' is not a valid int32 "
       "value."},
      {BoolOverride("xla_dump_max_hlo_modules", true),
       "While setting option xla_dump_max_hlo_modules, '1' is not a valid int32 value."},
      {IntOverride("xla_gpu_auto_spmd_partitioning_memory_budget_ratio", 1),
       "While setting option xla_gpu_auto_spmd_partitioning_memory_budget_ratio, '1' is not a "
       "valid float value."},
      {IntOverride("xla_dump_to", 3),
       "While setting option xla_dump_to, '3' is not a valid string value."},
  };
  for (const Case& c : cases) {
    StatusOr<SimCompileOptions> options = SimCompileOptions::Read(c.serialized, 4);
    ASSERT_FALSE(options.ok()) << c.message;
    EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(options.status().message(), c.message);
  }
}

TEST(SimCompileOptionsTest, RefusesATruncatedOverride) {
  std::string serialized = BoolOverride("xla_embed_ir_in_executable", true);
  serialized.pop_back();
  StatusOr<SimCompileOptions> options = SimCompileOptions::Read(serialized, 4);
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
