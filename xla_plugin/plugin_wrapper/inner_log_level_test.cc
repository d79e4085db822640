// InnerLogLevel: which level the inner plugin gets, and that the environment is put back (no plugin).
#include "xla_plugin/plugin_wrapper/inner_log_level.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

constexpr const char* kVar = InnerLogLevel::kVariable;
// A device's switch and inner plugin name, for the error text.
constexpr const char* kSwitch = "PJRTKIT_TEST_LOG_LEVEL";
constexpr const char* kInner = "the inner plugin";

// Choose() for that device.
StatusOr<std::string> Choose(const char* override_value, const char* initial_value,
                             const char* current_value) {
  return InnerLogLevel::Choose(override_value, initial_value, current_value, kSwitch, kInner);
}

// The value of TF_CPP_MIN_LOG_LEVEL now (nullopt: unset).
std::optional<std::string> Now() {
  const char* value = std::getenv(kVar);
  return value == nullptr ? std::nullopt : std::optional<std::string>(value);
}

TEST(InnerLogLevelTest, ChoosesQuietUnlessTheUserChose) {
  // Nobody chose: quiet, also over JAX's own default of 1, set in this process or inherited
  // from a parent that imported jax.
  EXPECT_EQ(*Choose(nullptr, nullptr, nullptr), "3");
  EXPECT_EQ(*Choose(nullptr, nullptr, "1"), "3");
  EXPECT_EQ(*Choose(nullptr, "1", "1"), "3");
  // The user's TF_CPP_MIN_LOG_LEVEL: exported at start, or set in-process.
  EXPECT_EQ(*Choose(nullptr, "0", "0"), "0");
  EXPECT_EQ(*Choose(nullptr, "2", "1"), "2");
  EXPECT_EQ(*Choose(nullptr, "1", "0"), "0");
  EXPECT_EQ(*Choose("1", "1", "1"), "1");
  EXPECT_EQ(*Choose(nullptr, nullptr, "0"), "0");
  EXPECT_EQ(*Choose(nullptr, nullptr, "2"), "2");
  // pjrtkit's switch wins.
  EXPECT_EQ(*Choose("0", "3", "3"), "0");
  EXPECT_EQ(*Choose("3", "0", "0"), "3");
  StatusOr<std::string> bad = Choose("4", nullptr, nullptr);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "PJRTKIT_TEST_LOG_LEVEL must be 0, 1, 2 or 3 (the inner plugin's minimum log level: "
            "INFO, WARNING, ERROR, FATAL), got '4'");
  EXPECT_FALSE(Choose("", nullptr, nullptr).ok());
  EXPECT_FALSE(Choose("10", nullptr, nullptr).ok());
}

TEST(InnerLogLevelTest, SetsTheLevelAndPutsTheEnvironmentBack) {
  unsetenv(kVar);
  {
    InnerLogLevel level("3");
    EXPECT_EQ(Now(), "3");
  }
  EXPECT_EQ(Now(), std::nullopt);  // It was unset: unset again.

  setenv(kVar, "1", 1);
  {
    InnerLogLevel level("3");
    EXPECT_EQ(level.level(), "3");
    EXPECT_EQ(Now(), "3");
  }
  EXPECT_EQ(Now(), "1");  // JAX's value is back.

  {
    InnerLogLevel level("1");  // Already that value: nothing to change or restore.
    EXPECT_EQ(Now(), "1");
  }
  EXPECT_EQ(Now(), "1");

  {
    InnerLogLevel level("3");
    setenv(kVar, "2", 1);  // Someone else's change meanwhile is kept.
  }
  EXPECT_EQ(Now(), "2");

  {
    std::optional<InnerLogLevel> moved;
    InnerLogLevel level("0");
    moved.emplace(std::move(level));
    EXPECT_EQ(Now(), "0");
  }
  EXPECT_EQ(Now(), "2");  // Restored once, by the object moved into.
  unsetenv(kVar);
}

TEST(InnerLogLevelTest, ForThisProcessReadsTheSwitch) {
  InnerPluginName plugin;
  plugin.display = kInner;
  plugin.log_level_variable = kSwitch;
  unsetenv(kVar);
  setenv(kSwitch, "2", 1);
  {
    StatusOr<std::optional<InnerLogLevel>> level = InnerLogLevel::ForThisProcess(plugin);
    ASSERT_TRUE(level.ok()) << level.status().ToString();
    EXPECT_EQ((*level)->level(), "2");
    EXPECT_EQ(Now(), "2");
  }
  EXPECT_EQ(Now(), std::nullopt);
  setenv(kSwitch, "loud", 1);
  StatusOr<std::optional<InnerLogLevel>> loud = InnerLogLevel::ForThisProcess(plugin);
  EXPECT_EQ(loud.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(loud.status().message(),
            "PJRTKIT_TEST_LOG_LEVEL must be 0, 1, 2 or 3 (the inner plugin's minimum log level: "
            "INFO, WARNING, ERROR, FATAL), got 'loud'");
  EXPECT_EQ(Now(), std::nullopt);
  unsetenv(kSwitch);
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
