// The xla_gpu device on a real GPU through OpenXLA's CUDA plugin: a client, and ahead-of-time
// compilation for a topology (compiled without the GPU, loaded and run on it). Skips, saying why,
// unless an NVIDIA GPU is present and PJRTKIT_XLA_GPU_PLUGIN names xla_cuda_plugin.so (CI has no
// GPU; tools/gpu/run_gpu_suite.sh runs this on a GPU machine).
#include <dirent.h>
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_topology_options.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/serialized_executable.h"

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

// Runs the 4-element add `loaded` on `client`'s device 0 and returns its result.
std::vector<float> RunAdd(Client* client, LoadedExecutable* loaded) {
  Device* device = client->devices()[0];
  const std::vector<float> a = {1, 2, 3, 4}, b = {0.5f, 0.25f, 0.125f, 0.0625f};
  std::vector<std::unique_ptr<Buffer>> args;
  for (const std::vector<float>* values : {&a, &b}) {
    HostBufferArgs h;
    h.data = values->data();
    h.type = ElementType::kF32;
    h.dims = {4};
    h.device = device;
    StatusOr<HostBufferResult> up = client->BufferFromHostBuffer(h);
    EXPECT_TRUE(up.ok()) << up.status().ToString();
    if (!up.ok()) return {};
    EXPECT_TRUE(up->done_with_host_buffer->Await().ok());
    args.push_back(std::move(up->buffer));
  }
  StatusOr<ExecuteResult> result =
      loaded->Execute({{args[0].get(), args[1].get()}}, ExecuteOptions());
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return {};
  std::vector<float> out(4);
  StatusOr<std::shared_ptr<Event>> copied =
      result->outputs[0][0]->ToHostBuffer(out.data(), out.size() * sizeof(float), nullptr);
  EXPECT_TRUE(copied.ok()) << copied.status().ToString();
  if (!copied.ok()) return {};
  EXPECT_TRUE((*copied)->Await().ok());
  return out;
}

// Client options that leave room for other processes on the GPU, plus `more`.
AttributeMap ClientOptions(AttributeMap more = {}) {
  more["memory_fraction"] = 0.2f;
  more["preallocate"] = false;
  return more;
}

class XlaGpuDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = WhyNoGpu();
    if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;
    StatusOr<std::unique_ptr<Client>> client = XlaGpuFactory::CreateClient(ClientOptions());
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

TEST_F(XlaGpuDeviceTest, ClientTopologyCarriesTheTargetConfig) {
  // What JAX reads for deviceless compilation (xc.get_topology_for_devices(...).target_config)
  // and passes back to PJRT_TopologyDescription_Create.
  StatusOr<const Topology*> topology = client_->topology();
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  const AttributeMap& attributes = (*topology)->attributes();
  ASSERT_EQ(attributes.count(kTargetConfigOption), 1u);
  EXPECT_NE(std::get<std::string>(attributes.at(kTargetConfigOption)).find("core_count"),
            std::string::npos);
  EXPECT_EQ(std::get<int64_t>(attributes.at("device_count")),
            static_cast<int64_t>(client_->devices().size()));
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

// Ahead of time: a topology of this machine's GPU (XLA:GPU asks the GPU for its target config),
// then one made from that target config alone (what a machine without a GPU does), a compile for
// it with no client, its bytes loaded by a client of one GPU and run.
TEST(XlaGpuAotTest, CompiledForATargetConfigLoadsAndRunsOnTheGpu) {
  const std::string why = WhyNoGpu();
  if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;
  StatusOr<std::unique_ptr<Topology>> local =
      XlaGpuFactory::CreateTopology("", {{kTopologyShapeOption, std::string("1x1x1")}});
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  ASSERT_EQ((*local)->devices().size(), 1u);
  const std::string kind = (*local)->devices()[0].kind();
  EXPECT_EQ(kind.find("NVIDIA"), 0u) << kind;
  ASSERT_EQ((*local)->attributes().count(kTargetConfigOption), 1u);
  const std::string target_config =
      std::get<std::string>((*local)->attributes().at(kTargetConfigOption));
  ASSERT_FALSE(target_config.empty());
  std::printf("[ target_config of %s ]\n%s[ end target_config ]\n", kind.c_str(),
              target_config.c_str());

  StatusOr<std::unique_ptr<Topology>> topology = XlaGpuFactory::CreateTopology(
      "aot", {{kTopologyShapeOption, std::string("1x1x1")},
              {kTargetConfigOption, target_config}});
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  ASSERT_EQ((*topology)->devices().size(), 1u);
  EXPECT_EQ((*topology)->devices()[0].kind(), kind);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::shared_ptr<Executable>> aot = (*topology)->Compile(
      Program{"mlir", kAdd}, plugin_wrapper::MinimalCompileOptions(1, 1, false), nullptr);
  ASSERT_TRUE(aot.ok()) << aot.status().ToString();
  const double compile_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ((*aot)->name(), "add");
  StatusOr<std::string> bytes = (*aot)->Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  StatusOr<plugin_wrapper::SerializedExecutable> parsed =
      plugin_wrapper::SerializedExecutable::Decode(*bytes, "xla_gpu", "XLA:GPU", "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->device_count(), 1);
  std::printf("[ aot ] compiled for %s without a client in %.3f s: %zu bytes\n", kind.c_str(),
              compile_s, bytes->size());
  aot->reset();  // The bytes are all that travels.
  topology->reset();

  StatusOr<std::unique_ptr<Client>> client =
      XlaGpuFactory::CreateClient(ClientOptions({{"visible_devices", std::vector<int64_t>{0}}}));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      (*client)->DeserializeAndLoad(*bytes, std::nullopt);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->executable()->name(), "add");
  EXPECT_EQ(RunAdd(client->get(), loaded->get()),
            (std::vector<float>{1.5f, 2.25f, 3.125f, 4.0625f}));
}

}  // namespace
}  // namespace xla_gpu
}  // namespace pjrtkit
