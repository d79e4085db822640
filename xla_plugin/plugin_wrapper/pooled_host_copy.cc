#include "xla_plugin/plugin_wrapper/pooled_host_copy.h"

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "xla_plugin/plugin_wrapper/host_layout.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"
#include "xla_plugin/plugin_wrapper/wrapped_buffer.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// True when `strides` (bytes) describe dense row-major `dims` of `element_bytes`-byte elements.
bool IsDenseRowMajor(const std::vector<int64_t>& strides, const std::vector<int64_t>& dims,
                     int64_t element_bytes) {
  int64_t expected = element_bytes;
  for (size_t i = dims.size(); i-- > 0;) {
    if (dims[i] > 1 && strides[i] != expected) return false;
    expected *= dims[i];
  }
  return true;
}

}  // namespace

size_t PooledCopyBytes(const HostBufferArgs& args, const WrappedMemory* memory,
                       const HostCopyPooling& pooling) {
  if (args.data == nullptr || (memory != nullptr && !memory->is_device_kind())) return 0;
  if (args.device_layout.has_value() && !IsRowMajor(*args.device_layout, args.dims.size())) {
    return 0;
  }
  const int bits = ElementTypeBits(args.type);
  // Sub-byte types: the inner plugin packs them, so the host bytes are not the buffer's.
  if (bits <= 0 || bits % 8 != 0) return 0;
  if (args.byte_strides.has_value() &&
      !IsDenseRowMajor(*args.byte_strides, args.dims, bits / 8)) {
    return 0;
  }
  const bool zero_copy = args.semantics == HostBufferSemantics::kImmutableZeroCopy ||
                         args.semantics == HostBufferSemantics::kMutableZeroCopy;
  if (zero_copy && pooling.inner_zero_copy_alignment != 0 &&
      reinterpret_cast<uintptr_t>(args.data) % pooling.inner_zero_copy_alignment == 0) {
    return 0;  // The inner plugin aliases it: no copy at all.
  }
  const size_t bytes = DenseByteSize(args.type, args.dims);
  return bytes >= pooling.min_bytes ? bytes : 0;
}

StatusOr<HostBufferResult> CopyThroughPool(WrappedClient* client,
                                           const std::shared_ptr<HostBufferPool>& pool,
                                           const HostBufferArgs& args, WrappedDevice* device,
                                           WrappedMemory* memory, size_t bytes) {
  size_t capacity = 0;
  void* block = pool->Acquire(bytes, &capacity);
  if (block == nullptr) {
    return ResourceExhausted("BufferFromHostBuffer: cannot allocate " + std::to_string(bytes) +
                             " bytes of host memory");
  }
  std::memcpy(block, args.data, bytes);

  const InnerApi& inner = client->inner();
  PJRTKIT_INNER_ARGS(PJRT_Client_BufferFromHostBuffer, inner_args);
  inner_args.client = client->inner_client();
  inner_args.data = block;
  PJRTKIT_ASSIGN_OR_RETURN(inner_args.type, client->inner().ToInnerType(args.type));
  inner_args.dims = args.dims.data();
  inner_args.num_dims = args.dims.size();
  inner_args.host_buffer_semantics = PJRT_HostBufferSemantics_kMutableZeroCopy;
  inner_args.device = device->inner();
  inner_args.memory = memory != nullptr ? memory->inner() : nullptr;
  Status status = PJRTKIT_INNER_CALL(inner, PJRT_Client_BufferFromHostBuffer, &inner_args);
  if (!status.ok()) {
    pool->Release(block, capacity);
    return status;
  }
  // The block is the inner plugin's until its done event (at once if it copied after all).
  std::shared_ptr<Event> released =
      inner.WrapEvent(inner_args.done_with_host_buffer, "PJRT_Client_BufferFromHostBuffer");
  // Reused only after the inner plugin reported it done with the block; after an error it is freed instead.
  released->OnReady([pool, block, capacity](const Status& status) {
    if (status.ok()) {
      pool->Release(block, capacity);
    } else {
      pool->Discard(block, capacity);
    }
  });

  StatusOr<std::shared_ptr<const WrappedBufferInfo>> info =
      WrappedBuffer::ReadInfo(client, inner_args.buffer);
  if (!info.ok()) {
    inner.DestroyBuffer(inner_args.buffer);  // Which also gives the block back.
    return info.status();
  }
  HostBufferResult result;
  result.buffer = WrappedBuffer::WrapWithInfo(client, inner_args.buffer, std::move(info).value(),
                                             /*known_ready=*/true);
  result.done_with_host_buffer = inner.ready_event();  // Copied before returning.
  return result;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
