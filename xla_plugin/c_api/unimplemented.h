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

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_UNIMPLEMENTED_H_
