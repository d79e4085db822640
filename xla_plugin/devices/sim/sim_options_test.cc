#include "xla_plugin/devices/sim/sim_options.h"

#include <string>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace sim {
namespace {

TEST(SimOptionsTest, Defaults) {
  StatusOr<SimOptions> options = SimOptions::Parse({});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->device_count(), 4);
  EXPECT_EQ(options->memory_mib(), 2048);
  EXPECT_EQ(options->memory_bytes(), int64_t{2048} << 20);
  EXPECT_EQ(options->stablehlo_library_path(), "");
  const SimOptions defaults;
  EXPECT_EQ(defaults.device_count(), 4);
}

TEST(SimOptionsTest, SpecsNameTypesAndDefaults) {
  const std::vector<OptionSpec> specs = SimOptions::Specs();
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].name, "device_count");
  EXPECT_EQ(std::get<int64_t>(specs[0].type_tag), 4);
  EXPECT_EQ(specs[1].name, "memory_mib");
  EXPECT_EQ(std::get<int64_t>(specs[1].type_tag), 2048);
  EXPECT_EQ(specs[2].name, "stablehlo_library_path");
  EXPECT_EQ(std::get<std::string>(specs[2].type_tag), "");
  for (const OptionSpec& spec : specs) EXPECT_FALSE(spec.description.empty()) << spec.name;
}

TEST(SimOptionsTest, ValuesAndJaxStringForm) {
  StatusOr<SimOptions> options = SimOptions::Parse(
      {{"device_count", int64_t{64}},
       {"memory_mib", std::string("16")},
       {"stablehlo_library_path", std::string("/opt/libTorchMLIRAggregateCAPI.so")}});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->device_count(), 64);
  EXPECT_EQ(options->memory_mib(), 16);
  EXPECT_EQ(options->memory_bytes(), 16 << 20);
  EXPECT_EQ(options->stablehlo_library_path(), "/opt/libTorchMLIRAggregateCAPI.so");
}

TEST(SimOptionsTest, OutOfRangeValuesNameTheOptionAndTheRange) {
  StatusOr<SimOptions> zero = SimOptions::Parse({{"device_count", int64_t{0}}});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(zero.status().message(),
            "create option 'device_count' of the sim device must be in [1, 64], got 0");
  StatusOr<SimOptions> many = SimOptions::Parse({{"device_count", int64_t{65}}});
  EXPECT_EQ(many.status().code(), StatusCode::kInvalidArgument);
  StatusOr<SimOptions> no_memory = SimOptions::Parse({{"memory_mib", int64_t{0}}});
  ASSERT_FALSE(no_memory.ok());
  EXPECT_EQ(no_memory.status().message(),
            "create option 'memory_mib' of the sim device must be in [1, 134217728] (MiB per "
            "device), got 0");
  EXPECT_FALSE(SimOptions::Parse({{"memory_mib", int64_t{1} << 40}}).ok());
}

TEST(SimOptionsTest, UnknownOptionsAndWrongTypesListTheAccepted) {
  StatusOr<SimOptions> unknown = SimOptions::Parse({{"cpu_device_count", int64_t{2}}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("cpu_device_count"), std::string::npos);
  EXPECT_NE(unknown.status().message().find(
                "device_count (int64), memory_mib (int64), stablehlo_library_path (string)"),
            std::string::npos)
      << unknown.status().message();
  StatusOr<SimOptions> wrong = SimOptions::Parse({{"memory_mib", true}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("memory_mib"), std::string::npos);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
