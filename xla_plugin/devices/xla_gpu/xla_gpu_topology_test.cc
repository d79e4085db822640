// Ahead-of-time compilation on the xla_gpu device without a GPU (XlaGpuFactory::CreateTopology,
// DevicelessTopology) on the fake CUDA plugin (testing/fake_cuda_plugin.cc): the options checked
// and passed on, the topology's devices and attributes, what PJRT_Compile gets, the serialized
// format a client reads, errors and lifetimes.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_factory.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_options.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_topology_options.h"
#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/deviceless_topology.h"
#include "xla_plugin/plugin_wrapper/serialized_executable.h"

namespace pjrtkit {
namespace xla_gpu {
namespace {

using ::pjrtkit::plugin_wrapper::DevicelessTopology;
using ::pjrtkit::plugin_wrapper::MinimalCompileOptions;
using ::pjrtkit::plugin_wrapper::NormalizeCompileOptions;
using ::pjrtkit::plugin_wrapper::SerializedExecutable;

constexpr char kAdd[] =
    "module @add { func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> { "
    "%0 = stablehlo.add %a, %b : tensor<2xf32> return %0 : tensor<2xf32> } }";

constexpr char kTargetConfig[] =
    "gpu_device_info { core_count: 132 cuda_compute_capability { major: 9 } }\n"
    "platform_name: \"CUDA\"\ndevice_description_str: \"NVIDIA H200\"\n";

// Absolute path of the fake plugin in the test's runfiles.
std::string FakePluginPath() {
  const char* srcdir = getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return "";
  const std::string candidate =
      std::string(srcdir) + "/pjrtkit/xla_plugin/devices/xla_gpu/testing/fake_cuda_plugin.so";
  char resolved[PATH_MAX];
  return realpath(candidate.c_str(), resolved) != nullptr ? resolved : "";
}

// The fake's count of live topologies and executables.
std::pair<int, int> LiveObjects() {
  void* handle = dlopen(FakePluginPath().c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) return {-1, -1};
  using Fn = void (*)(int*, int*);
  auto fn = reinterpret_cast<Fn>(dlsym(handle, "FakeCudaPluginLiveObjects"));
  int topologies = -1, executables = -1;
  if (fn != nullptr) fn(&topologies, &executables);
  dlclose(handle);
  return {topologies, executables};
}

// Options naming the fake plugin, a 1x1x2 topology and kTargetConfig, plus `more`.
AttributeMap TopologyOptions(AttributeMap more = {}) {
  more.emplace(kPluginPathOption, FakePluginPath());
  more.emplace(kTopologyShapeOption, std::string("1x1x2"));
  more.emplace(kTargetConfigOption, std::string(kTargetConfig));
  return more;
}

// A topology on the fake plugin; a test failure and nullptr on error.
std::unique_ptr<DevicelessTopology> MakeTopology(AttributeMap options = TopologyOptions(),
                                                 const std::string& name = "h200") {
  StatusOr<std::unique_ptr<Topology>> topology = XlaGpuFactory::CreateTopology(name, options);
  EXPECT_TRUE(topology.ok()) << topology.status().ToString();
  if (!topology.ok()) return nullptr;
  return std::unique_ptr<DevicelessTopology>(
      static_cast<DevicelessTopology*>(topology->release()));
}

// Compile of kAdd on `topology`; a test failure and nullptr on error.
std::shared_ptr<Executable> CompileAdd(const Topology& topology, Client* client = nullptr,
                                       const std::string& options = MinimalCompileOptions(1, 1,
                                                                                          false)) {
  StatusOr<std::shared_ptr<Executable>> executable =
      topology.Compile(Program{"mlir", kAdd}, options, client);
  EXPECT_TRUE(executable.ok()) << executable.status().ToString();
  return executable.ok() ? std::move(executable).value() : nullptr;
}

// The message of `status`'s error for options `options`.
std::string ParseError(const AttributeMap& options) {
  StatusOr<XlaGpuTopologyOptions> parsed = XlaGpuTopologyOptions::Parse(options);
  EXPECT_FALSE(parsed.ok());
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  return parsed.status().message();
}

TEST(XlaGpuTopologyOptionsTest, KnownOptionsAreCheckedOthersPassedOn) {
  StatusOr<XlaGpuTopologyOptions> parsed = XlaGpuTopologyOptions::Parse(
      {{"xla_gpu_plugin_path", std::string("/p/xla_cuda_plugin.so")},
       {"topology", std::string("2x1x4")},
       {"target_config", std::string(kTargetConfig)},
       {"host_target_machine_options", std::string("cpu: \"znver4\"")},
       {"something_newer", int64_t{3}}});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->plugin_path(), "/p/xla_cuda_plugin.so");
  EXPECT_EQ(parsed->device_count(), 8);
  EXPECT_EQ(parsed->inner_options(),
            (AttributeMap{{"topology", std::string("2x1x4")},
                          {"target_config", std::string(kTargetConfig)},
                          {"host_target_machine_options", std::string("cpu: \"znver4\"")},
                          {"something_newer", int64_t{3}}}));
  // Nothing given: XLA:GPU asks the machine's GPUs.
  parsed = XlaGpuTopologyOptions::Parse({});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->device_count(), 0);
  EXPECT_TRUE(parsed->inner_options().empty());
}

TEST(XlaGpuTopologyOptionsTest, BadValuesNameTheOption) {
  const std::string shape =
      "topology create option 'topology' must be '<partitions>x<hosts per partition>x<GPUs per "
      "host>' of numbers >= 1 (e.g. '1x1x8') with at most 65536 GPUs in all, got ";
  for (const char* bad : {"", "8", "1x8", "1x1x8x1", "1xx8", "x1x8", "1x1x", "0x1x8", "1x1x-8",
                          "a100", "1x1x65537", "256x256x2", "1x1x99999999999999999999"}) {
    EXPECT_EQ(ParseError({{"topology", std::string(bad)}}), shape + "'" + bad + "'") << bad;
  }
  EXPECT_EQ(ParseError({{"topology", int64_t{8}}}),
            "topology create option 'topology' must be a string, got a value of another type");
  EXPECT_EQ(ParseError({{"target_config", true}, {"topology", std::string("1x1x1")}}),
            "topology create option 'target_config' must be a string, got a value of another "
            "type");
  EXPECT_EQ(ParseError({{"target_config", std::string()}, {"topology", std::string("1x1x1")}}),
            "topology create option 'target_config' must be a "
            "stream_executor.GpuTargetConfigProto in text format, got an empty string");
  EXPECT_EQ(ParseError({{"target_config", std::string(kTargetConfig)}}),
            "topology create option 'target_config' needs 'topology' too (e.g. "
            "topology='1x1x1'): XLA:GPU takes the GPU count from it when it compiles for a "
            "target config instead of the machine's GPUs");
  EXPECT_EQ(ParseError({{"host_target_machine_options", int64_t{1}}}),
            "topology create option 'host_target_machine_options' must be a string, got a value "
            "of another type");
  EXPECT_EQ(ParseError({{"xla_gpu_plugin_path", int64_t{1}}}),
            "topology create option 'xla_gpu_plugin_path' must be a string, got a value of "
            "another type");
}

TEST(XlaGpuTopologyTest, DevicesAndAttributesAreTheInnerTopologys) {
  std::unique_ptr<DevicelessTopology> topology =
      MakeTopology(TopologyOptions({{"something_newer", int64_t{3}}}), "any name");
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
  }
  const AttributeMap& attributes = topology->attributes();
  EXPECT_EQ(std::get<int64_t>(attributes.at("device_count")), 2);
  EXPECT_EQ(std::get<std::string>(attributes.at("target_config")), kTargetConfig);
  EXPECT_EQ(std::get<std::string>(attributes.at("host_target_machine_options")),
            "triple: \"x86_64\"");
  // What XLA:GPU got: the name and every option but the plugin path, as they were.
  EXPECT_EQ(std::get<std::string>(attributes.at("fake_given")),
            "name=any name;something_newer=3;target_config=" + std::string(kTargetConfig) +
                ";topology=1x1x2");
  const NativeHandle native = topology->native_handle();
  EXPECT_NE(native.api, nullptr);
  EXPECT_EQ(native.handle, topology->inner()->get());
  StatusOr<std::vector<int>> kinds = topology->MemorySpaceKindIds();
  ASSERT_FALSE(kinds.ok());
  EXPECT_EQ(kinds.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(kinds.status().message(), "XLA:GPU PJRT_TopologyDescription_GetMemorySpaceKindIds: "
                                      "not implemented by the fake CUDA plugin");
  // pjrtkit's own serialized form of the devices.
  StatusOr<std::string> bytes = topology->Serialize();
  ASSERT_TRUE(bytes.ok());
  StatusOr<std::unique_ptr<Topology>> back = Topology::Deserialize(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)->devices().size(), 2u);
  EXPECT_EQ((*back)->devices()[1].kind(), "NVIDIA H200");
}

TEST(XlaGpuTopologyTest, XlaGpusErrorsComeBackNamed) {
  AttributeMap options = {{kPluginPathOption, FakePluginPath()}};
  StatusOr<std::unique_ptr<Topology>> topology = XlaGpuFactory::CreateTopology("", options);
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(topology.status().message(),
            "XLA:GPU PJRT_TopologyDescription_Create: No visible GPU devices.");
  topology = XlaGpuFactory::CreateTopology(
      "", TopologyOptions({{kTargetConfigOption, std::string("not a proto")}}));
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().message(),
            "XLA:GPU PJRT_TopologyDescription_Create: Failed to parse GpuTargetConfigProto from "
            "the 'target_config' parameter.");
  // pjrtkit's own checks come before the plugin is loaded.
  topology = XlaGpuFactory::CreateTopology(
      "", {{kPluginPathOption, std::string("/not/there.so")},
           {kTopologyShapeOption, std::string("1x2")}});
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().code(), StatusCode::kInvalidArgument);
  topology = XlaGpuFactory::CreateTopology(
      "", {{kPluginPathOption, std::string("/not/there/xla_cuda_plugin.so")}});
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(topology.status().message().rfind(
                "create option 'xla_gpu_plugin_path' ('/not/there/xla_cuda_plugin.so'): ", 0),
            0u)
      << topology.status().message();
}

TEST(XlaGpuTopologyTest, CompileIsPjrtCompileOnTheInnerTopologyWithoutAClient) {
  std::unique_ptr<DevicelessTopology> topology = MakeTopology();
  ASSERT_NE(topology, nullptr);
  std::shared_ptr<Executable> executable = CompileAdd(*topology);
  ASSERT_NE(executable, nullptr);
  EXPECT_EQ(executable->name(), "add");
  EXPECT_EQ(executable->num_replicas(), 1);
  EXPECT_EQ(executable->num_outputs(), 1u);
  const std::string code_size = std::to_string(std::string(kAdd).size());
  EXPECT_EQ(executable->fingerprint().value(),
            "topology=NVIDIA H200x2;client=null;options=1a0420012801;format=mlir;code_size=" +
                code_size);
  EXPECT_EQ(executable->compile_options().value(), MinimalCompileOptions(1, 1, false));
  // Options are made safe for the topology's device count first (unset replicas become 1), and
  // an offered pjrtkit client is not handed on: the result never depends on the machine.
  StatusOr<std::unique_ptr<Client>> client = XlaGpuFactory::CreateClient(
      {{kPluginPathOption, FakePluginPath()}});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  executable = CompileAdd(*topology, client->get(), "");
  ASSERT_NE(executable, nullptr);
  const std::string normalized = NormalizeCompileOptions("", 2).value();
  std::string hex;
  for (unsigned char c : normalized) {
    static const char kDigits[] = "0123456789abcdef";
    hex += kDigits[c >> 4];
    hex += kDigits[c & 0xf];
  }
  EXPECT_EQ(executable->fingerprint().value(),
            "topology=NVIDIA H200x2;client=null;options=" + hex + ";format=mlir;code_size=" +
                code_size);
  EXPECT_EQ(executable->compile_options().value(), "");
  // The topology a client of the same device carries compiles through the client, as before.
  EXPECT_EQ(dynamic_cast<const DevicelessTopology*>((*client)->topology().value()), nullptr);
}

TEST(XlaGpuTopologyTest, SerializedBytesAreWhatAClientReads) {
  std::unique_ptr<DevicelessTopology> topology = MakeTopology();
  ASSERT_NE(topology, nullptr);
  std::shared_ptr<Executable> executable = CompileAdd(*topology);
  ASSERT_NE(executable, nullptr);
  StatusOr<std::string> bytes = executable->Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  const std::string inner =
      "fake-cuda-executable|add|" + executable->fingerprint().value();
  EXPECT_EQ(*bytes, SerializedExecutable::Encode("xla_gpu", 2, inner));
  EXPECT_EQ(bytes->substr(0, 28), std::string("\0pjrtkit-xla-gpu-executable\0", 28));
  EXPECT_EQ(bytes->substr(28, 5), std::string("\x02\x02\x00\x00\x00", 5));
  StatusOr<SerializedExecutable> parsed =
      SerializedExecutable::Decode(*bytes, "xla_gpu", "XLA:GPU", "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->device_count(), 2);
  EXPECT_EQ(parsed->inner(), inner);
  // A client of 2 GPUs takes the header and hands XLA:GPU its bytes (the fake cannot load them);
  // a client of 1 GPU refuses them.
  StatusOr<std::unique_ptr<Client>> two =
      XlaGpuFactory::CreateClient({{kPluginPathOption, FakePluginPath()}});
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  StatusOr<std::unique_ptr<LoadedExecutable>> loaded =
      (*two)->DeserializeAndLoad(*bytes, std::nullopt);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            "XLA:GPU PJRT_Executable_DeserializeAndLoad: not implemented by the fake CUDA plugin");
  StatusOr<std::unique_ptr<Client>> one = XlaGpuFactory::CreateClient(
      {{kPluginPathOption, FakePluginPath()}, {"visible_devices", std::vector<int64_t>{1}}});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  loaded = (*one)->DeserializeAndLoad(*bytes, std::nullopt);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(loaded.status().message(),
            "DeserializeAndLoad: the executable was compiled for a pjrtkit topology of 2 "
            "devices, but this client has 1 (create the client with visible_devices naming 2 "
            "GPUs to load it)");
}

TEST(XlaGpuTopologyTest, CompileErrorsAreReported) {
  std::unique_ptr<DevicelessTopology> topology = MakeTopology();
  ASSERT_NE(topology, nullptr);
  const std::string options = MinimalCompileOptions(1, 1, false);
  StatusOr<std::shared_ptr<Executable>> executable =
      topology->Compile(Program{"", kAdd}, options, nullptr);
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().message(),
            "PJRT_Compile: the program has no format (\"mlir\" or \"hlo\")");
  executable = topology->Compile(Program{"mlir", "module @broken {"}, options, nullptr);
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(executable.status().message(), "XLA:GPU PJRT_Compile: Failed to parse the program");
  // More replicas than the topology has GPUs.
  executable =
      topology->Compile(Program{"mlir", kAdd}, MinimalCompileOptions(3, 1, false), nullptr);
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LiveObjects().second, 0);  // Nothing leaked on the way.
}

TEST(XlaGpuTopologyTest, ExecutablesOutliveTheTopologyAndFreeTheInnerOneLast) {
  // Counts relative to the first topology's (the fake is loaded by then, whichever test ran
  // before this one).
  std::unique_ptr<DevicelessTopology> topology = MakeTopology();
  ASSERT_NE(topology, nullptr);
  const std::pair<int, int> base = LiveObjects();
  ASSERT_GE(base.first, 1);
  const auto live = [&](int topologies, int executables) {
    return std::make_pair(base.first - 1 + topologies, base.second + executables);
  };
  std::shared_ptr<Executable> first = CompileAdd(*topology);
  std::shared_ptr<Executable> second = CompileAdd(*topology);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(LiveObjects(), live(1, 2));
  topology.reset();
  EXPECT_EQ(LiveObjects(), live(1, 2));  // The executables keep the inner topology.
  StatusOr<std::string> bytes = first->Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(first->name(), "add");
  first.reset();
  EXPECT_EQ(LiveObjects(), live(1, 1));
  second.reset();
  EXPECT_EQ(LiveObjects(), live(0, 0));
}

}  // namespace
}  // namespace xla_gpu
}  // namespace pjrtkit
