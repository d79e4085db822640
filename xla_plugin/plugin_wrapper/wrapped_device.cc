#include "xla_plugin/plugin_wrapper/wrapped_device.h"

#include <algorithm>
#include <utility>

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// `value` when `is_set`, else nullopt.
std::optional<int64_t> IfSet(int64_t value, bool is_set) {
  return is_set ? std::optional<int64_t>(value) : std::nullopt;
}

// An inner PJRT_AsyncTrackingEvent, destroyed with this object.
class InnerTrackingEvent : public AsyncTrackingEvent {
 public:
  InnerTrackingEvent(const InnerApi* api, PJRT_AsyncTrackingEvent* event)
      : api_(api), event_(event) {}
  ~InnerTrackingEvent() override {
    PJRTKIT_INNER_ARGS(PJRT_AsyncTrackingEvent_Destroy, args);
    args.event = event_;
    static_cast<void>(PJRTKIT_INNER_CALL(*api_, PJRT_AsyncTrackingEvent_Destroy, &args));
  }

 private:
  const InnerApi* api_;              // Outlives the device (the client holds it).
  PJRT_AsyncTrackingEvent* event_;   // Owned.
};

}  // namespace

WrappedDevice::WrappedDevice(DeviceDescription description, PJRT_Device* inner,
                             int local_hardware_id, const InnerApi* api, bool inner_stats,
                             bool addressable)
    : description_(std::move(description)),
      inner_(inner),
      local_hardware_id_(!addressable           ? -1
                         : local_hardware_id >= 0 ? local_hardware_id
                                                  : description_.id()),
      addressable_(addressable),
      api_(api),
      inner_stats_(inner_stats) {}

void WrappedDevice::SetMemories(std::vector<Memory*> memories) { memories_ = std::move(memories); }

void WrappedDevice::SetHostMemory(int64_t bytes_limit, std::shared_ptr<const HostBufferPool> pool) {
  bytes_limit_ = bytes_limit;
  pool_ = std::move(pool);
}

StatusOr<MemoryStats> WrappedDevice::GetMemoryStats() const {
  if (inner_stats_) return InnerMemoryStats();
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
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Device_MemoryStats, &args));
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
  stats.peak_allocated_bytes = IfSet(args.peak_allocated_bytes, args.peak_allocated_bytes_is_set);
  return stats;
}

Status WrappedDevice::ClearMemoryStats() {
  if (!inner_stats_) {
    counter_.ClearPeak();
    return OkStatus();
  }
  PJRTKIT_INNER_ARGS(PJRT_Device_ClearMemoryStats, args);
  args.device = inner_;
  return PJRTKIT_INNER_CALL(*api_, PJRT_Device_ClearMemoryStats, &args);
}

StatusOr<bool> WrappedDevice::PoisonExecution(int launch_id, const Status& error) {
  PJRTKIT_INNER_ARGS(PJRT_Device_PoisonExecution, args);
  args.device = inner_;
  args.launch_id = launch_id;
  args.error_code = static_cast<PJRT_Error_Code>(error.code());
  args.error_message = error.message().data();
  args.error_message_size = error.message().size();
  std::vector<PJRT_NamedValue> payload;
  for (const auto& [key, value] : error.payloads()) {
    PJRT_NamedValue v{};
    v.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    v.name = key.data();
    v.name_size = key.size();
    v.type = PJRT_NamedValue_kString;
    v.string_value = value.data();
    v.value_size = value.size();
    payload.push_back(v);
  }
  args.payload = payload.empty() ? nullptr : payload.data();
  args.num_payload = payload.size();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Device_PoisonExecution, &args));
  return args.poisoned;
}

StatusOr<std::unique_ptr<AsyncTrackingEvent>> WrappedDevice::CreateAsyncTrackingEvent(
    const std::string& description) {
  PJRTKIT_INNER_ARGS(PJRT_Device_CreateAsyncTrackingEvent, args);
  args.device = inner_;
  args.description = description.data();
  args.description_size = description.size();
  Status status = PJRTKIT_INNER_CALL(*api_, PJRT_Device_CreateAsyncTrackingEvent, &args);
  if (status.code() == StatusCode::kUnimplemented) return std::unique_ptr<AsyncTrackingEvent>();
  PJRTKIT_RETURN_IF_ERROR(status);
  if (args.event == nullptr) return std::unique_ptr<AsyncTrackingEvent>();
  return std::unique_ptr<AsyncTrackingEvent>(new InnerTrackingEvent(api_, args.event));
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
