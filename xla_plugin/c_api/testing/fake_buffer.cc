#include "xla_plugin/c_api/testing/fake_buffer.h"

// C++ standard library.
#include <cstring>
#include <string>
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/testing/fake_client.h"

namespace pjrtkit {
namespace testing {
namespace {

// Calls `visit(row_major_offset, index)` for every element of `dims`, in row-major order.
template <typename Visit>
void ForEachIndex(const std::vector<int64_t>& dims, Visit&& visit) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t flat = 0;; ++flat) {
    visit(flat, index);
    int d = static_cast<int>(dims.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Byte offset of `index` under `strides`.
int64_t Offset(const std::vector<int64_t>& index, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
  return offset;
}

}  // namespace

void CopyToStrided(ElementType type, const std::vector<int64_t>& dims, const uint8_t* src,
                   uint8_t* dst, const std::vector<int64_t>& dst_strides) {
  const size_t element = ElementTypeBits(type) / 8;
  ForEachIndex(dims, [&](int64_t flat, const std::vector<int64_t>& index) {
    std::memcpy(dst + Offset(index, dst_strides), src + flat * element, element);
  });
}

void CopyFromStrided(ElementType type, const std::vector<int64_t>& dims, const uint8_t* src,
                     const std::vector<int64_t>& src_strides, uint8_t* dst) {
  const size_t element = ElementTypeBits(type) / 8;
  ForEachIndex(dims, [&](int64_t flat, const std::vector<int64_t>& index) {
    std::memcpy(dst + flat * element, src + Offset(index, src_strides), element);
  });
}

FakeBuffer::FakeBuffer(ElementType type, std::vector<int64_t> dims, FakeDevice* device,
                       FakeMemory* memory, std::vector<uint8_t> bytes, std::shared_ptr<Event> ready)
    : type_(type),
      dims_(std::move(dims)),
      device_(device),
      memory_(memory),
      owned_(std::move(bytes)),
      ready_(std::move(ready)) {
  device_->Allocate(owned_.size());
}

FakeBuffer::FakeBuffer(ElementType type, std::vector<int64_t> dims, FakeDevice* device,
                       FakeMemory* memory, const uint8_t* aliased,
                       std::shared_ptr<Event> on_destroy)
    : type_(type),
      dims_(std::move(dims)),
      device_(device),
      memory_(memory),
      aliased_(aliased),
      ready_(Event::CreateReady()),
      on_destroy_(std::move(on_destroy)) {
  device_->Allocate(0);
}

FakeBuffer::FakeBuffer(ElementType type, std::vector<int64_t> dims, FakeDevice* device,
                       FakeMemory* memory, const uint8_t* aliased,
                       std::shared_ptr<void> keep_alive, std::shared_ptr<Event> ready)
    : type_(type),
      dims_(std::move(dims)),
      device_(device),
      memory_(memory),
      aliased_(aliased),
      ready_(std::move(ready)),
      keep_alive_(std::move(keep_alive)) {
  device_->Allocate(0);
}

FakeBuffer::~FakeBuffer() {
  Release();
  if (on_destroy_ != nullptr) on_destroy_->Set(OkStatus());
}

void FakeBuffer::Release() {
  if (released_.exchange(true)) return;
  device_->Free(owned_.size());
  owned_.clear();
  owned_.shrink_to_fit();
  aliased_ = nullptr;
}

const uint8_t* FakeBuffer::bytes() const {
  if (IsDeleted()) return nullptr;
  return aliased_ != nullptr ? aliased_ : owned_.data();
}

StatusOr<MemoryLayout> FakeBuffer::layout() const {
  if (layout_.has_value()) return *layout_;
  return Buffer::layout();
}

Device* FakeBuffer::device() const { return device_; }

Memory* FakeBuffer::memory() const { return memory_; }

StatusOr<size_t> FakeBuffer::OnDeviceSizeInBytes() const { return DenseByteSize(type_, dims_); }

void FakeBuffer::Delete() {
  deleted_ = true;
  Release();
}

StatusOr<std::shared_ptr<Event>> FakeBuffer::ToHostBuffer(void* dst, size_t dst_size,
                                                          const MemoryLayout* host_layout) {
  if (IsDeleted()) return FailedPrecondition("FakeBuffer::ToHostBuffer: buffer deleted");
  // A buffer whose contents failed to arrive (see FakeTransferManager) cannot be read.
  if (ready_->IsReady() && !ready_->status().ok()) return ready_->status();
  const size_t size = DenseByteSize(type_, dims_);
  if (dst_size < size) return InvalidArgument("FakeBuffer::ToHostBuffer: dst too small");
  if (host_layout == nullptr) {
    std::memcpy(dst, bytes(), size);
    return Event::CreateReady();
  }
  if (!host_layout->tiles.empty()) {
    return Unimplemented("FakeBuffer::ToHostBuffer: tiled host layouts");
  }
  // Dense strides of the requested permutation.
  std::vector<int64_t> strides(dims_.size(), 0);
  int64_t stride = ElementTypeBits(type_) / 8;
  for (int64_t d : host_layout->minor_to_major) {
    strides[d] = stride;
    stride *= dims_[d];
  }
  CopyToStrided(type_, dims_, bytes(), static_cast<uint8_t*>(dst), strides);
  return Event::CreateReady();
}

StatusOr<std::unique_ptr<Buffer>> FakeBuffer::CopyToDevice(Device* dst_device) {
  auto* device = static_cast<FakeDevice*>(dst_device);
  if (device->default_memory() == nullptr) {
    return InvalidArgument("FakeBuffer::CopyToDevice: the device has no memory");
  }
  return CopyToMemory(device->default_memory());
}

StatusOr<std::unique_ptr<Buffer>> FakeBuffer::CopyToMemory(Memory* dst_memory) {
  if (IsDeleted()) return FailedPrecondition("FakeBuffer::CopyToMemory: buffer deleted");
  auto* memory = static_cast<FakeMemory*>(dst_memory);
  if (memory->addressable_by_devices().empty()) {
    return InvalidArgument("FakeBuffer::CopyToMemory: memory has no device");
  }
  auto* device = static_cast<FakeDevice*>(memory->addressable_by_devices()[0]);
  const uint8_t* src = bytes();
  std::vector<uint8_t> copy(src, src + DenseByteSize(type_, dims_));
  return std::unique_ptr<Buffer>(
      new FakeBuffer(type_, dims_, device, memory, std::move(copy), Event::CreateReady()));
}

StatusOr<std::shared_ptr<Event>> FakeBuffer::CopyRawToHost(void* dst, int64_t offset,
                                                           int64_t size) {
  const int64_t total = static_cast<int64_t>(DenseByteSize(type_, dims_));
  if (offset + size > total) {
    return OutOfRange("FakeBuffer::CopyRawToHost: [" + std::to_string(offset) + ", " +
                      std::to_string(offset + size) + ") is outside the " + std::to_string(total) +
                      "-byte buffer");
  }
  if (size > 0) std::memcpy(dst, bytes() + offset, static_cast<size_t>(size));
  return Event::CreateReady();
}

StatusOr<uintptr_t> FakeBuffer::UnsafePointer() { return reinterpret_cast<uintptr_t>(bytes()); }

StatusOr<void*> FakeBuffer::OpaqueDeviceMemoryDataPointer() {
  return const_cast<void*>(static_cast<const void*>(bytes()));
}

StatusOr<std::unique_ptr<Buffer>> FakeBuffer::Bitcast(ElementType type,
                                                      const std::vector<int64_t>& dims,
                                                      const std::optional<MemoryLayout>& layout) {
  if (IsDeleted()) return FailedPrecondition("FakeBuffer::Bitcast: buffer deleted");
  const size_t size = DenseByteSize(type_, dims_), new_size = DenseByteSize(type, dims);
  if (size != new_size) {
    return InvalidArgument("FakeBuffer::Bitcast: " + std::to_string(size) + " bytes cannot be " +
                           std::to_string(new_size) + " bytes");
  }
  const uint8_t* src = bytes();
  auto cast = std::make_unique<FakeBuffer>(type, dims, device_, memory_,
                                           std::vector<uint8_t>(src, src + size), ready_);
  if (layout.has_value()) cast->set_layout(*layout);
  return std::unique_ptr<Buffer>(std::move(cast));
}

StatusOr<ControlledDonation> FakeBuffer::DonateWithControlDependency() {
  if (IsDeleted()) {
    return FailedPrecondition("FakeBuffer::DonateWithControlDependency: buffer deleted");
  }
  const uint8_t* src = bytes();
  std::shared_ptr<Event> ready = Event::Create();
  auto donated = std::make_unique<FakeBuffer>(
      type_, dims_, device_, memory_,
      std::vector<uint8_t>(src, src + DenseByteSize(type_, dims_)), ready);
  if (layout_.has_value()) donated->set_layout(*layout_);
  Donate();
  ControlledDonation out;
  out.buffer = std::move(donated);
  out.dependency_ready = [ready](Status status) { ready->Set(std::move(status)); };
  return out;
}

}  // namespace testing
}  // namespace pjrtkit
