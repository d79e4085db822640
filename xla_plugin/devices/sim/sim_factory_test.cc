#include "xla_plugin/devices/sim/sim_factory.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/client/key_value_store.h"
#include "xla_plugin/devices/sim/sim_client.h"

namespace pjrtkit {
namespace sim {
namespace {

// A store nobody else uses (a multi-process job needs one).
class LocalStore : public KeyValueStore {
 public:
  StatusOr<std::string> Get(const std::string& key, int) override { return TryGet(key); }
  StatusOr<std::string> TryGet(const std::string& key) override {
    return NotFound("no key " + key);
  }
  Status Put(const std::string&, const std::string&) override { return OkStatus(); }
};

TEST(SimFactoryTest, PluginAttributes) {
  ASSERT_TRUE(SimFactory::Initialize().ok());
  ASSERT_TRUE(SimFactory::Initialize().ok());
  const AttributeMap attributes = SimFactory::PluginAttributes();
  EXPECT_EQ(std::get<int64_t>(attributes.at("xla_version")), 2);
  // The versions of the process's StableHLO library (sim_stablehlo.h), or the oldest a reader
  // accepts when there is none: triples, minimum <= current.
  const auto& current = std::get<std::vector<int64_t>>(attributes.at("stablehlo_current_version"));
  const auto& minimum = std::get<std::vector<int64_t>>(attributes.at("stablehlo_minimum_version"));
  ASSERT_EQ(current.size(), 3u);
  ASSERT_EQ(minimum.size(), 3u);
  EXPECT_LE(minimum, current);
  EXPECT_EQ(std::get<std::string>(attributes.at("pjrtkit_version")), "0.1.0");
}

TEST(SimFactoryTest, OptionSpecsAreSimOptions) {
  const std::vector<OptionSpec> specs = SimFactory::OptionSpecs();
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].name, "device_count");
  EXPECT_EQ(specs[1].name, "memory_mib");
  EXPECT_EQ(specs[2].name, "stablehlo_library_path");
}

TEST(SimFactoryTest, CreateClientWithOptions) {
  StatusOr<std::unique_ptr<Client>> client =
      SimFactory::CreateClient({{"device_count", int64_t{3}}, {"memory_mib", int64_t{8}}});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->devices().size(), 3u);
  EXPECT_EQ((*client)->platform_name(), "pjrtkit");
  auto* sim = dynamic_cast<SimClient*>(client->get());
  ASSERT_NE(sim, nullptr);
  EXPECT_EQ(sim->options().memory_mib(), 8);
  StatusOr<std::unique_ptr<Client>> defaults = SimFactory::CreateClient({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ((*defaults)->devices().size(), 4u);
  EXPECT_EQ(SimFactory::CreateClient({{"device_count", int64_t{0}}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(SimFactoryTest, MultiProcessJobsAreRefused) {
  AttributeMap options = {{"node_id", int64_t{1}}, {"num_nodes", int64_t{2}}};
  StatusOr<MultiProcess> job = MultiProcess::FromOptions(&options, std::make_shared<LocalStore>());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  StatusOr<std::unique_ptr<Client>> client = SimFactory::CreateClient(options, *job);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(client.status().message().find("the sim device runs in a single process, but this is "
                                           "process 1 of a job of 2"),
            std::string::npos)
      << client.status().message();
  // One process with node options is fine.
  AttributeMap single = {{"node_id", int64_t{0}}, {"num_nodes", int64_t{1}}};
  StatusOr<MultiProcess> alone = MultiProcess::FromOptions(&single, nullptr);
  ASSERT_TRUE(alone.ok());
  EXPECT_TRUE(SimFactory::CreateClient(single, *alone).ok());
}

TEST(SimFactoryTest, TopologyWithoutAClient) {
  StatusOr<std::unique_ptr<Topology>> topology =
      SimFactory::CreateTopology("", {{"device_count", int64_t{8}}, {"memory_mib", int64_t{1}}});
  ASSERT_TRUE(topology.ok()) << topology.status().ToString();
  EXPECT_EQ((*topology)->platform_name(), "pjrtkit");
  ASSERT_EQ((*topology)->devices().size(), 8u);
  EXPECT_EQ((*topology)->devices()[7].debug_string(), "PJRTKIT_SIM_7");
  EXPECT_EQ(std::get<int64_t>((*topology)->devices()[7].attributes().at("memory_capacity_bytes")),
            1 << 20);
  EXPECT_EQ(SimFactory::CreateTopology("", {{"bogus", int64_t{1}}}).status().code(),
            StatusCode::kInvalidArgument);
  // Compiling ahead of time reads the program (an empty one is refused).
  StatusOr<std::shared_ptr<Executable>> compiled =
      (*topology)->Compile(Program{"mlir", ""}, "", nullptr);
  EXPECT_FALSE(compiled.ok());
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
