#include "xla_plugin/devices/sim/sim_buffer.h"

#include <cstring>
#include <shared_mutex>
#include <string>
#include <utility>

#include "xla_plugin/devices/sim/array_layout.h"
#include "xla_plugin/devices/sim/sim_device.h"
#include "xla_plugin/devices/sim/sim_memory.h"

namespace pjrtkit {
namespace sim {

namespace {

// Bytes of a dense array the constructor's caller has already checked (DenseBytes).
int64_t DenseBytesOf(ElementType type, const std::vector<int64_t>& dims) {
  int64_t bytes = StoredElementBytes(type);
  for (int64_t d : dims) bytes *= d;
  return bytes;
}

}  // namespace

SimBuffer::SimBuffer(SimDevice* device, ElementType type, std::vector<int64_t> dims,
                     std::shared_ptr<Allocation> allocation, std::shared_ptr<Event> ready)
    : device_(device),
      type_(type),
      dims_(std::move(dims)),
      bytes_(DenseBytesOf(type, dims_)),
      ready_(std::move(ready)),
      allocation_(std::move(allocation)) {}

std::shared_ptr<Allocation> SimBuffer::allocation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocation_;
}

std::string SimBuffer::Describe() const {
  return ShapeString(type_, dims_) + " on " + device_->description().debug_string();
}

StatusOr<std::shared_ptr<Allocation>> SimBuffer::LiveAllocation(const char* what) const {
  std::shared_ptr<Allocation> allocation = this->allocation();
  if (allocation == nullptr) {
    return FailedPrecondition(std::string(what) + ": the sim buffer " + Describe() +
                              " has been deleted or donated");
  }
  return allocation;
}

StatusOr<std::shared_ptr<Allocation>> SimBuffer::TakeForDonation() {
  std::lock_guard<std::mutex> lock(mu_);
  if (allocation_ == nullptr) {
    return FailedPrecondition("the sim buffer " + Describe() +
                              " cannot be donated: it has been deleted or donated already");
  }
  if (external_reference_count() > 0) {
    return FailedPrecondition("the sim buffer " + Describe() +
                              " cannot be donated: " + std::to_string(external_reference_count()) +
                              " external reference(s) (NumPy or DLPack views) use its memory");
  }
  deleted_.store(true, std::memory_order_release);
  return std::move(allocation_);
}

Device* SimBuffer::device() const { return device_; }

Memory* SimBuffer::memory() const { return device_->memory_space(); }

StatusOr<size_t> SimBuffer::OnDeviceSizeInBytes() const { return static_cast<size_t>(bytes_); }

void SimBuffer::Delete() {
  std::shared_ptr<Allocation> released;
  {
    std::lock_guard<std::mutex> lock(mu_);
    released = std::move(allocation_);
    deleted_.store(true, std::memory_order_release);
  }
  // `released` goes here, outside the lock: the block returns to the device unless queued work
  // still holds it.
}

StatusOr<size_t> SimBuffer::HostBufferSize(const MemoryLayout* host_layout) const {
  if (host_layout != nullptr) {
    PJRTKIT_RETURN_IF_ERROR(
        HostLayoutByteStrides(type_, dims_, *host_layout, "PJRT_Buffer_ToHostBuffer").status());
  }
  return static_cast<size_t>(bytes_);
}

StatusOr<std::shared_ptr<Event>> SimBuffer::ToHostBuffer(void* dst, size_t dst_size,
                                                         const MemoryLayout* host_layout) {
  const char* fn = "PJRT_Buffer_ToHostBuffer";
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> allocation, LiveAllocation(fn));
  if (dst_size < static_cast<size_t>(bytes_)) {
    return InvalidArgument(std::string(fn) + ": dst_size is " + std::to_string(dst_size) +
                           " bytes but " + Describe() + " needs " + std::to_string(bytes_));
  }
  std::optional<std::vector<int64_t>> strides;
  if (host_layout != nullptr) {
    PJRTKIT_ASSIGN_OR_RETURN(strides, HostLayoutByteStrides(type_, dims_, *host_layout, fn));
  }
  std::shared_ptr<Event> done = Event::Create();
  const int64_t element_bytes = StoredElementBytes(type_);
  std::shared_lock<std::shared_mutex> launch = device_->SharedLaunchLock();
  device_->queue().EnqueueAfter(ready_, [allocation, dst, strides, done, element_bytes,
                                         bytes = bytes_, dims = dims_](Status status) mutable {
    if (status.ok()) {
      const auto* src = static_cast<const uint8_t*>(allocation->data());
      auto* out = static_cast<uint8_t*>(dst);
      if (!strides.has_value()) {
        std::memcpy(out, src, static_cast<size_t>(bytes));
      } else {
        CopyDenseToStrided(element_bytes, dims, src, out, *strides);
      }
    }
    allocation.reset();  // Before the event: whoever waits on it may delete the buffer.
    done->Set(std::move(status));
  });
  return done;
}

StatusOr<std::unique_ptr<Buffer>> SimBuffer::CopyToDevice(Device* dst_device) {
  return CopyToMemory(static_cast<SimDevice*>(dst_device)->memory_space());
}

StatusOr<std::unique_ptr<Buffer>> SimBuffer::CopyToMemory(Memory* dst_memory) {
  const char* fn = "PJRT_Buffer_CopyToMemory";
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> source, LiveAllocation(fn));
  SimDevice* destination = static_cast<SimMemory*>(dst_memory)->sim_device();
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> target,
                           destination->memory().Allocate(bytes_, "copy of buffer " + Describe()));
  std::shared_ptr<Event> copied = Event::Create();
  // On this buffer's queue: ordered with the other uses of the source on its device; nobody
  // else touches the new buffer's memory before `copied` is ready. The piece holds the new
  // memory weakly: a copy deleted before the piece runs gives it back at once (there is then
  // nothing to fill); a copy that is kept, or that a queued read still holds, is filled.
  std::weak_ptr<Allocation> weak_target = target;
  std::shared_lock<std::shared_mutex> launch = device_->SharedLaunchLock();
  device_->queue().EnqueueAfter(ready_, [source, weak_target, copied,
                                         bytes = bytes_](Status status) mutable {
    if (status.ok()) {
      if (std::shared_ptr<Allocation> target = weak_target.lock()) {
        std::memcpy(target->data(), source->data(), static_cast<size_t>(bytes));
      }  // The target is let go of here, before the event.
    }
    source.reset();  // Before the event too, as above.
    copied->Set(std::move(status));
  });
  return std::unique_ptr<Buffer>(
      new SimBuffer(destination, type_, dims_, std::move(target), std::move(copied)));
}

StatusOr<std::shared_ptr<Event>> SimBuffer::CopyRawToHost(void* dst, int64_t offset, int64_t size) {
  const char* fn = "PJRT_Buffer_CopyRawToHost";
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> allocation, LiveAllocation(fn));
  if (offset < 0 || size < 0 || offset > bytes_ || size > bytes_ - offset) {
    return InvalidArgument(std::string(fn) + ": bytes [" + std::to_string(offset) + ", " +
                           std::to_string(offset + size) + ") are outside the " +
                           std::to_string(bytes_) + " bytes of " + Describe());
  }
  std::shared_ptr<Event> done = Event::Create();
  std::shared_lock<std::shared_mutex> launch = device_->SharedLaunchLock();
  device_->queue().EnqueueAfter(ready_, [allocation, dst, offset, size,
                                         done](Status status) mutable {
    if (status.ok() && size > 0) {
      std::memcpy(dst, static_cast<const uint8_t*>(allocation->data()) + offset,
                  static_cast<size_t>(size));
    }
    allocation.reset();
    done->Set(std::move(status));
  });
  return done;
}

StatusOr<uintptr_t> SimBuffer::UnsafePointer() {
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> allocation,
                           LiveAllocation("PJRT_Buffer_UnsafePointer"));
  return reinterpret_cast<uintptr_t>(allocation->data());
}

StatusOr<void*> SimBuffer::OpaqueDeviceMemoryDataPointer() {
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> allocation,
                           LiveAllocation("PJRT_Buffer_OpaqueDeviceMemoryDataPointer"));
  return allocation->data();
}

StatusOr<std::unique_ptr<Buffer>> SimBuffer::Bitcast(ElementType type,
                                                     const std::vector<int64_t>& dims,
                                                     const std::optional<MemoryLayout>& layout) {
  const char* fn = "PJRT_Buffer_Bitcast";
  PJRTKIT_ASSIGN_OR_RETURN(int64_t bytes, DenseBytes(type, dims, fn));
  if (layout.has_value()) PJRTKIT_RETURN_IF_ERROR(CheckDeviceLayout(*layout, type, dims, fn));
  if (bytes != bytes_) {
    return InvalidArgument(std::string(fn) + ": " + ShapeString(type, dims) + " has " +
                           std::to_string(bytes) + " bytes, but " + Describe() + " has " +
                           std::to_string(bytes_));
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> allocation, LiveAllocation(fn));
  return std::unique_ptr<Buffer>(new SimBuffer(device_, type, dims, std::move(allocation), ready_));
}

StatusOr<ControlledDonation> SimBuffer::DonateWithControlDependency() {
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> allocation, TakeForDonation());
  std::shared_ptr<Event> dependency = Event::Create();
  ControlledDonation donation;
  donation.buffer.reset(new SimBuffer(device_, type_, dims_, std::move(allocation),
                                      Event::AfterAll({ready_, dependency})));
  donation.dependency_ready = [dependency](Status status) { dependency->Set(std::move(status)); };
  return donation;
}

}  // namespace sim
}  // namespace pjrtkit
