// XlaGpuFactory on the fake CUDA plugin (testing/fake_cuda_plugin.cc): the client, its device
// model, the options XLA:GPU gets, memory statistics and errors, on a machine without a GPU.
#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"

#include <limits.h>
#include <stdlib.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace xla_gpu {
namespace {

// Absolute path of the fake plugin in the test's runfiles.
std::string FakePluginPath() {
  const char* srcdir = getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return "";
  const std::string candidate =
      std::string(srcdir) + "/pjrtkit/xla_plugin/devices/xla_gpu/testing/fake_cuda_plugin.so";
  char resolved[PATH_MAX];
  return realpath(candidate.c_str(), resolved) != nullptr ? resolved : "";
}

// Options naming the fake plugin, plus `more`.
AttributeMap FakeOptions(AttributeMap more = {}) {
  more["xla_gpu_plugin_path"] = FakePluginPath();
  return more;
}

// A client on the fake plugin; a test failure and nullptr on error.
std::unique_ptr<Client> CreateFakeClient(AttributeMap more = {}) {
  StatusOr<std::unique_ptr<Client>> client = XlaGpuFactory::CreateClient(FakeOptions(more));
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return client.ok() ? std::move(client).value() : nullptr;
}

TEST(XlaGpuFactoryTest, FakePluginIsInRunfiles) { EXPECT_FALSE(FakePluginPath().empty()); }

TEST(XlaGpuFactoryTest, DevicesKeepTheGpusKindAndAttributes) {
  std::unique_ptr<Client> client = CreateFakeClient();
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->platform_name(), "pjrtkit");
  EXPECT_EQ(client->platform_version(),
            "pjrtkit 0.1.0 (xla_gpu) fake-cuda 13.0 [platform_name=cuda]");
  ASSERT_EQ(client->devices().size(), 2u);
  for (int id = 0; id < 2; ++id) {
    Device* device = client->devices()[id];
    const DeviceDescription& d = device->description();
    EXPECT_EQ(d.id(), id);
    EXPECT_EQ(d.kind(), "NVIDIA H200");
    EXPECT_EQ(d.debug_string(), "PJRTKIT_" + std::to_string(id));
    EXPECT_EQ(d.to_string(),
              "PjrtkitDevice(id=" + std::to_string(id) + ", process_index=0, kind=NVIDIA H200)");
    EXPECT_EQ(std::get<std::string>(d.attributes().at("backend")), "xla_gpu");
    EXPECT_EQ(std::get<std::string>(d.attributes().at("compute_capability")), "9.0");
    EXPECT_EQ(std::get<int64_t>(d.attributes().at("core_count")), 132);
    EXPECT_EQ(std::get<std::string>(d.attributes().at("device_vendor")), "NVIDIA Corporation");
    EXPECT_EQ(device->local_hardware_id(), id);
    ASSERT_EQ(device->memories().size(), 2u);
    EXPECT_EQ(device->default_memory()->kind(), "device");
    EXPECT_EQ(device->memories()[1]->kind(), "pinned_host");
    EXPECT_EQ(device->default_memory()->debug_string(),
              "PJRTKIT_" + std::to_string(id) + ":device");
  }
}

TEST(XlaGpuFactoryTest, GivenOptionsReachXlaGpu) {
  AttributeMap more;
  more["allocator"] = std::string("bfc");
  more["memory_fraction"] = 0.5f;
  more["preallocate"] = false;
  more["visible_devices"] = std::vector<int64_t>{3};
  std::unique_ptr<Client> client = CreateFakeClient(more);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->platform_version(),
            "pjrtkit 0.1.0 (xla_gpu) fake-cuda 13.0 [allocator=bfc;memory_fraction=0.5;"
            "platform_name=cuda;preallocate=false;visible_devices=3]");
  ASSERT_EQ(client->devices().size(), 1u);
  EXPECT_EQ(client->devices()[0]->description().id(), 0);
  EXPECT_EQ(client->devices()[0]->local_hardware_id(), 3);  // XLA:GPU's ordinal.
}

TEST(XlaGpuFactoryTest, MemoryStatisticsAreXlaGpusAllocators) {
  std::unique_ptr<Client> client = CreateFakeClient();
  ASSERT_NE(client, nullptr);
  StatusOr<MemoryStats> stats = client->devices()[1]->GetMemoryStats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->bytes_in_use, 2 << 20);
  EXPECT_EQ(stats->peak_bytes_in_use, std::optional<int64_t>(3 << 20));
  EXPECT_EQ(stats->num_allocs, std::optional<int64_t>(7));
  EXPECT_EQ(stats->bytes_limit, std::optional<int64_t>(int64_t{140} << 30));
  EXPECT_FALSE(stats->pool_bytes.has_value());
  EXPECT_FALSE(stats->bytes_reserved.has_value());
}

TEST(XlaGpuFactoryTest, TheClientsTopologyIsItsDevices) {
  std::unique_ptr<Client> client = CreateFakeClient();
  ASSERT_NE(client, nullptr);
  StatusOr<const Topology*> topology = client->topology();
  ASSERT_TRUE(topology.ok());
  EXPECT_EQ((*topology)->platform_version(), client->platform_version());
  ASSERT_EQ((*topology)->devices().size(), 2u);
  EXPECT_EQ((*topology)->devices()[1].kind(), "NVIDIA H200");
}

TEST(XlaGpuFactoryTest, InnerErrorsNameXlaGpu) {
  AttributeMap more;
  more["visible_devices"] = std::vector<int64_t>{9};
  StatusOr<std::unique_ptr<Client>> client = XlaGpuFactory::CreateClient(FakeOptions(more));
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client.status().message(),
            "XLA:GPU PJRT_Client_Create: visible_devices: GPU 9 does not exist");
}

TEST(XlaGpuFactoryTest, ABadPathNamesTheOptionAndXlaGpu) {
  AttributeMap options;
  options["xla_gpu_plugin_path"] = std::string("/nonexistent/xla_cuda_plugin.so");
  StatusOr<std::unique_ptr<Client>> client = XlaGpuFactory::CreateClient(options);
  EXPECT_EQ(client.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(client.status().message().find(
                "create option 'xla_gpu_plugin_path' ('/nonexistent/xla_cuda_plugin.so'): "
                "cannot load the XLA:GPU plugin: /nonexistent/xla_cuda_plugin.so: cannot open "
                "shared object file"),
            0u)
      << client.status().message();
  options["xla_gpu_plugin_path"] = std::string("xla_cuda_plugin.so");
  EXPECT_EQ(XlaGpuFactory::CreateClient(options).status().message(),
            "create option 'xla_gpu_plugin_path' ('xla_cuda_plugin.so') must be the absolute "
            "path of OpenXLA's XLA:GPU PJRT plugin (xla_cuda_plugin.so)");
}

TEST(XlaGpuFactoryTest, WithoutAPathTheEnvironmentVariableIsUsed) {
  ASSERT_EQ(setenv(kPluginPathEnv, FakePluginPath().c_str(), 1), 0);
  StatusOr<std::unique_ptr<Client>> client = XlaGpuFactory::CreateClient({});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->devices().size(), 2u);
  unsetenv(kPluginPathEnv);
  StatusOr<std::unique_ptr<Client>> missing = XlaGpuFactory::CreateClient({});
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(missing.status().message().find(
                "the xla_gpu device needs OpenXLA's CUDA PJRT plugin (xla_cuda_plugin.so, from "
                "the jax-cuda13-pjrt or jax-cuda12-pjrt wheel): pass its absolute path as create "
                "option 'xla_gpu_plugin_path' or install it beside pjrtkit (looked in "
                "PJRTKIT_XLA_GPU_PLUGIN (unset); "),
            0u)
      << missing.status().message();
}

TEST(XlaGpuFactoryTest, TopologiesNeedTheCudaPluginToo) {
  // Topologies are XLA:GPU's (xla_gpu_topology_test); without the plugin there is none.
  unsetenv(kPluginPathEnv);
  StatusOr<std::unique_ptr<Topology>> topology = XlaGpuFactory::CreateTopology("", {});
  EXPECT_EQ(topology.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(topology.status().message().find(
                "the xla_gpu device needs OpenXLA's CUDA PJRT plugin (xla_cuda_plugin.so, "),
            0u)
      << topology.status().message();
}

TEST(XlaGpuFactoryTest, PluginAttributesAreTheCudaPlugins) {
  AttributeMap attributes = XlaGpuFactory::PluginAttributes();
  ASSERT_EQ(attributes.size(), 4u);
  EXPECT_EQ(std::get<int64_t>(attributes.at("xla_version")), 2);
  EXPECT_EQ(std::get<std::vector<int64_t>>(attributes.at("stablehlo_current_version")),
            (std::vector<int64_t>{1, 20, 0}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(attributes.at("stablehlo_minimum_version")),
            (std::vector<int64_t>{0, 9, 0}));
  EXPECT_EQ(std::get<std::string>(attributes.at("pjrtkit_version")), "0.1.0");
}

}  // namespace
}  // namespace xla_gpu
}  // namespace pjrtkit
