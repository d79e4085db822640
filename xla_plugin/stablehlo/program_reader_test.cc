// ProgramReader on programs captured from JAX 0.12 (testdata/README.md): exact facts of each
// parsed module, and the time a read takes.
#include "xla_plugin/stablehlo/program_reader.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/stablehlo/stablehlo_attributes.h"
#include "xla_plugin/stablehlo/test_util.h"
#include "xla_plugin/stablehlo/text_parser.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

using Ints = std::vector<int64_t>;
using Names = std::vector<std::string>;

class ProgramReaderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(testing::Library(), nullptr) << testing::LibraryPath(); }

  // The testdata program `name`, read.
  Module Read(const std::string& name) {
    ProgramReader reader(testing::Library());
    StatusOr<Module> module = reader.Read(Program{"mlir", testing::Testdata(name)});
    EXPECT_TRUE(module.ok()) << name << ": " << module.status().ToString();
    return module.ok() ? std::move(*module) : Module();
  }
};

Names OpNames(const Block& block) {
  Names names;
  for (const Operation& op : block.operations) names.push_back(op.name);
  return names;
}

Names FunctionNames(const Module& module) {
  Names names;
  for (const Function& function : module.functions) names.push_back(function.name);
  return names;
}

template <typename T>
std::vector<T> Values(const Attribute& attribute) {
  std::string data = attribute.ExpandedData();
  std::vector<T> values(data.size() / sizeof(T));
  std::memcpy(values.data(), data.data(), values.size() * sizeof(T));
  return values;
}

TEST_F(ProgramReaderTest, OtherFormatsAreUnimplemented) {
  ProgramReader reader(testing::Library());
  StatusOr<Module> module = reader.Read(Program{"hlo", "bytes"});
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(module.status().message(),
            "program format 'hlo' is not supported; this device reads StableHLO, format 'mlir'");
  ProgramReader without_library(nullptr);
  EXPECT_EQ(without_library.Read(Program{"mlir", "bytes"}).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(ProgramReaderTest, MatmulTanhReduce) {
  for (const char* name : {"matmul_tanh_reduce.mlirbc", "simple_v1_13_3.mlirbc"}) {
    Module module = Read(name);
    EXPECT_EQ(module.name, "jit__lambda");
    ASSERT_EQ(FunctionNames(module), Names{"main"}) << name;
    const Function& main = module.functions[0];
    EXPECT_EQ(main.argument_types[0].ToString(), "tensor<4x8xf32>");
    EXPECT_EQ(main.result_types[0].ToString(), "tensor<3xf32>");
    EXPECT_EQ(FindAttribute(main.result_attributes[0], "jax.result_info")->string_value, "result");
    EXPECT_EQ(main.body.blocks[0].argument_locations[1].name, "b");  // The Python parameter.
    const Block& body = main.body.blocks[0];
    EXPECT_EQ(OpNames(body), (Names{"stablehlo.constant", "stablehlo.dot_general", "stablehlo.tanh",
                                    "stablehlo.reduce", "func.return"}));
    const Operation& dot = body.operations[1];
    StatusOr<DotDimensionNumbers> numbers =
        ReadOpAttribute(dot, "dot_dimension_numbers", ReadDotDimensionNumbers);
    ASSERT_TRUE(numbers.ok()) << numbers.status().ToString();
    EXPECT_EQ(numbers->lhs_contracting_dimensions, Ints{1});
    EXPECT_EQ(numbers->rhs_contracting_dimensions, Ints{0});
    EXPECT_EQ(dot.location.name, "jit(<lambda>)/dot_general");
    const Operation& reduce = body.operations[3];
    EXPECT_EQ(reduce.Find("dimensions")->ints, Ints{0});
    EXPECT_EQ(OpNames(reduce.regions[0].blocks[0]), (Names{"stablehlo.add", "stablehlo.return"}));
    EXPECT_EQ(Values<float>(*body.operations[0].Find("value")), std::vector<float>{0.0f});
  }
  Module module = Read("matmul_tanh_reduce.mlirbc");
  EXPECT_EQ(module.functions[0].body.blocks[0].operations[1].location.text,
            "\"jit(<lambda>)/dot_general\" at /tmp/fe/capture.py:21:49");
}

TEST_F(ProgramReaderTest, ForiLoop) {
  Module module = Read("fori_loop.mlirbc");
  const Function& main = module.functions[0];
  const Block& body = main.body.blocks[0];
  const Operation& loop = body.operations[4];
  ASSERT_EQ(loop.name, "stablehlo.while");
  EXPECT_EQ(loop.results.size(), 3u);
  ASSERT_EQ(loop.regions.size(), 2u);
  const Operation& compare = loop.regions[0].blocks[0].operations[0];
  EXPECT_EQ(*ReadOpAttribute(compare, "comparison_direction", ReadComparisonDirection),
            ComparisonDirection::kLt);
  EXPECT_EQ(*ReadOpAttribute(compare, "compare_type", ReadComparisonType),
            ComparisonType::kSigned);
  // The cond compares against the constant 3 defined in the function body.
  EXPECT_EQ(compare.operands[1], body.operations[2].results[0]);
  EXPECT_EQ(Values<int32_t>(*body.operations[2].Find("value")), std::vector<int32_t>{3});
  EXPECT_EQ(OpNames(loop.regions[1].blocks[0]),
            (Names{"stablehlo.add", "stablehlo.broadcast_in_dim", "stablehlo.multiply",
                   "stablehlo.convert", "stablehlo.broadcast_in_dim", "stablehlo.add",
                   "stablehlo.add", "stablehlo.return"}));
  // func.return returns the loop's third result (%4#2).
  EXPECT_EQ(body.operations[5].operands, std::vector<ValueId>{loop.results[2]});
  EXPECT_EQ(main.value_names[loop.results[2]], "4#2");
}

TEST_F(ProgramReaderTest, ArgsortTake) {
  Module module = Read("argsort_take.mlirbc");
  ASSERT_EQ(FunctionNames(module), (Names{"main", "argsort", "_take", "_where"}));
  EXPECT_TRUE(module.functions[0].is_public);
  EXPECT_FALSE(module.functions[1].is_public);
  const Block& main = module.functions[0].body.blocks[0];
  EXPECT_EQ(main.operations[2].Find("callee")->string_value, "argsort");
  const Block& argsort = module.FindFunction("argsort")->body.blocks[0];
  EXPECT_EQ(Values<uint32_t>(*argsort.operations[0].Find("value")),
            std::vector<uint32_t>{0x7FC00000u});  // NaN, printed 0x7FC00000.
  const Operation& sort = argsort.operations[3];
  ASSERT_EQ(sort.name, "stablehlo.sort");
  EXPECT_EQ(sort.Find("dimension")->int_value, 0);
  EXPECT_TRUE(sort.Find("is_stable")->bool_value);
  EXPECT_EQ(sort.regions[0].blocks[0].arguments.size(), 4u);
  const Operation* gather = nullptr;
  for (const Operation& op : module.FindFunction("_take")->body.blocks[0].operations) {
    if (op.name == "stablehlo.gather") gather = &op;
  }
  ASSERT_NE(gather, nullptr);
  StatusOr<GatherDimensionNumbers> numbers =
      ReadOpAttribute(*gather, "dimension_numbers", ReadGatherDimensionNumbers);
  ASSERT_TRUE(numbers.ok()) << numbers.status().ToString();
  EXPECT_EQ(numbers->offset_dims, Ints{0});
  EXPECT_EQ(numbers->collapsed_slice_dims, Ints{1});
  EXPECT_EQ(numbers->start_index_map, Ints{1});
  EXPECT_EQ(numbers->index_vector_dim, 1);
  EXPECT_EQ(gather->Find("slice_sizes")->ints, (Ints{3, 1}));
  const Operation& reduce_init = module.FindFunction("_take")->body.blocks[0].operations[1];
  EXPECT_EQ(Values<uint8_t>(*reduce_init.Find("value")), std::vector<uint8_t>{1});  // true
}

TEST_F(ProgramReaderTest, RandomNormal) {
  Module module = Read("random_normal.mlirbc");
  ASSERT_EQ(FunctionNames(module), (Names{"main", "_normal", "_normal_real", "_uniform",
                                          "threefry2x32"}));
  const Function* threefry = module.FindFunction("threefry2x32");
  EXPECT_EQ(threefry->argument_types[0].element_type, ElementType::kU32);
  EXPECT_EQ(threefry->result_types.size(), 2u);
  EXPECT_TRUE(threefry->argument_attributes[0].empty());  // No arg_attrs.
  const Block& body = threefry->body.blocks[0];
  EXPECT_EQ(Values<uint32_t>(*body.operations[4].Find("value")), std::vector<uint32_t>{466688986});
  EXPECT_EQ(Values<uint32_t>(*body.operations[5].Find("value")),
            (std::vector<uint32_t>{13, 15, 26, 6}));
  const Operation* loop = nullptr;
  for (const Operation& op : body.operations) {
    if (op.name == "stablehlo.while") loop = &op;
  }
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->results.size(), 9u);
  const Attribute& inf = *module.FindFunction("_normal_real")->body.blocks[0].operations[0].Find(
      "value");
  EXPECT_TRUE(inf.is_splat);
  EXPECT_EQ(inf.type.ToString(), "tensor<3x4xf32>");
  std::vector<float> infs = Values<float>(inf);
  ASSERT_EQ(infs.size(), 12u);
  EXPECT_TRUE(std::isinf(infs[11]));
}

TEST_F(ProgramReaderTest, Convolution) {
  Module module = Read("conv.mlirbc");
  const Operation& conv = module.functions[0].body.blocks[0].operations[0];
  ASSERT_EQ(conv.name, "stablehlo.convolution");
  StatusOr<ConvDimensionNumbers> numbers =
      ReadOpAttribute(conv, "dimension_numbers", ReadConvDimensionNumbers);
  ASSERT_TRUE(numbers.ok()) << numbers.status().ToString();
  EXPECT_EQ(numbers->input_batch_dimension, 0);
  EXPECT_EQ(numbers->input_feature_dimension, 3);
  EXPECT_EQ(numbers->input_spatial_dimensions, (Ints{1, 2}));
  EXPECT_EQ(numbers->kernel_input_feature_dimension, 2);
  EXPECT_EQ(numbers->kernel_output_feature_dimension, 3);
  EXPECT_EQ(numbers->output_spatial_dimensions, (Ints{1, 2}));
  EXPECT_EQ(conv.Find("feature_group_count")->int_value, 1);
  const Attribute& padding = *conv.Find("padding");
  EXPECT_EQ(padding.type.ToString(), "tensor<2x2xi64>");
  EXPECT_EQ(Values<int64_t>(padding), (std::vector<int64_t>{1, 1, 1, 1}));
}

TEST_F(ProgramReaderTest, ScatterAdd) {
  Module module = Read("scatter_add.mlirbc");
  const Block& body = module.functions[0].body.blocks[0];
  const Operation& scatter = body.operations[7];
  ASSERT_EQ(scatter.name, "stablehlo.scatter");
  StatusOr<ScatterDimensionNumbers> numbers =
      ReadOpAttribute(scatter, "scatter_dimension_numbers", ReadScatterDimensionNumbers);
  ASSERT_TRUE(numbers.ok()) << numbers.status().ToString();
  EXPECT_EQ(numbers->inserted_window_dims, Ints{0});
  EXPECT_EQ(numbers->scatter_dims_to_operand_dims, Ints{0});
  EXPECT_EQ(numbers->index_vector_dim, 0);
  EXPECT_TRUE(scatter.Find("indices_are_sorted")->bool_value);
  EXPECT_TRUE(scatter.Find("unique_indices")->bool_value);
  EXPECT_EQ(OpNames(scatter.regions[0].blocks[0]), (Names{"stablehlo.add", "stablehlo.return"}));
  EXPECT_EQ(scatter.location.name, "jit(<lambda>)/scatter-add");
}

TEST_F(ProgramReaderTest, CondIsCase) {
  Module module = Read("cond.mlirbc");
  const Function& main = module.functions[0];
  EXPECT_EQ(main.argument_types[0].ToString(), "tensor<i1>");
  const Operation& branch = main.body.blocks[0].operations[3];
  ASSERT_EQ(branch.name, "stablehlo.case");
  ASSERT_EQ(branch.regions.size(), 2u);
  EXPECT_TRUE(branch.regions[0].blocks[0].arguments.empty());
  EXPECT_EQ(OpNames(branch.regions[0].blocks[0]),
            (Names{"stablehlo.broadcast_in_dim", "stablehlo.multiply", "stablehlo.return"}));
  EXPECT_EQ(OpNames(branch.regions[1].blocks[0]),
            (Names{"stablehlo.broadcast_in_dim", "stablehlo.add", "stablehlo.return"}));
  // The branches use the function's argument %arg1.
  EXPECT_EQ(branch.regions[1].blocks[0].operations[1].operands[0],
            main.body.blocks[0].arguments[1]);
}

// JAX 0.12 writes chlo ops as stablehlo.composite with a decomposition function: no chlo dialect
// is needed to read them.
TEST_F(ProgramReaderTest, ChloTopKIsComposite) {
  Module module = Read("top_k.mlirbc");
  ASSERT_EQ(FunctionNames(module), (Names{"main", "chlo.top_k.impl"}));
  const Operation& composite = module.functions[0].body.blocks[0].operations[0];
  ASSERT_EQ(composite.name, "stablehlo.composite");
  EXPECT_EQ(composite.Find("name")->string_value, "chlo.top_k");
  EXPECT_EQ(composite.Find("decomposition")->string_value, "chlo.top_k.impl");
  EXPECT_EQ(composite.Find("composite_attributes")->Find("k")->int_value, 3);
  EXPECT_TRUE(composite.Find("composite_attributes")->Find("is_stable")->bool_value);
  EXPECT_EQ(composite.results.size(), 2u);
  const Function& impl = module.functions[1];
  EXPECT_FALSE(impl.is_public);
  EXPECT_EQ(impl.result_types[1].ToString(), "tensor<3xi32>");
  EXPECT_EQ(OpNames(impl.body.blocks[0])[1], "stablehlo.sort");
}

TEST_F(ProgramReaderTest, LargeConstant) {
  Module module = Read("large_constant.mlirbc");
  const Attribute& value = *module.functions[0].body.blocks[0].operations[0].Find("value");
  EXPECT_EQ(value.type.ToString(), "tensor<10000xf32>");
  EXPECT_FALSE(value.is_splat);
  std::vector<float> values = Values<float>(value);
  ASSERT_EQ(values.size(), 10000u);
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], static_cast<float>(i)) << i;
}

TEST_F(ProgramReaderTest, ShardyExportedPmap) {
  Module module = Read("pmap_shardy_export_no_mesh.mlirbc");
  EXPECT_EQ(module.name, "jit__fun");
  EXPECT_EQ(FindAttribute(module.attributes, "mhlo.num_partitions")->int_value, 4);
  EXPECT_EQ(FindAttribute(module.attributes, "mhlo.frontend_attributes")
                ->Find("xla.sdy.meshes")->string_value,
            "{mesh = #sdy.mesh<[\"i\"=4]>}");
  ASSERT_EQ(FunctionNames(module), (Names{"main", "xla.sdy.manual_computation_body"}));
  const Function& main = module.functions[0];
  EXPECT_EQ(FindAttribute(main.argument_attributes[0], "mhlo.sharding")->string_value,
            "{devices=[4]<=[4]}");
  const Block& body = main.body.blocks[0];
  EXPECT_EQ(OpNames(body), (Names{"stablehlo.custom_call", "func.call", "stablehlo.custom_call",
                                  "stablehlo.custom_call", "func.return"}));
  EXPECT_EQ(body.operations[0].Find("call_target_name")->string_value,
            "xla.sdy.GlobalToLocalShape");
  EXPECT_TRUE(body.operations[0].Find("has_side_effect")->bool_value);
  EXPECT_EQ(body.operations[0].Find("mhlo.frontend_attributes")->Find("xla.sdy.manual_axes")
                ->string_value,
            "#sdy<manual_axes{\"i\"}>");
  EXPECT_EQ(main.value_types[body.operations[0].results[0]].ToString(), "tensor<1xf32>");
  const Operation& all_reduce = module.functions[1].body.blocks[0].operations[1];
  ASSERT_EQ(all_reduce.name, "stablehlo.all_reduce");
  StatusOr<ChannelHandle> channel =
      ReadOpAttribute(all_reduce, "channel_handle", ReadChannelHandle);
  ASSERT_TRUE(channel.ok());
  EXPECT_EQ(channel->handle, 1);
  EXPECT_EQ(Values<int64_t>(*all_reduce.Find("replica_groups")),
            (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(all_reduce.Find("use_global_device_ids")->kind, Attribute::Kind::kUnit);

  // With Shardy's sdy.mesh op still in the bytecode, the library cannot read it.
  ProgramReader reader(testing::Library());
  StatusOr<Module> with_mesh =
      reader.Read(Program{"mlir", testing::Testdata("pmap_shardy_export.mlirbc")});
  ASSERT_FALSE(with_mesh.ok());
  EXPECT_EQ(with_mesh.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(with_mesh.status().message().find("dialect 'sdy'"), std::string::npos);
}

TEST_F(ProgramReaderTest, Text) {
  Module module = Read("add.mlir");
  ASSERT_EQ(FunctionNames(module), Names{"main"});
  EXPECT_EQ(OpNames(module.functions[0].body.blocks[0]), (Names{"stablehlo.add", "func.return"}));
  EXPECT_EQ(module.functions[0].body.blocks[0].operations[0].location.text, "-:3:8");
}

// Text as the conformance suite (tests/conformance) sends it: argument attributes, module
// attributes, and an ill-typed program the library's verifier rejects.
TEST_F(ProgramReaderTest, ConformanceStyleText) {
  ProgramReader reader(testing::Library());
  StatusOr<Module> donated = reader.Read(Program{"mlir", R"mlir(
module @add_one_donated attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<4xf32> {
    %0 = stablehlo.replica_id : tensor<ui32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
    %1 = stablehlo.add %arg0, %cst : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
})mlir"});
  ASSERT_TRUE(donated.ok()) << donated.status().ToString();
  EXPECT_EQ(donated->name, "add_one_donated");
  EXPECT_EQ(FindAttribute(donated->attributes, "mhlo.num_replicas")->int_value, 2);
  const Function& main = donated->functions[0];
  EXPECT_EQ(FindAttribute(main.argument_attributes[0], "tf.aliasing_output")->int_value, 0);
  const Block& body = main.body.blocks[0];
  EXPECT_EQ(main.value_types[body.operations[0].results[0]].ToString(), "tensor<ui32>");
  EXPECT_TRUE(body.operations[1].Find("value")->is_splat);

  StatusOr<Module> ill_typed = reader.Read(Program{"mlir", R"mlir(
module @ill_typed {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<3xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})mlir"});
  ASSERT_FALSE(ill_typed.ok());
  EXPECT_EQ(ill_typed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ill_typed.status().message().find("'stablehlo.add' op"), std::string::npos)
      << ill_typed.status().ToString();
}

// Times ToGenericText and TextParser::Parse (best of 20) and prints them.
TEST_F(ProgramReaderTest, ReadTimes) {
  for (const char* name : {"matmul_tanh_reduce.mlirbc", "large_constant.mlirbc",
                           "random_normal.mlirbc"}) {
    const std::string bytes = testing::Testdata(name);
    double best_print = 1e9, best_parse = 1e9;
    for (int i = 0; i < 20; ++i) {
      auto start = std::chrono::steady_clock::now();
      StatusOr<std::string> text = testing::Library()->ToGenericText(bytes);
      auto printed = std::chrono::steady_clock::now();
      ASSERT_TRUE(text.ok());
      StatusOr<Module> module = TextParser::Parse(*text);
      auto parsed = std::chrono::steady_clock::now();
      ASSERT_TRUE(module.ok());
      best_print = std::min(best_print, std::chrono::duration<double, std::milli>(printed - start)
                                            .count());
      best_parse = std::min(best_parse, std::chrono::duration<double, std::milli>(parsed - printed)
                                            .count());
    }
    std::cout << name << " (" << bytes.size() << " bytes): ToGenericText " << best_print
              << " ms, TextParser::Parse " << best_parse << " ms\n";
    EXPECT_LT(best_print + best_parse, 1000.0);
  }
  // The part of each call that is the MLIR context of its own: reading an empty text.
  double best_empty = 1e9;
  for (int i = 0; i < 20; ++i) {
    auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(testing::Library()->ToGenericText("").ok());
    best_empty = std::min(best_empty, std::chrono::duration<double, std::milli>(
                                          std::chrono::steady_clock::now() - start).count());
  }
  std::cout << "empty text (context create + destroy): ToGenericText " << best_empty << " ms\n";

  // TextParser alone on one large function: 100,000 chained adds as the library prints them.
  std::string text =
      "\"func.func\"() <{function_type = (tensor<8x128xf32>) -> tensor<8x128xf32>, sym_name = "
      "\"main\"}> ({\n^bb0(%arg0: tensor<8x128xf32> loc(\"x\")):\n";
  std::string previous = "%arg0";
  constexpr int kOps = 100000;
  for (int i = 0; i < kOps; ++i) {
    const std::string value = "%" + std::to_string(i);
    text += "  " + value + " = \"stablehlo.add\"(" + previous + ", %arg0) : (tensor<8x128xf32>, " +
            "tensor<8x128xf32>) -> tensor<8x128xf32> loc(#loc" + std::to_string(i % 50) + ")\n";
    previous = value;
  }
  text += "  \"func.return\"(" + previous + ") : (tensor<8x128xf32>) -> ()\n}) : () -> ()\n";
  for (int i = 0; i < 50; ++i) {
    text += "#loc" + std::to_string(i) + " = loc(\"jit(f)/add\"(\"f.py\":" + std::to_string(i) +
            ":1))\n";
  }
  auto start = std::chrono::steady_clock::now();
  StatusOr<Module> module = TextParser::Parse(text);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->functions[0].body.blocks[0].operations.size(), kOps + 1u);
  std::cout << "TextParser::Parse of " << kOps << " ops (" << text.size() / 1000000.0
            << " MB): " << ms << " ms\n";
}

}  // namespace
}  // namespace stablehlo
}  // namespace pjrtkit
