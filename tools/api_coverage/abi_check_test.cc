// AbiCheck and ArgsSizeProbe::ParseExpectedSize on the pinned header's compiled layout.

// C++ standard library.
#include <string>

// gtest.
#include "gtest/gtest.h"

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "tools/api_coverage/abi_check.h"
#include "tools/api_coverage/args_size_probe.h"
#include "tools/pjrt_headers/header_layout.h"

namespace api_coverage {
namespace {

using pjrt_headers::PinnedHeaderLayout;

TEST(ParseExpectedSizeTest, ReadsOpenXlasMessage) {
  NamedSize named;
  ASSERT_TRUE(ArgsSizeProbe::ParseExpectedSize(
      "Unexpected PJRT_Client_Create_Args size: expected 88, got 1. The plugin is likely built "
      "with a later version than the framework.",
      &named));
  EXPECT_EQ(named.name, "PJRT_Client_Create_Args");
  EXPECT_EQ(named.size, 88u);
  ASSERT_TRUE(ArgsSizeProbe::ParseExpectedSize(
      "Unexpected PJRT_Event_Destroy size: expected 24, got 1.", &named));
  EXPECT_EQ(named.name, "PJRT_Event_Destroy");
  EXPECT_EQ(named.size, 24u);
}

TEST(ParseExpectedSizeTest, RefusesOtherMessages) {
  NamedSize named;
  EXPECT_FALSE(ArgsSizeProbe::ParseExpectedSize("Topology not supported for CPU compilation.",
                                                &named));
  EXPECT_FALSE(ArgsSizeProbe::ParseExpectedSize(
      "Unexpected PJRT_Client_Create_Args size: expected 88, got 10.", &named));
  EXPECT_FALSE(ArgsSizeProbe::ParseExpectedSize("", &named));
}

TEST(AbiCheckTest, APrefixEndsAfterAField) {
  const AbiCheck checker(PinnedHeaderLayout(), nullptr, false);
  const SizeCheck check = checker.CheckSlotArgs("PJRT_Client_Create", "PJRT_Client_Create_Args",
                                                PJRT_Client_Create_Args_STRUCT_SIZE);
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.prefix, SizeCheck::Prefix::kAtField);
  EXPECT_EQ(check.field, "kv_try_get_user_arg");
  EXPECT_EQ(check.exact, SizeCheck::Exact::kNotChecked);
  EXPECT_EQ(check.named, "");
  EXPECT_EQ(AbiCheck::PrefixText(check, 88), "ends after kv_try_get_user_arg");
  EXPECT_EQ(AbiCheck::ExactText(check), "-");
}

TEST(AbiCheckTest, SameVersionSizesMustBeExact) {
  const AbiCheck checker(PinnedHeaderLayout(), &PinnedHeaderLayout(), false);
  const size_t short_size = offsetof(PJRT_Client_PlatformName_Args, platform_name_size);
  const SizeCheck check =
      checker.CheckSlotArgs("PJRT_Client_PlatformName", "PJRT_Client_PlatformName_Args",
                            short_size);
  EXPECT_FALSE(check.ok());
  EXPECT_EQ(check.prefix, SizeCheck::Prefix::kAtField);
  EXPECT_EQ(check.field, "platform_name");
  EXPECT_EQ(check.exact, SizeCheck::Exact::kDiffers);
  EXPECT_EQ(AbiCheck::ExactText(check),
            "MISMATCH: _STRUCT_SIZE is " + std::to_string(PJRT_Client_PlatformName_Args_STRUCT_SIZE));
}

TEST(AbiCheckTest, NamesAreResolvedLikeOpenXlasMessagesNeed) {
  const AbiCheck checker(PinnedHeaderLayout(), nullptr, false);
  // Misspelt case, and no _Args: the slot's own struct.
  SizeCheck check = checker.CheckSlotArgs("PJRT_Client_ProcessIndex",
                                          "PJRT_CLient_ProcessIndex_Args", 28);
  EXPECT_EQ(check.struct_name, "PJRT_Client_ProcessIndex_Args");
  EXPECT_EQ(check.named, "PJRT_CLient_ProcessIndex_Args");
  EXPECT_FALSE(check.named_unknown);
  check = checker.CheckSlotArgs("PJRT_Event_Destroy", "PJRT_Event_Destroy", 24);
  EXPECT_EQ(check.struct_name, "PJRT_Event_Destroy_Args");
  EXPECT_TRUE(check.ok());
  // Another slot's struct is checked as named.
  check = checker.CheckSlotArgs("PJRT_Executable_GetCompiledMemoryStats",
                                "PJRT_Executable_Serialize_Args", 56);
  EXPECT_EQ(check.struct_name, "PJRT_Executable_Serialize_Args");
  EXPECT_EQ(check.field, "serialized_executable_deleter");
  // A name in no header: the slot's struct.
  check = checker.CheckSlotArgs("PJRT_Client_DefaultDeviceAssignment",
                                "PJRT_Client_DefaultAssignment_Args", 48);
  EXPECT_EQ(check.struct_name, "PJRT_Client_DefaultDeviceAssignment_Args");
  EXPECT_TRUE(check.named_unknown);
  EXPECT_EQ(check.field, "default_assignment");
}

TEST(AbiCheckTest, LongerStructsAreMismatchesUnlessThePluginIsNewer) {
  const size_t longer = PJRT_Client_Create_Args_STRUCT_SIZE + 8;
  SizeCheck check = AbiCheck(PinnedHeaderLayout(), nullptr, false)
                        .CheckSlotArgs("PJRT_Client_Create", "PJRT_Client_Create_Args", longer);
  EXPECT_EQ(check.prefix, SizeCheck::Prefix::kMismatch);
  EXPECT_EQ(AbiCheck::PrefixText(check, longer),
            "MISMATCH: no field ends at " + std::to_string(longer) + " (sizeof 88)");
  check = AbiCheck(PinnedHeaderLayout(), nullptr, true)
              .CheckSlotArgs("PJRT_Client_Create", "PJRT_Client_Create_Args", longer);
  EXPECT_EQ(check.prefix, SizeCheck::Prefix::kNewer);
  EXPECT_TRUE(check.ok());
}

TEST(AbiCheckTest, ExtensionTypesOfThePinnedHeader) {
  const pjrt_headers::HeaderLayout& pinned = PinnedHeaderLayout();
  EXPECT_EQ(pinned.num_extensions(), 25u);
  const pjrt_headers::ExtensionType* layouts = pinned.FindExtension(PJRT_Extension_Type_Layouts);
  ASSERT_NE(layouts, nullptr);
  EXPECT_STREQ(layouts->name, "PJRT_Extension_Type_Layouts");
  EXPECT_STREQ(layouts->struct_name, "PJRT_Layouts_Extension");
  const pjrt_headers::ExtensionType* megascale =
      pinned.FindExtension(PJRT_Extension_Type_Megascale);
  ASSERT_NE(megascale, nullptr);
  EXPECT_EQ(megascale->struct_name, nullptr);
  EXPECT_EQ(pinned.FindExtension(999), nullptr);
  EXPECT_EQ(pinned.major(), PJRT_API_MAJOR);
  EXPECT_EQ(pinned.minor(), PJRT_API_MINOR);
}

TEST(AbiCheckTest, The081HeaderHasItsOwnSizes) {
  const pjrt_headers::HeaderLayout& old = pjrt_headers::HeaderLayout0_81();
  EXPECT_EQ(old.minor(), 81);
  const pjrt_headers::StructLayout* options = old.FindStruct("PJRT_ExecuteOptions");
  ASSERT_NE(options, nullptr);
  EXPECT_EQ(options->struct_size, 112u);
  EXPECT_EQ(old.FindStruct("PJRT_Api")->struct_size, 984u);
  EXPECT_EQ(PinnedHeaderLayout().FindStruct("PJRT_ExecuteOptions")->size, 160u);
  EXPECT_EQ(old.FindStruct("PJRT_Event_Create_Args"), nullptr);
}

}  // namespace
}  // namespace api_coverage
