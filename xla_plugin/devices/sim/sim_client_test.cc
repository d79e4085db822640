// SimClient, SimDevice, SimMemory and SimTopology: the device model, host-to-device copies under
// every semantics, strides, element types, out-of-memory, statistics.
#include "xla_plugin/devices/sim/sim_client.h"

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/sim_buffer.h"
#include "xla_plugin/devices/sim/sim_test_util.h"

namespace pjrtkit {
namespace sim {
namespace {

using testing::BytesInUse;
using testing::MakeClient;
using testing::ReadVector;
using testing::Upload;
using testing::UploadVector;

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(SimClientTest, PlatformDevicesAndMemories) {
  std::unique_ptr<SimClient> client = MakeClient(4, 16);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->platform_name(), "pjrtkit");
  EXPECT_EQ(client->platform_version(), "pjrtkit sim 0.1.0");
  EXPECT_EQ(client->process_index(), 0);
  ASSERT_EQ(client->devices().size(), 4u);
  EXPECT_EQ(client->addressable_devices(), client->devices());
  ASSERT_EQ(client->memories().size(), 4u);
  ASSERT_EQ(client->sim_devices().size(), 4u);
  for (int id = 0; id < 4; ++id) {
    SimDevice* device = client->sim_device(id);
    ASSERT_NE(device, nullptr);
    EXPECT_EQ(client->devices()[id], device);
    EXPECT_EQ(client->sim_devices()[id], device);
    EXPECT_EQ(device->id(), id);
    const DeviceDescription& description = device->description();
    EXPECT_EQ(description.id(), id);
    EXPECT_EQ(description.process_index(), 0);
    EXPECT_EQ(description.kind(), "pjrtkit_sim");
    EXPECT_EQ(description.debug_string(), "PJRTKIT_SIM_" + std::to_string(id));
    EXPECT_EQ(description.to_string(),
              "SimDevice(id=" + std::to_string(id) +
                  ", process_index=0, kind=pjrtkit_sim, memory_capacity_bytes=16777216)");
    EXPECT_EQ(std::get<std::string>(description.attributes().at("backend")), "sim");
    EXPECT_EQ(std::get<int64_t>(description.attributes().at("memory_capacity_bytes")), 16 * kMiB);
    EXPECT_TRUE(device->IsAddressable());
    EXPECT_EQ(device->local_hardware_id(), id);
    ASSERT_EQ(device->memories().size(), 1u);
    Memory* memory = device->default_memory();
    EXPECT_EQ(device->memories()[0], memory);
    EXPECT_EQ(client->memories()[id], memory);
    EXPECT_EQ(memory->id(), id);
    EXPECT_EQ(memory->kind(), "device");
    EXPECT_EQ(memory->kind_id(), 0);
    EXPECT_EQ(memory->debug_string(), "PJRTKIT_SIM_" + std::to_string(id) + ":device");
    EXPECT_EQ(memory->to_string(), "SimMemory(id=" + std::to_string(id) +
                                       ", kind=device, device=PJRTKIT_SIM_" + std::to_string(id) +
                                       ")");
    EXPECT_EQ(memory->addressable_by_devices(), std::vector<Device*>{device});
    EXPECT_EQ(device->memory().capacity(), 16 * kMiB);
    EXPECT_EQ(device->memory().device_id(), id);
    EXPECT_EQ(device->queue().name(), "sim-" + std::to_string(id));
    StatusOr<Device*> found = client->LookupDevice(id);
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(*found, device);
  }
  EXPECT_EQ(client->sim_device(4), nullptr);
  EXPECT_EQ(client->sim_device(-1), nullptr);
  EXPECT_FALSE(client->LookupDevice(4).ok());
  EXPECT_EQ(client->options().device_count(), 4);
}

TEST(SimClientTest, TopologyMatchesTheDevices) {
  std::unique_ptr<SimClient> client = MakeClient(3, 8);
  StatusOr<const Topology*> topology = client->topology();
  ASSERT_TRUE(topology.ok());
  EXPECT_EQ((*topology)->platform_name(), "pjrtkit");
  EXPECT_EQ((*topology)->platform_version(), "pjrtkit sim 0.1.0");
  ASSERT_EQ((*topology)->devices().size(), 3u);
  for (int id = 0; id < 3; ++id) {
    const DeviceDescription& listed = (*topology)->devices()[id];
    const DeviceDescription& live = client->sim_device(id)->description();
    EXPECT_EQ(listed.id(), live.id());
    EXPECT_EQ(listed.kind(), live.kind());
    EXPECT_EQ(listed.debug_string(), live.debug_string());
    EXPECT_EQ(listed.to_string(), live.to_string());
    EXPECT_EQ(listed.attributes(), live.attributes());
  }
  const AttributeMap& attributes = (*topology)->attributes();
  EXPECT_EQ(std::get<std::string>(attributes.at("backend")), "sim");
  EXPECT_EQ(std::get<int64_t>(attributes.at("device_count")), 3);
  EXPECT_EQ(std::get<int64_t>(attributes.at("memory_capacity_bytes")), 8 * kMiB);
  EXPECT_EQ(*(*topology)->MemorySpaceKindIds(), std::vector<int>{0});
  // Serialize -> Deserialize gives the same devices (the client layer's codec).
  StatusOr<std::string> bytes = (*topology)->Serialize();
  ASSERT_TRUE(bytes.ok());
  StatusOr<std::unique_ptr<Topology>> back = Topology::Deserialize(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)->devices().size(), 3u);
  EXPECT_EQ((*back)->platform_version(), "pjrtkit sim 0.1.0");
}

TEST(SimClientTest, DefaultLayoutIsDenseRowMajor) {
  std::unique_ptr<SimClient> client = MakeClient();
  StatusOr<MemoryLayout> layout = client->DefaultLayout(ElementType::kF32, {2, 3, 4}, nullptr);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->minor_to_major, (std::vector<int64_t>{2, 1, 0}));
  EXPECT_TRUE(layout->tiles.empty());
  EXPECT_EQ(layout->element_size_in_bits, 0);
}

// Every host-buffer semantics copies: the host array changed after the call (right away for
// kImmutableOnlyDuringCall and the zero-copy semantics, which are copied during the call; after
// done_with_host_buffer for kImmutableUntilTransferCompletes) changes no buffer.
TEST(SimClientTest, EverySemanticsCopiesTheHostData) {
  std::unique_ptr<SimClient> client = MakeClient();
  for (HostBufferSemantics semantics :
       {HostBufferSemantics::kImmutableOnlyDuringCall,
        HostBufferSemantics::kImmutableUntilTransferCompletes,
        HostBufferSemantics::kImmutableZeroCopy, HostBufferSemantics::kMutableZeroCopy}) {
    SCOPED_TRACE(static_cast<int>(semantics));
    std::vector<float> host(1000);
    std::iota(host.begin(), host.end(), -10.0f);
    const std::vector<float> expected = host;
    std::shared_ptr<Event> done;
    StatusOr<std::unique_ptr<Buffer>> buffer =
        Upload(*client, client->devices()[1], host.data(), ElementType::kF32, {10, 100}, semantics,
               std::nullopt, &done);
    ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
    ASSERT_NE(done, nullptr);
    if (semantics != HostBufferSemantics::kImmutableUntilTransferCompletes) {
      EXPECT_TRUE(done->IsReady()) << "the host data is free when the call returns";
      std::fill(host.begin(), host.end(), 99.0f);  // At once, as a NumPy array's owner may.
    }
    EXPECT_TRUE(done->Await().ok());
    std::fill(host.begin(), host.end(), 99.0f);
    EXPECT_TRUE((*buffer)->ReadyEvent()->Await().ok());
    StatusOr<std::vector<float>> back = ReadVector<float>(**buffer);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, expected);
    EXPECT_EQ((*buffer)->device(), client->devices()[1]);
    EXPECT_EQ((*buffer)->memory(), client->devices()[1]->default_memory());
    // The device memory is not the host array (no aliasing).
    StatusOr<void*> pointer = (*buffer)->OpaqueDeviceMemoryDataPointer();
    ASSERT_TRUE(pointer.ok());
    EXPECT_NE(*pointer, static_cast<void*>(host.data()));
  }
}

// A buffer deleted before anything waited for it gives its memory back at once, whatever its
// semantics: `x = jax.device_put(a); x.delete()` reads bytes_in_use right after, without waiting
// for the device. Device 0's queue is held here, as a busy device (or a queue thread the OS has
// not run yet) holds it; a copy in left queued behind it kept the memory until it ran (the race
// sim_robustness_test's "after_delete" hit on a loaded CI machine).
TEST(SimClientTest, ABufferDeletedBeforeItsCopyInRanGivesItsMemoryBackAtOnce) {
  std::unique_ptr<SimClient> client = MakeClient();
  Device* device = client->devices()[0];
  const int64_t before = BytesInUse(*device);
  std::shared_ptr<Event> gate = Event::Create();
  client->sim_device(0)->queue().Enqueue([gate] { gate->Await(); });
  std::vector<float> host(kMiB / sizeof(float), 1.5f);
  std::vector<std::shared_ptr<Event>> dones;
  for (HostBufferSemantics semantics :
       {HostBufferSemantics::kImmutableOnlyDuringCall,
        HostBufferSemantics::kImmutableUntilTransferCompletes,
        HostBufferSemantics::kImmutableZeroCopy, HostBufferSemantics::kMutableZeroCopy}) {
    for (bool destroy : {false, true}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(semantics)) +
                   (destroy ? " destroyed" : " deleted"));
      std::shared_ptr<Event> done;
      StatusOr<std::unique_ptr<Buffer>> buffer =
          Upload(*client, device, host.data(), ElementType::kF32,
                 {static_cast<int64_t>(host.size())}, semantics, std::nullopt, &done);
      ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
      dones.push_back(done);
      EXPECT_EQ(BytesInUse(*device), before + kMiB);
      if (destroy) {
        buffer->reset();
      } else {
        (*buffer)->Delete();
      }
      EXPECT_EQ(BytesInUse(*device), before) << "a deleted buffer's memory is still counted";
    }
  }
  gate->Set(OkStatus());
  for (const std::shared_ptr<Event>& done : dones) EXPECT_TRUE(done->Await().ok());
  client->sim_device(0)->queue().Await();
  EXPECT_EQ(BytesInUse(*device), before);
}

// The same for a copy to another device deleted before the copy ran: the memory it took on the
// destination goes back at once (the source stays until its own buffer goes).
TEST(SimClientTest, ACopyDeletedBeforeItRanGivesItsMemoryBackAtOnce) {
  std::unique_ptr<SimClient> client = MakeClient();
  std::vector<float> host(kMiB / sizeof(float), 2.5f);
  StatusOr<std::unique_ptr<Buffer>> source =
      Upload(*client, client->devices()[0], host.data(), ElementType::kF32,
             {static_cast<int64_t>(host.size())});
  ASSERT_TRUE(source.ok());
  ASSERT_TRUE((*source)->ReadyEvent()->Await().ok());
  const int64_t before = BytesInUse(*client->devices()[1]);
  std::shared_ptr<Event> gate = Event::Create();
  client->sim_device(0)->queue().Enqueue([gate] { gate->Await(); });
  StatusOr<std::unique_ptr<Buffer>> copy = (*source)->CopyToDevice(client->devices()[1]);
  ASSERT_TRUE(copy.ok());
  std::shared_ptr<Event> copied = (*copy)->ReadyEvent();
  EXPECT_EQ(BytesInUse(*client->devices()[1]), before + kMiB);
  (*copy)->Delete();
  EXPECT_EQ(BytesInUse(*client->devices()[1]), before)
      << "a deleted copy's memory is still counted";
  gate->Set(OkStatus());
  EXPECT_TRUE(copied->Await().ok());
  // A copy that is kept still gets the data.
  StatusOr<std::unique_ptr<Buffer>> kept = (*source)->CopyToDevice(client->devices()[1]);
  ASSERT_TRUE(kept.ok());
  StatusOr<std::vector<float>> back = ReadVector<float>(**kept);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, host);
}

TEST(SimClientTest, ByteStridesOfAnyLayoutAreGathered) {
  std::unique_ptr<SimClient> client = MakeClient();
  Device* device = client->devices()[0];
  const std::vector<int32_t> column_major = {0, 10, 1, 11, 2, 12};  // (r, c) -> 10r + c.
  const std::vector<int32_t> expected = {0, 1, 2, 10, 11, 12};
  for (HostBufferSemantics semantics : {HostBufferSemantics::kImmutableOnlyDuringCall,
                                        HostBufferSemantics::kImmutableUntilTransferCompletes}) {
    StatusOr<std::unique_ptr<Buffer>> transposed =
        Upload(*client, device, column_major.data(), ElementType::kS32, {2, 3}, semantics,
               std::vector<int64_t>{4, 8});
    ASSERT_TRUE(transposed.ok()) << transposed.status().ToString();
    EXPECT_EQ(*ReadVector<int32_t>(**transposed), expected);
  }
  // Padded rows (row pitch 16 bytes for 3 elements) and reversed rows (negative stride).
  const std::vector<int32_t> padded = {0, 1, 2, -1, 10, 11, 12, -1};
  StatusOr<std::unique_ptr<Buffer>> from_padded =
      Upload(*client, device, padded.data(), ElementType::kS32, {2, 3},
             HostBufferSemantics::kImmutableOnlyDuringCall, std::vector<int64_t>{16, 4});
  ASSERT_TRUE(from_padded.ok());
  EXPECT_EQ(*ReadVector<int32_t>(**from_padded), expected);
  StatusOr<std::unique_ptr<Buffer>> reversed =
      Upload(*client, device, expected.data() + 3, ElementType::kS32, {2, 3},
             HostBufferSemantics::kImmutableOnlyDuringCall, std::vector<int64_t>{-12, 4});
  ASSERT_TRUE(reversed.ok());
  EXPECT_EQ(*ReadVector<int32_t>(**reversed), (std::vector<int32_t>{10, 11, 12, 0, 1, 2}));
  // Dense strides given explicitly take the plain path.
  StatusOr<std::unique_ptr<Buffer>> dense =
      Upload(*client, device, expected.data(), ElementType::kS32, {2, 3},
             HostBufferSemantics::kImmutableOnlyDuringCall, std::vector<int64_t>{12, 4});
  ASSERT_TRUE(dense.ok());
  EXPECT_EQ(*ReadVector<int32_t>(**dense), expected);
}

TEST(SimClientTest, EveryStorableElementTypeRoundTrips) {
  std::unique_ptr<SimClient> client = MakeClient();
  const std::vector<std::pair<ElementType, size_t>> types = {
      {ElementType::kPred, 1},   {ElementType::kS8, 1},       {ElementType::kS16, 2},
      {ElementType::kS32, 4},    {ElementType::kS64, 8},      {ElementType::kU8, 1},
      {ElementType::kU16, 2},    {ElementType::kU32, 4},      {ElementType::kU64, 8},
      {ElementType::kF16, 2},    {ElementType::kF32, 4},      {ElementType::kF64, 8},
      {ElementType::kBF16, 2},   {ElementType::kC64, 8},      {ElementType::kC128, 16},
      {ElementType::kF8E5M2, 1}, {ElementType::kF8E4M3FN, 1}, {ElementType::kF8E8M0FNU, 1},
  };
  for (const auto& [type, size] : types) {
    SCOPED_TRACE(ElementTypeName(type));
    std::vector<uint8_t> host(3 * 5 * size);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>(i * 7 + 3);
    if (type == ElementType::kPred) {
      for (uint8_t& b : host) b &= 1;
    }
    StatusOr<std::unique_ptr<Buffer>> buffer =
        Upload(*client, client->devices()[0], host.data(), type, {3, 5});
    ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
    EXPECT_EQ((*buffer)->element_type(), type);
    EXPECT_EQ((*buffer)->dimensions(), (std::vector<int64_t>{3, 5}));
    EXPECT_EQ(*(*buffer)->OnDeviceSizeInBytes(), 15 * size);
    EXPECT_EQ(*testing::ReadBytes(**buffer), host);
  }
}

TEST(SimClientTest, SubByteTypesRoundTripOneBytePerElement) {
  std::unique_ptr<SimClient> client = MakeClient();
  const std::vector<uint8_t> data = {0, 1, 2, 3, 1, 0, 2, 3};  // Valid in every sub-byte type.
  for (ElementType type : {ElementType::kS4, ElementType::kU4, ElementType::kS2, ElementType::kU2,
                           ElementType::kF4E2M1FN, ElementType::kF6E2M3FN, ElementType::kF6E3M2FN,
                           ElementType::kS1}) {
    std::vector<uint8_t> values = data;
    if (type == ElementType::kS1) values = {0, 1, 1, 0, 1, 0, 0, 1};
    StatusOr<std::unique_ptr<Buffer>> buffer =
        Upload(*client, client->devices()[0], values.data(), type, {8});
    ASSERT_TRUE(buffer.ok()) << ElementTypeName(type) << ": " << buffer.status().ToString();
    EXPECT_EQ(*(*buffer)->OnDeviceSizeInBytes(), 8u);
    EXPECT_EQ(*ReadVector<uint8_t>(**buffer), values) << ElementTypeName(type);
  }
  client->sim_devices()[0]->queue().Await();
  EXPECT_EQ(BytesInUse(*client->devices()[0]), 0);
}

TEST(SimClientTest, TokensAreRefusedNamingTheType) {
  std::unique_ptr<SimClient> client = MakeClient();
  const uint8_t data[8] = {};
  StatusOr<std::unique_ptr<Buffer>> buffer =
      Upload(*client, client->devices()[0], data, ElementType::kToken, {8});
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(buffer.status().message().find("element type token"), std::string::npos)
      << buffer.status().message();
  StatusOr<std::unique_ptr<Buffer>> uninitialized = client->CreateUninitializedBuffer(
      ElementType::kToken, {8}, client->devices()[0]->default_memory());
  EXPECT_EQ(uninitialized.status().code(), StatusCode::kUnimplemented);
}

TEST(SimClientTest, ScalarsAndEmptyArrays) {
  std::unique_ptr<SimClient> client = MakeClient();
  const double scalar = 2.5;
  StatusOr<std::unique_ptr<Buffer>> one =
      Upload(*client, client->devices()[0], &scalar, ElementType::kF64, {});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*ReadVector<double>(**one), std::vector<double>{2.5});
  for (HostBufferSemantics semantics :
       {HostBufferSemantics::kImmutableOnlyDuringCall, HostBufferSemantics::kImmutableZeroCopy}) {
    StatusOr<std::unique_ptr<Buffer>> empty =
        Upload(*client, client->devices()[0], nullptr, ElementType::kF32, {0, 7}, semantics);
    ASSERT_TRUE(empty.ok()) << empty.status().ToString();
    EXPECT_TRUE((*empty)->ReadyEvent()->Await().ok());
    EXPECT_EQ(*(*empty)->OnDeviceSizeInBytes(), 0u);
    EXPECT_TRUE(ReadVector<float>(**empty)->empty());
  }
}

TEST(SimClientTest, DeviceLayoutsOtherThanRowMajorAreRefused) {
  std::unique_ptr<SimClient> client = MakeClient();
  const std::vector<float> host(6, 1.0f);
  HostBufferArgs args;
  args.data = host.data();
  args.type = ElementType::kF32;
  args.dims = {2, 3};
  args.device = client->devices()[0];
  args.device_layout = MemoryLayout{{0, 1}, {}, 0};
  StatusOr<HostBufferResult> refused = client->BufferFromHostBuffer(args);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(refused.status().message().find("{0,1}"), std::string::npos);
  args.device_layout = MemoryLayout{{1, 0}, {}, 0};
  EXPECT_TRUE(client->BufferFromHostBuffer(args).ok());
}

TEST(SimClientTest, OutOfMemoryIsResourceExhaustedAndTheClientKeepsWorking) {
  std::unique_ptr<SimClient> client = MakeClient(2, 4);  // 4 MiB per device.
  Device* device = client->devices()[0];
  const std::vector<uint8_t> three_mib(3 * kMiB, 1);
  StatusOr<std::unique_ptr<Buffer>> first =
      Upload(*client, device, three_mib.data(), ElementType::kU8, {3 * kMiB});
  ASSERT_TRUE(first.ok());
  StatusOr<std::unique_ptr<Buffer>> second =
      Upload(*client, device, three_mib.data(), ElementType::kU8, {3 * kMiB});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(second.status().message(),
            "sim device 0 is out of memory: cannot allocate 3.00 MiB (3145728 bytes) for buffer "
            "u8[3145728]; 3.00 MiB (3145728 bytes) in use, largest free block 1.00 MiB (1048576 "
            "bytes), capacity 4.00 MiB (4194304 bytes)");
  // The other device is not affected; freeing the first makes room.
  EXPECT_TRUE(
      Upload(*client, client->devices()[1], three_mib.data(), ElementType::kU8, {3 * kMiB}).ok());
  (*first)->Delete();
  client->sim_device(0)->queue().Await();  // The queued copy into `first` held its memory too.
  StatusOr<std::unique_ptr<Buffer>> third =
      Upload(*client, device, three_mib.data(), ElementType::kU8, {3 * kMiB});
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(*ReadVector<uint8_t>(**third), three_mib);
}

TEST(SimClientTest, MemoryStatsReturnToTheirStartAfterBuffersAreDeleted) {
  std::unique_ptr<SimClient> client = MakeClient(2, 16);
  Device* device = client->devices()[1];
  StatusOr<MemoryStats> start = device->GetMemoryStats();
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(start->bytes_in_use, 0);
  EXPECT_EQ(*start->bytes_limit, 16 * kMiB);
  std::vector<std::unique_ptr<Buffer>> buffers;
  const std::vector<float> host(1000, 3.0f);  // 4000 bytes: a 4032-byte block.
  for (int i = 0; i < 5; ++i) {
    StatusOr<std::unique_ptr<Buffer>> buffer =
        UploadVector(*client, device, host, ElementType::kF32, {1000});
    ASSERT_TRUE(buffer.ok());
    buffers.push_back(std::move(buffer).value());
  }
  StatusOr<MemoryStats> full = device->GetMemoryStats();
  EXPECT_EQ(full->bytes_in_use, 5 * 4032);
  EXPECT_EQ(*full->peak_bytes_in_use, 5 * 4032);
  EXPECT_EQ(*full->num_allocs, 5);
  EXPECT_EQ(*full->largest_alloc_size, 4032);
  EXPECT_EQ(BytesInUse(*client->devices()[0]), 0) << "other devices are separate";
  // Once a buffer is ready, only buffers hold its memory (the copy in lets go of it before).
  for (const std::unique_ptr<Buffer>& buffer : buffers) ASSERT_TRUE(buffer->ReadyEvent()->Await().ok());
  buffers[0]->Delete();                // Delete() frees now...
  buffers.erase(buffers.begin() + 1);  // ... and so does destruction.
  EXPECT_EQ(BytesInUse(*device), 3 * 4032);
  ASSERT_TRUE(device->ClearMemoryStats().ok());
  EXPECT_EQ(*device->GetMemoryStats()->peak_bytes_in_use, 3 * 4032);
  buffers.clear();
  StatusOr<MemoryStats> end = device->GetMemoryStats();
  EXPECT_EQ(end->bytes_in_use, start->bytes_in_use);
  EXPECT_EQ(*end->largest_free_block_bytes, *start->largest_free_block_bytes);
}

TEST(SimClientTest, UninitializedBuffersAndViews) {
  std::unique_ptr<SimClient> client = MakeClient();
  Memory* memory = client->devices()[1]->default_memory();
  StatusOr<std::unique_ptr<Buffer>> buffer =
      client->CreateUninitializedBuffer(ElementType::kS32, {4, 5}, memory);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  EXPECT_EQ((*buffer)->device(), client->devices()[1]);
  EXPECT_EQ((*buffer)->memory(), memory);
  EXPECT_EQ(*(*buffer)->OnDeviceSizeInBytes(), 80u);
  EXPECT_TRUE((*buffer)->ReadyEvent()->IsReady());
  EXPECT_EQ(BytesInUse(*client->devices()[1]), 128);
  DeviceBufferViewArgs view;
  StatusOr<std::unique_ptr<Buffer>> refused = client->CreateViewOfDeviceBuffer(view);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(refused.status().message().find("its own region"), std::string::npos);
}

TEST(SimClientTest, DestroyingTheClientRunsQueuedWork) {
  std::unique_ptr<SimClient> client = MakeClient();
  std::vector<float> host(1 << 16, 1.5f);
  std::shared_ptr<Event> done;
  std::vector<float> back(host.size(), 0.0f);
  std::shared_ptr<Event> read;
  {
    StatusOr<std::unique_ptr<Buffer>> buffer =
        Upload(*client, client->devices()[0], host.data(), ElementType::kF32,
               {static_cast<int64_t>(host.size())},
               HostBufferSemantics::kImmutableUntilTransferCompletes, std::nullopt, &done);
    ASSERT_TRUE(buffer.ok());
    StatusOr<std::shared_ptr<Event>> event =
        (*buffer)->ToHostBuffer(back.data(), back.size() * sizeof(float), nullptr);
    ASSERT_TRUE(event.ok());
    read = *event;
  }
  { std::lock_guard<std::shared_mutex> launch(client->launch_mutex()); }  // Exists and can be held.
  client.reset();
  EXPECT_TRUE(done->IsReady());
  EXPECT_TRUE(read->IsReady());
  EXPECT_TRUE(read->status().ok());
  EXPECT_EQ(back, host);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
