// SimBuffer: reads, copies between devices, deletion while work is queued, donation, errors.
#include "xla_plugin/devices/sim/sim_buffer.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
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
using testing::UploadVector;

class SimBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeClient(2, 16);
    ASSERT_NE(client_, nullptr);
    StatusOr<std::unique_ptr<Buffer>> buffer =
        UploadVector(*client_, client_->devices()[0], values_, ElementType::kF32, {2, 3});
    ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
    buffer_ = std::move(buffer).value();
  }

  SimBuffer& sim() { return static_cast<SimBuffer&>(*buffer_); }

  // Holds device `id`'s queue until the returned event is set.
  std::shared_ptr<Event> Block(int id) {
    std::shared_ptr<Event> gate = Event::Create();
    client_->sim_device(id)->queue().Enqueue([gate] { gate->Await(); });
    return gate;
  }

  // A buffer on device `id` whose readiness is `ready`, over a fresh allocation holding `values`.
  std::unique_ptr<SimBuffer> Manual(int id, const std::vector<float>& values,
                                    std::shared_ptr<Event> ready) {
    SimDevice* device = client_->sim_device(id);
    StatusOr<std::shared_ptr<Allocation>> allocation =
        device->memory().Allocate(values.size() * sizeof(float), "test");
    EXPECT_TRUE(allocation.ok());
    std::memcpy((*allocation)->data(), values.data(), values.size() * sizeof(float));
    return std::make_unique<SimBuffer>(device, ElementType::kF32,
                                       std::vector<int64_t>{static_cast<int64_t>(values.size())},
                                       *allocation, std::move(ready));
  }

  const std::vector<float> values_ = {1.5f, -2.0f, 3.25f, 0.0f, 1e6f, -7.5f};  // f32[2,3].
  std::unique_ptr<SimClient> client_;
  std::unique_ptr<Buffer> buffer_;
};

TEST_F(SimBufferTest, Metadata) {
  EXPECT_EQ(buffer_->element_type(), ElementType::kF32);
  EXPECT_EQ(buffer_->dimensions(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(buffer_->device(), client_->devices()[0]);
  EXPECT_EQ(buffer_->memory(), client_->memories()[0]);
  EXPECT_EQ(sim().sim_device(), client_->sim_device(0));
  EXPECT_EQ(*buffer_->OnDeviceSizeInBytes(), 24u);
  EXPECT_FALSE(buffer_->IsOnCpu());
  EXPECT_FALSE(buffer_->IsDeleted());
  StatusOr<MemoryLayout> layout = buffer_->layout();
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(buffer_->ReadyEvent()->Await().ok());
  ASSERT_NE(sim().allocation(), nullptr);
  EXPECT_EQ(sim().allocation()->size(), 24);
  EXPECT_EQ(sim().allocation()->device_id(), 0);
}

TEST_F(SimBufferTest, ToHostBufferDenseAndInAnyDenseHostLayout) {
  EXPECT_EQ(*ReadVector<float>(*buffer_), values_);
  EXPECT_EQ(*buffer_->HostBufferSize(nullptr), 24u);
  MemoryLayout column_major{{0, 1}, {}, 0};
  EXPECT_EQ(*buffer_->HostBufferSize(&column_major), 24u);
  std::vector<float> transposed(6, 0.0f);
  StatusOr<std::shared_ptr<Event>> event =
      buffer_->ToHostBuffer(transposed.data(), 24, &column_major);
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  ASSERT_TRUE((*event)->Await().ok());
  EXPECT_EQ(transposed, (std::vector<float>{1.5f, 0.0f, -2.0f, 1e6f, 3.25f, -7.5f}));
  MemoryLayout tiled{{1, 0}, {{8, 128}}, 0};
  EXPECT_EQ(buffer_->HostBufferSize(&tiled).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(buffer_->ToHostBuffer(transposed.data(), 24, &tiled).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(buffer_->ToHostBuffer(transposed.data(), 20, nullptr).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(SimBufferTest, CopyRawToHost) {
  float middle[2] = {0, 0};
  StatusOr<std::shared_ptr<Event>> event = buffer_->CopyRawToHost(middle, 8, 8);
  ASSERT_TRUE(event.ok());
  ASSERT_TRUE((*event)->Await().ok());
  EXPECT_EQ(middle[0], 3.25f);
  EXPECT_EQ(middle[1], 0.0f);
  EXPECT_TRUE(buffer_->CopyRawToHost(middle, 24, 0).ok());
  StatusOr<std::shared_ptr<Event>> outside = buffer_->CopyRawToHost(middle, 20, 8);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("[20, 28) are outside the 24 bytes of f32[2,3] on "
                                            "PJRTKIT_SIM_0"),
            std::string::npos)
      << outside.status().message();
}

TEST_F(SimBufferTest, CopiesToAnotherDeviceAndMemoryKeepTheData) {
  StatusOr<std::unique_ptr<Buffer>> copy = buffer_->CopyToDevice(client_->devices()[1]);
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_EQ((*copy)->device(), client_->devices()[1]);
  EXPECT_EQ((*copy)->memory(), client_->memories()[1]);
  EXPECT_TRUE((*copy)->ReadyEvent()->Await().ok());
  EXPECT_EQ(*ReadVector<float>(**copy), values_);
  StatusOr<std::unique_ptr<Buffer>> same = buffer_->CopyToMemory(client_->memories()[0]);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*same)->device(), client_->devices()[0]);
  EXPECT_EQ(*ReadVector<float>(**same), values_);
  EXPECT_NE(static_cast<SimBuffer&>(**same).allocation()->data(), sim().allocation()->data());
  EXPECT_EQ(*ReadVector<float>(*buffer_), values_) << "the source changed";
}

TEST_F(SimBufferTest, CopyIntoAFullDeviceIsResourceExhausted) {
  std::unique_ptr<SimClient> small = MakeClient(2, 1);
  std::vector<uint8_t> big(768 << 10, 3);
  StatusOr<std::unique_ptr<Buffer>> on_zero =
      UploadVector(*small, small->devices()[0], big, ElementType::kU8, {768 << 10});
  StatusOr<std::unique_ptr<Buffer>> on_one =
      UploadVector(*small, small->devices()[1], big, ElementType::kU8, {768 << 10});
  ASSERT_TRUE(on_zero.ok());
  ASSERT_TRUE(on_one.ok());
  StatusOr<std::unique_ptr<Buffer>> copy = (*on_zero)->CopyToDevice(small->devices()[1]);
  ASSERT_FALSE(copy.ok());
  EXPECT_EQ(copy.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(copy.status().message().find("for copy of buffer u8[786432] on PJRTKIT_SIM_0"),
            std::string::npos)
      << copy.status().message();
}

// Delete while copies and reads of the buffer are still queued: the work holds the memory, reads
// the right data, and the memory goes back once it is done.
TEST_F(SimBufferTest, DeleteWhileACopyIsQueued) {
  client_->sim_device(0)->queue().Await();
  const int64_t before = BytesInUse(*client_->devices()[0]);
  std::shared_ptr<Event> gate = Block(0);
  StatusOr<std::unique_ptr<Buffer>> copy = buffer_->CopyToDevice(client_->devices()[1]);
  ASSERT_TRUE(copy.ok());
  std::vector<float> read(6, 0.0f);
  StatusOr<std::shared_ptr<Event>> read_event = buffer_->ToHostBuffer(read.data(), 24, nullptr);
  ASSERT_TRUE(read_event.ok());
  float raw = 0;
  StatusOr<std::shared_ptr<Event>> raw_event = buffer_->CopyRawToHost(&raw, 16, 4);
  ASSERT_TRUE(raw_event.ok());
  buffer_->Delete();
  EXPECT_TRUE(buffer_->IsDeleted());
  EXPECT_EQ(sim().allocation(), nullptr);
  EXPECT_EQ(BytesInUse(*client_->devices()[0]), before) << "queued work still holds the memory";
  EXPECT_FALSE((*copy)->ReadyEvent()->IsReady());
  gate->Set(OkStatus());
  ASSERT_TRUE((*copy)->ReadyEvent()->Await().ok());
  ASSERT_TRUE((*read_event)->Await().ok());
  ASSERT_TRUE((*raw_event)->Await().ok());
  EXPECT_EQ(*ReadVector<float>(**copy), values_);
  EXPECT_EQ(read, values_);
  EXPECT_EQ(raw, 1e6f);
  client_->sim_device(0)->queue().Await();
  EXPECT_EQ(BytesInUse(*client_->devices()[0]), before - 64) << "the block went back";
  // Uses after Delete are errors; Delete twice is harmless.
  EXPECT_EQ(buffer_->ToHostBuffer(read.data(), 24, nullptr).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer_->CopyToDevice(client_->devices()[1]).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer_->CopyRawToHost(&raw, 0, 4).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(buffer_->UnsafePointer().status().code(), StatusCode::kFailedPrecondition);
  buffer_->Delete();
  EXPECT_TRUE(buffer_->IsDeleted());
}

TEST_F(SimBufferTest, DonationHandsTheMemoryOver) {
  void* data = sim().allocation()->data();
  StatusOr<std::shared_ptr<Allocation>> taken = sim().TakeForDonation();
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ((*taken)->data(), data);
  EXPECT_TRUE(buffer_->IsDeleted());
  EXPECT_EQ(sim().allocation(), nullptr);
  StatusOr<std::shared_ptr<Allocation>> again = sim().TakeForDonation();
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(*ReadVector<float>(*std::make_unique<SimBuffer>(
                client_->sim_device(0), ElementType::kF32, std::vector<int64_t>{2, 3}, *taken,
                Event::CreateReady())),
            values_)
      << "the memory still holds the values";
}

TEST_F(SimBufferTest, DonationIsRefusedWhileAnExternalReferenceIsHeld) {
  ASSERT_TRUE(buffer_->IncreaseExternalReferenceCount().ok());
  StatusOr<std::shared_ptr<Allocation>> taken = sim().TakeForDonation();
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(taken.status().message().find("external reference"), std::string::npos);
  EXPECT_FALSE(buffer_->IsDeleted());
  ASSERT_TRUE(buffer_->DecreaseExternalReferenceCount().ok());
  EXPECT_TRUE(sim().TakeForDonation().ok());
}

TEST_F(SimBufferTest, DonateWithControlDependencyWaitsForTheDependency) {
  StatusOr<ControlledDonation> donation = buffer_->DonateWithControlDependency();
  ASSERT_TRUE(donation.ok());
  EXPECT_TRUE(buffer_->IsDeleted());
  EXPECT_FALSE(donation->buffer->ReadyEvent()->IsReady());
  donation->dependency_ready(OkStatus());
  EXPECT_TRUE(donation->buffer->ReadyEvent()->Await().ok());
  EXPECT_EQ(*ReadVector<float>(*donation->buffer), values_);
  EXPECT_EQ(buffer_->DonateWithControlDependency().status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(SimBufferTest, BitcastSharesTheMemory) {
  StatusOr<std::unique_ptr<Buffer>> cast = buffer_->Bitcast(ElementType::kS32, {6}, std::nullopt);
  ASSERT_TRUE(cast.ok()) << cast.status().ToString();
  EXPECT_EQ(static_cast<SimBuffer&>(**cast).allocation()->data(), sim().allocation()->data());
  std::vector<int32_t> bits(6);
  std::memcpy(bits.data(), values_.data(), 24);
  EXPECT_EQ(*ReadVector<int32_t>(**cast), bits);
  buffer_->Delete();
  EXPECT_EQ(*ReadVector<int32_t>(**cast), bits) << "the bitcast keeps the memory alive";
  EXPECT_EQ(
      static_cast<SimBuffer&>(**cast).Bitcast(ElementType::kS32, {5}, std::nullopt).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(static_cast<SimBuffer&>(**cast)
                .Bitcast(ElementType::kS32, {2, 3}, MemoryLayout{{0, 1}, {}, 0})
                .status()
                .code(),
            StatusCode::kUnimplemented);
}

TEST_F(SimBufferTest, PointersAreTheDeviceAddress) {
  StatusOr<uintptr_t> unsafe = buffer_->UnsafePointer();
  StatusOr<void*> opaque = buffer_->OpaqueDeviceMemoryDataPointer();
  ASSERT_TRUE(unsafe.ok());
  ASSERT_TRUE(opaque.ok());
  EXPECT_EQ(reinterpret_cast<void*>(*unsafe), sim().allocation()->data());
  EXPECT_EQ(*opaque, sim().allocation()->data());
  EXPECT_EQ(*unsafe % 64, 0u);
}

TEST_F(SimBufferTest, ErrorsOfTheContentsReachEveryRead) {
  std::unique_ptr<SimBuffer> failed =
      Manual(0, {1, 2}, Event::CreateReady(Status(StatusCode::kDataLoss, "producer failed")));
  std::vector<float> out(2, 0.0f);
  StatusOr<std::shared_ptr<Event>> read = failed->ToHostBuffer(out.data(), 8, nullptr);
  ASSERT_TRUE(read.ok()) << "the error is the event's";
  EXPECT_EQ((*read)->Await().code(), StatusCode::kDataLoss);
  EXPECT_EQ((*read)->Await().message(), "producer failed");
  EXPECT_EQ(out, (std::vector<float>{0, 0})) << "nothing was copied";
  StatusOr<std::unique_ptr<Buffer>> copy = failed->CopyToDevice(client_->devices()[1]);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ((*copy)->ReadyEvent()->Await().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ReadVector<float>(**copy).status().code(), StatusCode::kDataLoss);
  StatusOr<std::shared_ptr<Event>> raw = failed->CopyRawToHost(out.data(), 0, 4);
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ((*raw)->Await().code(), StatusCode::kDataLoss);
  EXPECT_EQ(*ReadVector<float>(*buffer_), values_) << "the queue keeps working";
}

TEST_F(SimBufferTest, ReadsWaitForContentsThatAreNotReadyYet) {
  std::shared_ptr<Event> produced = Event::Create();
  std::unique_ptr<SimBuffer> pending = Manual(1, {4, 5, 6}, produced);
  std::vector<float> out(3, 0.0f);
  StatusOr<std::shared_ptr<Event>> read = pending->ToHostBuffer(out.data(), 12, nullptr);
  ASSERT_TRUE(read.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE((*read)->IsReady());
  produced->Set(OkStatus());
  ASSERT_TRUE((*read)->Await().ok());
  EXPECT_EQ(out, (std::vector<float>{4, 5, 6}));
}

// Once the event of a piece of queued work is ready, the work holds no memory: a caller that
// awaits a buffer (or a read or copy of it) and deletes it sees the memory back at once, without
// waiting for the queue. Repeated, because the queue's thread lets go of its work right after it
// sets the event.
TEST_F(SimBufferTest, MemoryIsBackAsSoonAsTheEventsAreReady) {
  client_->sim_device(0)->queue().Await();
  client_->sim_device(1)->queue().Await();
  const int64_t before0 = BytesInUse(*client_->devices()[0]);
  const int64_t before1 = BytesInUse(*client_->devices()[1]);
  std::vector<float> values(1024, 2.5f);
  int held = 0;
  for (int i = 0; i < 300; ++i) {
    const HostBufferSemantics semantics =
        i % 2 == 0 ? HostBufferSemantics::kImmutableOnlyDuringCall
                   : HostBufferSemantics::kImmutableUntilTransferCompletes;
    std::shared_ptr<Event> done;
    StatusOr<std::unique_ptr<Buffer>> buffer =
        testing::Upload(*client_, client_->devices()[0], values.data(), ElementType::kF32, {1024},
                        semantics, std::nullopt, &done);
    ASSERT_TRUE(buffer.ok());
    ASSERT_TRUE((*buffer)->ReadyEvent()->Await().ok());
    ASSERT_TRUE(done->Await().ok());
    std::vector<float> out(1024);
    StatusOr<std::shared_ptr<Event>> read = (*buffer)->ToHostBuffer(out.data(), 4096, nullptr);
    ASSERT_TRUE(read.ok());
    float raw = 0;
    StatusOr<std::shared_ptr<Event>> raw_read = (*buffer)->CopyRawToHost(&raw, 4, 4);
    ASSERT_TRUE(raw_read.ok());
    StatusOr<std::unique_ptr<Buffer>> copy = (*buffer)->CopyToDevice(client_->devices()[1]);
    ASSERT_TRUE(copy.ok());
    ASSERT_TRUE((*read)->Await().ok());
    ASSERT_TRUE((*raw_read)->Await().ok());
    ASSERT_TRUE((*copy)->ReadyEvent()->Await().ok());
    (*buffer)->Delete();
    (*copy)->Delete();
    if (BytesInUse(*client_->devices()[0]) != before0) ++held;
    if (BytesInUse(*client_->devices()[1]) != before1) ++held;
    ASSERT_EQ(out, values);
    ASSERT_EQ(raw, 2.5f);
  }
  EXPECT_EQ(held, 0) << "deleted buffers whose events were ready still held memory";
}

// Threads read, copy and delete buffers at once; every read that was accepted sees the data.
TEST_F(SimBufferTest, ConcurrentReadsCopiesAndDeletes) {
  constexpr int kBuffers = 32;
  std::vector<float> values(4096);
  std::iota(values.begin(), values.end(), 0.0f);
  std::vector<std::unique_ptr<Buffer>> buffers;
  for (int i = 0; i < kBuffers; ++i) {
    StatusOr<std::unique_ptr<Buffer>> buffer =
        UploadVector(*client_, client_->devices()[i % 2], values, ElementType::kF32, {4096});
    ASSERT_TRUE(buffer.ok());
    buffers.push_back(std::move(buffer).value());
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kBuffers; i += 4) {
        Buffer& buffer = *buffers[i];
        std::vector<float> out(4096, -1.0f);
        StatusOr<std::shared_ptr<Event>> read = buffer.ToHostBuffer(out.data(), 4096 * 4, nullptr);
        StatusOr<std::unique_ptr<Buffer>> copy = buffer.CopyToDevice(client_->devices()[1 - i % 2]);
        buffer.Delete();
        if (read.ok() && (!(*read)->Await().ok() || out != values)) ++wrong;
        if (copy.ok()) {
          StatusOr<std::vector<float>> copied = ReadVector<float>(**copy);
          if (!copied.ok() || *copied != values) ++wrong;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  buffers.clear();
  client_->sim_device(0)->queue().Await();
  client_->sim_device(1)->queue().Await();
  buffer_.reset();
  EXPECT_EQ(BytesInUse(*client_->devices()[0]), 0);
  EXPECT_EQ(BytesInUse(*client_->devices()[1]), 0);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
