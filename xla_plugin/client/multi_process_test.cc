#include "xla_plugin/client/multi_process.h"

#include <map>
#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace {

// A store in memory (one process).
class MapStore : public KeyValueStore {
 public:
  StatusOr<std::string> Get(const std::string& key, int) override { return TryGet(key); }
  StatusOr<std::string> TryGet(const std::string& key) override {
    auto it = values_.find(key);
    if (it == values_.end()) return NotFound(key);
    return it->second;
  }
  Status Put(const std::string& key, const std::string& value) override {
    values_[key] = value;
    return OkStatus();
  }

 private:
  std::map<std::string, std::string> values_;
};

TEST(MultiProcessTest, NoNodeOptionsIsOneProcess) {
  AttributeMap options = {{"device_count", int64_t{2}}};
  StatusOr<MultiProcess> job = MultiProcess::FromOptions(&options, nullptr);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->process_index(), 0);
  EXPECT_EQ(job->num_processes(), 1);
  EXPECT_FALSE(job->is_multi_process());
  EXPECT_FALSE(job->node_options_given());
  EXPECT_EQ(options.size(), 1u);
}

TEST(MultiProcessTest, TakesNodeOptionsOutOfTheDeviceOptions) {
  AttributeMap options = {{"node_id", int64_t{1}}, {"num_nodes", int64_t{2}},
                          {"device_count", int64_t{2}}};
  StatusOr<MultiProcess> job = MultiProcess::FromOptions(&options, std::make_shared<MapStore>());
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->process_index(), 1);
  EXPECT_EQ(job->num_processes(), 2);
  EXPECT_TRUE(job->is_multi_process());
  ASSERT_NE(job->store(), nullptr);
  EXPECT_EQ(options.size(), 1u);
  EXPECT_EQ(options.count("device_count"), 1u);
}

TEST(MultiProcessTest, AcceptsDecimalStrings) {
  AttributeMap options = {{"node_id", std::string("0")}, {"num_nodes", std::string("3")}};
  StatusOr<MultiProcess> job = MultiProcess::FromOptions(&options, std::make_shared<MapStore>());
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->num_processes(), 3);
}

TEST(MultiProcessTest, RejectsBadValuesWithExactErrors) {
  const auto error = [](AttributeMap options, bool store) {
    StatusOr<MultiProcess> job =
        MultiProcess::FromOptions(&options, store ? std::make_shared<MapStore>() : nullptr);
    EXPECT_FALSE(job.ok());
    if (job.ok()) return std::string("ok");
    EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
    return job.status().message();
  };
  EXPECT_EQ(error({{"node_id", 1.5f}, {"num_nodes", int64_t{2}}}, true),
            "create option 'node_id' must be an int64 (the framework's node option), got float");
  EXPECT_EQ(error({{"node_id", int64_t{2}}, {"num_nodes", int64_t{2}}}, true),
            "create option 'node_id' must be in [0, num_nodes) = [0, 2), got 2");
  EXPECT_EQ(error({{"node_id", int64_t{-1}}, {"num_nodes", int64_t{2}}}, true),
            "create option 'node_id' must be in [0, num_nodes) = [0, 2), got -1");
  EXPECT_EQ(error({{"node_id", int64_t{0}}}, true),
            "create option 'node_id' needs 'num_nodes' (the number of processes)");
  EXPECT_EQ(error({{"num_nodes", int64_t{2}}}, true),
            "create option 'num_nodes' (2) needs 'node_id' (this process's index in [0, "
            "num_nodes))");
  EXPECT_EQ(error({{"num_nodes", int64_t{0}}}, true),
            "create option 'num_nodes' must be in [1, 65536], got 0");
  EXPECT_EQ(error({{"node_id", int64_t{0}}, {"num_nodes", int64_t{65537}}}, true),
            "create option 'num_nodes' must be in [1, 65536], got 65537");
  EXPECT_EQ(error({{"node_id", std::string("1234567890")}, {"num_nodes", int64_t{2}}}, true),
            "create option 'node_id' must be an int64 (the framework's node option), got string");
  EXPECT_EQ(error({{"node_id", int64_t{0}}, {"num_nodes", int64_t{2}}}, false),
            "a client of 2 processes (create option 'num_nodes') needs the framework's key-value "
            "store: PJRT_Client_Create_Args.kv_get_callback and kv_put_callback were not set");
}

TEST(MultiProcessTest, OneProcessMayGiveNumNodesAlone) {
  AttributeMap options = {{"num_nodes", int64_t{1}}};
  StatusOr<MultiProcess> job = MultiProcess::FromOptions(&options, nullptr);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_FALSE(job->is_multi_process());
}

}  // namespace
}  // namespace pjrtkit
