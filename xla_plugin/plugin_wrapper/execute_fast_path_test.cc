// The execution hot path of the reference device: output metadata read once per executable and
// device, outputs of a finished execution known ready, donation asked about only where the
// program can donate; and its helpers OutputInfoCache and InlineVector.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/inline_vector.h"
#include "xla_plugin/plugin_wrapper/output_info_cache.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_buffer.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::InlineVector;
using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::OutputInfoCache;
using ::pjrtkit::plugin_wrapper::WrappedBuffer;
using ::pjrtkit::plugin_wrapper::WrappedBufferInfo;
using ::pjrtkit::plugin_wrapper::WrappedClient;
namespace {

using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::Download;
using ::pjrtkit::xla_cpu::testing::Upload;

constexpr char kAddAndNegate[] =
    "module @two { func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, "
    "tensor<2xi32>) { %0 = stablehlo.add %a, %b : tensor<2xf32> "
    "%1 = stablehlo.convert %a : (tensor<2xf32>) -> tensor<2xi32> "
    "return %0, %1 : tensor<2xf32>, tensor<2xi32> } }";

TEST(ExecuteFastPathTest, OutputsShareMetadataAndAreKnownReady) {
  std::unique_ptr<Client> client = CreateTestClient(2);
  ASSERT_NE(client, nullptr);
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client->Compile(Program{"mlir", kAddAndNegate}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  Device* device = client->devices()[0];
  std::unique_ptr<Buffer> a = Upload(client.get(), ElementType::kF32, std::vector<float>{1, 2},
                                     {2}, device);
  std::unique_ptr<Buffer> b = Upload(client.get(), ElementType::kF32, std::vector<float>{3, 4},
                                     {2}, device);
  ExecuteOptions options;
  options.want_completion_events = true;
  std::vector<ExecuteResult> results;
  for (int run = 0; run < 3; ++run) {
    StatusOr<ExecuteResult> result = (*loaded)->Execute({{a.get(), b.get()}}, options);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_EQ(result->outputs.size(), 1u);
    ASSERT_EQ(result->outputs[0].size(), 2u);
    results.push_back(std::move(result).value());
  }
  const std::shared_ptr<Event>& ready =
      static_cast<WrappedClient*>(client.get())->inner().ready_event();
  for (const ExecuteResult& result : results) {
    auto* sum = static_cast<WrappedBuffer*>(result.outputs[0][0].get());
    auto* converted = static_cast<WrappedBuffer*>(result.outputs[0][1].get());
    // Every run's outputs share the metadata the first run read.
    EXPECT_EQ(sum->info().get(),
              static_cast<WrappedBuffer*>(results[0].outputs[0][0].get())->info().get());
    EXPECT_EQ(converted->info().get(),
              static_cast<WrappedBuffer*>(results[0].outputs[0][1].get())->info().get());
    EXPECT_EQ(sum->element_type(), ElementType::kF32);
    EXPECT_EQ(converted->element_type(), ElementType::kS32);
    EXPECT_EQ(converted->dimensions(), (std::vector<int64_t>{2}));
    EXPECT_EQ(sum->device(), device);
    EXPECT_EQ(sum->memory(), device->default_memory());
    ASSERT_EQ(result.completion.size(), 1u);
    ASSERT_TRUE(result.completion[0]->Await().ok());
    // XLA:CPU runs a program this small inline: it has finished when Execute returns, so the
    // completion event is the shared ready one and so are the outputs' ready events.
    EXPECT_EQ(result.completion[0], ready);
    EXPECT_EQ(sum->ReadyEvent(), ready);
    EXPECT_EQ(Download<float>(sum, 2), (std::vector<float>{4, 6}));
    EXPECT_EQ(Download<int32_t>(converted, 2), (std::vector<int32_t>{1, 2}));
  }
  // Another device reads (and remembers) its own metadata.
  Device* other = client->devices()[1];
  std::unique_ptr<Buffer> c = Upload(client.get(), ElementType::kF32, std::vector<float>{5, 6},
                                     {2}, other);
  ExecuteOptions on_other;
  on_other.execute_device = other;
  StatusOr<std::unique_ptr<LoadedExecutable>> portable =
      client->Compile(Program{"mlir", kAddAndNegate}, MinimalCompileOptions(1, 1, true));
  ASSERT_TRUE(portable.ok()) << portable.status().ToString();
  for (Device* target : {device, other}) {
    ExecuteOptions run;
    run.execute_device = target;
    Buffer* arg = target == other ? c.get() : a.get();
    StatusOr<ExecuteResult> result = (*portable)->Execute({{arg, arg}}, run);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->outputs[0][0]->device(), target);
    EXPECT_EQ(result->outputs[0][0]->memory(), target->default_memory());
  }
}

TEST(ExecuteFastPathTest, DonatedArgumentsAreSeenDeleted) {
  std::unique_ptr<Client> client = CreateTestClient(1);
  ASSERT_NE(client, nullptr);
  const char* kDonating =
      "module @donating { func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32> "
      "{tf.aliasing_output = 0 : i32}) -> tensor<2xf32> { %0 = stablehlo.add %a, %b : "
      "tensor<2xf32> return %0 : tensor<2xf32> } }";
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client->Compile(Program{"mlir", kDonating}, MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  Device* device = client->devices()[0];
  std::unique_ptr<Buffer> a = Upload(client.get(), ElementType::kF32, std::vector<float>{1, 2},
                                     {2}, device);
  std::unique_ptr<Buffer> b = Upload(client.get(), ElementType::kF32, std::vector<float>{3, 4},
                                     {2}, device);
  StatusOr<MemoryStats> before = device->GetMemoryStats();
  ASSERT_TRUE(before.ok());
  StatusOr<ExecuteResult> result = (*loaded)->Execute({{a.get(), b.get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(a->IsDeleted());
  EXPECT_TRUE(b->IsDeleted());  // Its memory became the output.
  StatusOr<MemoryStats> after = device->GetMemoryStats();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->bytes_in_use, before->bytes_in_use);  // -8 (b) +8 (the output).
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{4, 6}));
  // Not donated when the caller says so.
  std::unique_ptr<Buffer> d = Upload(client.get(), ElementType::kF32, std::vector<float>{1, 1},
                                     {2}, device);
  ExecuteOptions keep;
  keep.non_donatable_input_indices = {1};
  result = (*loaded)->Execute({{a.get(), d.get()}}, keep);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(d->IsDeleted());
  EXPECT_EQ(Download<float>(result->outputs[0][0].get(), 2), (std::vector<float>{2, 3}));
}

TEST(OutputInfoCacheTest, FirstRecordWins) {
  OutputInfoCache cache(2);
  EXPECT_EQ(cache.Find(0), nullptr);
  EXPECT_EQ(cache.Find(2), nullptr);
  EXPECT_EQ(cache.Find(-1), nullptr);
  auto first = std::make_shared<WrappedBufferInfo>();
  first->dims = {7};
  cache.Remember(1, {first});
  auto second = std::make_shared<WrappedBufferInfo>();
  cache.Remember(1, {second});
  cache.Remember(5, {second});  // Out of range: ignored.
  ASSERT_NE(cache.Find(1), nullptr);
  ASSERT_EQ(cache.Find(1)->size(), 1u);
  EXPECT_EQ((*cache.Find(1))[0].get(), first.get());
  EXPECT_EQ(cache.Find(0), nullptr);
}

TEST(InlineVectorTest, SpillsToTheHeapPastN) {
  InlineVector<int64_t, 2> values;
  EXPECT_TRUE(values.empty());
  for (int64_t i = 0; i < 5; ++i) values.push_back(i * 10);
  EXPECT_EQ(std::vector<int64_t>(values.begin(), values.end()),
            (std::vector<int64_t>{0, 10, 20, 30, 40}));
  InlineVector<int64_t, 2> sized(3);
  for (size_t i = 0; i < sized.size(); ++i) sized[i] = static_cast<int64_t>(i) + 1;
  sized.push_back(9);
  EXPECT_EQ(std::vector<int64_t>(sized.begin(), sized.end()), (std::vector<int64_t>{1, 2, 3, 9}));
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
