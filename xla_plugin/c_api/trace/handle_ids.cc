#include "xla_plugin/c_api/trace/handle_ids.h"

namespace pjrtkit {
namespace capi {
namespace trace {

const char* HandleKindName(HandleKind kind) {
  switch (kind) {
    case HandleKind::kClient: return "client";
    case HandleKind::kDevice: return "device";
    case HandleKind::kDeviceDescription: return "device_description";
    case HandleKind::kMemory: return "memory";
    case HandleKind::kBuffer: return "buffer";
    case HandleKind::kEvent: return "event";
    case HandleKind::kExecutable: return "executable";
    case HandleKind::kLoadedExecutable: return "loaded_executable";
    case HandleKind::kTopology: return "topology";
    case HandleKind::kError: return "error";
    case HandleKind::kTransferManager: return "transfer_manager";
    case HandleKind::kExecuteContext: return "execute_context";
    case HandleKind::kCopyToDeviceStream: return "copy_to_device_stream";
    case HandleKind::kAsyncTrackingEvent: return "async_tracking_event";
    case HandleKind::kCount: break;
  }
  return "handle";
}

std::string HandleIds::Name(HandleKind kind, const void* handle) {
  const int k = static_cast<int>(kind);
  auto inserted = ids_[k].emplace(handle, last_[k] + 1);
  if (inserted.second) ++last_[k];
  return std::string(HandleKindName(kind)) + "#" + std::to_string(inserted.first->second);
}

void HandleIds::Forget(HandleKind kind, const void* handle) {
  ids_[static_cast<int>(kind)].erase(handle);
}

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit
