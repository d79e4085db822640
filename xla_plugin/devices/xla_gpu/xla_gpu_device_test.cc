// The xla_gpu device on a real GPU through OpenXLA's CUDA plugin. Skips, saying why, unless an
// NVIDIA GPU is present and PJRTKIT_XLA_GPU_PLUGIN names xla_cuda_plugin.so (CI has no GPU;
// tools/gpu/run_gpu_suite.sh runs this on a GPU machine).
#include <dirent.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"

namespace pjrtkit {
namespace xla_gpu {
namespace {

constexpr char kAdd[] =
    "module @add { func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> { "
    "%0 = stablehlo.add %a, %b : tensor<4xf32> return %0 : tensor<4xf32> } }";

// Why the test cannot run here, or empty when it can.
std::string WhyNoGpu() {
  const char* plugin = getenv(kPluginPathEnv);
  if (plugin == nullptr || plugin[0] == '\0') {
    return std::string(kPluginPathEnv) + " is unset (it names xla_cuda_plugin.so)";
  }
  DIR* gpus = opendir("/proc/driver/nvidia/gpus");
  if (gpus == nullptr) return "no NVIDIA driver (/proc/driver/nvidia/gpus is missing)";
  int count = 0;
  while (dirent* entry = readdir(gpus)) count += entry->d_name[0] != '.';
  closedir(gpus);
  return count > 0 ? "" : "no NVIDIA GPU (/proc/driver/nvidia/gpus is empty)";
}

class XlaGpuDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = WhyNoGpu();
    if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;
    AttributeMap options;
    options["memory_fraction"] = 0.2f;
    options["preallocate"] = false;
    StatusOr<std::unique_ptr<Client>> client = XlaGpuFactory::CreateClient(options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }

  std::unique_ptr<Client> client_;
};

TEST_F(XlaGpuDeviceTest, DevicesAreTheGpus) {
  ASSERT_GE(client_->devices().size(), 1u);
  EXPECT_EQ(client_->platform_name(), "pjrtkit");
  EXPECT_EQ(client_->platform_version().find("pjrtkit 0.1.0 (xla_gpu) "), 0u);
  for (Device* device : client_->devices()) {
    const DeviceDescription& d = device->description();
    EXPECT_EQ(d.kind().find("NVIDIA"), 0u) << d.kind();
    EXPECT_EQ(std::get<std::string>(d.attributes().at("backend")), "xla_gpu");
    ASSERT_EQ(d.attributes().count("compute_capability"), 1u);
    ASSERT_EQ(d.attributes().count("core_count"), 1u);
    EXPECT_GT(std::get<int64_t>(d.attributes().at("core_count")), 0);
    std::printf("[ device ] %s: %s, compute_capability %s, core_count %ld\n",
                d.debug_string().c_str(), d.kind().c_str(),
                std::get<std::string>(d.attributes().at("compute_capability")).c_str(),
                static_cast<long>(std::get<int64_t>(d.attributes().at("core_count"))));
    StatusOr<MemoryStats> stats = device->GetMemoryStats();
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    ASSERT_TRUE(stats->bytes_limit.has_value());
    EXPECT_GT(*stats->bytes_limit, 0);
  }
}

TEST_F(XlaGpuDeviceTest, CompilesRunsAndCopiesBothWays) {
  Device* device = client_->devices()[0];
  const std::vector<float> a = {1, 2, 3, 4}, b = {0.5f, 0.25f, 0.125f, 0.0625f};
  std::vector<std::unique_ptr<Buffer>> args;
  for (const std::vector<float>* values : {&a, &b}) {
    HostBufferArgs h;
    h.data = values->data();
    h.type = ElementType::kF32;
    h.dims = {4};
    h.device = device;
    StatusOr<HostBufferResult> up = client_->BufferFromHostBuffer(h);
    ASSERT_TRUE(up.ok()) << up.status().ToString();
    ASSERT_TRUE(up->done_with_host_buffer->Await().ok());
    args.push_back(std::move(up->buffer));
  }
  EXPECT_EQ(args[0]->memory()->kind(), "device");
  EXPECT_FALSE(args[0]->IsOnCpu());
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      client_->Compile(Program{"mlir", kAdd}, plugin_wrapper::MinimalCompileOptions(1, 1, false));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  StatusOr<ExecuteResult> result =
      (*loaded)->Execute({{args[0].get(), args[1].get()}}, ExecuteOptions());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  std::vector<float> out(4);
  StatusOr<std::shared_ptr<Event>> copied =
      result->outputs[0][0]->ToHostBuffer(out.data(), out.size() * sizeof(float), nullptr);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  ASSERT_TRUE((*copied)->Await().ok());
  EXPECT_EQ(out, (std::vector<float>{1.5f, 2.25f, 3.125f, 4.0625f}));
}

}  // namespace
}  // namespace xla_gpu
}  // namespace pjrtkit
