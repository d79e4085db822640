// The registry: the registered devices, their checks, and the JSON the Python side reads.
#include "xla_plugin/devices/registry/registry.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace registry {
namespace {

TEST(RegistryTest, TheReferenceDevicesAreRegisteredInOrderAndComplete) {
  const std::vector<DeviceEntry>& devices = Registry::Devices();
  ASSERT_GE(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "xla_cpu");
  EXPECT_EQ(devices[1].name, "xla_gpu");
  std::set<std::string> names;
  for (const DeviceEntry& device : devices) {
    SCOPED_TRACE(device.name);
    EXPECT_TRUE(names.insert(device.name).second) << "registered twice";
    EXPECT_TRUE(device.runs_like == kRunsLikeXlaCpu || device.runs_like == kRunsLikeXlaGpu ||
                device.runs_like == kRunsLikeStablehlo)
        << device.runs_like;
    EXPECT_FALSE(device.summary.empty());
    EXPECT_NE(device.initialize, nullptr);
    EXPECT_NE(device.plugin_attributes, nullptr);
    EXPECT_NE(device.option_specs, nullptr);
    EXPECT_NE(device.create_client, nullptr);
    EXPECT_NE(device.create_topology, nullptr);
    for (const OptionSpec& spec : device.option_specs()) EXPECT_NE(spec.name, "device");
  }
  EXPECT_EQ(Registry::Find("xla_gpu"), &devices[1]);
  EXPECT_EQ(Registry::Find("tpu"), nullptr);
  // The reference devices wrap an inner plugin, which their process loads.
  for (const DeviceEntry* device : {&devices[0], &devices[1]}) {
    ASSERT_TRUE(device->inner_plugin.has_value()) << device->name;
    EXPECT_NE(device->inner_plugin->load_process_plugin, nullptr);
  }
  EXPECT_EQ(devices[0].inner_plugin->path_option, "xla_cpu_plugin_path");
  EXPECT_EQ(devices[1].inner_plugin->path_env, "PJRTKIT_XLA_GPU_PLUGIN");
}

std::vector<OptionSpec> TwoOptions() {
  return {{"count", AttributeValue(int64_t{4}), "how \"many\""},
          {"ratio", AttributeValue(0.5f), "a\\b"}};
}

TEST(RegistryTest, JsonAndAcceptedNamesAreExact) {
  DeviceEntry one;
  one.name = "one";
  one.runs_like = "xla_cpu";
  one.summary = "first";
  one.auto_priority = 3;
  one.inner_plugin = InnerPluginFacts{"one_plugin_path", "ONE_PLUGIN", nullptr};
  one.option_specs = &TwoOptions;
  // A device with its own compiler and runtime: no inner plugin.
  DeviceEntry two;
  two.name = "two";
  two.runs_like = kRunsLikeStablehlo;
  EXPECT_EQ(Registry::ToJson({one, two}),
            "[{\"name\":\"one\",\"runs_like\":\"xla_cpu\",\"summary\":\"first\","
            "\"auto_priority\":3,\"inner_plugin_option\":\"one_plugin_path\","
            "\"inner_plugin_env\":\"ONE_PLUGIN\",\"options\":["
            "{\"name\":\"count\",\"type\":\"int64\",\"default\":4,\"help\":\"how \\\"many\\\"\"},"
            "{\"name\":\"ratio\",\"type\":\"float\",\"default\":0.5,\"help\":\"a\\\\b\"}]},"
            "{\"name\":\"two\",\"runs_like\":\"stablehlo\",\"summary\":\"\",\"auto_priority\":0,"
            "\"inner_plugin_option\":\"\",\"inner_plugin_env\":\"\",\"options\":[]}]");
  EXPECT_EQ(Registry::AcceptedNames({one, two}), "'one', 'two' or 'auto'");
  EXPECT_EQ(Registry::AcceptedNames({one}), "'one' or 'auto'");
  // The reference devices first; devices tools/new_device.py adds follow them.
  const std::string registered = Registry::AcceptedNames();
  EXPECT_EQ(registered.rfind("'xla_cpu', 'xla_gpu'", 0), 0u) << registered;
  EXPECT_EQ(registered.substr(registered.size() - 10), " or 'auto'") << registered;
}

}  // namespace
}  // namespace registry
}  // namespace pjrtkit
