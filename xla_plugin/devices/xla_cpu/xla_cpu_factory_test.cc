// XlaCpuFactory: create options, plugin attributes, topology and the device model, against the
// real XLA:CPU plugin.
#include "xla_plugin/devices/xla_cpu/xla_cpu_factory.h"

#include <stdlib.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/multi_process.h"
#include "xla_plugin/devices/xla_cpu/device_model.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_policy.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"
#include "xla_plugin/plugin_wrapper/wrapped_topology.h"

namespace pjrtkit {
namespace xla_cpu {

using ::pjrtkit::plugin_wrapper::InnerApi;
using ::pjrtkit::plugin_wrapper::WrappedTopology;
namespace {

using ::pjrtkit::xla_cpu::testing::ClientOptions;
using ::pjrtkit::xla_cpu::testing::CreateTestClient;
using ::pjrtkit::xla_cpu::testing::XlaCpuPluginPath;

// Expects `status` to have `code` and a message containing every one of `parts`.
void ExpectError(const Status& status, StatusCode code, const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), code) << status.ToString();
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << "'" << part << "' not in: " << status.message();
  }
}

TEST(XlaCpuFactoryTest, PluginPathIsInRunfiles) { EXPECT_FALSE(XlaCpuPluginPath().empty()); }

TEST(XlaCpuFactoryTest, InitializeIsOk) {
  EXPECT_TRUE(XlaCpuFactory::Initialize().ok());
  EXPECT_TRUE(XlaCpuFactory::Initialize().ok());
}

TEST(XlaCpuFactoryTest, OptionSpecs) {
  std::vector<OptionSpec> specs = XlaCpuFactory::OptionSpecs();
  ASSERT_EQ(specs.size(), 4u);
  EXPECT_EQ(specs[0].name, "device_count");
  EXPECT_EQ(std::get<int64_t>(specs[0].type_tag), 4);
  EXPECT_EQ(specs[1].name, "xla_cpu_plugin_path");
  EXPECT_EQ(std::get<std::string>(specs[1].type_tag), "");
  EXPECT_EQ(specs[2].name, "host_buffer_cache_mib");
  EXPECT_EQ(std::get<int64_t>(specs[2].type_tag), 512);
  EXPECT_EQ(specs[3].name, "process_join_timeout_s");
  EXPECT_EQ(std::get<int64_t>(specs[3].type_tag), 120);
}

// A store in memory whose Get does not wait: a missing key is DEADLINE_EXCEEDED at once.
class MapStore : public KeyValueStore {
 public:
  StatusOr<std::string> Get(const std::string& key, int) override {
    auto it = values.find(key);
    if (it == values.end()) return Status(StatusCode::kDeadlineExceeded, "no " + key);
    return it->second;
  }
  StatusOr<std::string> TryGet(const std::string& key) override { return Get(key, 0); }
  Status Put(const std::string& key, const std::string& value) override {
    values[key] = value;
    return OkStatus();
  }
  std::map<std::string, std::string> values;
};

// Process 1 of 2, process 0 having published `entry`.
StatusOr<std::unique_ptr<Client>> SecondProcess(std::shared_ptr<MapStore> store,
                                                const std::string& entry) {
  if (!entry.empty()) store->values["pjrtkit/xla_cpu/process/0"] = entry;
  AttributeMap options = ClientOptions(2);
  options["node_id"] = int64_t{1};
  options["num_nodes"] = int64_t{2};
  options["process_join_timeout_s"] = int64_t{1};
  StatusOr<MultiProcess> job = MultiProcess::FromOptions(&options, store);
  if (!job.ok()) return job.status();
  return XlaCpuFactory::CreateClient(options, *job);
}

TEST(XlaCpuFactoryTest, MultiProcessPlacesEveryProcesssDevices) {
  auto store = std::make_shared<MapStore>();
  StatusOr<std::unique_ptr<Client>> client = SecondProcess(
      store, "pjrtkit_version=" + std::string(kPjrtkitVersion) + ";devices=3");
  ASSERT_TRUE(client.ok()) << client.status().message();
  EXPECT_EQ(store->values["pjrtkit/xla_cpu/process/1"],
            "pjrtkit_version=" + std::string(kPjrtkitVersion) + ";devices=2");
  EXPECT_EQ((*client)->process_index(), 1);
  ASSERT_EQ((*client)->devices().size(), 5u);
  ASSERT_EQ((*client)->addressable_devices().size(), 2u);
  for (int id = 0; id < 5; ++id) {
    const Device* device = (*client)->devices()[id];
    const bool mine = id >= 3;
    EXPECT_EQ(device->description().id(), id);
    EXPECT_EQ(device->description().process_index(), mine ? 1 : 0);
    EXPECT_EQ(device->IsAddressable(), mine);
    EXPECT_EQ(device->local_hardware_id(), mine ? id - 3 : -1);
    EXPECT_EQ(device->memories().empty(), !mine);
  }
  EXPECT_EQ((*client)->addressable_devices()[0]->description().id(), 3);
  for (const Memory* memory : (*client)->memories()) {
    for (const Device* device : memory->addressable_by_devices()) {
      EXPECT_TRUE(device->IsAddressable());
    }
  }
}

TEST(XlaCpuFactoryTest, MultiProcessRefusesAnotherPjrtkitVersion) {
  ExpectError(SecondProcess(std::make_shared<MapStore>(), "pjrtkit_version=0.0.0-x;devices=2")
                  .status(),
              StatusCode::kFailedPrecondition,
              {"pjrtkit version mismatch across processes: process 1 runs pjrtkit " +
                   std::string(kPjrtkitVersion) + ", process 0 runs pjrtkit 0.0.0-x"});
}

TEST(XlaCpuFactoryTest, MultiProcessNamesAMissingProcess) {
  ExpectError(SecondProcess(std::make_shared<MapStore>(), "").status(),
              StatusCode::kDeadlineExceeded,
              {"process 0 of 2 did not create its pjrtkit client within 1 s"});
}

// A store whose reads fail as a dead coordination service's do.
class UnavailableStore : public MapStore {
 public:
  StatusOr<std::string> Get(const std::string& key, int) override {
    return Status(StatusCode::kUnavailable, "coordination service gone");
  }
};

TEST(XlaCpuFactoryTest, MultiProcessKeepsTheStoresOwnErrorWhenItFails) {
  ExpectError(SecondProcess(std::make_shared<UnavailableStore>(), "").status(),
              StatusCode::kUnavailable,
              {"pjrtkit (xla_cpu): reading process 0's entry from the framework's key-value "
               "store failed; this is process 1 (coordination service gone)"});
}

TEST(XlaCpuFactoryTest, UnknownOptionIsInvalidArgument) {
  AttributeMap options = ClientOptions();
  options["cpu_device_count"] = int64_t{2};
  ExpectError(XlaCpuFactory::CreateClient(options).status(), StatusCode::kInvalidArgument,
              {"unknown create option 'cpu_device_count'", "device_count (int64)",
               "xla_cpu_plugin_path (string)"});
  ExpectError(XlaCpuFactory::CreateTopology("", options).status(), StatusCode::kInvalidArgument,
              {"'cpu_device_count'"});
}

TEST(XlaCpuFactoryTest, WrongTypeIsInvalidArgument) {
  AttributeMap options = ClientOptions();
  options["device_count"] = std::string("four");
  ExpectError(XlaCpuFactory::CreateClient(options).status(), StatusCode::kInvalidArgument,
              {"create option 'device_count' must be int64, got string"});
  options["device_count"] = true;
  ExpectError(XlaCpuFactory::CreateClient(options).status(), StatusCode::kInvalidArgument,
              {"create option 'device_count' must be int64, got bool"});
  options = ClientOptions();
  options["xla_cpu_plugin_path"] = int64_t{1};
  ExpectError(XlaCpuFactory::CreateClient(options).status(), StatusCode::kInvalidArgument,
              {"create option 'xla_cpu_plugin_path' must be string, got int64"});
}

TEST(XlaCpuFactoryTest, DeviceCountOutOfRangeIsInvalidArgument) {
  for (int64_t count : {int64_t{0}, int64_t{-1}, int64_t{257}}) {
    AttributeMap options = ClientOptions();
    options["device_count"] = count;
    const std::string expected =
        "create option 'device_count' must be in [1, 256], got " + std::to_string(count);
    ExpectError(XlaCpuFactory::CreateClient(options).status(), StatusCode::kInvalidArgument,
                {expected});
    ExpectError(XlaCpuFactory::CreateTopology("", options).status(), StatusCode::kInvalidArgument,
                {expected});
  }
}

TEST(XlaCpuFactoryTest, MissingPluginPathIsFailedPrecondition) {
  unsetenv(kPluginPathEnv);
  ExpectError(XlaCpuFactory::CreateClient({}).status(), StatusCode::kFailedPrecondition,
              {"create option 'xla_cpu_plugin_path' is required", "xla_cpu_pjrt.so",
               "unless pjrtkit finds it (looked in PJRTKIT_XLA_CPU_PLUGIN (unset); ",
               "/../../xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so)"});
  AttributeMap options;
  options["xla_cpu_plugin_path"] = std::string();
  ExpectError(XlaCpuFactory::CreateClient(options).status(), StatusCode::kFailedPrecondition,
              {"'xla_cpu_plugin_path' is required"});
}

// A client created with no options at all (as PJRT hosts other than JAX do) finds XLA:CPU through
// PJRTKIT_XLA_CPU_PLUGIN; a variable naming nothing is FAILED_PRECONDITION naming it.
TEST(XlaCpuFactoryTest, NoOptionsFindTheEnvironmentVariable) {
  ASSERT_EQ(setenv(kPluginPathEnv, XlaCpuPluginPath().c_str(), 1), 0);
  StatusOr<std::unique_ptr<Client>> client = XlaCpuFactory::CreateClient({});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->devices().size(), 4u);
  EXPECT_EQ((*client)->devices()[0]->description().kind(), "pjrtkit_cpu");
  ASSERT_EQ(setenv(kPluginPathEnv, "/nonexistent/xla_cpu_pjrt.so", 1), 0);
  ExpectError(XlaCpuFactory::CreateClient({}).status(), StatusCode::kFailedPrecondition,
              {"environment variable PJRTKIT_XLA_CPU_PLUGIN is '/nonexistent/xla_cpu_pjrt.so', "
               "which does not exist"});
  unsetenv(kPluginPathEnv);
}

TEST(XlaCpuFactoryTest, UnloadablePluginPathIsFailedPrecondition) {
  AttributeMap options;
  options["xla_cpu_plugin_path"] = std::string("/nonexistent/xla_cpu_pjrt.so");
  ExpectError(XlaCpuFactory::CreateClient(options).status(), StatusCode::kFailedPrecondition,
              {"create option 'xla_cpu_plugin_path' ('/nonexistent/xla_cpu_pjrt.so')",
               "cannot load the XLA:CPU plugin",
               "/nonexistent/xla_cpu_pjrt.so: cannot open shared object file: No such file or "
               "directory"});
}

TEST(XlaCpuFactoryTest, RelativePluginPathIsInvalidArgument) {
  AttributeMap options;
  options["xla_cpu_plugin_path"] = std::string("xla_cpu_pjrt.so");
  ExpectError(XlaCpuFactory::CreateClient(options).status(), StatusCode::kInvalidArgument,
              {"create option 'xla_cpu_plugin_path' ('xla_cpu_pjrt.so') must be the absolute path"});
}

TEST(XlaCpuFactoryTest, PluginAttributesAreOurConstants) {
  AttributeMap attributes = XlaCpuFactory::PluginAttributes();
  ASSERT_EQ(attributes.size(), 4u);
  EXPECT_EQ(std::get<int64_t>(attributes.at("xla_version")), 2);
  EXPECT_EQ(std::get<std::vector<int64_t>>(attributes.at("stablehlo_current_version")),
            (std::vector<int64_t>{1, 13, 3}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(attributes.at("stablehlo_minimum_version")),
            (std::vector<int64_t>{0, 9, 0}));
  EXPECT_EQ(std::get<std::string>(attributes.at("pjrtkit_version")), "0.1.0");
}

// If this fails after upgrading xla-cpu-pjrt, update the constants in xla_cpu_factory.h.
TEST(XlaCpuFactoryTest, PluginAttributesEqualTheInnerPlugins) {
  StatusOr<std::shared_ptr<InnerApi>> inner =
      InnerApi::Load(XlaCpuPluginPath(), "test", XlaCpuPolicy().inner_plugin());
  ASSERT_TRUE(inner.ok()) << inner.status().ToString();
  EXPECT_EQ((*inner)->ApiVersionString(), "0.81");
  StatusOr<AttributeMap> inner_attributes = (*inner)->PluginAttributes();
  ASSERT_TRUE(inner_attributes.ok()) << inner_attributes.status().ToString();
  AttributeMap ours = XlaCpuFactory::PluginAttributes();
  ours.erase("pjrtkit_version");
  EXPECT_EQ(*inner_attributes, ours);
}

TEST(XlaCpuFactoryTest, TopologyNeedsNoPlugin) {
  StatusOr<std::unique_ptr<Topology>> topology = XlaCpuFactory::CreateTopology("any", {});
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  EXPECT_EQ((*topology)->platform_name(), "pjrtkit");
  EXPECT_EQ((*topology)->platform_version(), "pjrtkit 0.1.0 (xla_cpu)");
  ASSERT_EQ((*topology)->devices().size(), 4u);
  for (int id = 0; id < 4; ++id) {
    const DeviceDescription& d = (*topology)->devices()[id];
    EXPECT_EQ(d.id(), id);
    EXPECT_EQ(d.process_index(), 0);
    EXPECT_EQ(d.kind(), "pjrtkit_cpu");
    EXPECT_EQ(d.debug_string(), "PJRTKIT_" + std::to_string(id));
    EXPECT_EQ(d.to_string(),
              "PjrtkitDevice(id=" + std::to_string(id) + ", process_index=0, kind=pjrtkit_cpu)");
  }
  EXPECT_EQ(std::get<int64_t>((*topology)->attributes().at("device_count")), 4);
  StatusOr<std::string> serialized = (*topology)->Serialize();
  ASSERT_TRUE(serialized.ok());
  // Everything up to the second device (the others differ only in the id).
  EXPECT_EQ(serialized->substr(0, serialized->find("device 1 ")),
            "pjrtkit-topology 2\nplatform 7:pjrtkit\nversion 23:pjrtkit 0.1.0 (xla_cpu)\n"
            "attributes 1\nattr 12:device_count i 4\ndevices 4\n"
            "device 0 0 11:pjrtkit_cpu 9:PJRTKIT_0 "
            "54:PjrtkitDevice(id=0, process_index=0, kind=pjrtkit_cpu) 2\n"
            "attr 7:backend s 7:xla_cpu\nattr 10:core_count i 1\n");
  // PJRT_TopologyDescription_Deserialize gets the same topology back.
  StatusOr<std::unique_ptr<Topology>> back = Topology::Deserialize(*serialized);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)->devices().size(), 4u);
  EXPECT_EQ((*back)->devices()[3].to_string(),
            "PjrtkitDevice(id=3, process_index=0, kind=pjrtkit_cpu)");
  StatusOr<std::string> again = (*back)->Serialize();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *serialized);
}

TEST(XlaCpuFactoryTest, TopologyDeviceCountAndPluginPath) {
  AttributeMap options;
  options["device_count"] = int64_t{7};
  options["xla_cpu_plugin_path"] = std::string("/not/loaded.so");  // Kept; loaded at PJRT_Compile.
  StatusOr<std::unique_ptr<Topology>> topology = XlaCpuFactory::CreateTopology("", options);
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  ASSERT_EQ((*topology)->devices().size(), 7u);
  auto* xla_cpu_topology = dynamic_cast<WrappedTopology*>(topology->get());
  ASSERT_NE(xla_cpu_topology, nullptr);
  EXPECT_EQ(xla_cpu_topology->plugin_path(), "/not/loaded.so");
  EXPECT_EQ(xla_cpu_topology->compiler(), nullptr);
  EXPECT_EQ((*topology)->devices()[6].id(), 6);
  // JAX's "key:value" option form passes strings; a decimal string works for device_count.
  options["device_count"] = std::string("3");
  topology = XlaCpuFactory::CreateTopology("", options);
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  EXPECT_EQ((*topology)->devices().size(), 3u);
}

// Checks the whole device model of a client of `count` devices.
void ExpectDeviceModel(Client* client, int count) {
  EXPECT_EQ(client->platform_name(), "pjrtkit");
  EXPECT_EQ(client->platform_version(), "pjrtkit 0.1.0 (xla_cpu) cpu");
  EXPECT_EQ(client->process_index(), 0);
  ASSERT_EQ(client->devices().size(), static_cast<size_t>(count));
  EXPECT_EQ(client->addressable_devices(), client->devices());
  ASSERT_EQ(client->memories().size(), static_cast<size_t>(3 * count));
  const std::vector<std::string> kinds = {"device", "pinned_host", "unpinned_host"};
  for (int id = 0; id < count; ++id) {
    SCOPED_TRACE("device " + std::to_string(id));
    Device* device = client->devices()[id];
    const std::string ids = std::to_string(id);
    EXPECT_EQ(device->description().id(), id);
    EXPECT_EQ(device->description().process_index(), 0);
    EXPECT_EQ(device->description().kind(), "pjrtkit_cpu");
    EXPECT_EQ(device->description().debug_string(), "PJRTKIT_" + ids);
    EXPECT_EQ(device->description().to_string(),
              "PjrtkitDevice(id=" + ids + ", process_index=0, kind=pjrtkit_cpu)");
    const AttributeMap& attributes = device->description().attributes();
    ASSERT_EQ(attributes.size(), 2u);
    EXPECT_EQ(std::get<std::string>(attributes.at("backend")), "xla_cpu");
    EXPECT_EQ(std::get<int64_t>(attributes.at("core_count")), 1);
    EXPECT_TRUE(device->IsAddressable());
    EXPECT_EQ(device->local_hardware_id(), id);
    StatusOr<Device*> looked_up = client->LookupDevice(id);
    ASSERT_TRUE(looked_up.ok());
    EXPECT_EQ(*looked_up, device);
    looked_up = client->LookupAddressableDevice(id);
    ASSERT_TRUE(looked_up.ok());
    EXPECT_EQ(*looked_up, device);
    ASSERT_EQ(device->memories().size(), 3u);
    EXPECT_EQ(device->default_memory(), device->memories()[0]);
    for (int k = 0; k < 3; ++k) {
      Memory* memory = device->memories()[k];
      const int memory_id = 3 * id + k;
      EXPECT_EQ(client->memories()[memory_id], memory);
      EXPECT_EQ(memory->id(), memory_id);
      EXPECT_EQ(memory->kind(), kinds[k]);
      EXPECT_EQ(memory->kind_id(), k);
      EXPECT_EQ(memory->debug_string(), "PJRTKIT_" + ids + ":" + kinds[k]);
      EXPECT_EQ(memory->to_string(), "PjrtkitMemory(id=" + std::to_string(memory_id) +
                                         ", kind=" + kinds[k] + ", device=" + ids + ")");
      EXPECT_EQ(memory->addressable_by_devices(), std::vector<Device*>{device});
    }
    StatusOr<MemoryStats> stats = device->GetMemoryStats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->bytes_in_use, 0);
    EXPECT_EQ(stats->peak_bytes_in_use, 0);
    EXPECT_EQ(stats->num_allocs, 0);
  }
  Status missing = client->LookupDevice(count).status();
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  StatusOr<const Topology*> topology = client->topology();
  ASSERT_TRUE(topology.ok());
  EXPECT_EQ((*topology)->platform_name(), "pjrtkit");
  EXPECT_EQ((*topology)->platform_version(), "pjrtkit 0.1.0 (xla_cpu) cpu");
  ASSERT_EQ((*topology)->devices().size(), static_cast<size_t>(count));
  EXPECT_EQ((*topology)->devices()[count - 1].debug_string(), "PJRTKIT_" + std::to_string(count - 1));
}

TEST(XlaCpuFactoryTest, DefaultClientHasFourDevices) {
  std::unique_ptr<Client> client = CreateTestClient();
  ASSERT_NE(client, nullptr);
  ExpectDeviceModel(client.get(), 4);
  StatusOr<std::vector<int>> assignment = client->DefaultDeviceAssignment(2, 2);
  ASSERT_TRUE(assignment.ok());
  EXPECT_EQ(*assignment, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(client->DefaultDeviceAssignment(5, 1).status().code(), StatusCode::kInvalidArgument);
}

TEST(XlaCpuFactoryTest, ClientTopologyCountsItsDevices) {
  // A client's topology carries the inner client's topology attributes (XLA:GPU's target_config;
  // XLA:CPU 0.0.1 has none) and device_count, which stays pjrtkit's.
  std::unique_ptr<Client> client = CreateTestClient(2);
  ASSERT_NE(client, nullptr);
  StatusOr<const Topology*> topology = client->topology();
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  EXPECT_EQ(std::get<int64_t>((*topology)->attributes().at("device_count")), 2);
}

TEST(XlaCpuFactoryTest, OneDevice) {
  std::unique_ptr<Client> client = CreateTestClient(1);
  ASSERT_NE(client, nullptr);
  ExpectDeviceModel(client.get(), 1);
}

TEST(XlaCpuFactoryTest, TwoDevices) {
  std::unique_ptr<Client> client = CreateTestClient(2);
  ASSERT_NE(client, nullptr);
  ExpectDeviceModel(client.get(), 2);
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
