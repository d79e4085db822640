#include "xla_plugin/devices/xla_cpu/xla_cpu_device.h"

#include <algorithm>
#include <utility>

namespace pjrtkit {
namespace xla_cpu {

XlaCpuDevice::XlaCpuDevice(DeviceDescription description, PJRT_Device* inner)
    : description_(std::move(description)), inner_(inner) {}

void XlaCpuDevice::SetMemories(std::vector<Memory*> memories) { memories_ = std::move(memories); }

void XlaCpuDevice::SetHostMemory(int64_t bytes_limit, std::shared_ptr<const HostBufferPool> pool) {
  bytes_limit_ = bytes_limit;
  pool_ = std::move(pool);
}

StatusOr<MemoryStats> XlaCpuDevice::GetMemoryStats() const {
  MemoryStats stats = counter_.Snapshot();
  stats.bytes_reserved = 0;
  stats.peak_bytes_reserved = 0;
  if (bytes_limit_ > 0) {
    stats.bytes_limit = bytes_limit_;
    stats.bytes_reservable_limit = bytes_limit_;
    stats.largest_free_block_bytes = std::max<int64_t>(0, bytes_limit_ - stats.bytes_in_use);
  }
  if (pool_ != nullptr) {
    stats.pool_bytes = stats.bytes_in_use + static_cast<int64_t>(pool_->stats().cached_bytes);
  }
  return stats;
}

}  // namespace xla_cpu
}  // namespace pjrtkit
