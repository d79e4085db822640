#include "xla_plugin/client/execute_context.h"

#include <string>

namespace pjrtkit {

Status ExecuteContext::AddUserData(int64_t type_id, void* data) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!user_data_.emplace(type_id, data).second) {
    return Status(StatusCode::kAlreadyExists, "ExecuteContext: user data of type id " +
                                                  std::to_string(type_id) + " was already added");
  }
  return OkStatus();
}

void* ExecuteContext::GetUserData(int64_t type_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = user_data_.find(type_id);
  return it == user_data_.end() ? nullptr : it->second;
}

std::map<int64_t, void*> ExecuteContext::user_data() const {
  std::lock_guard<std::mutex> lock(mu_);
  return user_data_;
}

bool ExecuteContext::empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return user_data_.empty();
}

}  // namespace pjrtkit
