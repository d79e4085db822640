#include "xla_plugin/client/options.h"

#include "gtest/gtest.h"

namespace pjrtkit {
namespace {

const std::vector<OptionSpec>& Specs() {
  static const auto* specs = new std::vector<OptionSpec>{
      {"device_count", AttributeValue(int64_t{4}), "number of devices"},
      {"path", AttributeValue(std::string()), "a path"},
      {"verbose", AttributeValue(false), "log more"},
  };
  return *specs;
}

TEST(OptionsTest, DefaultsAndGivenValues) {
  auto opts = Options::Parse({{"path", std::string("/x")}}, Specs());
  ASSERT_TRUE(opts.ok()) << opts.status().ToString();
  EXPECT_EQ(opts->GetInt("device_count"), 4);
  EXPECT_EQ(opts->GetString("path"), "/x");
  EXPECT_FALSE(opts->GetBool("verbose"));
  EXPECT_TRUE(opts->Has("path"));
  EXPECT_FALSE(opts->Has("device_count"));
}

TEST(OptionsTest, UnknownOptionNamesItAndTheAcceptedOnes) {
  auto opts = Options::Parse({{"devcount", int64_t{2}}}, Specs());
  ASSERT_FALSE(opts.ok());
  EXPECT_EQ(opts.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(opts.status().message(),
            "unknown create option 'devcount'; accepted options: device_count (int64), "
            "path (string), verbose (bool)");
}

TEST(OptionsTest, WrongTypeNamesOptionAndTypes) {
  auto opts = Options::Parse({{"device_count", 2.5f}}, Specs());
  ASSERT_FALSE(opts.ok());
  EXPECT_EQ(opts.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(opts.status().message().find("create option 'device_count' must be int64, got float"),
            std::string::npos);
}

TEST(OptionsTest, DecimalStringsAreAcceptedForIntAndBool) {
  auto opts = Options::Parse(
      {{"device_count", std::string("12")}, {"verbose", std::string("true")}}, Specs());
  ASSERT_TRUE(opts.ok()) << opts.status().ToString();
  EXPECT_EQ(opts->GetInt("device_count"), 12);
  EXPECT_TRUE(opts->GetBool("verbose"));
  auto bad = Options::Parse({{"device_count", std::string("four")}}, Specs());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("must be int64, got string"), std::string::npos);
}

TEST(OptionsTest, FloatsAndIntListsFromJaxsStringFormAndInts) {
  const std::vector<OptionSpec> specs = {
      {"fraction", AttributeValue(0.75f), "a fraction"},
      {"ids", AttributeValue(std::vector<int64_t>()), "device ids"},
  };
  auto opts = Options::Parse({{"fraction", std::string("0.5")}, {"ids", std::string("0,2")}},
                             specs);
  ASSERT_TRUE(opts.ok()) << opts.status().ToString();
  EXPECT_EQ(opts->GetFloat("fraction"), 0.5f);
  EXPECT_EQ(opts->GetIntList("ids"), (std::vector<int64_t>{0, 2}));
  ASSERT_NE(opts->Given("ids"), nullptr);
  EXPECT_EQ(opts->Given("missing"), nullptr);
  opts = Options::Parse({{"fraction", int64_t{1}}, {"ids", std::vector<int64_t>{3}}}, specs);
  ASSERT_TRUE(opts.ok()) << opts.status().ToString();
  EXPECT_EQ(opts->GetFloat("fraction"), 1.0f);
  EXPECT_EQ(opts->GetIntList("ids"), (std::vector<int64_t>{3}));
  opts = Options::Parse({}, specs);
  ASSERT_TRUE(opts.ok());
  EXPECT_EQ(opts->GetFloat("fraction"), 0.75f);  // The default.
  EXPECT_EQ(opts->Given("fraction"), nullptr);
  for (const char* bad : {"half", "0.5x", ""}) {
    auto refused = Options::Parse({{"fraction", std::string(bad)}}, specs);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("create option 'fraction' must be float, got string"),
              std::string::npos);
  }
  for (const char* bad : {"0,,1", "a", "1,", ""}) {
    auto refused = Options::Parse({{"ids", std::string(bad)}}, specs);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_NE(refused.status().message().find("must be int64 list, got string"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace pjrtkit
