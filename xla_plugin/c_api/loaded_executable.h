// PJRT_LoadedExecutable_* entry points and PJRT_Executable_DeserializeAndLoad.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_LOADED_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_C_API_LOADED_EXECUTABLE_H_

// C++ standard library.
#include <memory>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit client layer.
#include "xla_plugin/client/loaded_executable.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace capi {

// A new handle owning `loaded`, which `client` made. INTERNAL (naming `fn`) when `loaded` is null,
// has no executable, or runs on a device the client does not list.
StatusOr<PJRT_LoadedExecutable*> WrapLoadedExecutable(const char* fn, PJRT_Client* client,
                                                      std::unique_ptr<LoadedExecutable> loaded);

// PJRT_LoadedExecutable_Destroy: deletes the loaded program and frees the handle (nullptr is
// fine). PJRT_Executable handles taken from it stay valid.
PJRT_Error* LoadedExecutableDestroy(PJRT_LoadedExecutable_Destroy_Args* args);
// PJRT_LoadedExecutable_GetExecutable: a new PJRT_Executable sharing the compiled program.
PJRT_Error* LoadedExecutableGetExecutable(PJRT_LoadedExecutable_GetExecutable_Args* args);
// PJRT_LoadedExecutable_AddressableDevices: the devices it runs on.
PJRT_Error* LoadedExecutableAddressableDevices(PJRT_LoadedExecutable_AddressableDevices_Args* args);
// PJRT_LoadedExecutable_Delete: releases the loaded program; the handle stays.
PJRT_Error* LoadedExecutableDelete(PJRT_LoadedExecutable_Delete_Args* args);
// PJRT_LoadedExecutable_IsDeleted: whether Delete was called.
PJRT_Error* LoadedExecutableIsDeleted(PJRT_LoadedExecutable_IsDeleted_Args* args);
// PJRT_LoadedExecutable_Execute: runs on num_devices argument lists of num_args buffers, fills
// the caller's output_lists (num_devices x NumOutputs) and, when asked, device_complete_events.
PJRT_Error* LoadedExecutableExecute(PJRT_LoadedExecutable_Execute_Args* args);
// PJRT_Executable_DeserializeAndLoad: loads bytes from PJRT_Executable_Serialize.
PJRT_Error* ExecutableDeserializeAndLoad(PJRT_Executable_DeserializeAndLoad_Args* args);
// PJRT_LoadedExecutable_Fingerprint: the compiled program's fingerprint (deprecated slot).
PJRT_Error* LoadedExecutableFingerprint(PJRT_LoadedExecutable_Fingerprint_Args* args);
// PJRT_LoadedExecutable_GetDeviceAssignment: the serialized device assignment, freed with the
// returned deleter.
PJRT_Error* LoadedExecutableGetDeviceAssignment(
    PJRT_LoadedExecutable_GetDeviceAssignment_Args* args);

// PJRT_LoadedExecutable_AddressableDeviceLogicalIds: the replica and partition of each
// addressable device, in AddressableDevices order
// (LoadedExecutable::addressable_device_logical_ids, cached on the handle).
PJRT_Error* LoadedExecutableAddressableDeviceLogicalIds(
    PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_LOADED_EXECUTABLE_H_
