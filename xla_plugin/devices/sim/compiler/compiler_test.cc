// The sim compiler and executor on small StableHLO programs (MLIR text), against exact values.
#include "xla_plugin/devices/sim/compiler/compiler.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/devices/sim/testing/program_runner.h"

namespace pjrtkit {
namespace sim {
namespace {

using stablehlo::HostTensor;
using testing::CompileText;
using testing::RunCompiled;
using testing::RunOnSim;
using testing::Tensor;
using testing::Values;

std::vector<double> RunOne(const std::string& program, const std::vector<HostTensor>& inputs,
                           size_t result = 0) {
  StatusOr<std::vector<HostTensor>> out = RunOnSim(program, inputs);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok() || out->size() <= result) return {};
  return Values((*out)[result]);
}

TEST(CompilerTest, ElementwiseChainIsOneFusedInstruction) {
  const std::string program = R"(
    func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %c = stablehlo.constant dense<2.0> : tensor<f32>
      %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %m = stablehlo.multiply %a, %b : tensor<4xf32>
      %o = stablehlo.constant dense<1.0> : tensor<4xf32>
      %s = stablehlo.add %m, %o : tensor<4xf32>
      %n = stablehlo.negate %s : tensor<4xf32>
      return %n : tensor<4xf32>
    })";
  CompileReport report;
  StatusOr<DeviceProgram> compiled = CompileText(program, {}, &report);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(report.instructions, 1);
  EXPECT_EQ(report.fused_instructions, 1);
  EXPECT_EQ(report.fused_ops, 3);
  EXPECT_EQ(RunOne(program, {Tensor(ElementType::kF32, {4}, {0, 1, 2, 3})}),
            (std::vector<double>{-1, -3, -5, -7}));
}

TEST(CompilerTest, ReduceArgmaxDotAndTranspose) {
  const std::string program = R"(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> (tensor<3xf32>, tensor<2x2xf32>, tensor<3x2xf32>) {
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
      %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
      %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
      return %r, %d, %t : tensor<3xf32>, tensor<2x2xf32>, tensor<3x2xf32>
    })";
  const auto a = Tensor(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const auto b = Tensor(ElementType::kF32, {3, 2}, {1, 0, 0, 1, 1, 1});
  EXPECT_EQ(RunOne(program, {a, b}, 0), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(RunOne(program, {a, b}, 1), (std::vector<double>{4, 5, 10, 11}));
  EXPECT_EQ(RunOne(program, {a, b}, 2), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(CompilerTest, WhileLoopAndCase) {
  const std::string program = R"(
    func.func @main(%x: tensor<3xf32>, %i: tensor<i32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %ten = stablehlo.constant dense<10> : tensor<i32>
      %w:2 = stablehlo.while(%k = %zero, %v = %x) : tensor<i32>, tensor<3xf32>
        cond {
          %c = stablehlo.compare LT, %k, %ten, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1>
        } do {
          %k1 = stablehlo.add %k, %one : tensor<i32>
          %v1 = stablehlo.add %v, %x : tensor<3xf32>
          stablehlo.return %k1, %v1 : tensor<i32>, tensor<3xf32>
        }
      %c = "stablehlo.case"(%i) ({
          %n = stablehlo.negate %x : tensor<3xf32>
          stablehlo.return %n : tensor<3xf32>
        }, {
          stablehlo.return %x : tensor<3xf32>
        }) : (tensor<i32>) -> tensor<3xf32>
      return %w#1, %c : tensor<3xf32>, tensor<3xf32>
    })";
  const auto x = Tensor(ElementType::kF32, {3}, {1, 2, 3});
  EXPECT_EQ(RunOne(program, {x, Tensor(ElementType::kS32, {}, {0})}, 0),
            (std::vector<double>{11, 22, 33}));
  EXPECT_EQ(RunOne(program, {x, Tensor(ElementType::kS32, {}, {0})}, 1),
            (std::vector<double>{-1, -2, -3}));
  EXPECT_EQ(RunOne(program, {x, Tensor(ElementType::kS32, {}, {7})}, 1),
            (std::vector<double>{1, 2, 3}));
}

TEST(CompilerTest, AllReduceAcrossFourPartitions) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = "stablehlo.all_reduce"(%x) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %s = stablehlo.add %a, %b : tensor<f32>
          stablehlo.return %s : tensor<f32>
      }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>,
          channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          use_global_device_ids} : (tensor<2xf32>) -> tensor<2xf32>
      return %r : tensor<2xf32>
    }})";
  CompileFacts facts;
  facts.num_partitions = 4;
  StatusOr<DeviceProgram> compiled = CompileText(program, facts);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back({Tensor(ElementType::kF32, {2}, {double(d), 1})});
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  for (int d = 0; d < 4; ++d) EXPECT_EQ(Values((*results)[d][0]), (std::vector<double>{6, 4}));
}

// What PJRT reports for jaxlib: each parameter's and result's sharding as xla.OpSharding bytes
// (empty: replicated), the device order explicit.
TEST(CompilerTest, ProgramKeepsParameterAndResultShardings) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}, %y: tensor<3xf32>)
        -> (tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}, tensor<3xf32>) {
      return %x, %y : tensor<8xf32>, tensor<3xf32>
    }})";
  CompileFacts facts;
  facts.num_partitions = 4;
  StatusOr<DeviceProgram> compiled = CompileText(program, facts);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  const std::string tiled("\x08\x03\x1a\x01\x04\x22\x04\x00\x01\x02\x03", 11);
  EXPECT_EQ(compiled->parameter_shardings, (std::vector<std::string>{tiled, ""}));
  EXPECT_EQ(compiled->result_shardings, (std::vector<std::string>{tiled, ""}));
}

TEST(CompilerTest, ShardingsMustPlaceTilesOnEveryDeviceOnce) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{devices=[2]0,1}", "spans 2 devices of the program's 4"},
      {"{devices=[4]0,0,1,2}", "names device 0, which is not a distinct device"},
      {"{devices=[4]0,1,2,7}", "names device 7, which is not a distinct device"},
  };
  for (const auto& [sharding, problem] : cases) {
    const std::string program =
        "module attributes {mhlo.num_partitions = 4 : i32} {\n"
        "func.func @main(%x: tensor<8xf32> {mhlo.sharding = \"" + sharding + "\"}) -> "
        "tensor<8xf32> {\n  return %x : tensor<8xf32>\n}}";
    CompileFacts facts;
    facts.num_partitions = 4;
    StatusOr<DeviceProgram> compiled = CompileText(program, facts);
    ASSERT_FALSE(compiled.ok()) << sharding;
    EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument) << sharding;
    EXPECT_NE(compiled.status().message().find("argument 0: the sharding " + sharding),
              std::string::npos) << compiled.status().message();
    EXPECT_NE(compiled.status().message().find(problem), std::string::npos)
        << compiled.status().message();
  }
}

TEST(CompilerTest, UnsupportedOpIsNamedWithDevice) {
  const std::string program = R"(
    func.func @main(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
      %f = stablehlo.fft %x, type = FFT, length = [4] : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
      return %f : tensor<4xcomplex<f32>>
    })";
  StatusOr<DeviceProgram> compiled = CompileText(program);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(compiled.status().message().find("stablehlo.fft"), std::string::npos)
      << compiled.status().message();
  EXPECT_NE(compiled.status().message().find("sim device"), std::string::npos);
}

TEST(CompilerTest, DceSinkIsANoOp) {
  // lax.dce_sink(x, prevent_mlir_dce=True) as JAX lowers it: an FFI call with no result.
  const std::string program = R"(
    func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %m = stablehlo.multiply %a, %a : tensor<4xf32>
      stablehlo.custom_call @dce_sink(%m, %a) {api_version = 4 : i32, backend_config = {}, has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()
      %n = stablehlo.negate %a : tensor<4xf32>
      return %n : tensor<4xf32>
    })";
  CompileReport report;
  StatusOr<DeviceProgram> compiled = CompileText(program, {}, &report);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  // Only the negate is emitted: the sink emits nothing, and the product only it reads is dropped.
  EXPECT_EQ(report.instructions, 1);
  EXPECT_EQ(RunOne(program, {Tensor(ElementType::kF32, {4}, {0, 1, 2, 3})}),
            (std::vector<double>{0, -1, -2, -3}));
}

TEST(CompilerTest, DceSinkWithAResultAndUntypedCustomCallsAreRefused) {
  const std::string with_result = R"(
    func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %s = stablehlo.custom_call @dce_sink(%a) {api_version = 4 : i32, has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
      return %s : tensor<4xf32>
    })";
  StatusOr<DeviceProgram> compiled = CompileText(with_result);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(compiled.status().message().find("@dce_sink has no results"), std::string::npos)
      << compiled.status().message();

  // A custom call of the original (untyped) API: only XLA's own backends know such targets. (A
  // typed FFI call compiles; its handler is looked up when the program is loaded:
  // sim_ffi_calls_test.)
  const std::string unknown = R"(
    func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %s = stablehlo.custom_call @not_a_sink(%a) {backend_config = "opaque"} : (tensor<4xf32>) -> tensor<4xf32>
      return %s : tensor<4xf32>
    })";
  compiled = CompileText(unknown);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(compiled.status().message().find("custom_call @not_a_sink"), std::string::npos)
      << compiled.status().message();
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
