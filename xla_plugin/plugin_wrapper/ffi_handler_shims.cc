#include "xla_plugin/plugin_wrapper/ffi_handler_shims.h"

// C++ standard library.
#include <array>
#include <atomic>
#include <mutex>
#include <utility>

// The XLA FFI C ABI (header only; nothing is linked).
#include "xla/ffi/api/c_api.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// One trampoline's target and what its last metadata query saw.
struct Slot {
  std::atomic<XLA_FFI_Handler*> handler{nullptr};  // Set once by Wrap, then read by the shim.
  std::mutex mu;                                   // Guards `query`.
  FfiShimQuery query;                              // The last metadata query.
};

// The process-wide slot table (see the header): created on first use, never destroyed.
struct SlotTable {
  std::mutex mu;                                       // Serializes Wrap.
  size_t used = 0;                                     // Slots [0, used) hold a handler.
  std::array<Slot, FfiHandlerShims::kCapacity> slots;  // Indexed like the trampolines.
};

SlotTable& Table() {
  static SlotTable* const table = new SlotTable();
  return *table;
}

// True when `frame` is XLA's metadata query (the call made at registration).
bool IsMetadataQuery(const XLA_FFI_CallFrame* frame) {
  return frame->extension_start != nullptr &&
         frame->extension_start->type == XLA_FFI_Extension_Metadata;
}

// Forwards a metadata query to the handler, then declares the framework's minor version when the
// handler's is newer within the same major version.
XLA_FFI_Error* AnswerMetadata(Slot& slot, XLA_FFI_Handler* handler, XLA_FFI_CallFrame* frame) {
  XLA_FFI_Error* error = handler(frame);
  auto* extension = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
  XLA_FFI_Metadata* metadata = extension->metadata;
  const XLA_FFI_Api_Version& framework = frame->api->api_version;
  FfiShimQuery query;
  query.queried = true;
  query.handler_failed = error != nullptr;
  query.framework_major = framework.major_version;
  query.framework_minor = framework.minor_version;
  if (error == nullptr && metadata != nullptr) {
    query.handler_major = metadata->api_version.major_version;
    query.handler_minor = metadata->api_version.minor_version;
    if (query.handler_major == query.framework_major &&
        query.handler_minor > query.framework_minor) {
      metadata->api_version.minor_version = query.framework_minor;
      query.downgraded = true;
    }
  }
  std::lock_guard<std::mutex> lock(slot.mu);
  slot.query = query;
  return error;
}

// The body of trampoline `index`.
XLA_FFI_Error* Dispatch(size_t index, XLA_FFI_CallFrame* frame) {
  Slot& slot = Table().slots[index];
  XLA_FFI_Handler* handler = slot.handler.load(std::memory_order_acquire);
  if (IsMetadataQuery(frame)) return AnswerMetadata(slot, handler, frame);
  return handler(frame);
}

// Trampoline I forwards to slot I.
template <size_t I>
XLA_FFI_Error* Trampoline(XLA_FFI_CallFrame* frame) {
  return Dispatch(I, frame);
}

template <size_t... I>
constexpr std::array<XLA_FFI_Handler*, sizeof...(I)> MakeTrampolines(std::index_sequence<I...>) {
  return {&Trampoline<I>...};
}

// All trampolines, indexed like the slots.
constexpr std::array<XLA_FFI_Handler*, FfiHandlerShims::kCapacity> kTrampolines =
    MakeTrampolines(std::make_index_sequence<FfiHandlerShims::kCapacity>());

// The slot index of trampoline `shim`, or kCapacity.
size_t IndexOf(void* shim) {
  for (size_t i = 0; i < kTrampolines.size(); ++i) {
    if (reinterpret_cast<void*>(kTrampolines[i]) == shim) return i;
  }
  return FfiHandlerShims::kCapacity;
}

}  // namespace

void* FfiHandlerShims::Wrap(void* handler) {
  if (handler == nullptr) return nullptr;
  auto* target = reinterpret_cast<XLA_FFI_Handler*>(handler);
  SlotTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mu);
  for (size_t i = 0; i < table.used; ++i) {
    if (table.slots[i].handler.load(std::memory_order_relaxed) == target) {
      return reinterpret_cast<void*>(kTrampolines[i]);
    }
  }
  if (table.used == kCapacity) return nullptr;
  const size_t index = table.used++;
  table.slots[index].handler.store(target, std::memory_order_release);
  return reinterpret_cast<void*>(kTrampolines[index]);
}

FfiShimQuery FfiHandlerShims::LastQuery(void* shim) {
  const size_t index = IndexOf(shim);
  if (index == kCapacity) return FfiShimQuery();
  Slot& slot = Table().slots[index];
  std::lock_guard<std::mutex> lock(slot.mu);
  return slot.query;
}

void FfiHandlerShims::ResetQuery(void* shim) {
  const size_t index = IndexOf(shim);
  if (index == kCapacity) return;
  Slot& slot = Table().slots[index];
  std::lock_guard<std::mutex> lock(slot.mu);
  slot.query = FfiShimQuery();
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
