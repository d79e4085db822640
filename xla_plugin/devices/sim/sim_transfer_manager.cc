#include "xla_plugin/devices/sim/sim_transfer_manager.h"

#include <cstring>
#include <string>
#include <utility>

#include "xla_plugin/devices/sim/array_layout.h"
#include "xla_plugin/devices/sim/sim_buffer.h"
#include "xla_plugin/devices/sim/sim_device.h"

namespace pjrtkit {
namespace sim {

StatusOr<std::unique_ptr<SimTransferManager>> SimTransferManager::Create(
    SimDevice* device, const std::vector<BufferShape>& shapes) {
  const char* fn = "PJRT_Client_CreateBuffersForAsyncHostToDevice";
  std::vector<Slot> slots;
  for (const BufferShape& shape : shapes) {
    PJRTKIT_ASSIGN_OR_RETURN(int64_t bytes, DenseBytes(shape.type, shape.dims, fn));
    Slot slot;
    slot.shape = shape;
    PJRTKIT_ASSIGN_OR_RETURN(
        slot.allocation, device->memory().Allocate(bytes, "asynchronous transfer of " +
                                                              ShapeString(shape.type, shape.dims)));
    slot.ready = Event::Create();
    slots.push_back(std::move(slot));
  }
  return std::unique_ptr<SimTransferManager>(new SimTransferManager(device, std::move(slots)));
}

SimTransferManager::SimTransferManager(SimDevice* device, std::vector<Slot> slots)
    : device_(device), slots_(std::move(slots)) {}

SimTransferManager::~SimTransferManager() {
  std::vector<std::pair<size_t, std::shared_ptr<Event>>> waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (!slots_[i].closed) waiting.emplace_back(i, slots_[i].ready);
    }
  }
  for (const auto& [index, ready] : waiting) {
    ready->Set(Status(StatusCode::kCancelled,
                      "the sim device's asynchronous transfer was destroyed before buffer " +
                          std::to_string(index) + " got its last chunk"));
  }
}

Status SimTransferManager::CheckIndex(const char* fn, int index) const {
  if (index >= 0 && static_cast<size_t>(index) < slots_.size()) return OkStatus();
  return InvalidArgument(std::string(fn) + ": buffer index " + std::to_string(index) +
                         " is outside [0, " + std::to_string(slots_.size()) + ")");
}

StatusOr<size_t> SimTransferManager::buffer_size(int index) const {
  PJRTKIT_RETURN_IF_ERROR(CheckIndex("PJRT_AsyncHostToDeviceTransferManager_BufferSize", index));
  return static_cast<size_t>(slots_[index].allocation->size());
}

Device* SimTransferManager::device() const { return device_; }

StatusOr<std::shared_ptr<Event>> SimTransferManager::TransferData(int index, const void* data,
                                                                  int64_t offset, int64_t size,
                                                                  bool is_last) {
  const char* fn = "PJRT_AsyncHostToDeviceTransferManager_TransferData";
  PJRTKIT_RETURN_IF_ERROR(CheckIndex(fn, index));
  std::shared_ptr<Allocation> allocation;
  std::shared_ptr<Event> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& slot = slots_[index];
    const int64_t total = slot.allocation->size();
    if (slot.closed) {
      return FailedPrecondition(std::string(fn) + ": buffer " + std::to_string(index) +
                                " already got its last chunk or an error");
    }
    if (offset < 0 || size < 0 || offset > total || size > total - offset) {
      return InvalidArgument(std::string(fn) + ": bytes [" + std::to_string(offset) + ", " +
                             std::to_string(offset + size) + ") are outside buffer " +
                             std::to_string(index) + " of " + std::to_string(total) + " bytes");
    }
    if (data == nullptr && size > 0) {
      return InvalidArgument(std::string(fn) + ": data is null for " + std::to_string(size) +
                             " bytes");
    }
    if (is_last) slot.closed = true;
    ++slot.copying;
    allocation = slot.allocation;
    ready = slot.ready;
  }
  if (size > 0) {
    std::memcpy(static_cast<uint8_t*>(allocation->data()) + offset, data,
                static_cast<size_t>(size));
  }
  bool now_ready = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& slot = slots_[index];
    now_ready = --slot.copying == 0 && slot.closed && !slot.failed;
  }
  if (now_ready) ready->Set(OkStatus());  // Outside the lock: callbacks run here.
  return Event::CreateReady();
}

StatusOr<std::unique_ptr<Buffer>> SimTransferManager::RetrieveBuffer(int index) {
  const char* fn = "PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer";
  PJRTKIT_RETURN_IF_ERROR(CheckIndex(fn, index));
  std::lock_guard<std::mutex> lock(mu_);
  Slot& slot = slots_[index];
  if (slot.retrieved) {
    return FailedPrecondition(std::string(fn) + ": buffer " + std::to_string(index) +
                              " was already retrieved");
  }
  slot.retrieved = true;
  return std::unique_ptr<Buffer>(
      new SimBuffer(device_, slot.shape.type, slot.shape.dims, slot.allocation, slot.ready));
}

Status SimTransferManager::SetBufferError(int index, const Status& error) {
  const char* fn = "PJRT_AsyncHostToDeviceTransferManager_SetBufferError";
  PJRTKIT_RETURN_IF_ERROR(CheckIndex(fn, index));
  std::shared_ptr<Event> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& slot = slots_[index];
    if (slot.closed) {
      return FailedPrecondition(std::string(fn) + ": buffer " + std::to_string(index) +
                                " already got its last chunk or an error");
    }
    slot.closed = true;
    slot.failed = true;
    ready = slot.ready;
  }
  ready->Set(error.ok() ? Internal(std::string(fn) + ": called with an OK status") : error);
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
