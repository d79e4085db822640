// PJRT_Client_* entry points. PJRT_Client_Create needs the Factory: the template in api.h passes
// the factory's CreateClient to ClientCreateWith.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_CLIENT_H_
#define PJRTKIT_XLA_PLUGIN_C_API_CLIENT_H_

// C++ standard library.
#include <memory>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit client layer.
#include "xla_plugin/client/client.h"
#include "xla_plugin/client/multi_process.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace capi {

// The factory function PJRT_Client_Create calls: the device's options (node options taken out)
// and where the client stands in a multi-process job.
using CreateClientFn = StatusOr<std::unique_ptr<Client>> (*)(const AttributeMap& options,
                                                              const MultiProcess& multi_process);

// Wraps `client` in a new handle: builds the PJRT_Device / PJRT_Memory / PJRT_DeviceDescription
// wrappers of every device and memory once, and the wrapper of the client's topology. INTERNAL
// (naming `fn`) when the client's device/memory graph is inconsistent.
StatusOr<std::unique_ptr<PJRT_Client>> WrapClient(const char* fn, std::unique_ptr<Client> client);

// INVALID_ARGUMENT naming `fn` and `what` unless `actual` is `expected` (a handle of another
// client was passed).
Status CheckSameClient(const char* fn, const char* what, const PJRT_Client* expected,
                       const PJRT_Client* actual);

// PJRT_Client_Create: converts the create options, takes the node options (node_id, num_nodes)
// and the key-value callbacks into a MultiProcess, calls `create`, wraps the client.
PJRT_Error* ClientCreateWith(PJRT_Client_Create_Args* args, CreateClientFn create);
// PJRT_Client_Destroy: drops the framework's reference (nullptr is fine); the client and every
// device/memory wrapper go when the last buffer, loaded executable and transfer manager made
// through it is destroyed too.
PJRT_Error* ClientDestroy(PJRT_Client_Destroy_Args* args);
// PJRT_Client_UpdateGlobalProcessInfo: the framework's view of every process of a multi-process
// job (jaxlib calls it whenever the coordination service's process states change, and aborts the
// process when it fails). Checked, then accepted: pjrtkit's devices do not act on process states.
PJRT_Error* ClientUpdateGlobalProcessInfo(PJRT_Client_UpdateGlobalProcessInfo_Args* args);
// PJRT_Client_PlatformName: the platform name.
PJRT_Error* ClientPlatformName(PJRT_Client_PlatformName_Args* args);
// PJRT_Client_ProcessIndex: this process's index.
PJRT_Error* ClientProcessIndex(PJRT_Client_ProcessIndex_Args* args);
// PJRT_Client_PlatformVersion: the platform version.
PJRT_Error* ClientPlatformVersion(PJRT_Client_PlatformVersion_Args* args);
// PJRT_Client_Devices: all devices.
PJRT_Error* ClientDevices(PJRT_Client_Devices_Args* args);
// PJRT_Client_AddressableDevices: the devices this process can use.
PJRT_Error* ClientAddressableDevices(PJRT_Client_AddressableDevices_Args* args);
// PJRT_Client_LookupDevice: the device with a global id.
PJRT_Error* ClientLookupDevice(PJRT_Client_LookupDevice_Args* args);
// PJRT_Client_LookupAddressableDevice: the addressable device with a local hardware id.
PJRT_Error* ClientLookupAddressableDevice(PJRT_Client_LookupAddressableDevice_Args* args);
// PJRT_Client_AddressableMemories: the memories this process can use.
PJRT_Error* ClientAddressableMemories(PJRT_Client_AddressableMemories_Args* args);
// PJRT_Client_Compile: compiles a program into a loaded executable.
PJRT_Error* ClientCompile(PJRT_Client_Compile_Args* args);
// PJRT_Client_Load: loads a PJRT_Executable (of PJRT_Compile, or another client's) onto the
// client (Client::Load); empty compile options keep the executable's own.
PJRT_Error* ClientLoad(PJRT_Client_Load_Args* args);
// PJRT_Client_DefaultDeviceAssignment: device ids for replicas x partitions. INVALID_ARGUMENT
// when `default_assignment_size` is smaller than num_replicas * num_partitions.
PJRT_Error* ClientDefaultDeviceAssignment(PJRT_Client_DefaultDeviceAssignment_Args* args);
// PJRT_Client_TopologyDescription: the client's topology (owned by the client).
PJRT_Error* ClientTopologyDescription(PJRT_Client_TopologyDescription_Args* args);
// PJRT_Client_BufferFromHostBuffer: copies (or aliases) host data into a new buffer on a device
// or memory; returns the buffer and the done_with_host_buffer event.
PJRT_Error* ClientBufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args* args);
// PJRT_Client_CreateUninitializedBuffer: a buffer with undefined contents.
PJRT_Error* ClientCreateUninitializedBuffer(PJRT_Client_CreateUninitializedBuffer_Args* args);
// PJRT_Client_CreateErrorBuffer: a buffer of the given shape in `memory` that holds the given
// error and no data (ErrorBuffer): its ready event fails, and so does an execution it is passed
// to. `device_layout` (or the older `shape_layout`) is the layout it reports; default: the
// client's default layout. Works on every device.
PJRT_Error* ClientCreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args* args);
// PJRT_Client_CreateViewOfDeviceBuffer: a buffer aliasing device memory it does not own
// (DLPack import); `on_delete_callback` runs when the buffer lets go of it. A non-zero `stream`
// is UNIMPLEMENTED.
PJRT_Error* ClientCreateViewOfDeviceBuffer(PJRT_Client_CreateViewOfDeviceBuffer_Args* args);
// PJRT_Client_CreateBuffersForAsyncHostToDevice: empty buffers in `memory`, filled through the
// returned transfer manager (transfer_manager.h).
PJRT_Error* ClientCreateBuffersForAsyncHostToDevice(
    PJRT_Client_CreateBuffersForAsyncHostToDevice_Args* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_CLIENT_H_
