// DeviceChoice's rules and PjrtkitFactory: one factory, both devices.
#include <limits.h>
#include <stdlib.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/selection/device_choice.h"
#include "xla_plugin/devices/selection/pjrtkit_factory.h"
#include "xla_plugin/devices/selection/process_device.h"

namespace pjrtkit {
namespace selection {
namespace {

// `relative` resolved in the test's runfiles ("" when missing).
std::string Runfile(const std::string& relative) {
  const char* srcdir = getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return "";
  for (const std::string& root : {std::string(srcdir) + "/pjrtkit/", std::string(srcdir) + "/"}) {
    char resolved[PATH_MAX];
    if (realpath((root + relative).c_str(), resolved) != nullptr) return resolved;
  }
  return "";
}

std::string XlaCpuPath() { return Runfile("external/venv/xla_cpu_pjrt.so"); }
std::string FakeCudaPath() {
  return Runfile("xla_plugin/devices/xla_gpu/testing/fake_cuda_plugin.so");
}

// The reference devices' entries alone: the rules below are stated for them, whatever other
// devices this checkout registers (tools/new_device.py adds some).
const std::vector<DeviceEntry>& Reference() {
  static const std::vector<DeviceEntry>* const devices = [] {
    auto* out = new std::vector<DeviceEntry>();
    for (const char* name : {"xla_cpu", "xla_gpu"}) out->push_back(*registry::Registry::Find(name));
    return out;
  }();
  return *devices;
}

// Choose() on `options` and `facts`, as a name, or the error message.
std::string Chosen(const AttributeMap& options, const MachineFacts& facts,
                   const std::vector<DeviceEntry>& devices = Reference()) {
  StatusOr<const DeviceEntry*> kind = DeviceChoice::Choose(options, facts, devices);
  return kind.ok() ? (*kind)->name : "error: " + kind.status().message();
}

const DeviceEntry& Registered(const std::string& name) {
  return *registry::Registry::Find(name);
}

// Before any test asks for the process device: its XLA:CPU plugin is where LibraryLocator looks.
const bool kPluginEnvSet = setenv("PJRTKIT_XLA_CPU_PLUGIN", XlaCpuPath().c_str(), 1) == 0;

// A machine where xla_gpu is available when it has a GPU and the CUDA plugin.
MachineFacts Facts(std::string env, bool gpu, bool plugin) {
  MachineFacts facts;
  facts.device_env = std::move(env);
  facts.available.insert("xla_cpu");
  if (gpu && plugin) facts.available.insert("xla_gpu");
  return facts;
}

TEST(DeviceChoiceTest, WithNothingGivenTheMachineDecides) {
  EXPECT_EQ(Chosen({}, Facts("", false, false)), "xla_cpu");
  EXPECT_EQ(Chosen({}, Facts("", true, false)), "xla_cpu");  // A GPU but no CUDA plugin.
  EXPECT_EQ(Chosen({}, Facts("", false, true)), "xla_cpu");  // The plugin but no GPU.
  EXPECT_EQ(Chosen({}, Facts("", true, true)), "xla_gpu");
  EXPECT_EQ(Chosen({{"device", std::string("auto")}}, Facts("auto", true, true)), "xla_gpu");
}

TEST(DeviceChoiceTest, TheOptionWinsThenDeviceOptionsThenTheEnvironment) {
  EXPECT_EQ(Chosen({{"device", std::string("xla_cpu")}}, Facts("xla_gpu", true, true)),
            "xla_cpu");
  EXPECT_EQ(Chosen({{"device", std::string("xla_gpu")}}, Facts("", false, false)), "xla_gpu");
  EXPECT_EQ(Chosen({{"device_count", int64_t{2}}}, Facts("xla_gpu", true, true)), "xla_cpu");
  EXPECT_EQ(Chosen({{"xla_cpu_plugin_path", std::string("/x")}}, Facts("", true, true)),
            "xla_cpu");
  EXPECT_EQ(Chosen({{"memory_fraction", 0.5f}}, Facts("xla_cpu", false, false)), "xla_gpu");
  EXPECT_EQ(Chosen({}, Facts("xla_gpu", false, false)), "xla_gpu");
  EXPECT_EQ(Chosen({}, Facts("xla_cpu", true, true)), "xla_cpu");
}

TEST(DeviceChoiceTest, ContradictionsAndBadNamesAreInvalidArgument) {
  EXPECT_EQ(Chosen({{"device", std::string("tpu")}}, Facts("", false, false)),
            "error: create option 'device' must be 'xla_cpu', 'xla_gpu' or 'auto', got 'tpu'");
  EXPECT_EQ(Chosen({{"device", int64_t{1}}}, Facts("", false, false)),
            "error: create option 'device' must be string, got int64");
  EXPECT_EQ(Chosen({}, Facts("gpu", false, false)),
            "error: environment variable PJRTKIT_DEVICE must be 'xla_cpu', 'xla_gpu' or 'auto', "
            "got 'gpu'");
  EXPECT_EQ(Chosen({{"device", std::string("xla_gpu")}, {"device_count", int64_t{2}}},
                   Facts("", true, true)),
            "error: create option 'device_count' belongs to the xla_cpu device, but option "
            "'device' is 'xla_gpu'");
  EXPECT_EQ(Chosen({{"device", std::string("xla_cpu")}, {"allocator", std::string("bfc")}},
                   Facts("", true, true)),
            "error: create option 'allocator' belongs to the xla_gpu device, but option 'device' "
            "is 'xla_cpu'");
  EXPECT_EQ(Chosen({{"device_count", int64_t{2}}, {"preallocate", false}}, Facts("", true, true)),
            "error: create options 'device_count' (xla_cpu device) and 'preallocate' (xla_gpu "
            "device) select different devices; pass one device's options, or choose with option "
            "'device'");
}

// A third device over XLA:CPU, as tools/new_device.py makes one: XLA:CPU's options, not chosen by
// auto (priority 0).
std::vector<OptionSpec> AcmeOptions() {
  return {{"device_count", AttributeValue(int64_t{2}), ""},
          {"xla_cpu_plugin_path", AttributeValue(std::string()), ""},
          {"acme_clock_mhz", AttributeValue(int64_t{100}), ""}};
}

std::vector<DeviceEntry> WithAcme() {
  std::vector<DeviceEntry> devices = Reference();
  DeviceEntry acme;
  acme.name = "acme";
  acme.runs_like = "xla_cpu";
  acme.option_specs = &AcmeOptions;
  devices.push_back(acme);
  return devices;
}

TEST(DeviceChoiceTest, AThirdDeviceIsChosenByNameOrByItsOwnOptionsNeverByAuto) {
  const std::vector<DeviceEntry> devices = WithAcme();
  MachineFacts facts = Facts("", true, true);
  facts.available.insert("acme");
  EXPECT_EQ(Chosen({}, facts, devices), "xla_gpu");
  EXPECT_EQ(Chosen({}, Facts("", false, false), devices), "xla_cpu");
  EXPECT_EQ(Chosen({{"device", std::string("acme")}}, facts, devices), "acme");
  EXPECT_EQ(Chosen({}, Facts("acme", false, false), devices), "acme");
  EXPECT_EQ(Chosen({{"acme_clock_mhz", int64_t{5}}}, facts, devices), "acme");
  // device_count belongs to xla_cpu and acme: the environment, then auto, choose between them.
  EXPECT_EQ(Chosen({{"device_count", int64_t{2}}}, facts, devices), "xla_cpu");
  EXPECT_EQ(Chosen({{"device_count", int64_t{2}}}, Facts("acme", true, true), devices), "acme");
  EXPECT_EQ(Chosen({{"device_count", int64_t{2}}}, Facts("xla_gpu", true, true), devices),
            "xla_cpu");
  EXPECT_EQ(Chosen({{"device", std::string("tpu")}}, facts, devices),
            "error: create option 'device' must be 'xla_cpu', 'xla_gpu', 'acme' or 'auto', got "
            "'tpu'");
  EXPECT_EQ(Chosen({{"device", std::string("xla_gpu")}, {"device_count", int64_t{2}}}, facts,
                   devices),
            "error: create option 'device_count' belongs to the xla_cpu and acme devices, but "
            "option 'device' is 'xla_gpu'");
  EXPECT_EQ(Chosen({{"acme_clock_mhz", int64_t{5}}, {"memory_fraction", 0.5f}}, facts, devices),
            "error: create options 'acme_clock_mhz' (acme device) and 'memory_fraction' (xla_gpu "
            "device) select different devices; pass one device's options, or choose with option "
            "'device'");
}

TEST(PjrtkitFactoryTest, OneFactoryMakesBothDevices) {
  AttributeMap cpu;
  cpu["xla_cpu_plugin_path"] = XlaCpuPath();
  cpu["device_count"] = int64_t{2};
  StatusOr<std::unique_ptr<Client>> cpu_client = PjrtkitFactory::CreateClient(cpu);
  ASSERT_TRUE(cpu_client.ok()) << cpu_client.status().ToString();
  ASSERT_EQ((*cpu_client)->devices().size(), 2u);
  EXPECT_EQ((*cpu_client)->devices()[0]->description().kind(), "pjrtkit_cpu");

  AttributeMap gpu;
  gpu["device"] = std::string("xla_gpu");
  gpu["xla_gpu_plugin_path"] = FakeCudaPath();
  // This process's device is xla_cpu (no GPU here): CreateClient refuses the other device, and
  // CreateClientOf makes it anyway.
  const Status refused = PjrtkitFactory::CreateClient(gpu).status();
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.message(),
            "pjrtkit: this process's plugin serves the xla_cpu device (chosen when the plugin was "
            "loaded: no NVIDIA GPU with OpenXLA's CUDA plugin was found), so a client of the "
            "xla_gpu device cannot be created here: the plugin's attributes (StableHLO versions) "
            "and extensions are the xla_cpu device's. Set PJRTKIT_DEVICE=xla_gpu before the "
            "plugin is loaded (jax_plugins.pjrtkit does so for the create option 'device')");
  StatusOr<std::unique_ptr<Client>> gpu_client =
      PjrtkitFactory::CreateClientOf(Registered("xla_gpu"), gpu);
  ASSERT_TRUE(gpu_client.ok()) << gpu_client.status().ToString();
  ASSERT_EQ((*gpu_client)->devices().size(), 2u);
  EXPECT_EQ((*gpu_client)->devices()[0]->description().kind(), "NVIDIA H200");
  EXPECT_EQ((*gpu_client)->platform_name(), "pjrtkit");
}

TEST(PjrtkitFactoryTest, UnknownOptionsListDeviceAndTheChosenDevicesOptions) {
  AttributeMap options;
  options["device"] = std::string("xla_cpu");
  options["cpu_device_count"] = int64_t{2};
  StatusOr<std::unique_ptr<Client>> client = PjrtkitFactory::CreateClient(options);
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client.status().message(),
            "unknown create option 'cpu_device_count'; accepted options: device (string), "
            "device_count (int64), xla_cpu_plugin_path (string), host_buffer_cache_mib (int64), "
            "process_join_timeout_s (int64)");
}

TEST(PjrtkitFactoryTest, PluginAttributesAreThoseOfTheProcessDevice) {
  // This process: xla_cpu, its plugin found beside the test through $PJRTKIT_XLA_CPU_PLUGIN.
  ASSERT_TRUE(kPluginEnvSet);
  AttributeMap attributes = PjrtkitFactory::PluginAttributes();
  ASSERT_EQ(attributes.size(), 6u);
  EXPECT_EQ(std::get<std::string>(attributes.at("pjrtkit_devices")), registry::Registry::ToJson());
  EXPECT_EQ(std::get<std::string>(attributes.at("pjrtkit_device")), "xla_cpu");
  EXPECT_EQ(std::get<int64_t>(attributes.at("xla_version")), 2);
  EXPECT_EQ(std::get<std::vector<int64_t>>(attributes.at("stablehlo_current_version")),
            (std::vector<int64_t>{1, 13, 3}));  // XLA:CPU 0.0.1's own.
  EXPECT_EQ(std::get<std::vector<int64_t>>(attributes.at("stablehlo_minimum_version")),
            (std::vector<int64_t>{0, 9, 0}));
  EXPECT_EQ(std::get<std::string>(attributes.at("pjrtkit_version")), "0.1.0");
  EXPECT_NE(PjrtkitFactory::ForwardedPluginApi(), nullptr);
  // A GPU process without its plugin loaded reports the versions the xla_gpu device was built
  // against.
  AttributeMap gpu = PjrtkitFactory::AttributesOf(Registered("xla_gpu"), nullptr);
  EXPECT_EQ(std::get<std::string>(gpu.at("pjrtkit_device")), "xla_gpu");
  EXPECT_EQ(std::get<std::vector<int64_t>>(gpu.at("stablehlo_current_version")),
            (std::vector<int64_t>{1, 20, 0}));
}

TEST(ProcessDeviceTest, TheEnvironmentThenTheMachineDecide) {
  ProcessDevice gpu = ProcessDevice::Decide(Facts("", true, true));
  ASSERT_TRUE(gpu.kind().ok());
  EXPECT_EQ((*gpu.kind())->name, "xla_gpu");
  EXPECT_EQ(gpu.reason(), "an NVIDIA GPU and OpenXLA's CUDA plugin were found");
  ProcessDevice cpu = ProcessDevice::Decide(Facts("xla_cpu", true, true));
  EXPECT_EQ((*cpu.kind())->name, "xla_cpu");
  EXPECT_EQ(cpu.reason(), "environment variable PJRTKIT_DEVICE=xla_cpu");
  EXPECT_TRUE(cpu.CheckSame(Registered("xla_cpu"), "a client").ok());
  EXPECT_EQ(cpu.CheckSame(Registered("xla_gpu"), "a topology").code(),
            StatusCode::kFailedPrecondition);
  ProcessDevice cpu_auto = ProcessDevice::Decide(Facts("", false, false));
  EXPECT_EQ((*cpu_auto.kind())->name, "xla_cpu");
  EXPECT_EQ(cpu_auto.reason(), "no NVIDIA GPU with OpenXLA's CUDA plugin was found");
  ProcessDevice bad = ProcessDevice::Decide(Facts("tpu", false, false));
  EXPECT_EQ(bad.kind().status().message(),
            "environment variable PJRTKIT_DEVICE must be " + registry::Registry::AcceptedNames() +
                ", got 'tpu'");
}

// A device with its own compiler and runtime, as the registry may hold one: runs like
// "stablehlo", no inner plugin, chosen by auto where it is available.
AttributeMap OwnAttributes() {
  return {{"xla_version", AttributeValue(int64_t{2})},
          {"stablehlo_current_version", AttributeValue(std::vector<int64_t>{1, 9, 0})}};
}

std::vector<OptionSpec> OwnOptions() {
  return {{"own_queue_depth", AttributeValue(int64_t{4}), ""}};
}

StatusOr<std::unique_ptr<Client>> OwnClient(const AttributeMap& options, const MultiProcess&) {
  return Unimplemented("own: no client in this test (" + std::to_string(options.size()) +
                       " option)");
}

std::vector<DeviceEntry> WithOwnRuntime() {
  std::vector<DeviceEntry> devices = Reference();
  DeviceEntry own;
  own.name = "own";
  own.runs_like = registry::kRunsLikeStablehlo;
  own.auto_priority = 30;
  own.available_reason = "the own device is always there";
  own.plugin_attributes = &OwnAttributes;
  own.option_specs = &OwnOptions;
  own.create_client = &OwnClient;
  devices.push_back(own);
  return devices;
}

TEST(ProcessDeviceTest, ADeviceWithoutAnInnerPluginIsChosenAndLoadsNothing) {
  const std::vector<DeviceEntry> devices = WithOwnRuntime();
  MachineFacts facts = Facts("", true, true);
  facts.available.insert("own");
  ProcessDevice own = ProcessDevice::DecideAndLoad(facts, devices);
  ASSERT_TRUE(own.kind().ok()) << own.kind().status().ToString();
  EXPECT_EQ((*own.kind())->name, "own");
  EXPECT_EQ(own.reason(), "the own device is always there");
  EXPECT_EQ(own.inner(), nullptr);
  EXPECT_EQ(own.load_status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(own.load_status().message(), "the own device has no inner plugin to load");
  // Its options choose it; its attributes are its own; its client is its factory's.
  EXPECT_EQ(Chosen({{"own_queue_depth", int64_t{2}}}, Facts("xla_cpu", false, false), devices),
            "own");
  const AttributeMap attributes = PjrtkitFactory::AttributesOf(devices.back(), nullptr);
  EXPECT_EQ(std::get<std::string>(attributes.at("pjrtkit_device")), "own");
  EXPECT_EQ(std::get<std::vector<int64_t>>(attributes.at("stablehlo_current_version")),
            (std::vector<int64_t>{1, 9, 0}));
  const Status refused =
      PjrtkitFactory::CreateClientOf(devices.back(), {{"own_queue_depth", int64_t{2}}}).status();
  EXPECT_EQ(refused.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(refused.message(), "own: no client in this test (1 option)");
}

TEST(PjrtkitFactoryTest, TopologiesFollowTheChoice) {
  AttributeMap cpu;
  cpu["device_count"] = int64_t{3};
  StatusOr<std::unique_ptr<Topology>> topology = PjrtkitFactory::CreateTopology("", cpu);
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  EXPECT_EQ((*topology)->devices().size(), 3u);
  // The device checks the options of its topologies itself.
  cpu["bogus"] = int64_t{1};
  const Status refused = PjrtkitFactory::CreateTopology("", cpu).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message().rfind("unknown create option 'bogus'", 0), 0u) << refused.message();
  AttributeMap gpu;
  gpu["device"] = std::string("xla_gpu");
  EXPECT_EQ(PjrtkitFactory::CreateTopology("", gpu).status().code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace selection
}  // namespace pjrtkit
