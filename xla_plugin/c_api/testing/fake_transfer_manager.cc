#include "xla_plugin/c_api/testing/fake_transfer_manager.h"

// C++ standard library.
#include <cstring>
#include <string>
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/testing/fake_buffer.h"
#include "xla_plugin/c_api/testing/fake_client.h"

namespace pjrtkit {
namespace testing {

FakeTransferManager::FakeTransferManager(FakeDevice* device, FakeMemory* memory,
                                         const std::vector<BufferShape>& shapes,
                                         const std::vector<std::optional<MemoryLayout>>& layouts)
    : device_(device), memory_(memory) {
  for (size_t i = 0; i < shapes.size(); ++i) {
    Slot slot;
    slot.shape = shapes[i];
    if (i < layouts.size()) slot.layout = layouts[i];
    slot.bytes = std::make_shared<std::vector<uint8_t>>(DenseByteSize(shapes[i].type,
                                                                      shapes[i].dims));
    slot.ready = Event::Create();
    slots_.push_back(std::move(slot));
  }
}

AttributeMap FakeTransferManager::metadata() const {
  std::lock_guard<std::mutex> lock(mu_);
  return metadata_;
}

StatusOr<size_t> FakeTransferManager::buffer_size(int index) const {
  std::lock_guard<std::mutex> lock(mu_);
  return slots_[index].bytes->size();
}

Device* FakeTransferManager::device() const { return device_; }

StatusOr<std::shared_ptr<Event>> FakeTransferManager::TransferData(int index, const void* data,
                                                                   int64_t offset, int64_t size,
                                                                   bool is_last) {
  std::shared_ptr<Event> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Slot& slot = slots_[index];
    if (slot.ready->IsReady()) {
      return FailedPrecondition("fake: buffer " + std::to_string(index) +
                                " already got its last chunk or an error");
    }
    const int64_t total = static_cast<int64_t>(slot.bytes->size());
    if (offset + size > total) {
      return OutOfRange("fake: bytes [" + std::to_string(offset) + ", " +
                        std::to_string(offset + size) + ") are outside buffer " +
                        std::to_string(index) + " of " + std::to_string(total) + " bytes");
    }
    if (size > 0) std::memcpy(slot.bytes->data() + offset, data, static_cast<size_t>(size));
    ready = slot.ready;
  }
  if (is_last) ready->Set(OkStatus());  // Outside the lock: callbacks run here.
  return Event::CreateReady();
}

StatusOr<std::unique_ptr<Buffer>> FakeTransferManager::RetrieveBuffer(int index) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& slot = slots_[index];
  if (slot.retrieved) {
    return FailedPrecondition("fake: buffer " + std::to_string(index) + " was already retrieved");
  }
  slot.retrieved = true;
  auto buffer = std::make_unique<FakeBuffer>(slot.shape.type, slot.shape.dims, device_, memory_,
                                             slot.bytes->data(), slot.bytes, slot.ready);
  if (slot.layout.has_value()) buffer->set_layout(*slot.layout);
  return std::unique_ptr<Buffer>(std::move(buffer));
}

Status FakeTransferManager::SetBufferError(int index, const Status& error) {
  std::shared_ptr<Event> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready = slots_[index].ready;
  }
  if (!ready->Set(error)) {  // Outside the lock: callbacks run here.
    return FailedPrecondition("fake: buffer " + std::to_string(index) +
                              " already got its last chunk or an error");
  }
  return OkStatus();
}

Status FakeTransferManager::AddMetadata(const AttributeMap& metadata) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& entry : metadata) metadata_[entry.first] = entry.second;
  return OkStatus();
}

}  // namespace testing
}  // namespace pjrtkit
