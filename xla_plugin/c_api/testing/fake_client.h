// An in-memory fake device for the C-API tests: FakeFactory builds a FakeClient whose devices
// keep buffers in host memory and whose compiler turns any program signature into an identity
// executable (see fake_executable.h).
//
// Create options (all optional):
//   device_count        int64   addressable devices (default 2)
//   remote_device_count int64   extra non-addressable devices of process 1 (default 0)
//   platform_version    string  PJRT_Client_PlatformVersion (default "fake 1.0")
//   delay_ready         bool    buffers from BufferFromHostBuffer become ready only at
//                               FakeClient::ReleasePendingEvents() (default false)
//   scale               float   unused; echoed (default 1.0)
//   shape               int64 list  unused; echoed (default empty)
// Every given option is echoed into each device's attributes (with the device's own "index"), so
// tests can check the PJRT_NamedValue conversion both ways.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_CLIENT_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_CLIENT_H_

// C++ standard library.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

// pjrtkit client layer.
#include "xla_plugin/client/client.h"
#include "xla_plugin/client/device.h"
#include "xla_plugin/client/memory.h"
#include "xla_plugin/client/topology.h"

namespace pjrtkit {
namespace testing {

class FakeDevice;
class FakeTransferManager;

// A memory: per-device "device" memory (kind id 0) or the shared "pinned_host" (kind id 1).
class FakeMemory : public Memory {
 public:
  // A memory `id` of `kind`.
  FakeMemory(int id, std::string kind, int kind_id, std::string debug_string);

  // Adds a device that can address this memory.
  void AddDevice(Device* device) { devices_.push_back(device); }

  int id() const override { return id_; }
  const std::string& kind() const override { return kind_; }
  int kind_id() const override { return kind_id_; }
  const std::string& debug_string() const override { return debug_string_; }
  const std::string& to_string() const override { return to_string_; }
  const std::vector<Device*>& addressable_by_devices() const override { return devices_; }

 private:
  int id_;                        // Id.
  std::string kind_;              // "device" or "pinned_host".
  int kind_id_;                   // 0 or 1.
  std::string debug_string_;      // Short name.
  std::string to_string_;         // Long name.
  std::vector<Device*> devices_;  // Devices that can address it.
};

// What FakeDevice::PoisonExecution was last asked (test hook).
struct FakePoison {
  int launch_id = 0;  // The launch id.
  Status error;       // The error the execution was to fail with.
};

// A device with memory accounting (bytes in use, peak, number of allocations), and the device
// slots of PJRT C API 0.82-0.117 (memory-stat clearing, poisoning, tracking events) recorded for
// the tests.
class FakeDevice : public Device {
 public:
  // Device `id` of `process_index`; addressable devices have local_hardware_id == id.
  FakeDevice(int id, int process_index, bool addressable, AttributeMap attributes);

  // Adds a memory; the first one added is the default.
  void AddMemory(Memory* memory) { memories_.push_back(memory); }
  // Accounts an allocation / a release of `bytes`.
  void Allocate(size_t bytes);
  void Free(size_t bytes);

  const DeviceDescription& description() const override { return description_; }
  bool IsAddressable() const override { return addressable_; }
  int local_hardware_id() const override { return addressable_ ? description_.id() : -1; }
  const std::vector<Memory*>& memories() const override { return memories_; }
  Memory* default_memory() const override { return memories_.empty() ? nullptr : memories_[0]; }
  // Also peak_allocated_bytes (the highest bytes in use since creation or ClearMemoryStats).
  StatusOr<MemoryStats> GetMemoryStats() const override;
  // The peak starts over from the bytes in use now.
  Status ClearMemoryStats() override;
  // Records `launch_id` and `error` (last_poison()); true when an execution with `launch_id` ran
  // on this device (RecordLaunch).
  StatusOr<bool> PoisonExecution(int launch_id, const Status& error) override;
  // An event counted in live_tracking_events() until destroyed, its description recorded; none
  // (nullptr, OK) for the description "untracked".
  StatusOr<std::unique_ptr<AsyncTrackingEvent>> CreateAsyncTrackingEvent(
      const std::string& description) override;

  // Records that an execution with `launch_id` ran on this device (called by
  // FakeLoadedExecutable).
  void RecordLaunch(int launch_id);
  // The last PoisonExecution call, if any (test hook).
  std::optional<FakePoison> last_poison() const;
  // Tracking events alive now, and the descriptions of all made so far (test hooks).
  int live_tracking_events() const { return live_tracking_events_->load(); }
  std::vector<std::string> tracking_descriptions() const;

 private:
  DeviceDescription description_;  // Id, kind "fake", attributes.
  bool addressable_;               // Owned by this process.
  std::vector<Memory*> memories_;  // Default first.
  mutable std::mutex mu_;          // Guards the counters.
  int64_t bytes_in_use_ = 0;       // Live bytes.
  int64_t peak_bytes_in_use_ = 0;  // Highest bytes_in_use_.
  int64_t num_allocs_ = 0;         // Allocations so far.
  std::set<int> launches_;                      // Launch ids of executions that ran here.
  std::optional<FakePoison> last_poison_;       // See last_poison().
  std::vector<std::string> tracking_descriptions_;  // See tracking_descriptions().
  // Live tracking events; shared with them (they may outlive the device).
  std::shared_ptr<std::atomic<int>> live_tracking_events_ = std::make_shared<std::atomic<int>>(0);
};

// The fake client.
class FakeClient : public Client {
 public:
  // Parses `options` (see the file comment) and builds the devices.
  static StatusOr<std::unique_ptr<Client>> Create(const AttributeMap& options);
  // The topology of `devices` (a FakeTopology, which compiles ahead of time), as
  // FakeFactory::CreateTopology returns it.
  static std::unique_ptr<Topology> MakeTopology(const std::string& platform_version,
                                                const std::vector<DeviceDescription>& devices);

  // Makes every buffer created with delay_ready ready (test hook).
  void ReleasePendingEvents();
  // Launch id and non-donatable indices of the last Execute (test hooks).
  int last_launch_id() const { return last_launch_id_.load(); }
  std::vector<int64_t> last_non_donatable() const;
  // Records an Execute's options (called by FakeLoadedExecutable).
  void RecordExecute(int launch_id, const std::set<int64_t>& non_donatable);
  // The ExecuteContext of the last Execute (nullptr: none), a copy of its entries (the context
  // itself may be gone after Execute) and their recorder (test hooks).
  const ExecuteContext* last_context() const;
  std::map<int64_t, void*> last_user_data() const;
  void RecordContext(const ExecuteContext* context);
  // The transfer manager CreateBuffersForAsyncHostToDevice made last; valid while its handle
  // lives (test hook).
  FakeTransferManager* last_transfer_manager() const;

  // Client:
  const std::string& platform_name() const override { return platform_name_; }
  const std::string& platform_version() const override { return platform_version_; }
  const std::vector<Device*>& devices() const override { return devices_; }
  const std::vector<Device*>& addressable_devices() const override { return addressable_; }
  const std::vector<Memory*>& memories() const override { return memories_; }
  StatusOr<HostBufferResult> BufferFromHostBuffer(const HostBufferArgs& args) override;
  StatusOr<std::unique_ptr<LoadedExecutable>> Compile(const Program& program,
                                                      const std::string& compile_options) override;
  StatusOr<std::unique_ptr<LoadedExecutable>> DeserializeAndLoad(
      const std::string& serialized, const std::optional<std::string>& compile_options) override;
  StatusOr<const Topology*> topology() const override { return topology_.get(); }
  // Row-major; arrays of sub-byte element types are packed (element_size_in_bits = their bit
  // width, as XLA:CPU's int4 buffers are), so a test can tell the device's answer from the
  // client layer's default.
  StatusOr<MemoryLayout> DefaultLayout(ElementType type, const std::vector<int64_t>& dims,
                                       const Memory* memory) const override;
  StatusOr<std::unique_ptr<Buffer>> CreateUninitializedBuffer(ElementType type,
                                                              const std::vector<int64_t>& dims,
                                                              Memory* memory) override;
  // A buffer aliasing `args.data` (dense row-major host memory); `args.on_delete` runs when the
  // buffer is destroyed.
  StatusOr<std::unique_ptr<Buffer>> CreateViewOfDeviceBuffer(
      const DeviceBufferViewArgs& args) override;
  // A FakeTransferManager on the first device of `memory`; tiled layouts are UNIMPLEMENTED.
  StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>> CreateBuffersForAsyncHostToDevice(
      const std::vector<BufferShape>& shapes,
      const std::vector<std::optional<MemoryLayout>>& layouts, Memory* memory) override;
  // Record FFI registrations (ffi_handlers() / ffi_types()); a target or type whose name starts
  // with "refuse" is INVALID_ARGUMENT, one starting with "unimplemented" UNIMPLEMENTED (test hooks
  // for refusals).
  Status RegisterFfiHandler(const FfiHandlerRegistration& registration) override;
  Status RegisterFfiType(const FfiTypeRegistration& registration) override;
  // When true, "refuse..." names are accepted like any other (a client that accepts what another
  // refuses; test hook).
  void set_accept_all_ffi(bool accept) { accept_all_ffi_ = accept; }
  // The FFI registrations this client accepted, in order (test hooks).
  std::vector<FfiHandlerRegistration> ffi_handlers() const;
  std::vector<FfiTypeRegistration> ffi_types() const;

 private:
  FakeClient() = default;

  std::string platform_name_ = "fake";                       // Platform name.
  std::string platform_version_;                             // Platform version.
  bool delay_ready_ = false;                                 // See the file comment.
  bool accept_all_ffi_ = false;                              // See set_accept_all_ffi.
  std::vector<std::unique_ptr<FakeDevice>> owned_devices_;   // All devices.
  std::vector<std::unique_ptr<FakeMemory>> owned_memories_;  // All memories.
  std::vector<Device*> devices_;                             // All devices.
  std::vector<Device*> addressable_;                         // Addressable devices.
  std::vector<Memory*> memories_;                            // All memories.
  std::unique_ptr<Topology> topology_;                       // The topology.
  mutable std::mutex mu_;                                    // Guards pending_ and the records.
  std::vector<std::shared_ptr<Event>> pending_;              // Ready events held back.
  std::atomic<int> last_launch_id_{-1};                      // Last Execute's launch id.
  std::vector<int64_t> last_non_donatable_;                  // Last Execute's non-donatable set.
  const ExecuteContext* last_context_ = nullptr;             // Last Execute's context.
  std::map<int64_t, void*> last_user_data_;                  // Its entries, copied.
  FakeTransferManager* last_transfer_manager_ = nullptr;     // Last transfer manager made.
  std::vector<FfiHandlerRegistration> ffi_handlers_;         // Accepted FFI handlers.
  std::vector<FfiTypeRegistration> ffi_types_;               // Accepted FFI types.
};

// The Factory of the fake device (see xla_plugin/client/plugin_factory.h).
struct FakeFactory {
  // Always OK.
  static Status Initialize();
  // xla_version (int64), stablehlo_current_version (int64 list), fake_plugin (bool),
  // fake_scale (float), fake_name (string).
  static AttributeMap PluginAttributes();
  // FakeClient::Create.
  static StatusOr<std::unique_ptr<Client>> CreateClient(const AttributeMap& options);
  // A topology named "fake" (or ""), with options device_count and platform_version; any other
  // name is NOT_FOUND.
  static StatusOr<std::unique_ptr<Topology>> CreateTopology(const std::string& name,
                                                            const AttributeMap& options);
};

}  // namespace testing
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_CLIENT_H_
