// CallbackKeyValueStore: the framework's key-value callbacks, including after its client is gone.
#include "xla_plugin/c_api/key_value_callbacks.h"

#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace capi {
namespace {

// The framework's side: a map, and how often each callback ran.
struct FakeFramework {
  std::map<std::string, std::string> values;
  int gets = 0;
  int puts = 0;
};

void DeleteValue(char* value) { delete[] value; }

PJRT_Error* Get(PJRT_KeyValueGetCallback_Args* args) {
  auto* framework = static_cast<FakeFramework*>(args->user_arg);
  ++framework->gets;
  const std::string key(args->key, args->key_size);
  auto it = framework->values.find(key);
  if (it == framework->values.end()) {
    const std::string message = "no " + key;
    return (*args->callback_error)(PJRT_Error_Code_NOT_FOUND, message.data(), message.size());
  }
  char* value = new char[it->second.size()];
  std::memcpy(value, it->second.data(), it->second.size());
  args->value = value;
  args->value_size = it->second.size();
  args->value_deleter_callback = &DeleteValue;
  return nullptr;
}

PJRT_Error* Put(PJRT_KeyValuePutCallback_Args* args) {
  auto* framework = static_cast<FakeFramework*>(args->user_arg);
  ++framework->puts;
  framework->values[std::string(args->key, args->key_size)] =
      std::string(args->value, args->value_size);
  return nullptr;
}

PJRT_Client_Create_Args CreateArgs(FakeFramework* framework) {
  PJRT_Client_Create_Args args{};
  args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  args.kv_get_callback = &Get;
  args.kv_get_user_arg = framework;
  args.kv_put_callback = &Put;
  args.kv_put_user_arg = framework;
  return args;
}

TEST(CallbackKeyValueStoreTest, NoCallbacksIsNoStore) {
  PJRT_Client_Create_Args args{};
  args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  StatusOr<std::shared_ptr<CallbackKeyValueStore>> store = CallbackKeyValueStore::FromArgs(args);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*store, nullptr);
}

TEST(CallbackKeyValueStoreTest, OneCallbackAloneIsInvalidArgument) {
  FakeFramework framework;
  PJRT_Client_Create_Args args = CreateArgs(&framework);
  args.kv_put_callback = nullptr;
  StatusOr<std::shared_ptr<CallbackKeyValueStore>> store = CallbackKeyValueStore::FromArgs(args);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.status().message(),
            "PJRT_Client_Create: kv_get_callback and kv_put_callback must be set together (the "
            "framework's key-value store)");
}

TEST(CallbackKeyValueStoreTest, PutGetAndTheFrameworksErrors) {
  FakeFramework framework;
  StatusOr<std::shared_ptr<CallbackKeyValueStore>> store =
      CallbackKeyValueStore::FromArgs(CreateArgs(&framework));
  ASSERT_TRUE(store.ok() && *store != nullptr);
  ASSERT_TRUE((*store)->Put("k", "v1").ok());
  StatusOr<std::string> value = (*store)->Get("k", 100);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, "v1");
  StatusOr<std::string> missing = (*store)->Get("other", 100);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "key-value store get 'other': no other");
  StatusOr<std::string> try_get = (*store)->TryGet("k");
  ASSERT_FALSE(try_get.ok());
  EXPECT_EQ(try_get.status().code(), StatusCode::kUnimplemented);
}

TEST(CallbackKeyValueStoreTest, AfterCloseNoCallbackRuns) {
  auto framework = std::make_unique<FakeFramework>();
  StatusOr<std::shared_ptr<CallbackKeyValueStore>> store =
      CallbackKeyValueStore::FromArgs(CreateArgs(framework.get()));
  ASSERT_TRUE(store.ok() && *store != nullptr);
  (*store)->Close();
  (*store)->Close();  // Idempotent.
  framework.reset();  // The framework frees its callback data, as jaxlib may after destroy.
  Status put = (*store)->Put("k", "v");
  EXPECT_EQ(put.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(put.message(),
            "key-value store put 'k': the framework's key-value store is gone (its PJRT_Client "
            "was destroyed)");
  EXPECT_EQ((*store)->Get("k", 100).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*store)->TryGet("k").status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace capi
}  // namespace pjrtkit
