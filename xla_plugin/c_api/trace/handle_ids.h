// HandleIds: stable per-kind ids for PJRT handles in order of first appearance (client#1,
// buffer#5), so a trace names handles the same way in every run. Not thread-safe: TraceSink
// guards it.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TRACE_HANDLE_IDS_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TRACE_HANDLE_IDS_H_

// C++ standard library.
#include <cstdint>
#include <string>
#include <unordered_map>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {
namespace trace {

// The kinds of handle a trace names.
enum class HandleKind {
  kClient,
  kDevice,
  kDeviceDescription,
  kMemory,
  kBuffer,
  kEvent,
  kExecutable,
  kLoadedExecutable,
  kTopology,
  kError,
  kTransferManager,
  kExecuteContext,
  kCopyToDeviceStream,
  kAsyncTrackingEvent,
  kCount,  // Not a kind: their number.
};

// "client", "device", "device_description", "memory", "buffer", ...
const char* HandleKindName(HandleKind kind);

// The kind of the handle type T (known = false for every other type).
template <typename T>
struct HandleKindOf {
  static constexpr bool known = false;
};
#define PJRTKIT_TRACE_HANDLE_KIND(type, value)      \
  template <>                                       \
  struct HandleKindOf<type> {                       \
    static constexpr bool known = true;             \
    static constexpr HandleKind kind = HandleKind::value; \
  };
PJRTKIT_TRACE_HANDLE_KIND(PJRT_Client, kClient)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_Device, kDevice)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_DeviceDescription, kDeviceDescription)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_Memory, kMemory)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_Buffer, kBuffer)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_Event, kEvent)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_Executable, kExecutable)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_LoadedExecutable, kLoadedExecutable)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_TopologyDescription, kTopology)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_Error, kError)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_AsyncHostToDeviceTransferManager, kTransferManager)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_ExecuteContext, kExecuteContext)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_CopyToDeviceStream, kCopyToDeviceStream)
PJRTKIT_TRACE_HANDLE_KIND(PJRT_AsyncTrackingEvent, kAsyncTrackingEvent)
#undef PJRTKIT_TRACE_HANDLE_KIND

class HandleIds {
 public:
  // "kind#N": the id of `handle` (non-null), given on its first appearance (1, 2, ... per kind).
  std::string Name(HandleKind kind, const void* handle);
  // Forgets `handle` (destroyed): an object later made at the same address gets a new id.
  void Forget(HandleKind kind, const void* handle);

 private:
  std::unordered_map<const void*, int64_t> ids_[static_cast<int>(HandleKind::kCount)];
  int64_t last_[static_cast<int>(HandleKind::kCount)] = {};  // The last id given, per kind.
};

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TRACE_HANDLE_IDS_H_
