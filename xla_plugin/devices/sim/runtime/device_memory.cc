#include "xla_plugin/devices/sim/runtime/device_memory.h"

#include <utility>

#include "xla_plugin/devices/sim/runtime/memory_pool.h"

namespace pjrtkit {
namespace sim {

StatusOr<std::unique_ptr<DeviceMemory>> DeviceMemory::Create(int device_id,
                                                             int64_t capacity_bytes) {
  PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<MemoryPool> pool,
                           MemoryPool::Create(device_id, capacity_bytes));
  return std::unique_ptr<DeviceMemory>(new DeviceMemory(std::move(pool)));
}

DeviceMemory::DeviceMemory(std::shared_ptr<MemoryPool> pool) : pool_(std::move(pool)) {}

DeviceMemory::~DeviceMemory() = default;

StatusOr<std::shared_ptr<Allocation>> DeviceMemory::Allocate(int64_t bytes,
                                                             std::string_view purpose) {
  return pool_->Allocate(bytes, purpose);
}

MemoryStats DeviceMemory::Stats() const { return pool_->Stats(); }

void DeviceMemory::ClearPeaks() { pool_->ClearPeaks(); }

int64_t DeviceMemory::capacity() const { return pool_->capacity(); }

int DeviceMemory::device_id() const { return pool_->device_id(); }

}  // namespace sim
}  // namespace pjrtkit
