// HloModuleBytes on hand-encoded programs: "hlo" as is, one hlo_module field viewed in place,
// repeated ones merged, and the errors with their prefix.
#include "xla_plugin/plugin_wrapper/hlo_module_bytes.h"

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "xla_plugin/plugin_wrapper/proto_writer.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

using proto_writer::BytesField;
using proto_writer::VarintField;

TEST(HloModuleBytesTest, HloIsTheModule) {
  const Program program{"hlo", "module bytes"};
  StatusOr<HloModuleBytes> module = HloModuleBytes::FromProgram(program, "p");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->bytes().data(), program.code.data());
  EXPECT_EQ(module->bytes(), "module bytes");
}

TEST(HloModuleBytesTest, OneHloModuleFieldIsViewedInPlace) {
  const Program program{"hlo_with_config", VarintField(2, 7) + BytesField(1, "abc")};
  StatusOr<HloModuleBytes> module = HloModuleBytes::FromProgram(program, "p");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->bytes(), "abc");
  EXPECT_EQ(module->bytes().data(), program.code.data() + program.code.size() - 3);
}

TEST(HloModuleBytesTest, RepeatedHloModuleFieldsAreMergedInOrder) {
  const Program program{"hlo_with_config", BytesField(1, "ab") + BytesField(2, "x") +
                                               BytesField(1, "cd")};
  StatusOr<HloModuleBytes> module = HloModuleBytes::FromProgram(program, "p");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->bytes(), "abcd");
  HloModuleBytes moved = std::move(*module);  // The merged bytes move with the object.
  EXPECT_EQ(moved.bytes(), "abcd");
}

TEST(HloModuleBytesTest, ErrorsNameThePrefix) {
  StatusOr<HloModuleBytes> module = HloModuleBytes::FromProgram(Program{"mlir", ""}, "shapes");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(module.status().message(),
            "shapes: optimized program format 'mlir' is not \"hlo\" or \"hlo_with_config\"");
  module = HloModuleBytes::FromProgram(Program{"hlo_with_config", VarintField(2, 1)}, "shapes");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(module.status().message(), "shapes: the HloModuleProtoWithConfig has no hlo_module");
  module = HloModuleBytes::FromProgram(Program{"hlo_with_config", "\xff"}, "shapes");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(module.status().message().rfind("shapes: ", 0), 0u) << module.status().message();
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
