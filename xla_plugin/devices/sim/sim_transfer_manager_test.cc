#include "xla_plugin/devices/sim/sim_transfer_manager.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/sim_client.h"
#include "xla_plugin/devices/sim/sim_test_util.h"

namespace pjrtkit {
namespace sim {
namespace {

using testing::BytesInUse;
using testing::MakeClient;
using testing::ReadVector;

// A manager of `shapes` on device 0 of `client`.
std::unique_ptr<AsyncHostToDeviceTransferManager> MakeManager(
    SimClient& client, const std::vector<BufferShape>& shapes) {
  StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>> manager =
      client.CreateBuffersForAsyncHostToDevice(shapes, {}, client.memories()[0]);
  EXPECT_TRUE(manager.ok()) << manager.status().ToString();
  return manager.ok() ? std::move(manager).value() : nullptr;
}

TEST(SimTransferManagerTest, ChunksFillTheBuffersWhichBecomeReadyAfterTheLast) {
  std::unique_ptr<SimClient> client = MakeClient();
  std::unique_ptr<AsyncHostToDeviceTransferManager> manager =
      MakeManager(*client, {{ElementType::kS32, {6}}, {ElementType::kF64, {2}}});
  ASSERT_NE(manager, nullptr);
  EXPECT_EQ(manager->buffer_count(), 2u);
  EXPECT_EQ(*manager->buffer_size(0), 24u);
  EXPECT_EQ(*manager->buffer_size(1), 16u);
  EXPECT_EQ(manager->device(), client->devices()[0]);
  EXPECT_EQ(BytesInUse(*client->devices()[0]), 64 + 64) << "allocated up front";
  StatusOr<std::unique_ptr<Buffer>> buffer = manager->RetrieveBuffer(0);
  ASSERT_TRUE(buffer.ok());
  EXPECT_FALSE((*buffer)->ReadyEvent()->IsReady());
  const std::vector<int32_t> data = {3, 1, 4, 1, 5, 9};
  // A read queued before the data arrives waits for it (the chunks do not go through the queue).
  std::vector<int32_t> early(6, 0);
  StatusOr<std::shared_ptr<Event>> read = (*buffer)->ToHostBuffer(early.data(), 24, nullptr);
  ASSERT_TRUE(read.ok());
  StatusOr<std::shared_ptr<Event>> second_half = manager->TransferData(0, data.data() + 3, 12, 12,
                                                                       /*is_last=*/false);
  ASSERT_TRUE(second_half.ok());
  EXPECT_TRUE((*second_half)->Await().ok());
  EXPECT_FALSE((*buffer)->ReadyEvent()->IsReady());
  StatusOr<std::shared_ptr<Event>> first_half = manager->TransferData(0, data.data(), 0, 12,
                                                                      /*is_last=*/true);
  ASSERT_TRUE(first_half.ok());
  EXPECT_TRUE((*buffer)->ReadyEvent()->Await().ok());
  EXPECT_TRUE((*read)->Await().ok());
  EXPECT_EQ(early, data);
  EXPECT_EQ(*ReadVector<int32_t>(**buffer), data);
  // After the last chunk: more data is an error.
  EXPECT_EQ(manager->TransferData(0, data.data(), 0, 4, false).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(manager->SetBufferError(0, Status(StatusCode::kDataLoss, "late")).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(manager->RetrieveBuffer(0).status().code(), StatusCode::kFailedPrecondition);
}

TEST(SimTransferManagerTest, ErrorsReachTheBufferAndBadChunksAreRefused) {
  std::unique_ptr<SimClient> client = MakeClient();
  std::unique_ptr<AsyncHostToDeviceTransferManager> manager =
      MakeManager(*client, {{ElementType::kF32, {8}}});
  const std::vector<float> data(8, 1.0f);
  EXPECT_EQ(manager->TransferData(0, data.data(), 24, 16, false).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(manager->TransferData(1, data.data(), 0, 4, false).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(manager->TransferData(0, nullptr, 0, 4, false).status().code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(manager->SetBufferError(0, Status(StatusCode::kDataLoss, "injected")).ok());
  StatusOr<std::unique_ptr<Buffer>> buffer = manager->RetrieveBuffer(0);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ((*buffer)->ReadyEvent()->Await().code(), StatusCode::kDataLoss);
  EXPECT_EQ((*buffer)->ReadyEvent()->Await().message(), "injected");
  EXPECT_EQ(ReadVector<float>(**buffer).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(manager->TransferData(0, data.data(), 0, 4, true).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(SimTransferManagerTest, DestroyingTheManagerFailsWaitingBuffersSoQueuesMoveOn) {
  std::unique_ptr<SimClient> client = MakeClient();
  std::unique_ptr<AsyncHostToDeviceTransferManager> manager =
      MakeManager(*client, {{ElementType::kU8, {16}}});
  StatusOr<std::unique_ptr<Buffer>> buffer = manager->RetrieveBuffer(0);
  ASSERT_TRUE(buffer.ok());
  std::vector<uint8_t> out(16);
  StatusOr<std::shared_ptr<Event>> read = (*buffer)->ToHostBuffer(out.data(), 16, nullptr);
  ASSERT_TRUE(read.ok());
  manager.reset();
  EXPECT_EQ((*read)->Await().code(), StatusCode::kCancelled);
  const std::vector<float> values = {1, 2};
  StatusOr<std::unique_ptr<Buffer>> later =
      testing::UploadVector(*client, client->devices()[0], values, ElementType::kF32, {2});
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(*ReadVector<float>(**later), values);
}

TEST(SimTransferManagerTest, ShapesTheDeviceCannotHoldAreRefused) {
  std::unique_ptr<SimClient> client = MakeClient(1, 1);
  StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>> too_big =
      client->CreateBuffersForAsyncHostToDevice({{ElementType::kF32, {1 << 20}}}, {},
                                                client->memories()[0]);
  EXPECT_EQ(too_big.status().code(), StatusCode::kResourceExhausted);
  StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>> int4 =
      client->CreateBuffersForAsyncHostToDevice({{ElementType::kToken, {8}}}, {},
                                                client->memories()[0]);
  EXPECT_EQ(int4.status().code(), StatusCode::kUnimplemented);
  StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>> column_major =
      client->CreateBuffersForAsyncHostToDevice(
          {{ElementType::kF32, {2, 3}}}, {MemoryLayout{{0, 1}, {}, 0}}, client->memories()[0]);
  EXPECT_EQ(column_major.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(BytesInUse(*client->devices()[0]), 0);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
