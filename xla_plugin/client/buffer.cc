#include "xla_plugin/client/buffer.h"

#include <numeric>

#include "xla_plugin/client/layout_codec.h"

namespace pjrtkit {

StatusOr<MemoryLayout> Buffer::layout() const { return RowMajorLayout(dimensions().size()); }

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

StatusOr<std::unique_ptr<Buffer>> Buffer::Bitcast(ElementType, const std::vector<int64_t>&,
                                                  const std::optional<MemoryLayout>&) {
  return Unimplemented("Buffer::Bitcast is not implemented by this device");
}

StatusOr<ControlledDonation> Buffer::DonateWithControlDependency() {
  return Unimplemented("Buffer::DonateWithControlDependency is not implemented by this device");
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
