// DonatableParameters: which arguments a program may donate, from hand-made protobuf bytes and
// from programs compiled by the real XLA:CPU plugin.
#include "xla_plugin/plugin_wrapper/donatable_parameters.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/proto_writer.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_executable.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::DonatableParameters;
using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::WrappedExecutable;
namespace {

using ::pjrtkit::plugin_wrapper::proto_writer::BytesField;
using ::pjrtkit::plugin_wrapper::proto_writer::Varint;
using ::pjrtkit::plugin_wrapper::proto_writer::VarintField;

// HloInputOutputAliasProto.AliasEntryProto for `parameter` (shape index `index`, packed).
std::string AliasEntry(int64_t parameter, const std::string& packed_index = "") {
  return BytesField(1, Varint(0)) + VarintField(2, static_cast<uint64_t>(parameter)) +
         BytesField(3, packed_index);
}

TEST(DonatableParametersTest, NoAliasingDonatesNothing) {
  const std::string module = BytesField(1, "m") + VarintField(6, 1);  // name, entry id.
  StatusOr<DonatableParameters> donatable = DonatableParameters::FromHloModule(module);
  ASSERT_TRUE(donatable.ok()) << donatable.status().ToString();
  EXPECT_TRUE(donatable->none());
  EXPECT_FALSE(donatable->MayDonate(0));
}

TEST(DonatableParametersTest, AliasedAndDonorParameters) {
  const std::string aliases = BytesField(1, AliasEntry(3)) + BytesField(1, AliasEntry(1));
  const std::string donors = BytesField(1, VarintField(1, 5));
  const std::string module = BytesField(1, "m") + BytesField(8, aliases) + BytesField(18, donors);
  StatusOr<DonatableParameters> donatable = DonatableParameters::FromHloModule(module);
  ASSERT_TRUE(donatable.ok()) << donatable.status().ToString();
  EXPECT_FALSE(donatable->none());
  std::vector<bool> may;
  for (size_t i = 0; i < 7; ++i) may.push_back(donatable->MayDonate(i));
  EXPECT_EQ(may, (std::vector<bool>{false, true, false, true, false, true, false}));
}

TEST(DonatableParametersTest, TupleShapeIndexMakesEveryArgumentDonatable) {
  const std::string aliases = BytesField(1, AliasEntry(0, Varint(2)));
  StatusOr<DonatableParameters> donatable =
      DonatableParameters::FromHloModule(BytesField(8, aliases));
  ASSERT_TRUE(donatable.ok()) << donatable.status().ToString();
  EXPECT_TRUE(donatable->MayDonate(0));
  EXPECT_TRUE(donatable->MayDonate(9));
}

TEST(DonatableParametersTest, ErrorsAndFormats) {
  EXPECT_EQ(DonatableParameters::FromOptimizedProgram(Program{"mlir", ""}).status().code(),
            StatusCode::kUnimplemented);
  // hlo_with_config without hlo_module.
  EXPECT_EQ(
      DonatableParameters::FromOptimizedProgram(Program{"hlo_with_config", VarintField(2, 1)})
          .status()
          .code(),
      StatusCode::kInvalidArgument);
  // A length past the end.
  EXPECT_EQ(DonatableParameters::FromHloModule(std::string("\x42\x05\x01", 3)).status().code(),
            StatusCode::kInvalidArgument);
  // Format "hlo": the module itself.
  StatusOr<DonatableParameters> donatable = DonatableParameters::FromOptimizedProgram(
      Program{"hlo", BytesField(8, BytesField(1, AliasEntry(2)))});
  ASSERT_TRUE(donatable.ok()) << donatable.status().ToString();
  EXPECT_TRUE(donatable->MayDonate(2));
  EXPECT_FALSE(donatable->MayDonate(0));
}

// Programs compiled by XLA:CPU: the optimized HLO says what the program donates.
TEST(DonatableParametersTest, CompiledPrograms) {
  std::unique_ptr<Client> client = testing::CreateTestClient(1);
  ASSERT_NE(client, nullptr);
  const std::string options = MinimalCompileOptions(1, 1, false);
  const char* kAdd =
      "module @add { func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> { "
      "%0 = stablehlo.add %a, %b : tensor<2xf32> return %0 : tensor<2xf32> } }";
  const char* kDonating =
      "module @donating { func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32> "
      "{tf.aliasing_output = 0 : i32}) -> tensor<2xf32> { %0 = stablehlo.add %a, %b : "
      "tensor<2xf32> return %0 : tensor<2xf32> } }";
  for (const char* code : {kAdd, kDonating}) {
    StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
        client->Compile(Program{"mlir", code}, options);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto* executable = dynamic_cast<WrappedExecutable*>((*loaded)->executable().get());
    ASSERT_NE(executable, nullptr);
    const DonatableParameters* donatable = executable->donatable_parameters();
    ASSERT_NE(donatable, nullptr);
    if (code == kAdd) {
      EXPECT_TRUE(donatable->none());
    } else {
      EXPECT_FALSE(donatable->MayDonate(0));
      EXPECT_TRUE(donatable->MayDonate(1));
    }
  }
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
