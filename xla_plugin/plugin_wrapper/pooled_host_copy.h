// Host-to-device copies through the HostBufferPool (WrappedClient::BufferFromHostBuffer).
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_POOLED_HOST_COPY_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_POOLED_HOST_COPY_H_

#include <cstddef>
#include <memory>

#include "xla_plugin/client/client.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/plugin_wrapper/device_policy.h"
#include "xla_plugin/plugin_wrapper/host_buffer_pool.h"
#include "xla_plugin/plugin_wrapper/wrapped_device.h"
#include "xla_plugin/plugin_wrapper/wrapped_memory.h"

namespace pjrtkit {
namespace plugin_wrapper {

class WrappedClient;

// The bytes to copy when `args` (to `memory`, nullptr meaning the device's default) should be
// copied through the pool, else 0. That is: dense row-major data of a byte-sized element type,
// at least `pooling.min_bytes`, to a "device" memory with the default layout, and not data that
// the inner plugin aliases itself (zero-copy semantics on data aligned to
// `pooling.inner_zero_copy_alignment`, when it is not 0).
size_t PooledCopyBytes(const HostBufferArgs& args, const WrappedMemory* memory,
                       const HostCopyPooling& pooling);

// Copies the `bytes` of `args.data` into a block of `pool` (on this thread, so the host data is
// free to reuse on return and done_with_host_buffer is ready) and makes an inner buffer on
// `device`/`memory` that aliases the block (kMutableZeroCopy). The block returns to the pool
// when the inner plugin lets go of it (the inner done_with_host_buffer event).
StatusOr<HostBufferResult> CopyThroughPool(WrappedClient* client,
                                           const std::shared_ptr<HostBufferPool>& pool,
                                           const HostBufferArgs& args, WrappedDevice* device,
                                           WrappedMemory* memory, size_t bytes);

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_POOLED_HOST_COPY_H_
