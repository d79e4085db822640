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

TEST(MultiProcessTest, RejectsBadValues) {
  const auto error = [](AttributeMap options, bool store) {
    StatusOr<MultiProcess> job =
        MultiProcess::FromOptions(&options, store ? std::make_shared<MapStore>() : nullptr);
    EXPECT_FALSE(job.ok());
    return job.ok() ? std::string() : job.status().message();
  };
  EXPECT_NE(error({{"node_id", 1.5f}, {"num_nodes", int64_t{2}}}, true)
                .find("'node_id' must be an int64"),
            std::string::npos);
  EXPECT_NE(error({{"node_id", int64_t{2}}, {"num_nodes", int64_t{2}}}, true)
                .find("must be in [0, num_nodes) = [0, 2), got 2"),
            std::string::npos);
  EXPECT_NE(error({{"node_id", int64_t{0}}}, true).find("needs 'num_nodes'"), std::string::npos);
  EXPECT_NE(error({{"num_nodes", int64_t{0}}}, true).find("[1, 65536]"), std::string::npos);
  EXPECT_NE(error({{"node_id", int64_t{0}}, {"num_nodes", int64_t{2}}}, false)
                .find("needs the framework's key-value store"),
            std::string::npos);
}

}  // namespace
}  // namespace pjrtkit
