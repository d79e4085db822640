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

#undef PJRTKIT_UNIMPLEMENTED_SLOT

}  // namespace capi
}  // namespace pjrtkit
