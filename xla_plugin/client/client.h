// Client: the entry object of a device; owns its devices, memories and topology.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_CLIENT_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xla_plugin/client/async_host_to_device_transfer.h"
#include "xla_plugin/client/buffer.h"
#include "xla_plugin/client/device.h"
#include "xla_plugin/client/event.h"
#include "xla_plugin/client/ffi_registration.h"
#include "xla_plugin/client/layout_codec.h"
#include "xla_plugin/client/loaded_executable.h"
#include "xla_plugin/client/memory.h"
#include "xla_plugin/client/native_handle.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

// Arguments of Client::BufferFromHostBuffer. The C-API layer checks before calling: a known
// element type, dims >= 0 (shape_checks.h), one byte stride per dimension when byte_strides is
// set, data non-null unless the array has 0 bytes, the destination (call_checks.h).
struct HostBufferArgs {
  const void* data = nullptr;                         // Host data; null only for 0 bytes.
  ElementType type = ElementType::kInvalid;            // Element type.
  std::vector<int64_t> dims;                           // Dimensions.
  // Strides in bytes, one per dimension; unset is dense row-major.
  std::optional<std::vector<int64_t>> byte_strides;
  HostBufferSemantics semantics = HostBufferSemantics::kImmutableOnlyDuringCall;  // Data lifetime.
  // Destination device, set and addressable (ResolveDestinationDevice, call_checks.h).
  Device* device = nullptr;
  Memory* memory = nullptr;                            // Destination memory; nullptr: default.
  std::optional<MemoryLayout> device_layout;           // Requested on-device layout.
};

// What BufferFromHostBuffer produced.
struct HostBufferResult {
  std::unique_ptr<Buffer> buffer;               // The new buffer.
  std::shared_ptr<Event> done_with_host_buffer;  // Ready when the host data may be reused.
};

// Arguments of Client::CreateViewOfDeviceBuffer.
struct DeviceBufferViewArgs {
  void* data = nullptr;                       // Device memory owned by someone else (null
                                              // only for a shape without elements).
  ElementType type = ElementType::kInvalid;   // Element type.
  std::vector<int64_t> dims;                  // Dimensions.
  std::optional<MemoryLayout> layout;         // Layout of `data`; unset: the default.
  Device* device = nullptr;                   // The device holding `data`.
  Memory* memory = nullptr;                   // The memory holding `data`; nullptr: default.
  // Called once when the buffer no longer uses `data` (destroyed or deleted); may be empty.
  std::function<void()> on_delete;
  // A stream of the device's platform (a CUstream on a CUDA device) whose work so far must be
  // done before the view is read: DLPack's producer stream. 0: `data` is ready now. A device
  // that cannot wait for one refuses a non-zero stream.
  intptr_t stream = 0;
};

// What a client's host buffer pool holds (Client::host_buffer_pool_stats()): host memory kept
// for host-to-device copies (see plugin_wrapper/host_buffer_pool.h).
struct HostBufferPoolStats {
  size_t held_bytes = 0;      // Released blocks kept for reuse (what TrimHostBufferPool frees).
  int64_t held_blocks = 0;    // How many.
  size_t in_use_bytes = 0;    // Blocks backing live buffers.
  int64_t in_use_blocks = 0;  // How many.
  size_t limit_bytes = 0;     // The most it keeps (create option host_buffer_cache_mib; 0: off).
};

// A device platform's client. Device teams subclass it (see plugin_wrapper/wrapped_client.h,
// which the xla_cpu and xla_gpu reference devices share).
class Client {
 public:
  virtual ~Client() = default;

  // The other PJRT plugin's object behind this one (native_handle.h); default: none.
  virtual NativeHandle native_handle() const { return {}; }
  // Platform name as JAX sees it ("pjrtkit").
  virtual const std::string& platform_name() const = 0;
  // Platform version string.
  virtual const std::string& platform_version() const = 0;
  // Index of this process.
  virtual int process_index() const { return 0; }
  // All devices, including those of other processes.
  virtual const std::vector<Device*>& devices() const = 0;
  // The devices this process can use.
  virtual const std::vector<Device*>& addressable_devices() const = 0;
  // Memories addressable by this process.
  virtual const std::vector<Memory*>& memories() const = 0;
  // The device with global id `id`; INVALID_ARGUMENT naming the valid ids otherwise.
  virtual StatusOr<Device*> LookupDevice(int id) const;
  // The addressable device with `local_hardware_id`; INVALID_ARGUMENT otherwise.
  virtual StatusOr<Device*> LookupAddressableDevice(int local_hardware_id) const;
  // Device ids for `num_replicas` x `num_partitions`, replica-major; INVALID_ARGUMENT when there
  // are not enough devices.
  virtual StatusOr<std::vector<int>> DefaultDeviceAssignment(int num_replicas,
                                                             int num_partitions) const;
  // Copies (or aliases, per `args.semantics`) host data into a new device buffer.
  virtual StatusOr<HostBufferResult> BufferFromHostBuffer(const HostBufferArgs& args) = 0;
  // Compiles `program` with `compile_options` (a serialized xla.CompileOptionsProto).
  virtual StatusOr<std::unique_ptr<LoadedExecutable>> Compile(
      const Program& program, const std::string& compile_options) = 0;
  // Loads bytes made by Executable::Serialize; `compile_options`, when set, overrides the
  // serialized options.
  virtual StatusOr<std::unique_ptr<LoadedExecutable>> DeserializeAndLoad(
      const std::string& serialized, const std::optional<std::string>& compile_options) = 0;
  // Loads `executable` (compiled by this device, e.g. ahead of time through a Topology) onto this
  // client's devices (PJRT_Client_Load); `compile_options`, when set, replace the executable's
  // own. Default: DeserializeAndLoad of executable.Serialize(), so a device whose serialized
  // executables load back gets it for free.
  virtual StatusOr<std::unique_ptr<LoadedExecutable>> Load(
      const Executable& executable, const std::optional<std::string>& compile_options);
  // The client's topology.
  virtual StatusOr<const Topology*> topology() const = 0;
  // The layout a buffer of `type` and `dims` gets in `memory` (nullptr: a device's default
  // memory) when nobody asks for another: what PJRT's Layouts extension reports as the client's
  // default layout (PJRT_Layouts_PJRT_Client_GetDefaultLayout; jaxlib passes no memory). The C-API
  // layer answers for tokens itself and rejects negative dimensions before calling. Default:
  // dense row-major, no tiles, elements unpacked.
  virtual StatusOr<MemoryLayout> DefaultLayout(ElementType type, const std::vector<int64_t>& dims,
                                               const Memory* memory) const;
  // A buffer of `type` and `dims` in `memory` with undefined contents.
  virtual StatusOr<std::unique_ptr<Buffer>> CreateUninitializedBuffer(
      ElementType type, const std::vector<int64_t>& dims, Memory* memory) {
    return Unimplemented("Client::CreateUninitializedBuffer is not implemented by this device");
  }
  // A buffer that aliases device memory it does not own (DLPack import). The memory must stay
  // valid until `args.on_delete` runs.
  virtual StatusOr<std::unique_ptr<Buffer>> CreateViewOfDeviceBuffer(
      const DeviceBufferViewArgs& args) {
    return Unimplemented("Client::CreateViewOfDeviceBuffer is not implemented by this device");
  }
  // Buffers of `shapes` in `memory`, to be filled through the returned manager. `layouts` is
  // empty (default layouts) or has one entry per shape.
  virtual StatusOr<std::unique_ptr<AsyncHostToDeviceTransferManager>>
  CreateBuffersForAsyncHostToDevice(const std::vector<BufferShape>& shapes,
                                    const std::vector<std::optional<MemoryLayout>>& layouts,
                                    Memory* memory) {
    return Unimplemented(
        "Client::CreateBuffersForAsyncHostToDevice is not implemented by this device");
  }
  // What the client's host buffer pool holds. Default: all zeros (no pool).
  virtual HostBufferPoolStats host_buffer_pool_stats() const { return HostBufferPoolStats(); }
  // Frees every block the host buffer pool keeps for reuse; returns the bytes freed. Default: 0.
  virtual size_t TrimHostBufferPool() { return 0; }
  // Makes the XLA FFI handler available to programs this client compiles. Called for every
  // registration made through the plugin's FFI extension, including those made before the client
  // existed (replayed at PJRT_Client_Create). UNIMPLEMENTED: this device runs no FFI handlers.
  virtual Status RegisterFfiHandler(const FfiHandlerRegistration& registration) {
    return Unimplemented("Client::RegisterFfiHandler is not implemented by this device");
  }
  // Makes the FFI type known to this client's FFI runtime under `registration.type_id`; called
  // like RegisterFfiHandler. UNIMPLEMENTED: this device runs no FFI handlers.
  virtual Status RegisterFfiType(const FfiTypeRegistration& registration) {
    return Unimplemented("Client::RegisterFfiType is not implemented by this device");
  }
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_CLIENT_H_
