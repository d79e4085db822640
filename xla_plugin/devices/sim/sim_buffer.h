// SimBuffer: an array in one sim device's memory.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_BUFFER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_BUFFER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "xla_plugin/client/buffer.h"
#include "xla_plugin/client/event.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/devices/sim/runtime/allocation.h"

namespace pjrtkit {
namespace sim {

class SimDevice;

// A dense row-major array of `type` (whole bytes per element) and `dims` in one Allocation of
// its device's memory. Its contents are valid once ReadyEvent() is ready (an error there means
// producing them failed). Every copy in or out runs on a device queue after the buffer is ready:
// reads of the buffer on its own device's queue, so they stay ordered with the device's
// executions. Queued work holds the Allocation, so Delete() while a copy is queued is safe: the
// memory goes back when the copy is done. Thread-safe. The framework destroys buffers before
// their client (the C-API layer keeps the client alive until then); the executor makes its
// outputs with the public constructor.
class SimBuffer : public Buffer {
 public:
  // A buffer of `type` and `dims` on `device` in `allocation` (at least the dense size of the
  // array), whose contents are ready when `ready` is.
  SimBuffer(SimDevice* device, ElementType type, std::vector<int64_t> dims,
            std::shared_ptr<Allocation> allocation, std::shared_ptr<Event> ready);

  // The device memory; null once deleted or donated.
  std::shared_ptr<Allocation> allocation() const;
  // Hands the memory to an execution that donates this buffer: the buffer then reads as deleted.
  // FAILED_PRECONDITION when it is already deleted or donated, or when a framework holds an
  // external reference to its memory (a NumPy or DLPack view).
  StatusOr<std::shared_ptr<Allocation>> TakeForDonation();
  // The device.
  SimDevice* sim_device() const { return device_; }

  // Buffer:
  ElementType element_type() const override { return type_; }
  const std::vector<int64_t>& dimensions() const override { return dims_; }
  Device* device() const override;
  Memory* memory() const override;
  // The dense size of the array.
  StatusOr<size_t> OnDeviceSizeInBytes() const override;
  std::shared_ptr<Event> ReadyEvent() override { return ready_; }
  // Drops the buffer's hold on its memory (work still queued keeps it until done).
  void Delete() override;
  bool IsDeleted() const override { return deleted_.load(std::memory_order_acquire); }
  // False: the memory belongs to the device (even though the simulation keeps it in the
  // process's address space).
  bool IsOnCpu() const override { return false; }
  // The dense size for dense host layouts; UNIMPLEMENTED for tiled ones.
  StatusOr<size_t> HostBufferSize(const MemoryLayout* host_layout) const override;
  // Copies into `dst` through the device's queue once the buffer is ready; `host_layout` may be
  // any dense permutation of the dimensions (nullptr: row-major). The event carries the buffer's
  // error, if it has one.
  StatusOr<std::shared_ptr<Event>> ToHostBuffer(void* dst, size_t dst_size,
                                                const MemoryLayout* host_layout) override;
  // A new buffer on `dst_device` (a device of this client), copied on this buffer's queue once
  // this buffer is ready, ready when copied; RESOURCE_EXHAUSTED when the destination is full.
  StatusOr<std::unique_ptr<Buffer>> CopyToDevice(Device* dst_device) override;
  // CopyToDevice of the device `dst_memory` belongs to.
  StatusOr<std::unique_ptr<Buffer>> CopyToMemory(Memory* dst_memory) override;
  // Copies bytes [offset, offset + size) through the device's queue once the buffer is ready;
  // INVALID_ARGUMENT when they are outside the buffer.
  StatusOr<std::shared_ptr<Event>> CopyRawToHost(void* dst, int64_t offset, int64_t size) override;
  // The device address of the data (for frameworks that hold an external reference).
  StatusOr<uintptr_t> UnsafePointer() override;
  // The device address of the data.
  StatusOr<void*> OpaqueDeviceMemoryDataPointer() override;
  // A buffer of `type` and `dims` (the same byte size, row-major) sharing this buffer's memory and
  // readiness; INVALID_ARGUMENT when the sizes differ, UNIMPLEMENTED for other layouts or types.
  StatusOr<std::unique_ptr<Buffer>> Bitcast(ElementType type, const std::vector<int64_t>& dims,
                                            const std::optional<MemoryLayout>& layout) override;
  // Moves the memory to a new buffer that is ready once this one is and dependency_ready has
  // been called (with its status, if an error); this buffer then reads as donated.
  StatusOr<ControlledDonation> DonateWithControlDependency() override;

 private:
  // The allocation, or FAILED_PRECONDITION naming `what` when deleted or donated.
  StatusOr<std::shared_ptr<Allocation>> LiveAllocation(const char* what) const;
  // "f32[2,3] on PJRTKIT_SIM_0", for messages.
  std::string Describe() const;

  SimDevice* const device_;                 // Holding device.
  const ElementType type_;                  // Element type.
  const std::vector<int64_t> dims_;         // Dimensions.
  const int64_t bytes_;                     // Dense size.
  const std::shared_ptr<Event> ready_;      // Ready when the contents are.
  mutable std::mutex mu_;                   // Guards allocation_.
  std::shared_ptr<Allocation> allocation_;  // The memory; null once deleted or donated.
  std::atomic<bool> deleted_{false};        // Delete() or donation happened.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_BUFFER_H_
