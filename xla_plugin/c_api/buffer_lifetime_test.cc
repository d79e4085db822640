// Memory a framework holds through PJRT_Buffer_IncreaseExternalReferenceCount outlives
// PJRT_Buffer_Delete and PJRT_Buffer_Destroy until the last reference is dropped (jaxlib's
// buffer protocol and DLPack read it through OpaqueDeviceMemoryDataPointer after Array.delete()).

// C++ standard library.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

class BufferLifetimeTest : public ClientTest {
 protected:
  // bytes_in_use of `device` (PJRT_Device_MemoryStats).
  int64_t BytesInUse(PJRT_Device* device) {
    auto stats = MakeArgs<PJRT_Device_MemoryStats_Args>();
    stats.device = device;
    EXPECT_PJRT_OK(api_->PJRT_Device_MemoryStats(&stats));
    return stats.bytes_in_use;
  }
  ErrorInfo Increase(PJRT_Buffer* buffer) {
    auto args = MakeArgs<PJRT_Buffer_IncreaseExternalReferenceCount_Args>();
    args.buffer = buffer;
    return Consume(api_->PJRT_Buffer_IncreaseExternalReferenceCount(&args));
  }
  ErrorInfo Decrease(PJRT_Buffer* buffer) {
    auto args = MakeArgs<PJRT_Buffer_DecreaseExternalReferenceCount_Args>();
    args.buffer = buffer;
    return Consume(api_->PJRT_Buffer_DecreaseExternalReferenceCount(&args));
  }
  ErrorInfo Delete(PJRT_Buffer* buffer) {
    auto args = MakeArgs<PJRT_Buffer_Delete_Args>();
    args.buffer = buffer;
    return Consume(api_->PJRT_Buffer_Delete(&args));
  }
  // PJRT_Buffer_OpaqueDeviceMemoryDataPointer (nullptr on error, which fails the test).
  const float* DataPointer(PJRT_Buffer* buffer) {
    auto args = MakeArgs<PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args>();
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&args));
    return static_cast<const float*>(args.device_memory_ptr);
  }
  // A zero-copy upload of `data` to `device` of `client`; its done_with_host_buffer event is
  // returned in `*done` (set when the runtime lets go of `data`).
  PJRT_Buffer* UploadZeroCopy(PJRT_Client* client, PJRT_Device* device,
                              const std::vector<float>& data, PJRT_Event** done) {
    const int64_t dims[] = {static_cast<int64_t>(data.size())};
    auto args = MakeArgs<PJRT_Client_BufferFromHostBuffer_Args>();
    args.client = client;
    args.data = data.data();
    args.type = PJRT_Buffer_Type_F32;
    args.dims = dims;
    args.num_dims = 1;
    args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableZeroCopy;
    args.device = device;
    EXPECT_PJRT_OK(api_->PJRT_Client_BufferFromHostBuffer(&args));
    *done = args.done_with_host_buffer;
    return args.buffer;
  }
  bool IsReady(PJRT_Event* event) {
    auto args = MakeArgs<PJRT_Event_IsReady_Args>();
    args.event = event;
    EXPECT_PJRT_OK(api_->PJRT_Event_IsReady(&args));
    return args.is_ready;
  }
};

TEST_F(BufferLifetimeTest, DeleteKeepsTheMemoryUntilTheLastExternalReferenceIsDropped) {
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 7.0f};
  const int64_t before = BytesInUse(devices_[0]);
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], values, {4});
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(BytesInUse(devices_[0]), before + 16);
  ASSERT_TRUE(Increase(buffer).ok);
  ASSERT_TRUE(Increase(buffer).ok);  // Two references.
  const float* data = DataPointer(buffer);
  ASSERT_NE(data, nullptr);

  ASSERT_TRUE(Delete(buffer).ok);
  EXPECT_TRUE(IsDeleted(buffer));
  // The memory is still held for the references: counted, and the data unchanged.
  ASSERT_EQ(BytesInUse(devices_[0]), before + 16);
  EXPECT_EQ(std::vector<float>(data, data + 4), values);
  ASSERT_TRUE(Decrease(buffer).ok);
  ASSERT_EQ(BytesInUse(devices_[0]), before + 16);
  EXPECT_EQ(std::vector<float>(data, data + 4), values);
  EXPECT_TRUE(IsDeleted(buffer));

  ASSERT_TRUE(Decrease(buffer).ok);  // The last one: the memory goes now.
  EXPECT_EQ(BytesInUse(devices_[0]), before);
  EXPECT_TRUE(IsDeleted(buffer));
  EXPECT_EQ(Decrease(buffer).code, PJRT_Error_Code_FAILED_PRECONDITION);
  DestroyBuffer(buffer);
  EXPECT_EQ(BytesInUse(devices_[0]), before);
}

TEST_F(BufferLifetimeTest, ABufferDeletedWhileReferencedIsDeletedForEveryUse) {
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[0], {1, 2}, {2});
  ASSERT_NE(buffer, nullptr);
  ASSERT_TRUE(Increase(buffer).ok);
  ASSERT_TRUE(Delete(buffer).ok);

  std::vector<float> out(2);
  auto to_host = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>();
  to_host.src = buffer;
  to_host.dst = out.data();
  to_host.dst_size = 8;
  ErrorInfo info = Consume(api_->PJRT_Buffer_ToHostBuffer(&to_host));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message, "PJRT_Buffer_ToHostBuffer: the buffer has been deleted or donated");
  info = Increase(buffer);
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_Buffer_IncreaseExternalReferenceCount: the buffer has been deleted or donated");
  auto pointer = MakeArgs<PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args>();
  pointer.buffer = buffer;
  EXPECT_EQ(Consume(api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&pointer)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  auto copy = MakeArgs<PJRT_Buffer_CopyToDevice_Args>();
  copy.buffer = buffer;
  copy.dst_device = devices_[1];
  EXPECT_EQ(Consume(api_->PJRT_Buffer_CopyToDevice(&copy)).code,
            PJRT_Error_Code_FAILED_PRECONDITION);
  auto ready = MakeArgs<PJRT_Buffer_ReadyEvent_Args>();
  ready.buffer = buffer;
  ASSERT_PJRT_OK(api_->PJRT_Buffer_ReadyEvent(&ready));
  EXPECT_EQ(AwaitAndDestroy(ready.event).code, PJRT_Error_Code_FAILED_PRECONDITION);

  // Execute refuses it as an argument.
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2]");
  ASSERT_NE(loaded, nullptr);
  auto options = MakeArgs<PJRT_ExecuteOptions>();
  PJRT_Buffer* list[] = {buffer};
  PJRT_Buffer* const* lists[] = {list};
  PJRT_Buffer* outputs[1] = {nullptr};
  PJRT_Buffer** output_lists[] = {outputs};
  auto execute = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
  execute.executable = loaded;
  execute.options = &options;
  execute.argument_lists = lists;
  execute.num_devices = 1;
  execute.num_args = 1;
  execute.output_lists = output_lists;
  info = Consume(api_->PJRT_LoadedExecutable_Execute(&execute));
  EXPECT_EQ(info.code, PJRT_Error_Code_FAILED_PRECONDITION);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_Execute: argument_lists[0][0] has been deleted or donated; "
            "only a live buffer is accepted");
  DestroyLoaded(loaded);

  ASSERT_TRUE(Decrease(buffer).ok);
  EXPECT_TRUE(IsDeleted(buffer));
  DestroyBuffer(buffer);
}

TEST_F(BufferLifetimeTest, DestroyKeepsReferencedMemoryUntilTheClientIsDestroyed) {
  PJRT_Client* client = CreateClient();  // Its own client, destroyed by the test.
  ASSERT_NE(client, nullptr);
  const std::vector<float> values = {4.0f, 5.0f, 6.0f};
  PJRT_Event* done = nullptr;
  PJRT_Buffer* buffer = UploadZeroCopy(client, AddressableDevices(client)[0], values, &done);
  ASSERT_NE(buffer, nullptr);
  ASSERT_NE(done, nullptr);
  EXPECT_FALSE(IsReady(done));  // The buffer aliases `values`.
  ASSERT_TRUE(Increase(buffer).ok);
  const float* data = DataPointer(buffer);
  EXPECT_EQ(data, values.data());

  DestroyBuffer(buffer);  // A reference is still held: the runtime keeps using `values`.
  EXPECT_FALSE(IsReady(done));
  DestroyClient(client);  // Frees what references kept.
  EXPECT_TRUE(IsReady(done));
  EXPECT_TRUE(AwaitAndDestroy(done).ok);
}

TEST_F(BufferLifetimeTest, DestroyWithoutReferencesReleasesAtOnce) {
  const std::vector<float> values = {4.0f, 5.0f};
  PJRT_Event* done = nullptr;
  PJRT_Buffer* buffer = UploadZeroCopy(client_, devices_[0], values, &done);
  ASSERT_NE(buffer, nullptr);
  ASSERT_TRUE(Increase(buffer).ok);
  ASSERT_TRUE(Decrease(buffer).ok);
  EXPECT_FALSE(IsReady(done));
  DestroyBuffer(buffer);
  EXPECT_TRUE(IsReady(done));
  EXPECT_TRUE(AwaitAndDestroy(done).ok);
}

TEST_F(BufferLifetimeTest, DeleteWithoutReferencesReleasesAtOnce) {
  const int64_t before = BytesInUse(devices_[1]);
  PJRT_Buffer* buffer = MakeF32Buffer(client_, devices_[1], {1, 2, 3}, {3});
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(BytesInUse(devices_[1]), before + 12);
  ASSERT_TRUE(Delete(buffer).ok);
  EXPECT_EQ(BytesInUse(devices_[1]), before);
  DestroyBuffer(buffer);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
