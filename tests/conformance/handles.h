// Move-only owners for PJRT handles: each destroys its handle through the plugin's API.
#ifndef PJRTKIT_TESTS_CONFORMANCE_HANDLES_H_
#define PJRTKIT_TESTS_CONFORMANCE_HANDLES_H_

#include <utility>

#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrt_conformance {

// Destroy functions, one per handle family; a destroy error is reported as a test failure.
void DestroyBuffer(const PJRT_Api* api, PJRT_Buffer* buffer);
void DestroyEvent(const PJRT_Api* api, PJRT_Event* event);
void DestroyClient(const PJRT_Api* api, PJRT_Client* client);
void DestroyLoadedExecutable(const PJRT_Api* api, PJRT_LoadedExecutable* executable);
void DestroyExecutable(const PJRT_Api* api, PJRT_Executable* executable);
void DestroyTopology(const PJRT_Api* api, PJRT_TopologyDescription* topology);
void DestroyExecuteContext(const PJRT_Api* api, PJRT_ExecuteContext* context);
void DestroyTransferManager(const PJRT_Api* api,
                            PJRT_AsyncHostToDeviceTransferManager* manager);

// Owns one `T*` and destroys it with `Destroy` (through the API it was made with).
template <typename T, void (*Destroy)(const PJRT_Api*, T*)>
class Owned {
 public:
  Owned() = default;
  // Takes ownership of `handle` (may be NULL), made by `api`.
  Owned(const PJRT_Api* api, T* handle) : api_(api), handle_(handle) {}
  Owned(Owned&& other) noexcept : api_(other.api_), handle_(other.release()) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      api_ = other.api_;
      handle_ = other.release();
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  // The handle, still owned.
  T* get() const { return handle_; }
  // Gives up ownership without destroying.
  T* release() { return std::exchange(handle_, nullptr); }
  // Destroys the current handle (if any).
  void reset() {
    if (handle_ != nullptr) Destroy(api_, std::exchange(handle_, nullptr));
  }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  const PJRT_Api* api_ = nullptr;  // The API that made the handle.
  T* handle_ = nullptr;            // Owned handle, or NULL.
};

using BufferPtr = Owned<PJRT_Buffer, DestroyBuffer>;
using EventPtr = Owned<PJRT_Event, DestroyEvent>;
using ClientPtr = Owned<PJRT_Client, DestroyClient>;
using LoadedExecutablePtr = Owned<PJRT_LoadedExecutable, DestroyLoadedExecutable>;
using ExecutablePtr = Owned<PJRT_Executable, DestroyExecutable>;
using TopologyPtr = Owned<PJRT_TopologyDescription, DestroyTopology>;
using ExecuteContextPtr = Owned<PJRT_ExecuteContext, DestroyExecuteContext>;
using TransferManagerPtr = Owned<PJRT_AsyncHostToDeviceTransferManager, DestroyTransferManager>;

}  // namespace pjrt_conformance

#endif  // PJRTKIT_TESTS_CONFORMANCE_HANDLES_H_
