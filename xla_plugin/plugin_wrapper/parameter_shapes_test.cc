// ParameterShapes and HloShape on real HloModuleProto bytes (testdata/gen_hlo_test_data.py).
#include "xla_plugin/plugin_wrapper/parameter_shapes.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/plugin_wrapper/hlo_shape.h"
#include "xla_plugin/plugin_wrapper/testdata/hlo_test_data.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

std::string AsString(const unsigned char* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Parameter shapes of `module`, printed ("f32[4] s32[2,3] ...").
std::string Printed(const ParameterShapes& shapes) {
  std::string out;
  for (const HloShape& shape : shapes.shapes()) {
    out += (out.empty() ? "" : " ") + shape.ToString();
  }
  return out;
}

// ParameterShapes::FromHloModule of a generated module.
StatusOr<ParameterShapes> FromModule(const unsigned char* data, size_t size) {
  return ParameterShapes::FromHloModule(AsString(data, size));
}

TEST(ParameterShapesTest, AddOne) {
  StatusOr<ParameterShapes> shapes =
      FromModule(testdata::kAddOneModule, testdata::kAddOneModuleSize);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  ASSERT_EQ(shapes->size(), 1u);
  EXPECT_EQ(shapes->shapes()[0].element_type, ElementType::kF32);
  EXPECT_EQ(shapes->shapes()[0].dims, std::vector<int64_t>{4});
  EXPECT_EQ(Printed(*shapes), "f32[4]");
}

TEST(ParameterShapesTest, MixedTypesMapFromXlaPrimitiveTypes) {
  StatusOr<ParameterShapes> shapes =
      FromModule(testdata::kMixedModule, testdata::kMixedModuleSize);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_EQ(Printed(*shapes), "f32[4] s32[2,3] pred[] bf16[2] c64[1] u8[0]");
  ASSERT_EQ(shapes->size(), 6u);
  // XLA numbers BF16 16 and C64 15; PJRT (and pjrtkit) 13 and 14.
  EXPECT_EQ(shapes->shapes()[3].primitive_type, 16);
  EXPECT_EQ(shapes->shapes()[3].element_type, ElementType::kBF16);
  EXPECT_EQ(shapes->shapes()[4].primitive_type, 15);
  EXPECT_EQ(shapes->shapes()[4].element_type, ElementType::kC64);
}

TEST(ParameterShapesTest, HloWithConfigFormat) {
  Program program{"hlo_with_config",
                  AsString(testdata::kMixedWithConfig, testdata::kMixedWithConfigSize)};
  StatusOr<ParameterShapes> shapes = ParameterShapes::FromOptimizedProgram(program);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_EQ(Printed(*shapes), "f32[4] s32[2,3] pred[] bf16[2] c64[1] u8[0]");
}

TEST(ParameterShapesTest, HloFormat) {
  Program program{"hlo", AsString(testdata::kAddOneModule, testdata::kAddOneModuleSize)};
  StatusOr<ParameterShapes> shapes = ParameterShapes::FromOptimizedProgram(program);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_EQ(Printed(*shapes), "f32[4]");
}

TEST(ParameterShapesTest, FallsBackToTheEntryComputation) {
  StatusOr<ParameterShapes> shapes =
      FromModule(testdata::kMixedNoHostShape, testdata::kMixedNoHostShapeSize);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_EQ(Printed(*shapes), "f32[4] s32[2,3] pred[] bf16[2] c64[1] u8[0]");
}

TEST(ParameterShapesTest, TupledArgumentsAreTheTupleElements) {
  StatusOr<ParameterShapes> shapes =
      FromModule(testdata::kMixedTupledModule, testdata::kMixedTupledModuleSize);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_EQ(Printed(*shapes), "f32[4] s32[2,3] pred[] bf16[2] c64[1] u8[0]");
}

TEST(ParameterShapesTest, DynamicDimensionIsABound) {
  StatusOr<ParameterShapes> shapes =
      FromModule(testdata::kDynamicModule, testdata::kDynamicModuleSize);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_EQ(Printed(*shapes), "f32[<=8]");
  EXPECT_TRUE(shapes->CheckArgument(0, ElementType::kF32, {8}, "dynamic").ok());
  EXPECT_TRUE(shapes->CheckArgument(0, ElementType::kF32, {3}, "dynamic").ok());
  const Status too_big = shapes->CheckArgument(0, ElementType::kF32, {9}, "dynamic");
  EXPECT_EQ(too_big.message(), "argument 0 of 'dynamic' must be f32[<=8], got f32[9]");
}

TEST(ParameterShapesTest, TokenParameterAcceptsAnything) {
  StatusOr<ParameterShapes> shapes =
      FromModule(testdata::kTokenModule, testdata::kTokenModuleSize);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_EQ(Printed(*shapes), "token[] f64[2]");
  EXPECT_TRUE(shapes->CheckArgument(0, ElementType::kPred, {0}, "token").ok());
  EXPECT_FALSE(shapes->CheckArgument(1, ElementType::kF32, {2}, "token").ok());
}

TEST(ParameterShapesTest, CheckArgumentNamesIndexExpectedAndGiven) {
  StatusOr<ParameterShapes> shapes =
      FromModule(testdata::kMixedModule, testdata::kMixedModuleSize);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_TRUE(shapes->CheckArgument(0, ElementType::kF32, {4}, "add").ok());
  EXPECT_TRUE(shapes->CheckArgument(2, ElementType::kPred, {}, "add").ok());
  EXPECT_TRUE(shapes->CheckArgument(5, ElementType::kU8, {0}, "add").ok());
  const Status type = shapes->CheckArgument(0, ElementType::kS32, {4}, "add");
  EXPECT_EQ(type.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(type.message(), "argument 0 of 'add' must be f32[4], got s32[4]");
  const Status dims = shapes->CheckArgument(1, ElementType::kS32, {3, 2}, "add");
  EXPECT_EQ(dims.message(), "argument 1 of 'add' must be s32[2,3], got s32[3,2]");
  const Status rank = shapes->CheckArgument(2, ElementType::kPred, {1}, "add");
  EXPECT_EQ(rank.message(), "argument 2 of 'add' must be pred[], got pred[1]");
  const Status past = shapes->CheckArgument(6, ElementType::kF32, {4}, "add");
  EXPECT_EQ(past.message(), "'add' takes 6 argument(s), got 7");
}

TEST(ParameterShapesTest, CheckCount) {
  StatusOr<ParameterShapes> shapes =
      FromModule(testdata::kAddOneModule, testdata::kAddOneModuleSize);
  ASSERT_TRUE(shapes.ok()) << shapes.status().ToString();
  EXPECT_TRUE(shapes->CheckCount(1, "add_one").ok());
  EXPECT_EQ(shapes->CheckCount(2, "add_one").message(), "'add_one' takes 1 argument(s), got 2");
}

TEST(ParameterShapesTest, UnknownFormatIsUnimplemented) {
  Program program{"mlir", "module {}"};
  EXPECT_EQ(ParameterShapes::FromOptimizedProgram(program).status().code(),
            StatusCode::kUnimplemented);
}

TEST(ParameterShapesTest, GarbageIsAnErrorNotACrash) {
  const std::string module = AsString(testdata::kMixedModule, testdata::kMixedModuleSize);
  // Every truncation of a real module either parses or fails cleanly.
  for (size_t size = 0; size < module.size(); size += 7) {
    StatusOr<ParameterShapes> shapes = ParameterShapes::FromHloModule(module.substr(0, size));
    if (!shapes.ok()) {
      EXPECT_FALSE(shapes.status().message().empty());
    }
  }
  EXPECT_EQ(ParameterShapes::FromHloModule("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParameterShapes::FromHloModule("\x0b").status().code(),
            StatusCode::kInvalidArgument);
  Program program{"hlo_with_config", std::string("\x12\x00", 2)};  // Only a config field.
  EXPECT_EQ(ParameterShapes::FromOptimizedProgram(program).status().message(),
            "parameter shapes: the HloModuleProtoWithConfig has no hlo_module");
}

TEST(HloShapeTest, ElementTypeFromPrimitiveType) {
  EXPECT_EQ(ElementTypeFromPrimitiveType(11), ElementType::kF32);
  EXPECT_EQ(ElementTypeFromPrimitiveType(16), ElementType::kBF16);
  EXPECT_EQ(ElementTypeFromPrimitiveType(18), ElementType::kC128);
  EXPECT_EQ(ElementTypeFromPrimitiveType(26), ElementType::kS2);
  EXPECT_EQ(ElementTypeFromPrimitiveType(32), ElementType::kF4E2M1FN);
  EXPECT_EQ(ElementTypeFromPrimitiveType(33), ElementType::kF8E8M0FNU);
  EXPECT_EQ(ElementTypeFromPrimitiveType(13), ElementType::kInvalid);  // TUPLE.
  EXPECT_EQ(ElementTypeFromPrimitiveType(30), ElementType::kInvalid);  // S1: not in pjrtkit.
}

TEST(HloShapeTest, NestedTupleToString) {
  // TUPLE(f32[2], TUPLE(s32[])): element_type = 13, tuple_shapes = 4.
  const std::string shape("\x10\x0d\x22\x05\x10\x0b\x1a\x01\x02\x22\x06\x10\x0d\x22\x02\x10\x04",
                          17);
  StatusOr<HloShape> parsed = ParseShapeProto(shape);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->ToString(), "(f32[2], (s32[]))");
}

TEST(HloShapeTest, TheLayoutsMemorySpaceIsRead) {
  // f32[2]{0:S(5)}: element_type 11, dimensions [2], layout { minor_to_major [0],
  // memory_space = 8: 5 }.
  const std::string host("\x10\x0b\x1a\x01\x02\x2a\x05\x0a\x01\x00\x40\x05", 12);
  StatusOr<HloShape> parsed = ParseShapeProto(host);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->memory_space, 5);
  ASSERT_TRUE(parsed->layout.has_value());
  EXPECT_EQ(parsed->layout->minor_to_major, std::vector<int64_t>{0});
  // Without one: device memory (0).
  const std::string device("\x10\x0b\x1a\x01\x02\x2a\x03\x0a\x01\x00", 10);
  parsed = ParseShapeProto(device);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->memory_space, 0);
  // A memory space that is not a varint is malformed.
  const std::string bad("\x10\x0b\x2a\x02\x42\x00", 6);
  EXPECT_EQ(ParseShapeProto(bad).status().message(), "LayoutProto memory_space is not a varint");
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
