// Host-to-device copies through the HostBufferPool (WrappedClient::BufferFromHostBuffer).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_INNER_POOLED_HOST_COPY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_INNER_POOLED_HOST_COPY_H_

#include <cstddef>
#include <memory>

#include "xla_plugin/client/client.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/inner/host_buffer_pool.h"
#include "xla_plugin/devices/inner/wrapped_device.h"
#include "xla_plugin/devices/inner/wrapped_memory.h"

namespace pjrtkit {
namespace inner {

class WrappedClient;

// Smallest transfer copied through the pool; below it XLA:CPU's own synchronous copy into a
// small (already mapped) allocation is as fast.
inline constexpr size_t kMinPooledCopyBytes = size_t{64} << 10;
// Host alignment at which XLA:CPU aliases host data instead of copying it (cpu::MinAlign(),
// EIGEN_MAX_ALIGN_BYTES in xla-cpu-pjrt 0.0.1; checked by xla_cpu_buffer_test).
inline constexpr size_t kXlaCpuZeroCopyAlignment = 64;

// The bytes to copy when `args` (to `memory`, nullptr meaning the device's default) should be
// copied through the pool, else 0. That is: dense row-major data of a byte-sized element type,
// at least kMinPooledCopyBytes, to a "device" memory with the default layout, and not data that
// XLA:CPU aliases itself (zero-copy semantics on kXlaCpuZeroCopyAlignment-aligned data).
size_t PooledCopyBytes(const HostBufferArgs& args, const WrappedMemory* memory);

// Copies the `bytes` of `args.data` into a block of `pool` (on this thread, so the host data is
// free to reuse on return and done_with_host_buffer is ready) and makes an XLA:CPU buffer on
// `device`/`memory` that aliases the block (kMutableZeroCopy). The block returns to the pool
// when XLA:CPU lets go of it (the inner done_with_host_buffer event).
StatusOr<HostBufferResult> CopyThroughPool(WrappedClient* client,
                                           const std::shared_ptr<HostBufferPool>& pool,
                                           const HostBufferArgs& args, WrappedDevice* device,
                                           WrappedMemory* memory, size_t bytes);

}  // namespace inner
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_INNER_POOLED_HOST_COPY_H_
