#include "xla_plugin/c_api/testing/fake_client.h"

// C++ standard library.
#include <algorithm>
#include <cstring>
#include <functional>
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/testing/fake_buffer.h"
#include "xla_plugin/c_api/testing/fake_executable.h"
#include "xla_plugin/c_api/testing/fake_topology.h"
#include "xla_plugin/c_api/testing/fake_transfer_manager.h"
#include "xla_plugin/client/options.h"

namespace pjrtkit {
namespace testing {
namespace {

// The create options FakeClient accepts.
std::vector<OptionSpec> AcceptedOptions() {
  return {
      {"device_count", int64_t{2}, "addressable devices"},
      {"remote_device_count", int64_t{0}, "non-addressable devices of process 1"},
      {"platform_version", std::string("fake 1.0"), "platform version"},
      {"delay_ready", false, "hold buffer ready events until ReleasePendingEvents"},
      {"scale", 1.0f, "echoed float"},
      {"shape", std::vector<int64_t>{}, "echoed int64 list"},
  };
}

// True when `strides` are the dense row-major strides of `dims` of `type`.
bool IsDenseRowMajor(ElementType type, const std::vector<int64_t>& dims,
                     const std::vector<int64_t>& strides) {
  int64_t expected = ElementTypeBits(type) / 8;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    if (dims[d] != 1 && strides[d] != expected) return false;
    expected *= dims[d];
  }
  return true;
}

}  // namespace

// ---- FakeMemory / FakeDevice ------------------------------------------------------------------

FakeMemory::FakeMemory(int id, std::string kind, int kind_id, std::string debug_string)
    : id_(id),
      kind_(std::move(kind)),
      kind_id_(kind_id),
      debug_string_(std::move(debug_string)),
      to_string_("FakeMemory(id=" + std::to_string(id) + ", kind=" + kind_ + ")") {}

FakeDevice::FakeDevice(int id, int process_index, bool addressable, AttributeMap attributes)
    : description_(id, process_index, "fake", "FAKE_" + std::to_string(id),
                   "FakeDevice(id=" + std::to_string(id) + ")", std::move(attributes)),
      addressable_(addressable) {}

void FakeDevice::Allocate(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  bytes_in_use_ += static_cast<int64_t>(bytes);
  peak_bytes_in_use_ = std::max(peak_bytes_in_use_, bytes_in_use_);
  ++num_allocs_;
}

void FakeDevice::Free(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  bytes_in_use_ -= static_cast<int64_t>(bytes);
}

StatusOr<MemoryStats> FakeDevice::GetMemoryStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  MemoryStats stats;
  stats.bytes_in_use = bytes_in_use_;
  stats.peak_bytes_in_use = peak_bytes_in_use_;
  stats.num_allocs = num_allocs_;
  stats.bytes_limit = int64_t{1} << 30;
  stats.bytes_reservable_limit = int64_t{1} << 29;
  stats.pool_bytes = bytes_in_use_ + 4096;
  stats.peak_allocated_bytes = peak_bytes_in_use_;
  return stats;
}

Status FakeDevice::ClearMemoryStats() {
  std::lock_guard<std::mutex> lock(mu_);
  peak_bytes_in_use_ = bytes_in_use_;
  return OkStatus();
}

StatusOr<bool> FakeDevice::PoisonExecution(int launch_id, const Status& error) {
  std::lock_guard<std::mutex> lock(mu_);
  last_poison_ = FakePoison{launch_id, error};
  return launches_.count(launch_id) > 0;
}

namespace {

// FakeDevice's tracking event: counted while it lives.
class FakeTrackingEvent : public AsyncTrackingEvent {
 public:
  explicit FakeTrackingEvent(std::shared_ptr<std::atomic<int>> live) : live_(std::move(live)) {
    ++*live_;
  }
  ~FakeTrackingEvent() override { --*live_; }

 private:
  std::shared_ptr<std::atomic<int>> live_;  // The device's count.
};

}  // namespace

StatusOr<std::unique_ptr<AsyncTrackingEvent>> FakeDevice::CreateAsyncTrackingEvent(
    const std::string& description) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tracking_descriptions_.push_back(description);
  }
  if (description == "untracked") return std::unique_ptr<AsyncTrackingEvent>();
  return std::unique_ptr<AsyncTrackingEvent>(new FakeTrackingEvent(live_tracking_events_));
}

void FakeDevice::RecordLaunch(int launch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  launches_.insert(launch_id);
}

std::optional<FakePoison> FakeDevice::last_poison() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_poison_;
}

std::vector<std::string> FakeDevice::tracking_descriptions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tracking_descriptions_;
}

// ---- FakeClient -------------------------------------------------------------------------------

StatusOr<std::unique_ptr<Client>> FakeClient::Create(const AttributeMap& given) {
  PJRTKIT_ASSIGN_OR_RETURN(Options options, Options::Parse(given, AcceptedOptions()));
  const int64_t count = options.GetInt("device_count");
  const int64_t remote = options.GetInt("remote_device_count");
  if (count < 1 || remote < 0) {
    return InvalidArgument("fake: device_count must be >= 1 and remote_device_count >= 0");
  }
  std::unique_ptr<FakeClient> client(new FakeClient());
  client->platform_version_ = options.GetString("platform_version");
  client->delay_ready_ = options.GetBool("delay_ready");
  auto pinned = std::make_unique<FakeMemory>(1000, "pinned_host", 1, "FAKE:pinned_host");
  std::vector<DeviceDescription> descriptions;
  for (int64_t i = 0; i < count + remote; ++i) {
    const bool addressable = i < count;
    AttributeMap attributes = given;
    attributes["index"] = i;
    auto device = std::make_unique<FakeDevice>(static_cast<int>(i), addressable ? 0 : 1,
                                               addressable, std::move(attributes));
    client->devices_.push_back(device.get());
    descriptions.push_back(device->description());
    if (addressable) {
      auto memory = std::make_unique<FakeMemory>(static_cast<int>(i), "device", 0,
                                                 "FAKE_" + std::to_string(i) + ":device");
      memory->AddDevice(device.get());
      pinned->AddDevice(device.get());
      device->AddMemory(memory.get());
      device->AddMemory(pinned.get());
      client->addressable_.push_back(device.get());
      client->memories_.push_back(memory.get());
      client->owned_memories_.push_back(std::move(memory));
    }
    client->owned_devices_.push_back(std::move(device));
  }
  client->memories_.push_back(pinned.get());
  client->owned_memories_.push_back(std::move(pinned));
  client->topology_ = MakeTopology(client->platform_version_, descriptions);
  return std::unique_ptr<Client>(std::move(client));
}

std::unique_ptr<Topology> FakeClient::MakeTopology(const std::string& platform_version,
                                                   const std::vector<DeviceDescription>& devices) {
  AttributeMap attributes{{"topology_kind", std::string("fake")},
                          {"num_devices", static_cast<int64_t>(devices.size())}};
  return std::make_unique<FakeTopology>(platform_version, devices, std::move(attributes));
}

void FakeClient::ReleasePendingEvents() {
  std::vector<std::shared_ptr<Event>> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending.swap(pending_);
  }
  for (const std::shared_ptr<Event>& event : pending) event->Set(OkStatus());
}

std::vector<int64_t> FakeClient::last_non_donatable() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_non_donatable_;
}

void FakeClient::RecordExecute(int launch_id, const std::set<int64_t>& non_donatable) {
  std::lock_guard<std::mutex> lock(mu_);
  last_launch_id_ = launch_id;
  last_non_donatable_.assign(non_donatable.begin(), non_donatable.end());
}

const ExecuteContext* FakeClient::last_context() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_context_;
}

std::map<int64_t, void*> FakeClient::last_user_data() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_user_data_;
}

void FakeClient::RecordContext(const ExecuteContext* context) {
  std::map<int64_t, void*> entries;
  if (context != nullptr) entries = context->user_data();
  std::lock_guard<std::mutex> lock(mu_);
  last_context_ = context;
  last_user_data_ = std::move(entries);
}

FakeTransferManager* FakeClient::last_transfer_manager() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_transfer_manager_;
}

StatusOr<HostBufferResult> FakeClient::BufferFromHostBuffer(const HostBufferArgs& args) {
  auto* device = static_cast<FakeDevice*>(args.device);
  if (!device->IsAddressable()) return InvalidArgument("fake: the device is not addressable");
  Memory* memory = args.memory != nullptr ? args.memory : device->default_memory();
  const std::vector<Device*>& users = memory->addressable_by_devices();
  if (std::find(users.begin(), users.end(), device) == users.end()) {
    return InvalidArgument("fake: the memory is not addressable by the device");
  }
  if (args.device_layout.has_value() && !args.device_layout->tiles.empty()) {
    return Unimplemented("fake: tiled device layouts");
  }
  const size_t size = DenseByteSize(args.type, args.dims);
  const bool dense =
      !args.byte_strides.has_value() || IsDenseRowMajor(args.type, args.dims, *args.byte_strides);
  const bool zero_copy = args.semantics == HostBufferSemantics::kImmutableZeroCopy ||
                         args.semantics == HostBufferSemantics::kMutableZeroCopy;
  HostBufferResult result;
  std::unique_ptr<FakeBuffer> buffer;
  if (zero_copy && dense) {
    result.done_with_host_buffer = Event::Create();  // Set when the buffer is destroyed.
    buffer = std::make_unique<FakeBuffer>(
        args.type, args.dims, device, static_cast<FakeMemory*>(memory),
        static_cast<const uint8_t*>(args.data), result.done_with_host_buffer);
  } else {
    std::vector<uint8_t> bytes(size);
    if (dense) {
      if (size > 0) std::memcpy(bytes.data(), args.data, size);
    } else {
      CopyFromStrided(args.type, args.dims, static_cast<const uint8_t*>(args.data),
                      *args.byte_strides, bytes.data());
    }
    std::shared_ptr<Event> ready = delay_ready_ ? Event::Create() : Event::CreateReady();
    if (delay_ready_) {
      std::lock_guard<std::mutex> lock(mu_);
      pending_.push_back(ready);
    }
    buffer = std::make_unique<FakeBuffer>(
        args.type, args.dims, device, static_cast<FakeMemory*>(memory), std::move(bytes), ready);
    result.done_with_host_buffer = Event::CreateReady();
  }
  if (args.device_layout.has_value()) buffer->set_layout(*args.device_layout);
  result.buffer = std::move(buffer);
  return result;
}

StatusOr<std::unique_ptr<LoadedExecutable>> FakeClient::Compile(
    const Program& program, const std::string& compile_options) {
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<FakeExecutable> executable,
                           FakeExecutable::Compile(program, compile_options));
  return FakeLoadedExecutable::Load(this, std::move(executable));
}

StatusOr<std::unique_ptr<LoadedExecutable>> FakeClient::DeserializeAndLoad(
    const std::string& serialized, const std::optional<std::string>& compile_options) {
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<FakeExecutable> executable,
                           FakeExecutable::Deserialize(serialized, compile_options));
  const int topology_devices = executable->topology_devices();
  if (topology_devices != 0 && static_cast<size_t>(topology_devices) != devices_.size()) {
    return InvalidArgument("fake: the executable was compiled for a topology of " +
                           std::to_string(topology_devices) + " devices; this client has " +
                           std::to_string(devices_.size()));
  }
  return FakeLoadedExecutable::Load(this, std::move(executable));
}

StatusOr<MemoryLayout> FakeClient::DefaultLayout(ElementType type,
                                                 const std::vector<int64_t>& dims,
                                                 const Memory* memory) const {
  PJRTKIT_ASSIGN_OR_RETURN(MemoryLayout layout, Client::DefaultLayout(type, dims, memory));
  if (ElementTypeBits(type) < 8) layout.element_size_in_bits = ElementTypeBits(type);
  return layout;
}

StatusOr<std::unique_ptr<Buffer>> FakeClient::CreateUninitializedBuffer(
    ElementType type, const std::vector<int64_t>& dims, Memory* memory) {
  auto* fake_memory = static_cast<FakeMemory*>(memory);
  if (fake_memory->addressable_by_devices().empty()) {
    return InvalidArgument("fake: the memory has no device");
  }
  auto* device = static_cast<FakeDevice*>(fake_memory->addressable_by_devices()[0]);
  return std::unique_ptr<Buffer>(new FakeBuffer(type, dims, device, fake_memory,
                                                std::vector<uint8_t>(DenseByteSize(type, dims)),
                                                Event::CreateReady()));
}

StatusOr<std::unique_ptr<Buffer>> FakeClient::CreateViewOfDeviceBuffer(
    const DeviceBufferViewArgs& args) {
  auto* device = static_cast<FakeDevice*>(args.device);
  Memory* memory = args.memory != nullptr ? args.memory : device->default_memory();
  if (args.layout.has_value() && !args.layout->tiles.empty()) {
    return Unimplemented("fake: tiled layouts for views");
  }
  if (args.stream != 0) {
    return Unimplemented("fake: no streams to wait for (got stream " +
                         std::to_string(args.stream) + ")");
  }
  std::shared_ptr<Event> on_destroy = Event::Create();
  if (args.on_delete) {
    std::function<void()> on_delete = args.on_delete;
    on_destroy->OnReady([on_delete](const Status&) { on_delete(); });
  }
  auto buffer = std::make_unique<FakeBuffer>(args.type, args.dims, device,
                                             static_cast<FakeMemory*>(memory),
                                             static_cast<const uint8_t*>(args.data), on_destroy);
  if (args.layout.has_value()) buffer->set_layout(*args.layout);
  return std::unique_ptr<Buffer>(std::move(buffer));
}

StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>>
FakeClient::CreateBuffersForAsyncHostToDevice(
    const std::vector<BufferShape>& shapes,
    const std::vector<std::optional<MemoryLayout>>& layouts, Memory* memory) {
  auto* fake_memory = static_cast<FakeMemory*>(memory);
  if (fake_memory->addressable_by_devices().empty()) {
    return InvalidArgument("fake: the memory has no device");
  }
  for (const std::optional<MemoryLayout>& layout : layouts) {
    if (layout.has_value() && !layout->tiles.empty()) {
      return Unimplemented("fake: tiled layouts for asynchronous transfers");
    }
  }
  auto* device = static_cast<FakeDevice*>(fake_memory->addressable_by_devices()[0]);
  auto manager = std::make_unique<FakeTransferManager>(device, fake_memory, shapes, layouts);
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_transfer_manager_ = manager.get();
  }
  return std::unique_ptr<AsyncHostToDeviceTransferManager>(std::move(manager));
}

// ---- FakeFactory ------------------------------------------------------------------------------

Status FakeFactory::Initialize() { return OkStatus(); }

Status FakeClient::RegisterFfiHandler(const FfiHandlerRegistration& registration) {
  if (!accept_all_ffi_ && registration.target_name.rfind("refuse", 0) == 0) {
    return InvalidArgument("fake: refusing FFI handler '" + registration.target_name + "'");
  }
  if (!accept_all_ffi_ && registration.target_name.rfind("unimplemented", 0) == 0) {
    return Unimplemented("fake: no FFI support for '" + registration.target_name + "'");
  }
  std::lock_guard<std::mutex> lock(mu_);
  ffi_handlers_.push_back(registration);
  return OkStatus();
}

Status FakeClient::RegisterFfiType(const FfiTypeRegistration& registration) {
  if (!accept_all_ffi_ && registration.type_name.rfind("refuse", 0) == 0) {
    return InvalidArgument("fake: refusing FFI type '" + registration.type_name + "'");
  }
  std::lock_guard<std::mutex> lock(mu_);
  ffi_types_.push_back(registration);
  return OkStatus();
}

std::vector<FfiHandlerRegistration> FakeClient::ffi_handlers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ffi_handlers_;
}

std::vector<FfiTypeRegistration> FakeClient::ffi_types() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ffi_types_;
}

AttributeMap FakeFactory::PluginAttributes() {
  return {{"xla_version", int64_t{2}},
          {"stablehlo_current_version", std::vector<int64_t>{1, 9, 0}},
          {"fake_plugin", true},
          {"fake_scale", 0.5f},
          {"fake_name", std::string("pjrtkit-fake")}};
}

StatusOr<std::unique_ptr<Client>> FakeFactory::CreateClient(const AttributeMap& options) {
  return FakeClient::Create(options);
}

StatusOr<std::unique_ptr<Topology>> FakeFactory::CreateTopology(const std::string& name,
                                                                const AttributeMap& options) {
  if (!name.empty() && name != "fake") {
    return NotFound("fake: unknown topology '" + name + "'");
  }
  std::vector<OptionSpec> accepted = AcceptedOptions();
  PJRTKIT_ASSIGN_OR_RETURN(Options parsed, Options::Parse(options, accepted));
  std::vector<DeviceDescription> devices;
  for (int64_t i = 0; i < parsed.GetInt("device_count"); ++i) {
    devices.emplace_back(static_cast<int>(i), 0, "fake", "FAKE_" + std::to_string(i),
                         "FakeDevice(id=" + std::to_string(i) + ")", AttributeMap{});
  }
  return FakeClient::MakeTopology(parsed.GetString("platform_version"), devices);
}

}  // namespace testing
}  // namespace pjrtkit
