#include "xla_plugin/c_api/unimplemented.h"

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"

namespace pjrtkit {
namespace capi {

// Defines `PJRT_Error* cpp_name(c_name##_Args*)` returning UNIMPLEMENTED naming `c_name`.
#define PJRTKIT_UNIMPLEMENTED_SLOT(c_name, cpp_name) \
  PJRT_Error* cpp_name(c_name##_Args*) { return NotImplemented(#c_name); }

// ---- CopyToDeviceStream --------------------------------------------------------------------
// Streams only come from host recv callbacks, which Execute rejects; none can exist.
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_CopyToDeviceStream_Destroy, CopyToDeviceStreamDestroy)
// As above: no stream can exist.
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_CopyToDeviceStream_AddChunk, CopyToDeviceStreamAddChunk)
// As above: no stream can exist.
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_CopyToDeviceStream_TotalBytes, CopyToDeviceStreamTotalBytes)
// As above: no stream can exist.
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_CopyToDeviceStream_GranuleSize, CopyToDeviceStreamGranuleSize)
// As above: no stream can exist.
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_CopyToDeviceStream_CurrentBytes, CopyToDeviceStreamCurrentBytes)

// ---- Client extras -------------------------------------------------------------------------
// Client has no DMA registration of host memory.
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Client_DmaMap, ClientDmaMap)
// As above: nothing is ever mapped.
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Client_DmaUnmap, ClientDmaUnmap)
// Client has no buffers whose memory is provided later (alias/fulfill).
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Client_CreateAliasBuffer, ClientCreateAliasBuffer)
// As above: no alias buffer can exist.
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Client_FulfillAliasBuffer, ClientFulfillAliasBuffer)

// ---- Slots of PJRT C API 0.82-0.117 not yet served -----------------------------------------
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Client_CreateErrorBuffer, PendingClientCreateErrorBuffer)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral, PendingAsyncHostToDeviceTransferManagerTransferLiteral)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Buffer_CopyRawToHostFuture, PendingBufferCopyRawToHostFuture)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Device_PoisonExecution, PendingDevicePoisonExecution)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Device_CreateAsyncTrackingEvent, PendingDeviceCreateAsyncTrackingEvent)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_AsyncTrackingEvent_Destroy, PendingAsyncTrackingEventDestroy)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Executable_GetCompileOptions, PendingExecutableGetCompileOptions)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Buffer_DonateWithControlDependency, PendingBufferDonateWithControlDependency)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Event_Create, PendingEventCreate)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Event_Set, PendingEventSet)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Device_GetAttributes, PendingDeviceGetAttributes)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Client_Load, PendingClientLoad)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_LoadedExecutable_AddressableDeviceLogicalIds, PendingLoadedExecutableAddressableDeviceLogicalIds)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Buffer_Bitcast, PendingBufferBitcast)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_TopologyDescription_Fingerprint, PendingTopologyDescriptionFingerprint)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Executable_ParameterMemoryKinds, PendingExecutableParameterMemoryKinds)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_Device_ClearMemoryStats, PendingDeviceClearMemoryStats)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, PendingTopologyDescriptionMakeCanonicalShapeForMemorySpace)
PJRTKIT_UNIMPLEMENTED_SLOT(PJRT_TopologyDescription_GetMemorySpaceKindIds, PendingTopologyDescriptionGetMemorySpaceKindIds)

#undef PJRTKIT_UNIMPLEMENTED_SLOT

}  // namespace capi
}  // namespace pjrtkit
