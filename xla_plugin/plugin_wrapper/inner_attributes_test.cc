// InnerApi::ToAttributeMap on hand-made PJRT_NamedValues: every type the header names converted
// with its value, a value of a type newer than the header left out while the others are kept,
// empty lists and strings, and null arrays refused with an Internal error naming the value.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

PJRT_NamedValue Named(const char* name) {
  PJRT_NamedValue v{};
  v.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  v.name = name;
  v.name_size = std::string(name).size();
  return v;
}

TEST(InnerAttributesTest, ConvertsEveryNamedType) {
  const int64_t list[] = {3, -1, 7};
  std::vector<PJRT_NamedValue> values(5);
  values[0] = Named("s");
  values[0].type = PJRT_NamedValue_kString;
  values[0].string_value = "sm_90a";
  values[0].value_size = 6;
  values[1] = Named("i");
  values[1].type = PJRT_NamedValue_kInt64;
  values[1].int64_value = -42;
  values[1].value_size = 1;
  values[2] = Named("l");
  values[2].type = PJRT_NamedValue_kInt64List;
  values[2].int64_array_value = list;
  values[2].value_size = 3;
  values[3] = Named("f");
  values[3].type = PJRT_NamedValue_kFloat;
  values[3].float_value = 0.5f;
  values[3].value_size = 1;
  values[4] = Named("b");
  values[4].type = PJRT_NamedValue_kBool;
  values[4].bool_value = true;
  values[4].value_size = 1;
  StatusOr<AttributeMap> map = InnerApi::ToAttributeMap(values.data(), values.size());
  ASSERT_TRUE(map.ok()) << map.status().message();
  ASSERT_EQ(map->size(), 5u);
  EXPECT_EQ(std::get<std::string>(map->at("s")), "sm_90a");
  EXPECT_EQ(std::get<int64_t>(map->at("i")), -42);
  EXPECT_EQ(std::get<std::vector<int64_t>>(map->at("l")), (std::vector<int64_t>{3, -1, 7}));
  EXPECT_EQ(std::get<float>(map->at("f")), 0.5f);
  EXPECT_EQ(std::get<bool>(map->at("b")), true);
}

TEST(InnerAttributesTest, LeavesOutATypeNewerThanTheHeaderAndKeepsTheRest) {
  std::vector<PJRT_NamedValue> values(3);
  values[0] = Named("before");
  values[0].type = PJRT_NamedValue_kInt64;
  values[0].int64_value = 1;
  values[1] = Named("future");
  const int future_type = 99;  // Stored as bytes: an enum outside its range would be UB.
  std::memcpy(&values[1].type, &future_type, sizeof(future_type));
  values[1].value_size = 1;
  values[2] = Named("after");
  values[2].type = PJRT_NamedValue_kBool;
  values[2].bool_value = false;
  StatusOr<AttributeMap> map = InnerApi::ToAttributeMap(values.data(), values.size());
  ASSERT_TRUE(map.ok()) << map.status().message();
  ASSERT_EQ(map->size(), 2u);
  EXPECT_EQ(std::get<int64_t>(map->at("before")), 1);
  EXPECT_EQ(std::get<bool>(map->at("after")), false);
  EXPECT_EQ(map->count("future"), 0u);
}

TEST(InnerAttributesTest, EmptyValuesAndNoValues) {
  std::vector<PJRT_NamedValue> values(2);
  values[0] = Named("empty_list");
  values[0].type = PJRT_NamedValue_kInt64List;
  values[1] = Named("empty_string");
  values[1].type = PJRT_NamedValue_kString;
  StatusOr<AttributeMap> map = InnerApi::ToAttributeMap(values.data(), values.size());
  ASSERT_TRUE(map.ok()) << map.status().message();
  EXPECT_TRUE(std::get<std::vector<int64_t>>(map->at("empty_list")).empty());
  EXPECT_EQ(std::get<std::string>(map->at("empty_string")), "");
  StatusOr<AttributeMap> none = InnerApi::ToAttributeMap(nullptr, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(InnerAttributesTest, NullArraysAreInternalErrorsNamingTheValue) {
  StatusOr<AttributeMap> no_array = InnerApi::ToAttributeMap(nullptr, 2);
  ASSERT_FALSE(no_array.ok());
  EXPECT_EQ(no_array.status().code(), StatusCode::kInternal);
  EXPECT_EQ(no_array.status().message(),
            "the inner plugin returned 2 named values and a null array");

  PJRT_NamedValue list = Named("dims");
  list.type = PJRT_NamedValue_kInt64List;
  list.value_size = 4;
  StatusOr<AttributeMap> bad_list = InnerApi::ToAttributeMap(&list, 1);
  ASSERT_FALSE(bad_list.ok());
  EXPECT_EQ(bad_list.status().message(),
            "the inner plugin returned int64 list 'dims' with a null array");

  PJRT_NamedValue text = Named("name");
  text.type = PJRT_NamedValue_kString;
  text.value_size = 3;
  StatusOr<AttributeMap> bad_text = InnerApi::ToAttributeMap(&text, 1);
  ASSERT_FALSE(bad_text.ok());
  EXPECT_EQ(bad_text.status().message(),
            "the inner plugin returned string 'name' with a null value");
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
