// ExecuteContext: per-execution data a framework hands to LoadedExecutable::Execute
// (PJRT_ExecuteContext): user data for XLA FFI handlers, keyed by FFI type id.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_EXECUTE_CONTEXT_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_EXECUTE_CONTEXT_H_

#include <cstdint>
#include <map>
#include <mutex>

#include "xla_plugin/client/status.h"

namespace pjrtkit {

// A map from FFI type id to user data the context borrows (as XLA's PJRT_FFI_UserData_Add: the
// caller keeps the data alive while the context is used). PJRT_ExecuteContext_Create takes no
// client, so the C-API layer creates this concrete class; devices read it in Execute.
// Thread-safe.
class ExecuteContext {
 public:
  ExecuteContext() = default;
  ExecuteContext(const ExecuteContext&) = delete;
  ExecuteContext& operator=(const ExecuteContext&) = delete;

  // Adds `data` under `type_id`; ALREADY_EXISTS when the id is taken.
  Status AddUserData(int64_t type_id, void* data);
  // The data of `type_id`, or nullptr.
  void* GetUserData(int64_t type_id) const;
  // A copy of every entry, by type id.
  std::map<int64_t, void*> user_data() const;
  // True when no user data was added.
  bool empty() const;

 private:
  mutable std::mutex mu_;                // Guards user_data_.
  std::map<int64_t, void*> user_data_;  // By type id.
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_EXECUTE_CONTEXT_H_
