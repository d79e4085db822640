// Ahead-of-time compilation for an NVIDIA H200 with the real CUDA plugin on a machine without a
// GPU: XLA:GPU's deviceless compilation through XlaGpuFactory::CreateTopology and
// DevicelessTopology::Compile, for the target config in testdata/. Skips, saying why, unless
// PJRTKIT_XLA_GPU_PLUGIN names xla_cuda_plugin.so (jax-cuda13-pjrt 0.11.2; not installed in CI):
//   bazel test //xla_plugin/devices/xla_gpu:xla_gpu_deviceless_test \
//     --test_env=PJRTKIT_XLA_GPU_PLUGIN=/path/to/jax_plugins/xla_cuda13/xla_cuda_plugin.so
// xla_gpu_device_test loads and runs such an executable on a GPU.
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_options.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_topology_options.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/serialized_executable.h"

namespace pjrtkit {
namespace xla_gpu {
namespace {

using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::SerializedExecutable;

constexpr char kAdd[] =
    "module @add { func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> { "
    "%0 = stablehlo.add %a, %b : tensor<4xf32> return %0 : tensor<4xf32> } }";

// The CUDA plugin's path, or empty when PJRTKIT_XLA_GPU_PLUGIN is unset.
std::string PluginPath() {
  const char* path = getenv(kPluginPathEnv);
  return path == nullptr ? "" : path;
}

// testdata/h200_target_config.txtpb from the runfiles; empty (and a test failure) when missing.
std::string H200TargetConfig() {
  const char* srcdir = getenv("TEST_SRCDIR");
  const std::string path = std::string(srcdir == nullptr ? "." : srcdir) +
                           "/pjrtkit/xla_plugin/devices/xla_gpu/testdata/h200_target_config.txtpb";
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << path;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// True when this machine has an NVIDIA GPU.
bool HasGpu() {
  struct stat info;
  return stat("/proc/driver/nvidia/gpus", &info) == 0;
}

class XlaGpuDevicelessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PluginPath().empty()) {
      GTEST_SKIP() << "needs OpenXLA's CUDA plugin (xla_cuda_plugin.so from jax-cuda13-pjrt "
                      "0.11.2): " << kPluginPathEnv << " is unset";
    }
  }

  // A topology of `shape` for the H200 target config; a test failure and nullptr on error.
  std::unique_ptr<Topology> H200Topology(const std::string& shape) {
    StatusOr<std::unique_ptr<Topology>> topology = XlaGpuFactory::CreateTopology(
        "h200", {{kTopologyShapeOption, shape}, {kTargetConfigOption, H200TargetConfig()}});
    EXPECT_TRUE(topology.ok()) << topology.status().ToString();
    return topology.ok() ? std::move(topology).value() : nullptr;
  }
};

TEST_F(XlaGpuDevicelessTest, TheTopologyIsTheTargetConfigsGpus) {
  std::unique_ptr<Topology> topology = H200Topology("1x1x2");
  ASSERT_NE(topology, nullptr);
  EXPECT_EQ(topology->platform_name(), "pjrtkit");
  EXPECT_EQ(topology->platform_version(), "pjrtkit 0.1.0 (xla_gpu) NVIDIA H200");
  ASSERT_EQ(topology->devices().size(), 2u);
  for (int id = 0; id < 2; ++id) {
    const DeviceDescription& d = topology->devices()[id];
    EXPECT_EQ(d.id(), id);
    EXPECT_EQ(d.kind(), "NVIDIA H200");
    EXPECT_EQ(d.debug_string(), "PJRTKIT_" + std::to_string(id));
    EXPECT_EQ(std::get<std::string>(d.attributes().at("backend")), "xla_gpu");
    EXPECT_EQ(std::get<std::string>(d.attributes().at("compute_capability")), "9.0");
    EXPECT_EQ(std::get<int64_t>(d.attributes().at("core_count")), 132);
  }
  EXPECT_EQ(std::get<int64_t>(topology->attributes().at("device_count")), 2);
  EXPECT_NE(std::get<std::string>(topology->attributes().at("target_config")).find("core_count"),
            std::string::npos);
  EXPECT_NE(std::get<std::string>(topology->attributes().at("host_target_machine_options"))
                .find("x86_64"),
            std::string::npos);
}

TEST_F(XlaGpuDevicelessTest, CompilesForTheGpuWithoutOne) {
  std::unique_ptr<Topology> topology = H200Topology("1x1x2");
  ASSERT_NE(topology, nullptr);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::shared_ptr<Executable>> executable =
      topology->Compile(Program{"mlir", kAdd}, MinimalCompileOptions(1, 1, false), nullptr);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Executable& aot = **executable;
  EXPECT_EQ(aot.name(), "add");
  EXPECT_EQ(aot.num_replicas(), 1);
  EXPECT_EQ(aot.num_partitions(), 1);
  EXPECT_EQ(aot.num_outputs(), 1u);
  EXPECT_EQ(aot.output_element_types().value(), std::vector<ElementType>{ElementType::kF32});
  EXPECT_EQ(aot.output_dimensions().value(), (std::vector<std::vector<int64_t>>{{4}}));
  StatusOr<std::string> fingerprint = aot.fingerprint();
  ASSERT_TRUE(fingerprint.ok()) << fingerprint.status().ToString();
  EXPECT_FALSE(fingerprint->empty());
  StatusOr<Program> optimized = aot.optimized_program();
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  EXPECT_FALSE(optimized->code.empty());
  StatusOr<std::string> bytes = aot.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  StatusOr<SerializedExecutable> parsed =
      SerializedExecutable::Decode(*bytes, "xla_gpu", "XLA:GPU", "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->device_count(), 2);
  ASSERT_FALSE(parsed->inner().empty());
  EXPECT_NE(parsed->inner()[0], '\0');  // XLA:GPU's bytes, as a client's executable has them.
  std::printf("[ deviceless ] compiled for an H200 without a GPU in %.3f s: %zu bytes\n", seconds,
              bytes->size());
}

TEST_F(XlaGpuDevicelessTest, XlaGpusErrorsComeBack) {
  StatusOr<std::unique_ptr<Topology>> topology = XlaGpuFactory::CreateTopology(
      "", {{kTopologyShapeOption, std::string("1x1x1")},
           {kTargetConfigOption, std::string("gpu_device_info { nonsense: 1 }")}});
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().message(),
            "XLA:GPU PJRT_TopologyDescription_Create: Failed to parse GpuTargetConfigProto from "
            "the 'target_config' parameter.");
  if (!HasGpu()) {
    // Without a target config XLA:GPU asks the machine's GPU.
    topology = XlaGpuFactory::CreateTopology("", {{kTopologyShapeOption, std::string("1x1x1")}});
    ASSERT_FALSE(topology.ok());
    EXPECT_EQ(topology.status().message().rfind("XLA:GPU PJRT_TopologyDescription_Create: ", 0),
              0u)
        << topology.status().message();
  }
  std::unique_ptr<Topology> h200 = H200Topology("1x1x1");
  ASSERT_NE(h200, nullptr);
  StatusOr<std::shared_ptr<Executable>> executable = h200->Compile(
      Program{"mlir", "module @broken {"}, MinimalCompileOptions(1, 1, false), nullptr);
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().message().rfind("XLA:GPU PJRT_Compile: ", 0), 0u)
      << executable.status().message();
}

}  // namespace
}  // namespace xla_gpu
}  // namespace pjrtkit
