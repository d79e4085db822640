// PJRT_Plugin_Initialize and PJRT_Plugin_Attributes.
#include <string>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

class PluginTest : public ApiTestBase {
 protected:
  // Fetches the plugin attributes into `attributes`/`count`.
  Status Attributes(const PJRT_NamedValue** attributes, size_t* count) {
    PJRT_ARGS(PJRT_Plugin_Attributes_Args, args);
    const Status status = PJRT_CALL(api()->PJRT_Plugin_Attributes(&args));
    *attributes = args.attributes;
    *count = args.num_attributes;
    return status;
  }

  // Asserts that attribute `name` is an int64 list of three non-negative numbers.
  void ExpectVersionTriple(const std::string& name, const int64_t** triple) {
    const PJRT_NamedValue* attributes = nullptr;
    size_t count = 0;
    PJRT_ASSERT_OK(Attributes(&attributes, &count));
    const PJRT_NamedValue* value = FindNamedValue(attributes, count, name);
    ASSERT_NE(value, nullptr) << "plugin attribute '" << name << "' is missing";
    ASSERT_EQ(value->type, PJRT_NamedValue_kInt64List) << name;
    ASSERT_EQ(value->value_size, 3u) << name << " must be [major, minor, patch]";
    for (size_t i = 0; i < 3; ++i) EXPECT_GE(value->int64_array_value[i], 0) << name;
    *triple = value->int64_array_value;
  }
};

TEST_F(PluginTest, InitializeIsIdempotent) {
  PJRT_ARGS(PJRT_Plugin_Initialize_Args, args);
  PJRT_EXPECT_OK(PJRT_CALL(api()->PJRT_Plugin_Initialize(&args)));
  PJRT_EXPECT_OK(PJRT_CALL(api()->PJRT_Plugin_Initialize(&args)));
}

TEST_F(PluginTest, AttributesAreWellFormed) {
  const PJRT_NamedValue* attributes = nullptr;
  size_t count = 0;
  PJRT_ASSERT_OK(Attributes(&attributes, &count));
  EXPECT_GE(count, 3u) << "xla_version and the two StableHLO versions are expected";
  ExpectWellFormedNamedValues(attributes, count, "plugin attributes");
}

TEST_F(PluginTest, AttributesLiveAsLongAsTheProcess) {
  const PJRT_NamedValue* first = nullptr;
  const PJRT_NamedValue* second = nullptr;
  size_t first_count = 0;
  size_t second_count = 0;
  PJRT_ASSERT_OK(Attributes(&first, &first_count));
  PJRT_ASSERT_OK(Attributes(&second, &second_count));
  ASSERT_EQ(first_count, second_count);
  for (size_t i = 0; i < first_count; ++i) {
    // The first array must still be readable and say the same thing.
    EXPECT_EQ(Str(first[i].name, first[i].name_size),
              Str(second[i].name, second[i].name_size));
    EXPECT_EQ(first[i].type, second[i].type);
    EXPECT_EQ(first[i].value_size, second[i].value_size);
  }
}

TEST_F(PluginTest, XlaVersionIsAnInt64) {
  const PJRT_NamedValue* attributes = nullptr;
  size_t count = 0;
  PJRT_ASSERT_OK(Attributes(&attributes, &count));
  const PJRT_NamedValue* value = FindNamedValue(attributes, count, "xla_version");
  ASSERT_NE(value, nullptr) << "plugin attribute 'xla_version' is missing";
  ASSERT_EQ(value->type, PJRT_NamedValue_kInt64);
  EXPECT_EQ(value->value_size, 1u);
  EXPECT_GE(value->int64_value, 1);
}

TEST_F(PluginTest, StablehloCurrentVersionIsATriple) {
  const int64_t* current = nullptr;
  ExpectVersionTriple("stablehlo_current_version", &current);
  if (current != nullptr) {
    EXPECT_GE(current[0], 1) << "StableHLO 1.x is what JAX emits";
  }
}

TEST_F(PluginTest, StablehloMinimumVersionIsATripleNotAboveCurrent) {
  const int64_t* minimum = nullptr;
  const int64_t* current = nullptr;
  ExpectVersionTriple("stablehlo_minimum_version", &minimum);
  ExpectVersionTriple("stablehlo_current_version", &current);
  if (minimum == nullptr || current == nullptr) return;
  const std::vector<int64_t> min_v(minimum, minimum + 3);
  const std::vector<int64_t> cur_v(current, current + 3);
  EXPECT_LE(min_v, cur_v) << "minimum StableHLO version is above the current one";
}

TEST_F(PluginTest, StablehloRangeAcceptsTheSuitesBytecode) {
  // The suite's portable artifact targets StableHLO 1.0.0 (gen_test_data.py).
  const int64_t* minimum = nullptr;
  const int64_t* current = nullptr;
  ExpectVersionTriple("stablehlo_minimum_version", &minimum);
  ExpectVersionTriple("stablehlo_current_version", &current);
  if (minimum == nullptr || current == nullptr) return;
  const std::vector<int64_t> target = {1, 0, 0};
  EXPECT_LE(std::vector<int64_t>(minimum, minimum + 3), target);
  EXPECT_GE(std::vector<int64_t>(current, current + 3), target);
}

}  // namespace
}  // namespace pjrt_conformance
