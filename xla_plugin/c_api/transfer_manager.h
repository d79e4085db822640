// PJRT_AsyncHostToDeviceTransferManager_* entry points: fill the buffers made by
// PJRT_Client_CreateBuffersForAsyncHostToDevice (client.h) chunk by chunk, fail them, hand them
// out. Every buffer_index is checked against the buffer count (INVALID_ARGUMENT).
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TRANSFER_MANAGER_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TRANSFER_MANAGER_H_

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {

// PJRT_AsyncHostToDeviceTransferManager_Destroy: frees the manager (nullptr is fine); buffers
// already retrieved stay valid.
PJRT_Error* TransferManagerDestroy(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args* args);
// PJRT_AsyncHostToDeviceTransferManager_TransferData: copies one chunk; returns the event after
// which `data` may be reused.
PJRT_Error* TransferManagerTransferData(
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args* args);
// PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer: hands out one buffer (once).
PJRT_Error* TransferManagerRetrieveBuffer(
    PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args* args);
// PJRT_AsyncHostToDeviceTransferManager_Device: the device the buffers live on.
PJRT_Error* TransferManagerDevice(PJRT_AsyncHostToDeviceTransferManager_Device_Args* args);
// PJRT_AsyncHostToDeviceTransferManager_BufferCount: number of buffers.
PJRT_Error* TransferManagerBufferCount(
    PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args* args);
// PJRT_AsyncHostToDeviceTransferManager_BufferSize: on-device bytes of one buffer.
PJRT_Error* TransferManagerBufferSize(PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args* args);
// PJRT_AsyncHostToDeviceTransferManager_SetBufferError: fails one buffer with a (non-OK) code and
// message, which its ready event and reads then report.
PJRT_Error* TransferManagerSetBufferError(
    PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args* args);
// PJRT_AsyncHostToDeviceTransferManager_AddMetadata: passes transfer metadata to the device.
PJRT_Error* TransferManagerAddMetadata(
    PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args* args);

// PJRT_AsyncHostToDeviceTransferManager_TransferLiteral: fills buffer `buffer_index` from a whole
// host array of its shape (TransferData of all its bytes, as the last chunk). The literal's
// element type and dimensions must be the buffer's, and its layout (null: dense row-major) the
// buffer's layout as created.
PJRT_Error* TransferManagerTransferLiteral(
    PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TRANSFER_MANAGER_H_
