#include "xla_plugin/c_api/ffi_registry.h"

// C++ standard library.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

namespace pjrtkit {
namespace capi {
namespace {

// Client::RegisterFfiHandler / RegisterFfiType for the two registration kinds.
Status SendTo(Client* client, const FfiHandlerRegistration& registration) {
  return client->RegisterFfiHandler(registration);
}
Status SendTo(Client* client, const FfiTypeRegistration& registration) {
  return client->RegisterFfiType(registration);
}

// "FFI handler 'name' (platform 'p')" / "FFI type 'name' (id n)", for messages.
std::string Describe(const FfiHandlerRegistration& registration) {
  return "FFI handler '" + registration.target_name + "' (platform '" +
         registration.platform_name + "')";
}
std::string Describe(const FfiTypeRegistration& registration) {
  return "FFI type '" + registration.type_name + "' (id " +
         std::to_string(registration.type_id) + ")";
}

// The name a refusal of `registration` is found by in compile errors.
const std::string& NameOf(const FfiHandlerRegistration& registration) {
  return registration.target_name;
}
const std::string& NameOf(const FfiTypeRegistration& registration) {
  return registration.type_name;
}

// `status` with `context` in front of its message.
Status WithContext(const Status& status, const std::string& context) {
  return Status(status.code(), context + ": " + status.message());
}

}  // namespace

FfiRegistry& FfiRegistry::Global() {
  static FfiRegistry* const registry = new FfiRegistry();  // Never destroyed: see the header.
  return *registry;
}

template <typename Registration>
Status FfiRegistry::ForwardLocked(const Registration& registration, bool* keep) {
  Status first_error;
  bool any_accepted = clients_.empty();
  for (Client* client : clients_) {
    Status status = SendTo(client, registration);
    if (status.ok()) {
      any_accepted = true;
      continue;
    }
    // UNIMPLEMENTED too: the registration did not reach this client.
    Status refusal = WithContext(status, "registering " + Describe(registration) + " with " +
                                             client->platform_name() + " client");
    if (first_error.ok()) first_error = refusal;
    RecordLocked(client, NameOf(registration), std::move(refusal));
  }
  *keep = any_accepted;
  return first_error;
}

void FfiRegistry::RecordLocked(const Client* client, const std::string& name, Status status) {
  if (refusals_.size() < kMaxRefusals) refusals_.push_back(Refusal{client, name, std::move(status)});
}

Status FfiRegistry::AddHandler(const FfiHandlerRegistration& registration) {
  if (registration.target_name.empty()) return InvalidArgument("FFI target name is empty");
  if (registration.handler == nullptr) {
    return InvalidArgument("FFI handler for '" + registration.target_name + "' is null");
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const FfiHandlerRegistration& known : handlers_) {
    if (known.target_name != registration.target_name ||
        known.platform_name != registration.platform_name) {
      continue;
    }
    if (known.handler == registration.handler && known.traits == registration.traits) {
      return OkStatus();
    }
    return Status(StatusCode::kAlreadyExists,
                  Describe(registration) + " is already registered with a different handler");
  }
  bool keep = false;
  Status status = ForwardLocked(registration, &keep);
  if (keep) handlers_.push_back(registration);
  return status;
}

StatusOr<int64_t> FfiRegistry::AddType(FfiTypeRegistration registration) {
  if (registration.type_name.empty()) return InvalidArgument("FFI type name is empty");
  if (registration.type_id < 0) {
    return InvalidArgument("FFI type '" + registration.type_name + "': negative type id " +
                           std::to_string(registration.type_id));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto same_name = std::find_if(types_.begin(), types_.end(), [&](const FfiTypeRegistration& t) {
    return t.type_name == registration.type_name;
  });
  if (same_name != types_.end()) {
    if (registration.type_id == 0 || registration.type_id == same_name->type_id) {
      return same_name->type_id;
    }
    return InvalidArgument(Describe(*same_name) + " is already registered; cannot register it " +
                           "with id " + std::to_string(registration.type_id));
  }
  auto id_in_use = [&](int64_t id) {
    return std::any_of(types_.begin(), types_.end(),
                       [&](const FfiTypeRegistration& t) { return t.type_id == id; });
  };
  if (registration.type_id == 0) {
    while (id_in_use(next_type_id_)) ++next_type_id_;
    registration.type_id = next_type_id_++;
  } else if (id_in_use(registration.type_id)) {
    return InvalidArgument("FFI type '" + registration.type_name + "': id " +
                           std::to_string(registration.type_id) +
                           " is already used by another type");
  }
  bool keep = false;
  Status status = ForwardLocked(registration, &keep);
  if (keep) types_.push_back(registration);
  if (!status.ok()) return status;
  return registration.type_id;
}

Status FfiRegistry::Attach(Client* client) {
  if (client == nullptr) return InvalidArgument("FfiRegistry::Attach: null client");
  std::lock_guard<std::mutex> lock(mu_);
  auto replay = [&](const auto& registration) {
    Status status = SendTo(client, registration);
    if (status.ok()) return;
    // UNIMPLEMENTED too: the registration did not reach this client. Nobody called us for this
    // registration now, so say it where the user looks (the registration call returned OK).
    Status refusal = WithContext(status, "replaying " + Describe(registration) + " to " +
                                             client->platform_name() + " client");
    std::fprintf(stderr, "pjrtkit: warning: %s; programs calling '%s' will not compile\n",
                 refusal.ToString().c_str(), NameOf(registration).c_str());
    RecordLocked(client, NameOf(registration), std::move(refusal));
  };
  for (const FfiTypeRegistration& type : types_) replay(type);
  for (const FfiHandlerRegistration& handler : handlers_) replay(handler);
  if (std::find(clients_.begin(), clients_.end(), client) == clients_.end()) {
    clients_.push_back(client);
  }
  return OkStatus();
}

void FfiRegistry::Detach(Client* client) {
  std::lock_guard<std::mutex> lock(mu_);
  clients_.erase(std::remove(clients_.begin(), clients_.end(), client), clients_.end());
  refusals_.erase(std::remove_if(refusals_.begin(), refusals_.end(),
                                 [&](const Refusal& r) { return r.client == client; }),
                  refusals_.end());
}

void FfiRegistry::ForEachAttached(const std::function<void(Client*)>& fn) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (Client* client : clients_) fn(client);
}

Status FfiRegistry::ExplainCompileError(const Client* client, const Status& error) const {
  if (error.ok()) return error;
  std::string message = error.message();
  std::lock_guard<std::mutex> lock(mu_);
  for (const Refusal& refusal : refusals_) {
    if (refusal.client != client || refusal.name.empty()) continue;
    if (error.message().find(refusal.name) == std::string::npos) continue;
    message += "; '" + refusal.name + "' was refused when registered: " + refusal.status.ToString();
  }
  return Status(error.code(), std::move(message));
}

std::vector<FfiHandlerRegistration> FfiRegistry::handlers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return handlers_;
}

std::vector<FfiTypeRegistration> FfiRegistry::types() const {
  std::lock_guard<std::mutex> lock(mu_);
  return types_;
}

std::vector<Status> FfiRegistry::refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Status> statuses;
  for (const Refusal& refusal : refusals_) statuses.push_back(refusal.status);
  return statuses;
}

}  // namespace capi
}  // namespace pjrtkit
