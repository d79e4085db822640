// StablehloLibrary against torch-mlir's library: loading and its errors, versions, programs as JAX
// sends them -> generic text, bad bytes, threads, and the interpreter oracle.
#include "xla_plugin/stablehlo/stablehlo_library.h"

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/stablehlo/test_util.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

using testing::Library;
using testing::LibraryPath;
using testing::Runfile;
using testing::Testdata;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StablehloLibraryTest, LoadErrors) {
  auto missing = StablehloLibrary::Load("/nonexistent/libTorchMLIRAggregateCAPI.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.status().message(), "/nonexistent/libTorchMLIRAggregateCAPI.so"));

  const std::string text = Runfile("xla_plugin/stablehlo/testdata/add.mlir");
  auto not_library = StablehloLibrary::Load(text);
  ASSERT_FALSE(not_library.ok());
  EXPECT_EQ(not_library.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(not_library.status().message(), "as a shared library"))
      << not_library.status().ToString();

  const std::string other = Runfile("xla_plugin/stablehlo/testdata/libnot_stablehlo.so");
  auto no_api = StablehloLibrary::Load(other);
  ASSERT_FALSE(no_api.ok());
  EXPECT_EQ(no_api.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(no_api.status().message(), "does not export mlirDialectRegistryCreate"))
      << no_api.status().ToString();
  EXPECT_TRUE(Contains(no_api.status().message(), other));
}

TEST(StablehloLibraryTest, Versions) {
  ASSERT_NE(Library(), nullptr) << LibraryPath();
  const StablehloVersions& versions = Library()->Versions();
  EXPECT_EQ(versions.api_version, 9);
  EXPECT_EQ(versions.current, (std::array<int64_t, 3>{1, 19, 0}));
  EXPECT_EQ(versions.minimum, (std::array<int64_t, 3>{0, 9, 0}));
  EXPECT_EQ(Library()->path(), LibraryPath());
}

TEST(StablehloLibraryTest, PortableArtifactToGenericText) {
  ASSERT_NE(Library(), nullptr);
  // The bytes JAX 0.12 sent XLA:CPU's plugin (StableHLO 1.13.3).
  StatusOr<std::string> text = Library()->ToGenericText(Testdata("simple_v1_13_3.mlirbc"));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  // #loc aliases, the module, more #loc aliases.
  EXPECT_EQ(text->rfind("#loc1 = loc(\"a\")\n", 0), 0u) << text->substr(0, 200);
  EXPECT_TRUE(Contains(*text, "\n\"builtin.module\"() <{sym_name = \"jit__lambda\"}> ({\n"));
  EXPECT_TRUE(Contains(*text, "\"stablehlo.dot_general\"(%arg0, %arg1) <{dot_dimension_numbers = "
                              "#stablehlo.dot<lhs_contracting_dimensions = [1], "
                              "rhs_contracting_dimensions = [0]>}>"));
  EXPECT_TRUE(Contains(*text, "#loc18 = loc(\"jit(<lambda>)/dot_general\"(#loc14))"));
}

TEST(StablehloLibraryTest, PlainBytecodeToGenericText) {
  ASSERT_NE(Library(), nullptr);
  StatusOr<std::string> text = Library()->ToGenericText(Testdata("plain_bytecode.mlirbc"));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_TRUE(Contains(*text, "\"builtin.module\"() <{sym_name = \"plain\"}> ({")) << *text;
  EXPECT_TRUE(Contains(*text, "\"func.return\"(%arg0) : (tensor<2xf32>) -> ()")) << *text;
}

TEST(StablehloLibraryTest, TextToGenericText) {
  ASSERT_NE(Library(), nullptr);
  StatusOr<std::string> text = Library()->ToGenericText(Testdata("add.mlir"));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_TRUE(Contains(*text, "%0 = \"stablehlo.add\"(%arg0, %arg1) : (tensor<2xf32>, "
                              "tensor<2xf32>) -> tensor<2xf32> loc(#loc"))
      << *text;
  // Text may use dialects the library lacks: their ops stay generic.
  StatusOr<std::string> sdy = Library()->ToGenericText(
      "\"sdy.mesh\"() {mesh = #sdy.mesh<[\"i\"=4]>, sym_name = \"mesh\"} : () -> ()");
  ASSERT_TRUE(sdy.ok()) << sdy.status().ToString();
  EXPECT_TRUE(Contains(*sdy, "\"sdy.mesh\"()")) << *sdy;
}

TEST(StablehloLibraryTest, ErrorsCarryDiagnostics) {
  ASSERT_NE(Library(), nullptr);
  // Shardy's mesh op in bytecode: the library has no sdy dialect.
  StatusOr<std::string> pmap = Library()->ToGenericText(Testdata("pmap_shardy_export.mlirbc"));
  ASSERT_FALSE(pmap.ok());
  EXPECT_EQ(pmap.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(pmap.status().message(), "dialect 'sdy'")) << pmap.status().ToString();
  EXPECT_TRUE(Contains(pmap.status().message(), "VHLO portable artifact"));
  StatusOr<std::string> bad_op = Library()->ToGenericText(
      "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  %0 = stablehlo.frobnicate %a : "
      "tensor<f32>\n  return %0 : tensor<f32>\n}");
  ASSERT_FALSE(bad_op.ok());
  EXPECT_TRUE(Contains(bad_op.status().message(), "stablehlo.frobnicate"))
      << bad_op.status().ToString();
  EXPECT_TRUE(Contains(bad_op.status().message(), "MLIR text"));
}

// Bad bytes of every kind come back as errors; the process survives.
TEST(StablehloLibraryTest, GarbageNeverAborts) {
  ASSERT_NE(Library(), nullptr);
  // Empty text is an empty module, as in MLIR.
  StatusOr<std::string> empty = Library()->ToGenericText("");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->rfind("\"builtin.module\"() ({\n^bb0:\n}) : () -> () loc(", 0), 0u) << *empty;
  std::vector<std::string> inputs = {"\x01\x02\x03", "ML\xefR", std::string("ML\xefR\x00", 5),
                                     "garbage }{)(", "\"builtin.module\"() ({"};
  const std::string artifact = Testdata("simple_v1_13_3.mlirbc");
  for (size_t size : {8, 24, 100, 400, 800}) inputs.push_back(artifact.substr(0, size));
  std::mt19937 random(42);
  for (int i = 0; i < 40; ++i) {
    std::string bytes = "ML\xefR";
    for (int k = 0; k < 200; ++k) bytes.push_back(static_cast<char>(random()));
    inputs.push_back(bytes);
  }
  for (const std::string& input : inputs) {
    StatusOr<std::string> text = Library()->ToGenericText(input);
    EXPECT_FALSE(text.ok()) << input.size() << " bytes read";
  }
  // Flipped bytes of a real artifact: an error or some module, never an abort.
  for (size_t i = 20; i < artifact.size(); i += 37) {
    std::string flipped = artifact;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x5A);
    (void)Library()->ToGenericText(flipped);
  }
}

TEST(StablehloLibraryTest, ConcurrentCalls) {
  ASSERT_NE(Library(), nullptr);
  const std::string program = Testdata("random_normal.mlirbc");
  StatusOr<std::string> expected = Library()->ToGenericText(program);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  std::vector<std::thread> threads;
  std::vector<int> same(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        StatusOr<std::string> text = Library()->ToGenericText(program);
        same[t] += text.ok() && *text == *expected;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(same, (std::vector<int>{5, 5, 5, 5}));
}

HostTensor F32(std::vector<int64_t> dims, const std::vector<float>& values) {
  HostTensor tensor{ElementType::kF32, std::move(dims), std::string(values.size() * 4, '\0')};
  std::memcpy(&tensor.data[0], values.data(), tensor.data.size());
  return tensor;
}

std::vector<float> Floats(const HostTensor& tensor) {
  std::vector<float> values(tensor.data.size() / 4);
  std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
  return values;
}

TEST(StablehloLibraryTest, InterpretAddsF32) {
  ASSERT_NE(Library(), nullptr);
  auto outputs = Library()->Interpret(Testdata("add.mlir"), {F32({2}, {1.5f, 2.0f}),
                                                             F32({2}, {2.5f, -4.0f})});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ((*outputs)[0].type, ElementType::kF32);
  EXPECT_EQ((*outputs)[0].dims, std::vector<int64_t>{2});
  EXPECT_EQ(Floats((*outputs)[0]), (std::vector<float>{4.0f, -2.0f}));
}

TEST(StablehloLibraryTest, InterpretBf16AndSplatResults) {
  ASSERT_NE(Library(), nullptr);
  constexpr char kProgram[] = R"mlir(
func.func @main(%a: tensor<3xbf16>) -> (tensor<3xbf16>, tensor<2x2xf32>) {
  %0 = stablehlo.multiply %a, %a : tensor<3xbf16>
  %1 = stablehlo.constant dense<2.5> : tensor<2x2xf32>
  return %0, %1 : tensor<3xbf16>, tensor<2x2xf32>
})mlir";
  // bf16 bits of 1.5, -3.0, 0.5.
  HostTensor input{ElementType::kBF16, {3}, std::string("\xC0\x3F\x40\xC0\x00\x3F", 6)};
  auto outputs = Library()->Interpret(kProgram, {input});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 2u);
  EXPECT_EQ((*outputs)[0].type, ElementType::kBF16);
  // 2.25 = 0x4010, 9.0 = 0x4110, 0.25 = 0x3E80.
  EXPECT_EQ((*outputs)[0].data, std::string("\x10\x40\x10\x41\x80\x3E", 6));
  EXPECT_EQ((*outputs)[1].dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Floats((*outputs)[1]), (std::vector<float>{2.5f, 2.5f, 2.5f, 2.5f}));
}

TEST(StablehloLibraryTest, InterpretBool) {
  ASSERT_NE(Library(), nullptr);
  constexpr char kProgram[] = R"mlir(
func.func @main(%a: tensor<4xi1>, %b: tensor<4xi1>, %x: tensor<4xf32>)
    -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = stablehlo.and %a, %b : tensor<4xi1>
  %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
  %1 = stablehlo.compare GT, %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
})mlir";
  HostTensor a{ElementType::kPred, {4}, std::string("\x01\x01\x00\x00", 4)};
  HostTensor b{ElementType::kPred, {4}, std::string("\x01\x00\x01\x00", 4)};
  auto outputs = Library()->Interpret(kProgram, {a, b, F32({4}, {1.0f, -1.0f, 0.0f, 3.0f})});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  ASSERT_EQ(outputs->size(), 2u);
  EXPECT_EQ((*outputs)[0].type, ElementType::kPred);
  EXPECT_EQ((*outputs)[0].data, std::string("\x01\x00\x00\x00", 4));
  EXPECT_EQ((*outputs)[1].data, std::string("\x01\x00\x00\x01", 4));
}

TEST(StablehloLibraryTest, InterpretChecksInputs) {
  ASSERT_NE(Library(), nullptr);
  auto count = Library()->Interpret(Testdata("add.mlir"), {F32({2}, {1, 2})});
  ASSERT_FALSE(count.ok());
  EXPECT_TRUE(Contains(count.status().message(), "main takes 2 arguments, 1 inputs given"));
  auto type = Library()->Interpret(Testdata("add.mlir"), {F32({3}, {1, 2, 3}), F32({2}, {1, 2})});
  ASSERT_FALSE(type.ok());
  EXPECT_TRUE(Contains(type.status().message(), "input 0 is tensor<3xf32>"))
      << type.status().ToString();
  HostTensor short_data = F32({2}, {1, 2});
  short_data.data.resize(5);
  auto size = Library()->Interpret(Testdata("add.mlir"), {short_data, F32({2}, {1, 2})});
  ASSERT_FALSE(size.ok());
  EXPECT_TRUE(Contains(size.status().message(), "has 5 bytes")) << size.status().ToString();
}

}  // namespace
}  // namespace stablehlo
}  // namespace pjrtkit
