#include "xla_plugin/devices/sim/runtime/allocation.h"

#include <utility>

#include "xla_plugin/devices/sim/runtime/memory_pool.h"

namespace pjrtkit {
namespace sim {

Allocation::Allocation(std::shared_ptr<MemoryPool> pool, void* data, int64_t size, int64_t offset,
                       int64_t block_size)
    : pool_(std::move(pool)), data_(data), size_(size), offset_(offset), block_size_(block_size) {}

Allocation::~Allocation() { pool_->Release(offset_, block_size_); }

int Allocation::device_id() const { return pool_->device_id(); }

}  // namespace sim
}  // namespace pjrtkit
