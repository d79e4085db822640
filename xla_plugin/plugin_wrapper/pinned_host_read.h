// Device-to-host reads through the inner plugin's pinned host memory (WrappedBuffer::ToHostBuffer
// on a device whose policy asks for it: the xla_gpu device).
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PINNED_HOST_READ_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PINNED_HOST_READ_H_

#include <cstddef>
#include <memory>

#include "xla_plugin/client/event.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace plugin_wrapper {

// XLA:GPU's PJRT_Buffer_ToHostBuffer into pageable memory (a numpy array) runs at 1.3-1.8 GB/s
// on an H200, while its copy of the same bytes into its pinned_host memory runs at 39-53 GB/s.
// A read of at least kMinPinnedReadBytes therefore copies the buffer into the device's
// pinned_host memory (the inner plugin's own allocator pools it), then copies those bytes into
// the destination on up to kMaxPinnedReadThreads threads (which also spreads the page faults of
// a fresh destination), and destroys the pinned copy.
inline constexpr size_t kMinPinnedReadBytes = size_t{1} << 20;
inline constexpr unsigned kMaxPinnedReadThreads = 8;
// Bytes one of those threads copies at least.
inline constexpr size_t kPinnedReadChunkBytes = size_t{8} << 20;

// Reads the `bytes` of inner buffer `src` as stored (its own layout, which must order the
// elements as the caller wants, densely) into `dst` through `pinned` (an inner pinned_host
// memory of `src`'s device). The event is set when `dst` holds the bytes (or with the inner
// plugin's error). An error returned (not in the event) means nothing was started: the caller may
// read another way.
StatusOr<std::shared_ptr<Event>> ReadThroughPinnedHost(const WrappedClient& client,
                                                       PJRT_Buffer* src, PJRT_Memory* pinned,
                                                       void* dst, size_t bytes);

// Copies `bytes` from `src` to `dst` on up to `max_threads` threads (this one included), each
// taking at least kPinnedReadChunkBytes.
void ParallelCopy(void* dst, const void* src, size_t bytes, unsigned max_threads);

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_PINNED_HOST_READ_H_
