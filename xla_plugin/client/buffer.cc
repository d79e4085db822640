#include "xla_plugin/client/buffer.h"

#include <numeric>

namespace pjrtkit {

StatusOr<MemoryLayout> Buffer::layout() const {
  MemoryLayout layout;
  const size_t rank = dimensions().size();
  layout.minor_to_major.resize(rank);
  for (size_t i = 0; i < rank; ++i) layout.minor_to_major[i] = static_cast<int64_t>(rank - 1 - i);
  return layout;
}

StatusOr<size_t> Buffer::HostBufferSize(const MemoryLayout* host_layout) const {
  if (host_layout != nullptr && !host_layout->tiles.empty()) {
    return Unimplemented("Buffer::HostBufferSize: tiled host layouts are not supported");
  }
  return DenseByteSize(element_type(), dimensions());
}

StatusOr<std::shared_ptr<Event>> Buffer::CopyRawToHost(void*, int64_t, int64_t) {
  return Unimplemented("Buffer::CopyRawToHost is not implemented by this device");
}

StatusOr<uintptr_t> Buffer::UnsafePointer() {
  return Unimplemented("Buffer::UnsafePointer is not implemented by this device");
}

StatusOr<void*> Buffer::OpaqueDeviceMemoryDataPointer() {
  return Unimplemented("Buffer::OpaqueDeviceMemoryDataPointer is not implemented by this device");
}

Status Buffer::IncreaseExternalReferenceCount() {
  if (IsDeleted()) {
    return FailedPrecondition("IncreaseExternalReferenceCount called on a deleted buffer");
  }
  ++external_references_;
  return OkStatus();
}

Status Buffer::DecreaseExternalReferenceCount() {
  int current = external_references_.load();
  while (current > 0) {
    if (external_references_.compare_exchange_weak(current, current - 1)) return OkStatus();
  }
  return FailedPrecondition(
      "DecreaseExternalReferenceCount called with no external reference held (count is 0)");
}

}  // namespace pjrtkit
