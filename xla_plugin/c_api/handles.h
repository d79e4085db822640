// The PJRT handle structs (opaque in pjrt_c_api.h, defined here; PJRT_Error and PJRT_Memory, which
// the header defines as a function-table pointer, are extended by ErrorImpl and MemoryImpl): each
// wraps a pjrtkit client-layer object and owns the caches that the pointers returned through the C
// API point into, so returned strings and arrays live exactly as long as the handle.
//
// Ownership:
//   PJRT_Client            owns the pjrtkit::Client, every PJRT_Device / PJRT_Memory /
//                          PJRT_DeviceDescription wrapper (made once, at PJRT_Client_Create) and
//                          the wrapper of its topology. Reference counted (client_reference.h):
//                          PJRT_Client_Destroy drops the framework's reference, and every
//                          buffer, loaded executable and transfer manager holds one, so those
//                          may be destroyed (or used) after PJRT_Client_Destroy.
//   PJRT_Buffer            owns its pjrtkit::Buffer; references its PJRT_Client.
//   PJRT_Executable        shares the pjrtkit::Executable (std::shared_ptr), so it outlives the
//                          PJRT_LoadedExecutable it came from, or, made by PJRT_Compile, the
//                          PJRT_TopologyDescription (and any client) it was compiled with.
//   PJRT_LoadedExecutable  owns its pjrtkit::LoadedExecutable.
//   PJRT_Event             shares the pjrtkit::Event.
//   PJRT_Error             an ErrorImpl: holds a non-OK pjrtkit::Status (payloads included).
//   PJRT_TopologyDescription owns its pjrtkit::Topology (PJRT_TopologyDescription_Create or
//                          _Deserialize) or borrows the client's (PJRT_Client_TopologyDescription).
//   PJRT_AsyncHostToDeviceTransferManager owns its pjrtkit::AsyncHostToDeviceTransferManager;
//                          points back to its PJRT_Client (retrieved buffers belong to it).
//   PJRT_ExecuteContext    owns its pjrtkit::ExecuteContext (created without a client).
//   PJRT_Layouts_MemoryLayout owns a pjrtkit::MemoryLayout; the caller's, or the PJRT_Executable's
//                          for output layouts.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_HANDLES_H_
#define PJRTKIT_XLA_PLUGIN_C_API_HANDLES_H_

// C++ standard library.
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

// PJRT C API and the Layouts extension ABI (its opaque handle types are defined below).
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/abi/layouts_extension.h"

// pjrtkit.
#include "xla_plugin/c_api/client_reference.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/key_value_callbacks.h"
#include "xla_plugin/c_api/once_cache.h"
#include "xla_plugin/client/async_host_to_device_transfer.h"
#include "xla_plugin/client/buffer.h"
#include "xla_plugin/client/client.h"
#include "xla_plugin/client/device.h"
#include "xla_plugin/client/device_description.h"
#include "xla_plugin/client/event.h"
#include "xla_plugin/client/executable.h"
#include "xla_plugin/client/execute_context.h"
#include "xla_plugin/client/loaded_executable.h"
#include "xla_plugin/client/memory.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/topology.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace capi {

// Output dimensions of an executable, in the layout PJRT_Executable_OutputDimensions returns.
struct ExecutableDims {
  std::vector<int64_t> dims;      // All outputs' dimensions, concatenated.
  std::vector<size_t> dim_sizes;  // Rank of each output.
};

// The output layouts of an executable (PJRT_Layouts_PJRT_Executable_GetOutputLayouts), owned by
// its PJRT_Executable handle.
struct ExecutableOutputLayouts {
  std::vector<std::unique_ptr<PJRT_Layouts_MemoryLayout>> layouts;  // One per output.
  std::vector<PJRT_Layouts_MemoryLayout*> pointers;                 // Into `layouts`.
};

// Memory kinds of an executable's outputs, as C strings.
struct ExecutableMemoryKinds {
  std::vector<std::string> kinds;      // The strings.
  std::vector<const char*> kind_ptrs;  // Pointers into `kinds`.
  std::vector<size_t> kind_sizes;      // Sizes of `kinds`.
};

// An executable's parameter or output shardings (serialized xla.OpSharding each), as the
// Shardings extension hands them out; `reported` false when the device reports none.
struct ExecutableShardings {
  bool reported = false;
  std::vector<std::string> protos;  // The messages.
  std::vector<const char*> ptrs;    // Pointers into `protos`.
  std::vector<size_t> sizes;        // Sizes of `protos`.
};

}  // namespace capi
}  // namespace pjrtkit

namespace pjrtkit {
namespace capi {

// An error returned to the framework; freed with PJRT_Error_Destroy or through its function table
// (ErrorFunctionTable(), error.h), which PJRT C API 0.117 puts first in every PJRT_Error.
struct ErrorImpl : PJRT_Error {
  explicit ErrorImpl(Status s);
  Status status;  // Never OK.
};

// The ErrorImpl behind `error`, one of ours (every PJRT_Error pjrtkit hands out is one).
inline const ErrorImpl* Impl(const PJRT_Error* error) {
  return static_cast<const ErrorImpl*>(error);
}

// User data a framework attaches to a PJRT_Memory (PJRT_Memory_FunctionTable::set_user_data).
struct MemoryUserData {
  void* data = nullptr;               // The framework's pointer.
  void (*dtor)(void*) = nullptr;      // Called with `data` when replaced or at client destruction.
};

}  // namespace capi
}  // namespace pjrtkit

// A future of a Status. The pjrtkit::Event is shared, so callbacks registered with
// PJRT_Event_OnReady keep it alive after the framework destroys this handle.
struct PJRT_Event {
  std::shared_ptr<pjrtkit::Event> event;  // The event; never null.
  // Made by PJRT_Event_Create: the framework sets it (PJRT_Event_Set); no other event may be set.
  bool set_by_framework = false;
};

// A device description, of a client's device or of a topology.
struct PJRT_DeviceDescription {
  // Wraps `description`, which must outlive this handle.
  explicit PJRT_DeviceDescription(const pjrtkit::DeviceDescription* description)
      : description(description), attributes(description->attributes()) {}

  const pjrtkit::DeviceDescription* description;   // Owned by the device or the topology.
  const pjrtkit::capi::NamedValueList attributes;  // PJRT_DeviceDescription_Attributes output.
  // Whose it is (one of the two is set): for forwarded extensions, which reach the inner
  // plugin's description through the device or the topology.
  const PJRT_Device* device = nullptr;
  const PJRT_TopologyDescription* topology = nullptr;
};

// A device of a client. Owned by its PJRT_Client.
struct PJRT_Device {
  // Wraps `device` of `client`.
  PJRT_Device(pjrtkit::Device* device, PJRT_Client* client)
      : device(device), client(client), description(&device->description()) {
    description.device = this;
  }

  pjrtkit::Device* device;                // Owned by the pjrtkit::Client.
  PJRT_Client* client;                    // The owning client handle.
  PJRT_DeviceDescription description;     // PJRT_Device_GetDescription output.
  std::vector<PJRT_Memory*> memories;     // PJRT_Device_AddressableMemories output.
  PJRT_Memory* default_memory = nullptr;  // PJRT_Device_DefaultMemory output (may be null).
};

namespace pjrtkit {
namespace capi {

// A memory of a client (what every PJRT_Memory pjrtkit hands out is). Owned by its PJRT_Client.
// Starts with the PJRT_Memory function table (user data; MemoryFunctionTable(), memory.h).
struct MemoryImpl : PJRT_Memory {
  MemoryImpl();
  ~MemoryImpl();  // Runs the user data destructors.
  MemoryImpl(const MemoryImpl&) = delete;
  MemoryImpl& operator=(const MemoryImpl&) = delete;

  pjrtkit::Memory* memory = nullptr;  // Owned by the pjrtkit::Client.
  PJRT_Client* client = nullptr;      // The owning client handle.
  std::vector<PJRT_Device*> devices;  // PJRT_Memory_AddressableByDevices output.
  std::mutex user_data_mu;            // Guards user_data.
  std::unordered_map<const void*, MemoryUserData> user_data;  // By key.
};

// The MemoryImpl behind `memory`, one of ours.
inline MemoryImpl* Impl(PJRT_Memory* memory) { return static_cast<MemoryImpl*>(memory); }
inline const MemoryImpl* Impl(const PJRT_Memory* memory) {
  return static_cast<const MemoryImpl*>(memory);
}

}  // namespace capi
}  // namespace pjrtkit

// A topology: owned (PJRT_TopologyDescription_Create) or borrowed from a client.
struct PJRT_TopologyDescription {
  // Wraps `topology`; `owned` is either null (borrowed from `owner_client`) or owns `topology`.
  PJRT_TopologyDescription(const pjrtkit::Topology* topology,
                           std::unique_ptr<pjrtkit::Topology> owned, PJRT_Client* owner_client);

  std::unique_ptr<pjrtkit::Topology> owned;  // Set when this handle owns the topology.
  const pjrtkit::Topology* topology;         // The topology (owned or the client's).
  PJRT_Client* owner_client;                 // Set when borrowed: the client that owns it.
  std::vector<std::unique_ptr<PJRT_DeviceDescription>> descriptions;  // One per device.
  std::vector<PJRT_DeviceDescription*> description_ptrs;  // GetDeviceDescriptions output.
  const pjrtkit::capi::NamedValueList attributes;         // PJRT_TopologyDescription_Attributes.
  pjrtkit::capi::OnceCache<std::vector<int>> memory_space_kind_ids;  // GetMemorySpaceKindIds.
};

// A client and every device/memory wrapper of it.
struct PJRT_Client {
  // The handle of `device`, or nullptr when it is not one of this client's devices.
  PJRT_Device* FindDevice(const pjrtkit::Device* device) const {
    auto it = device_handles.find(device);
    return it == device_handles.end() ? nullptr : it->second;
  }
  // The handle of `memory`, or nullptr when it is not one of this client's memories.
  PJRT_Memory* FindMemory(const pjrtkit::Memory* memory) const {
    auto it = memory_handles.find(memory);
    return it == memory_handles.end() ? nullptr : it->second;
  }

  // References (client_reference.h): the framework's, until PJRT_Client_Destroy, and one per
  // buffer, loaded executable and transfer manager; the last one to go deletes this client.
  std::atomic<int64_t> references{1};
  std::unique_ptr<pjrtkit::Client> client;                   // Destroyed last (declared first).
  std::vector<std::unique_ptr<PJRT_Device>> owned_devices;   // Every device wrapper.
  std::vector<std::unique_ptr<pjrtkit::capi::MemoryImpl>> owned_memories;  // Every memory.
  std::unordered_map<const pjrtkit::Device*, PJRT_Device*> device_handles;  // C++ -> handle.
  std::unordered_map<const pjrtkit::Memory*, PJRT_Memory*> memory_handles;  // C++ -> handle.
  std::vector<PJRT_Device*> devices;                   // PJRT_Client_Devices output.
  std::vector<PJRT_Device*> addressable_devices;       // PJRT_Client_AddressableDevices output.
  std::vector<PJRT_Memory*> addressable_memories;      // PJRT_Client_AddressableMemories output.
  std::unique_ptr<PJRT_TopologyDescription> topology;  // Borrowed wrapper; null on error.
  pjrtkit::Status topology_status;                     // Why `topology` is null.
  // The framework's key-value callbacks (null without them): closed by PJRT_Client_Destroy.
  std::shared_ptr<pjrtkit::capi::CallbackKeyValueStore> kv_store;

  // Keeps `buffer`, whose handle was destroyed while external references to its memory were
  // still held, until the client is destroyed (those references can no longer be dropped).
  void RetainReferenced(std::unique_ptr<pjrtkit::Buffer> buffer) {
    std::lock_guard<std::mutex> lock(retained_mu);
    retained.push_back(std::move(buffer));
  }
  std::mutex retained_mu;                                // Guards `retained`.
  std::vector<std::unique_ptr<pjrtkit::Buffer>> retained;  // Destroyed before `client`.
};

// A device buffer. Owns its pjrtkit::Buffer.
//
// External references (PJRT_Buffer_IncreaseExternalReferenceCount) keep the memory: a
// PJRT_Buffer_Delete while some are held marks the handle deleted at once but deletes the
// pjrtkit::Buffer only when the last one is dropped, and a PJRT_Buffer_Destroy while some are held
// hands the pjrtkit::Buffer to its client (PJRT_Client::RetainReferenced), as jaxlib's backends
// keep memory shared with NumPy or DLPack.
struct PJRT_Buffer {
  // Keeps `client` alive; destroyed after every other member (declared first).
  pjrtkit::capi::ClientReference client_reference;
  // True after PJRT_Buffer_Delete, or when the device deleted or donated the buffer.
  bool IsDeleted() const {
    return delete_requested.load(std::memory_order_acquire) || buffer->IsDeleted();
  }

  std::unique_ptr<pjrtkit::Buffer> buffer;                          // The buffer; never null.
  PJRT_Client* client;                                              // The client it belongs to.
  // Serializes PJRT_Buffer_Delete with external-reference changes (see above).
  std::mutex references_mu;
  // PJRT_Buffer_Delete was called; buffer->Delete() may wait for the last external reference.
  std::atomic<bool> delete_requested{false};
  pjrtkit::capi::OnceCache<pjrtkit::capi::TiledLayoutView> layout;  // GetMemoryLayout output.
  // The handles of the buffer's device and memory when known at creation (outputs of an
  // execution), so PJRT_Buffer_Device/_Memory need no lookup; null means look them up.
  PJRT_Device* device_handle = nullptr;
  PJRT_Memory* memory_handle = nullptr;
  // Set for a buffer of PJRT_Client_CreateErrorBuffer (an ErrorBuffer, whose error this is): an
  // execution it is an argument of fails with it.
  const pjrtkit::Status* error = nullptr;
};

// A compiled program, not bound to devices. Shares the pjrtkit::Executable, so it outlives the
// PJRT_LoadedExecutable it came from.
struct PJRT_Executable {
  std::shared_ptr<pjrtkit::Executable> executable;  // Never null.
  size_t num_outputs = 0;                           // executable->num_outputs(), read once.
  // Caches of what the entry points return (each filled on first use).
  pjrtkit::capi::OnceCache<std::string> fingerprint;                      // Fingerprint.
  pjrtkit::capi::OnceCache<std::vector<PJRT_Buffer_Type>> element_types;  // OutputElementTypes.
  pjrtkit::capi::OnceCache<pjrtkit::capi::ExecutableDims> dims;           // OutputDimensions.
  pjrtkit::capi::OnceCache<pjrtkit::capi::ExecutableMemoryKinds> memory_kinds;  // MemoryKinds.
  // ParameterMemoryKinds.
  pjrtkit::capi::OnceCache<pjrtkit::capi::ExecutableMemoryKinds> parameter_memory_kinds;
  pjrtkit::capi::OnceCache<pjrtkit::capi::NamedValueList> cost_analysis;        // GetCostAnalysis.
  pjrtkit::capi::OnceCache<pjrtkit::Program> optimized_program;                 // OptimizedProgram.
  pjrtkit::capi::OnceCache<pjrtkit::capi::ExecutableOutputLayouts> output_layouts;  // Layouts ext.
  pjrtkit::capi::OnceCache<pjrtkit::capi::ExecutableOutputLayouts> parameter_layouts;  // Likewise.
  // Shardings extension (shardings_extension.h).
  pjrtkit::capi::OnceCache<pjrtkit::capi::ExecutableShardings> parameter_shardings;
  pjrtkit::capi::OnceCache<pjrtkit::capi::ExecutableShardings> output_shardings;
};

// A program loaded onto devices. Owns its pjrtkit::LoadedExecutable.
struct PJRT_LoadedExecutable {
  // Keeps `client` alive; destroyed after every other member (declared first).
  pjrtkit::capi::ClientReference client_reference;
  std::unique_ptr<pjrtkit::LoadedExecutable> loaded;  // Never null.
  PJRT_Client* client;                                // The client it was loaded by.
  std::vector<PJRT_Device*> addressable_devices;      // AddressableDevices output.
  size_t num_outputs = 0;                             // The executable's, read once.
  pjrtkit::capi::OnceCache<std::string> fingerprint;  // LoadedExecutable_Fingerprint output.
  // LoadedExecutable_AddressableDeviceLogicalIds output.
  pjrtkit::capi::OnceCache<std::vector<PJRT_LogicalDeviceIds>> logical_ids;
  // FFI user data every execution passes to the FFI handlers, set when the executable was loaded
  // under a thread binding (executable_binding.h); null (the common case) otherwise.
  std::unique_ptr<pjrtkit::ExecuteContext> bound_context;
  // Argument lists and result reused by PJRT_LoadedExecutable_Execute (no allocation for them
  // once warm) while `scratch_busy` is held; a concurrent or re-entrant Execute uses its own.
  std::vector<std::vector<pjrtkit::Buffer*>> scratch_arguments;
  pjrtkit::ExecuteResult scratch_result;
  std::atomic<bool> scratch_busy{false};
};

// The buffers of one asynchronous host-to-device transfer. Owns the manager.
struct PJRT_AsyncHostToDeviceTransferManager {
  // Keeps `client` alive; destroyed after every other member (declared first).
  pjrtkit::capi::ClientReference client_reference;
  std::unique_ptr<pjrtkit::AsyncHostToDeviceTransferManager> manager;  // Never null.
  PJRT_Client* client;  // The client it was created by (and its buffers belong to).
  std::vector<pjrtkit::BufferShape> shapes;  // Each buffer's shape, as created.
  // Each buffer's requested device layout (empty: all default; nullopt entries: default).
  std::vector<std::optional<pjrtkit::MemoryLayout>> layouts;
};

// Per-execution data passed in PJRT_ExecuteOptions::context. Owns the pjrtkit::ExecuteContext.
struct PJRT_ExecuteContext {
  std::unique_ptr<pjrtkit::ExecuteContext> context;  // Never null.
};

// A memory layout handed out by the Layouts extension (layouts_extension.h). The caller frees it
// with PJRT_Layouts_MemoryLayout_Destroy, except an executable's output and parameter layouts,
// which the PJRT_Executable owns (Destroy refuses them).
struct PJRT_Layouts_MemoryLayout {
  pjrtkit::MemoryLayout layout;      // Checked with CheckMemoryLayout when made.
  // True for PJRT_Layouts_PJRT_Executable_GetOutputLayouts' and _GetParameterLayouts'.
  bool owned_by_executable = false;
};

// The bytes of PJRT_Layouts_MemoryLayout_Serialize, freed by the deleter it returns.
struct PJRT_Layouts_SerializedLayout {
  std::string bytes;  // xla::Layout::ToString() text (layout_codec.h).
};

// Attributes handed out with a deleter (PJRT_Device_GetAttributes).
struct PJRT_Device_Attributes {
  pjrtkit::capi::NamedValueList attributes;  // The array the caller reads.
};

// A device's marker of asynchronous work (PJRT_Device_CreateAsyncTrackingEvent); the framework
// destroys it with PJRT_AsyncTrackingEvent_Destroy.
struct PJRT_AsyncTrackingEvent {
  std::unique_ptr<pjrtkit::AsyncTrackingEvent> event;  // The device's; never null.
};

// Bytes handed out with a deleter (PJRT_Executable_Serialize).
struct PJRT_SerializedExecutable {
  std::string bytes;  // The serialized executable.
};

// Bytes handed out with a deleter (PJRT_Executable_GetCompileOptions).
struct PJRT_SerializedCompileOptions {
  std::string bytes;  // A serialized xla.CompileOptionsProto.
};

// Bytes handed out with a deleter (PJRT_TopologyDescription_Serialize).
struct PJRT_SerializedTopology {
  std::string bytes;  // The serialized topology.
};

// Bytes handed out with a deleter (PJRT_LoadedExecutable_GetDeviceAssignment).
struct PJRT_DeviceAssignmentSerialized {
  std::string bytes;  // The serialized xla.DeviceAssignmentProto.
};

#endif  // PJRTKIT_XLA_PLUGIN_C_API_HANDLES_H_
