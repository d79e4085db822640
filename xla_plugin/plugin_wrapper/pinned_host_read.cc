#include "xla_plugin/plugin_wrapper/pinned_host_read.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "xla_plugin/plugin_wrapper/inner_api.h"

namespace pjrtkit {
namespace plugin_wrapper {

void ParallelCopy(void* dst, const void* src, size_t bytes, unsigned max_threads) {
  const size_t by_size = std::max<size_t>(1, bytes / kPinnedReadChunkBytes);
  const size_t threads = std::min<size_t>(std::max(1u, max_threads), by_size);
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  // Parts of whole 4 KiB pages, the last one taking the rest.
  const size_t part = (bytes / threads + 4095) / 4096 * 4096;
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  for (size_t i = 1; i < threads; ++i) {
    const size_t begin = std::min(bytes, i * part);
    const size_t end = i + 1 == threads ? bytes : std::min(bytes, (i + 1) * part);
    if (begin >= end) continue;
    try {
      workers.emplace_back([out, in, begin, end] {
        std::memcpy(out + begin, in + begin, end - begin);
      });
    } catch (const std::exception&) {  // No thread to be had: this part on this thread.
      std::memcpy(out + begin, in + begin, end - begin);
    }
  }
  std::memcpy(out, in, std::min(bytes, part));
  for (std::thread& worker : workers) worker.join();
}

StatusOr<std::shared_ptr<Event>> ReadThroughPinnedHost(const WrappedClient& client,
                                                       PJRT_Buffer* src, PJRT_Memory* pinned,
                                                       void* dst, size_t bytes) {
  const InnerApi& api = client.inner();
  PJRTKIT_INNER_ARGS(PJRT_Buffer_CopyToMemory, copy);
  copy.buffer = src;
  copy.dst_memory = pinned;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_Buffer_CopyToMemory, &copy));
  PJRT_Buffer* staged = copy.dst_buffer;
  PJRTKIT_INNER_ARGS(PJRT_Buffer_ReadyEvent, ready);
  ready.buffer = staged;
  Status status = PJRTKIT_INNER_CALL(api, PJRT_Buffer_ReadyEvent, &ready);
  PJRTKIT_INNER_ARGS(PJRT_Buffer_UnsafePointer, pointer);
  pointer.buffer = staged;
  if (status.ok()) status = PJRTKIT_INNER_CALL(api, PJRT_Buffer_UnsafePointer, &pointer);
  if (!status.ok()) {
    if (ready.event != nullptr) api.DestroyEvent(ready.event);
    api.DestroyBuffer(staged);
    return status;
  }
  std::shared_ptr<Event> copied = api.WrapEvent(ready.event, "PJRT_Buffer_ReadyEvent");
  std::shared_ptr<Event> done = Event::Create();
  // The inner plugin and client stay alive until the pinned copy is destroyed.
  std::shared_ptr<InnerApi> keep_api = client.shared_inner();
  std::shared_ptr<InnerClient> keep_client = client.shared_inner_client();
  const auto* host = reinterpret_cast<const void*>(pointer.buffer_pointer);
  copied->OnReady([keep_api, keep_client, staged, host, dst, bytes, done](Status copy_status) {
    auto finish = [keep_api, keep_client, staged, host, dst, bytes, done, copy_status] {
      if (copy_status.ok()) ParallelCopy(dst, host, bytes, kMaxPinnedReadThreads);
      keep_api->DestroyBuffer(staged);
      done->Set(copy_status);
    };
    // Not on the inner plugin's callback thread, which may have more events to deliver; on it
    // when no thread can be made.
    try {
      std::thread(finish).detach();
    } catch (const std::exception&) {
      finish();
    }
  });
  return done;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
