#include "xla_plugin/devices/inner/wrapped_device.h"

#include <algorithm>
#include <utility>

namespace pjrtkit {
namespace inner {
namespace {

// `value` when `is_set`, else nullopt.
std::optional<int64_t> IfSet(int64_t value, bool is_set) {
  return is_set ? std::optional<int64_t>(value) : std::nullopt;
}

}  // namespace

WrappedDevice::WrappedDevice(DeviceDescription description, PJRT_Device* inner,
                             int local_hardware_id, const InnerApi* stats_api, bool addressable)
    : description_(std::move(description)),
      inner_(inner),
      local_hardware_id_(!addressable           ? -1
                         : local_hardware_id >= 0 ? local_hardware_id
                                                  : description_.id()),
      addressable_(addressable),
      stats_api_(stats_api) {}

void WrappedDevice::SetMemories(std::vector<Memory*> memories) { memories_ = std::move(memories); }

void WrappedDevice::SetHostMemory(int64_t bytes_limit, std::shared_ptr<const HostBufferPool> pool) {
  bytes_limit_ = bytes_limit;
  pool_ = std::move(pool);
}

StatusOr<MemoryStats> WrappedDevice::GetMemoryStats() const {
  if (stats_api_ != nullptr) return InnerMemoryStats();
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

StatusOr<MemoryStats> WrappedDevice::InnerMemoryStats() const {
  PJRTKIT_INNER_ARGS(PJRT_Device_MemoryStats, args);
  args.device = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*stats_api_, PJRT_Device_MemoryStats, &args));
  MemoryStats stats;
  stats.bytes_in_use = args.bytes_in_use;
  stats.peak_bytes_in_use = IfSet(args.peak_bytes_in_use, args.peak_bytes_in_use_is_set);
  stats.num_allocs = IfSet(args.num_allocs, args.num_allocs_is_set);
  stats.largest_alloc_size = IfSet(args.largest_alloc_size, args.largest_alloc_size_is_set);
  stats.bytes_limit = IfSet(args.bytes_limit, args.bytes_limit_is_set);
  stats.bytes_reserved = IfSet(args.bytes_reserved, args.bytes_reserved_is_set);
  stats.peak_bytes_reserved = IfSet(args.peak_bytes_reserved, args.peak_bytes_reserved_is_set);
  stats.bytes_reservable_limit =
      IfSet(args.bytes_reservable_limit, args.bytes_reservable_limit_is_set);
  stats.largest_free_block_bytes =
      IfSet(args.largest_free_block_bytes, args.largest_free_block_bytes_is_set);
  stats.pool_bytes = IfSet(args.pool_bytes, args.pool_bytes_is_set);
  stats.peak_pool_bytes = IfSet(args.peak_pool_bytes, args.peak_pool_bytes_is_set);
  return stats;
}

}  // namespace inner
}  // namespace pjrtkit
