// The PJRT_Api slots the client layer cannot serve. Each returns UNIMPLEMENTED naming itself
// ("PJRT_Client_DmaMap is not implemented by pjrtkit"); unimplemented.cc gives the reason for each.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_UNIMPLEMENTED_H_
#define PJRTKIT_XLA_PLUGIN_C_API_UNIMPLEMENTED_H_

#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {

// ---- CopyToDeviceStream --------------------------------------------------------------------
// PJRT_CopyToDeviceStream_Destroy: UNIMPLEMENTED.
PJRT_Error* CopyToDeviceStreamDestroy(PJRT_CopyToDeviceStream_Destroy_Args* args);
// PJRT_CopyToDeviceStream_AddChunk: UNIMPLEMENTED.
PJRT_Error* CopyToDeviceStreamAddChunk(PJRT_CopyToDeviceStream_AddChunk_Args* args);
// PJRT_CopyToDeviceStream_TotalBytes: UNIMPLEMENTED.
PJRT_Error* CopyToDeviceStreamTotalBytes(PJRT_CopyToDeviceStream_TotalBytes_Args* args);
// PJRT_CopyToDeviceStream_GranuleSize: UNIMPLEMENTED.
PJRT_Error* CopyToDeviceStreamGranuleSize(PJRT_CopyToDeviceStream_GranuleSize_Args* args);
// PJRT_CopyToDeviceStream_CurrentBytes: UNIMPLEMENTED.
PJRT_Error* CopyToDeviceStreamCurrentBytes(PJRT_CopyToDeviceStream_CurrentBytes_Args* args);

// ---- Client extras -------------------------------------------------------------------------
// PJRT_Client_DmaMap: UNIMPLEMENTED.
PJRT_Error* ClientDmaMap(PJRT_Client_DmaMap_Args* args);
// PJRT_Client_DmaUnmap: UNIMPLEMENTED.
PJRT_Error* ClientDmaUnmap(PJRT_Client_DmaUnmap_Args* args);
// PJRT_Client_CreateAliasBuffer: UNIMPLEMENTED.
PJRT_Error* ClientCreateAliasBuffer(PJRT_Client_CreateAliasBuffer_Args* args);
// PJRT_Client_FulfillAliasBuffer: UNIMPLEMENTED.
PJRT_Error* ClientFulfillAliasBuffer(PJRT_Client_FulfillAliasBuffer_Args* args);

// ---- Slots of PJRT C API 0.82-0.117 not yet served (see api.cc) -------------------------
// PJRT_Client_CreateErrorBuffer: UNIMPLEMENTED.
PJRT_Error* PendingClientCreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args* args);
// PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: UNIMPLEMENTED.
PJRT_Error* PendingAsyncHostToDeviceTransferManagerTransferLiteral(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args* args);
// PJRT_Buffer_CopyRawToHostFuture: UNIMPLEMENTED.
PJRT_Error* PendingBufferCopyRawToHostFuture(PJRT_Buffer_CopyRawToHostFuture_Args* args);
// PJRT_Device_PoisonExecution: UNIMPLEMENTED.
PJRT_Error* PendingDevicePoisonExecution(PJRT_Device_PoisonExecution_Args* args);
// PJRT_Device_CreateAsyncTrackingEvent: UNIMPLEMENTED.
PJRT_Error* PendingDeviceCreateAsyncTrackingEvent(PJRT_Device_CreateAsyncTrackingEvent_Args* args);
// PJRT_AsyncTrackingEvent_Destroy: UNIMPLEMENTED.
PJRT_Error* PendingAsyncTrackingEventDestroy(PJRT_AsyncTrackingEvent_Destroy_Args* args);
// PJRT_Executable_GetCompileOptions: UNIMPLEMENTED.
PJRT_Error* PendingExecutableGetCompileOptions(PJRT_Executable_GetCompileOptions_Args* args);
// PJRT_Buffer_DonateWithControlDependency: UNIMPLEMENTED.
PJRT_Error* PendingBufferDonateWithControlDependency(PJRT_Buffer_DonateWithControlDependency_Args* args);
// PJRT_Event_Create: UNIMPLEMENTED.
PJRT_Error* PendingEventCreate(PJRT_Event_Create_Args* args);
// PJRT_Event_Set: UNIMPLEMENTED.
PJRT_Error* PendingEventSet(PJRT_Event_Set_Args* args);
// PJRT_Device_GetAttributes: UNIMPLEMENTED.
PJRT_Error* PendingDeviceGetAttributes(PJRT_Device_GetAttributes_Args* args);
// PJRT_Client_Load: UNIMPLEMENTED.
PJRT_Error* PendingClientLoad(PJRT_Client_Load_Args* args);
// PJRT_LoadedExecutable_AddressableDeviceLogicalIds: UNIMPLEMENTED.
PJRT_Error* PendingLoadedExecutableAddressableDeviceLogicalIds(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args* args);
// PJRT_Buffer_Bitcast: UNIMPLEMENTED.
PJRT_Error* PendingBufferBitcast(PJRT_Buffer_Bitcast_Args* args);
// PJRT_TopologyDescription_Fingerprint: UNIMPLEMENTED.
PJRT_Error* PendingTopologyDescriptionFingerprint(PJRT_TopologyDescription_Fingerprint_Args* args);
// PJRT_Executable_ParameterMemoryKinds: UNIMPLEMENTED.
PJRT_Error* PendingExecutableParameterMemoryKinds(PJRT_Executable_ParameterMemoryKinds_Args* args);
// PJRT_Device_ClearMemoryStats: UNIMPLEMENTED.
PJRT_Error* PendingDeviceClearMemoryStats(PJRT_Device_ClearMemoryStats_Args* args);
// PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace: UNIMPLEMENTED.
PJRT_Error* PendingTopologyDescriptionMakeCanonicalShapeForMemorySpace(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args* args);
// PJRT_TopologyDescription_GetMemorySpaceKindIds: UNIMPLEMENTED.
PJRT_Error* PendingTopologyDescriptionGetMemorySpaceKindIds(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_UNIMPLEMENTED_H_
