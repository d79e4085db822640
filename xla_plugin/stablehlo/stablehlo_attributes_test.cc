// The stablehlo attribute readers on attributes as ToGenericText prints them.
#include "xla_plugin/stablehlo/stablehlo_attributes.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/stablehlo/text_parser.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

using Ints = std::vector<int64_t>;

// The attribute `text` as TextParser reads it.
Attribute Parse(const std::string& text) {
  StatusOr<Module> module = TextParser::Parse("\"t.op\"() {v = " + text + "} : () -> ()");
  EXPECT_TRUE(module.ok()) << text << ": " << module.status().ToString();
  if (!module.ok()) return Attribute();
  return *module->other_operations[0].Find("v");
}

bool Contains(const Status& status, const std::string& part) {
  return status.message().find(part) != std::string::npos;
}

TEST(StablehloAttributesTest, Enums) {
  EXPECT_EQ(*ReadComparisonDirection(Parse("#stablehlo<comparison_direction LT>")),
            ComparisonDirection::kLt);
  EXPECT_EQ(*ReadComparisonDirection(Parse("#stablehlo<comparison_direction NE>")),
            ComparisonDirection::kNe);
  EXPECT_EQ(*ReadComparisonType(Parse("#stablehlo<comparison_type TOTALORDER>")),
            ComparisonType::kTotalOrder);
  EXPECT_EQ(*ReadRngAlgorithm(Parse("#stablehlo<rng_algorithm THREE_FRY>")),
            RngAlgorithm::kThreeFry);
  EXPECT_EQ(*ReadRngDistribution(Parse("#stablehlo<rng_distribution NORMAL>")),
            RngDistribution::kNormal);
  EXPECT_EQ(*ReadTranspose(Parse("#stablehlo<transpose NO_TRANSPOSE>")), Transpose::kNoTranspose);
  EXPECT_EQ(*ReadFftType(Parse("#stablehlo<fft_type IRFFT>")), FftType::kIrfft);
  StatusOr<std::vector<Precision>> precision =
      ReadPrecisionConfig(Parse("[#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]"));
  ASSERT_TRUE(precision.ok()) << precision.status().ToString();
  EXPECT_EQ(*precision, (std::vector<Precision>{Precision::kDefault, Precision::kHighest}));
  EXPECT_STREQ(ComparisonDirectionName(ComparisonDirection::kGe), "GE");
  EXPECT_STREQ(ComparisonTypeName(ComparisonType::kUnsigned), "UNSIGNED");
  EXPECT_STREQ(PrecisionName(Precision::kHigh), "HIGH");

  StatusOr<ComparisonDirection> bad =
      ReadComparisonDirection(Parse("#stablehlo<comparison_direction XX>"));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status(), "#stablehlo<comparison_direction XX>"));
  EXPECT_TRUE(Contains(bad.status(), "EQ, NE, GE, GT, LE, LT"));
  StatusOr<ComparisonDirection> wrong =
      ReadComparisonDirection(Parse("#stablehlo<comparison_type FLOAT>"));
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(Contains(wrong.status(), "expected #stablehlo<comparison_direction ...>"))
      << wrong.status().ToString();
  EXPECT_FALSE(ReadComparisonDirection(Parse("3 : i32")).ok());
}

TEST(StablehloAttributesTest, DotGatherScatter) {
  StatusOr<DotDimensionNumbers> dot = ReadDotDimensionNumbers(
      Parse("#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
            "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>"));
  ASSERT_TRUE(dot.ok()) << dot.status().ToString();
  EXPECT_EQ(dot->lhs_batching_dimensions, Ints{0});
  EXPECT_EQ(dot->rhs_contracting_dimensions, Ints{1});
  StatusOr<DotDimensionNumbers> no_batch = ReadDotDimensionNumbers(Parse(
      "#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>"));
  ASSERT_TRUE(no_batch.ok());
  EXPECT_TRUE(no_batch->lhs_batching_dimensions.empty());

  StatusOr<GatherDimensionNumbers> gather = ReadGatherDimensionNumbers(
      Parse("#stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], "
            "operand_batching_dims = [2, 3], start_indices_batching_dims = [0, 1], "
            "start_index_map = [1], index_vector_dim = 1>"));
  ASSERT_TRUE(gather.ok()) << gather.status().ToString();
  EXPECT_EQ(gather->offset_dims, Ints{0});
  EXPECT_EQ(gather->operand_batching_dims, (Ints{2, 3}));
  EXPECT_EQ(gather->start_index_map, Ints{1});
  EXPECT_EQ(gather->index_vector_dim, 1);

  // index_vector_dim omitted: the printer leaves out 0.
  StatusOr<ScatterDimensionNumbers> scatter = ReadScatterDimensionNumbers(
      Parse("#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>"));
  ASSERT_TRUE(scatter.ok()) << scatter.status().ToString();
  EXPECT_EQ(scatter->inserted_window_dims, Ints{0});
  EXPECT_TRUE(scatter->update_window_dims.empty());
  EXPECT_EQ(scatter->index_vector_dim, 0);

  StatusOr<DotDimensionNumbers> unknown =
      ReadDotDimensionNumbers(Parse("#stablehlo.dot<lhs_batch = [0]>"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(Contains(unknown.status(), "unknown field lhs_batch (accepted: "
                                         "lhs_batching_dimensions, rhs_batching_dimensions"));
  StatusOr<DotDimensionNumbers> not_list =
      ReadDotDimensionNumbers(Parse("#stablehlo.dot<lhs_contracting_dimensions = 1>"));
  ASSERT_FALSE(not_list.ok());
  EXPECT_TRUE(Contains(not_list.status(), "lhs_contracting_dimensions: '1' is not a list"));
}

TEST(StablehloAttributesTest, ConvBothForms) {
  StatusOr<ConvDimensionNumbers> pretty =
      ReadConvDimensionNumbers(Parse("#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>"));
  ASSERT_TRUE(pretty.ok()) << pretty.status().ToString();
  EXPECT_EQ(pretty->input_batch_dimension, 0);
  EXPECT_EQ(pretty->input_feature_dimension, 3);
  EXPECT_EQ(pretty->input_spatial_dimensions, (Ints{1, 2}));
  EXPECT_EQ(pretty->kernel_input_feature_dimension, 2);
  EXPECT_EQ(pretty->kernel_output_feature_dimension, 3);
  EXPECT_EQ(pretty->kernel_spatial_dimensions, (Ints{0, 1}));
  EXPECT_EQ(pretty->output_feature_dimension, 3);
  StatusOr<ConvDimensionNumbers> nchw =
      ReadConvDimensionNumbers(Parse("#stablehlo.conv<[b, f, 1, 0]x[o, i, 0, 1]->[b, f, 0, 1]>"));
  ASSERT_TRUE(nchw.ok()) << nchw.status().ToString();
  EXPECT_EQ(nchw->input_spatial_dimensions, (Ints{3, 2}));
  EXPECT_EQ(nchw->kernel_output_feature_dimension, 0);
  EXPECT_EQ(nchw->output_spatial_dimensions, (Ints{2, 3}));

  StatusOr<ConvDimensionNumbers> raw = ReadConvDimensionNumbers(Parse(
      "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, "
      "input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, "
      "kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], "
      "output_batch_dimension = 0, output_feature_dimension = 3, "
      "output_spatial_dimensions = [1, 2]>"));
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->input_feature_dimension, 3);
  EXPECT_EQ(raw->kernel_spatial_dimensions, (Ints{0, 1}));
  EXPECT_EQ(raw->output_spatial_dimensions, (Ints{1, 2}));

  StatusOr<ConvDimensionNumbers> twice =
      ReadConvDimensionNumbers(Parse("#stablehlo.conv<[b, 0, 0, f]x[0, 1, i, o]->[b, 0, 1, f]>"));
  ASSERT_FALSE(twice.ok());
  EXPECT_TRUE(Contains(twice.status(), "(input): '0' is not b, f or a new spatial dimension"))
      << twice.status().ToString();
  EXPECT_FALSE(ReadConvDimensionNumbers(Parse("#stablehlo.conv<[b, f]x[i, o]>")).ok());
}

TEST(StablehloAttributesTest, ChannelAccuracyAlgorithmAlias) {
  StatusOr<ChannelHandle> channel =
      ReadChannelHandle(Parse("#stablehlo.channel_handle<handle = 1, type = 1>"));
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  EXPECT_EQ(channel->handle, 1);
  EXPECT_EQ(channel->type, 1);

  StatusOr<ResultAccuracy> accuracy = ReadResultAccuracy(
      Parse("#stablehlo.result_accuracy<atol = 1.000000e-05, ulps = 2, "
            "mode = #stablehlo.result_accuracy_mode<TOLERANCE>>"));
  ASSERT_TRUE(accuracy.ok()) << accuracy.status().ToString();
  EXPECT_EQ(accuracy->atol, 1e-5);
  EXPECT_EQ(accuracy->rtol, 0.0);
  EXPECT_EQ(accuracy->ulps, 2);
  EXPECT_EQ(accuracy->mode, ResultAccuracyMode::kTolerance);

  StatusOr<DotAlgorithm> algorithm = ReadDotAlgorithm(
      Parse("#stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32, "
            "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
            "num_primitive_operations = 3, allow_imprecise_accumulation = false>"));
  ASSERT_TRUE(algorithm.ok()) << algorithm.status().ToString();
  EXPECT_EQ(algorithm->lhs_precision_type.ToString(), "tf32");
  EXPECT_EQ(algorithm->accumulation_type.element_type, ElementType::kF32);
  EXPECT_EQ(algorithm->num_primitive_operations, 3);
  EXPECT_FALSE(algorithm->allow_imprecise_accumulation);

  StatusOr<OutputOperandAlias> alias = ReadOutputOperandAlias(
      Parse("#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, "
            "operand_tuple_indices = [1]>"));
  ASSERT_TRUE(alias.ok()) << alias.status().ToString();
  EXPECT_TRUE(alias->output_tuple_indices.empty());
  EXPECT_EQ(alias->operand_tuple_indices, Ints{1});
}

TEST(StablehloAttributesTest, ReadOpAttribute) {
  StatusOr<Module> module = TextParser::Parse(
      "\"stablehlo.compare\"() {comparison_direction = #stablehlo<comparison_direction GT>} : "
      "() -> () loc(\"f.py\":3:4)");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const Operation& op = module->other_operations[0];
  StatusOr<ComparisonDirection> direction =
      ReadOpAttribute(op, "comparison_direction", ReadComparisonDirection);
  ASSERT_TRUE(direction.ok());
  EXPECT_EQ(*direction, ComparisonDirection::kGt);
  StatusOr<ComparisonType> missing = ReadOpAttribute(op, "compare_type", ReadComparisonType);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "stablehlo.compare at f.py:3:4 has no attribute compare_type");
  StatusOr<ChannelHandle> wrong = ReadOpAttribute(op, "comparison_direction", ReadChannelHandle);
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(Contains(wrong.status(), "stablehlo.compare at f.py:3:4: comparison_direction: "
                                       "expected #stablehlo.channel_handle<...>"))
      << wrong.status().ToString();
}

}  // namespace
}  // namespace stablehlo
}  // namespace pjrtkit
