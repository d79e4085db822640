// FfiRegistry: the one process-wide record of the FFI handlers and types registered through
// pjrtkit's PJRT FFI extension, and of the live clients they are forwarded to.
//
// Why this state is process-wide: the PJRT FFI extension has no client argument (XLA's own FFI
// registry is process-wide too), and JAX registers its handlers once per process, usually before
// any PJRT_Client exists (jax_plugins.pjrtkit.initialize() runs before the backend is created).
// So every registration is kept here and
//   - forwarded at once to every attached (live) client, and
//   - replayed, in registration order (types first), to each client at PJRT_Client_Create.
// The attached clients are also the process's live clients for pjrtkit's own extension (the
// host buffer pool across clients). This class is the only mutable global of the C-API layer; FfiRegistry::Global() is its one
// instance. Thread-safe: one mutex serializes registrations and attach/detach, so no client can
// miss a registration.
//
// Errors from clients ("refusals"; UNIMPLEMENTED, a device without FFI support, is one too: the
// registration did not reach that client): a live client's refusal fails the registration, which
// is kept only when another live client accepted it. A replayed registration that a new client
// refuses does not fail PJRT_Client_Create (one bad registration must not take the whole platform
// down): the refusal is logged to stderr at once, recorded (refusals()), and named in the error of
// a compile on that client that fails mentioning the target (ExplainCompileError), instead of
// XLA's bare "No FFI handler registered for ...".
#ifndef PJRTKIT_XLA_PLUGIN_C_API_FFI_REGISTRY_H_
#define PJRTKIT_XLA_PLUGIN_C_API_FFI_REGISTRY_H_

// C++ standard library.
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

// pjrtkit.
#include "xla_plugin/client/client.h"
#include "xla_plugin/client/ffi_registration.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace capi {

class FfiRegistry {
 public:
  // The first type id this registry assigns. XLA assigns small ids from a counter starting at 1
  // and skips ids already in use, so ids from here on do not collide with XLA's own.
  static constexpr int64_t kFirstTypeId = int64_t{1} << 44;

  // The process-wide instance (created on first use, never destroyed).
  static FfiRegistry& Global();

  // An empty registry (tests use private instances; the plugin uses Global()).
  FfiRegistry() = default;
  FfiRegistry(const FfiRegistry&) = delete;
  FfiRegistry& operator=(const FfiRegistry&) = delete;

  // Keeps `registration` and forwards it to the attached clients. Registering the same handler
  // for the same (target, platform) again is a no-op; a different handler is ALREADY_EXISTS. A
  // client's refusal is returned; the registration is still kept (and the refusal recorded)
  // when another attached client accepted it, and dropped only when every one refused it.
  Status AddHandler(const FfiHandlerRegistration& registration);

  // Keeps `registration` and forwards it to the attached clients; returns its type id. A zero
  // `type_id` asks for one: the id already registered under the name, or a new one (from
  // kFirstTypeId up). A nonzero id must match the name's existing id and not be used by another
  // name (INVALID_ARGUMENT otherwise).
  StatusOr<int64_t> AddType(FfiTypeRegistration registration);

  // Replays every registration to `client` and attaches it, so later registrations reach it too.
  // Registrations the client refuses are recorded in refusals(); only a null client is an error.
  Status Attach(Client* client);

  // Stops forwarding to `client` (call before destroying it). Unknown clients are ignored.
  void Detach(Client* client);
  // Calls `fn` on every attached client, with the registry locked (so none is detached, and so
  // destroyed, meanwhile; `fn` must not call back into the registry). pjrtkit's extension uses it
  // to reach every live client's host buffer pool (abi::HostBufferPoolArgs with no client).
  void ForEachAttached(const std::function<void(Client*)>& fn) const;

  // `error` (a failed compile on `client`) with every refusal by `client` of a registration
  // whose name its message mentions appended, so "No FFI handler registered for x" says why x is
  // missing; `error` itself when there is none (or it is OK).
  Status ExplainCompileError(const Client* client, const Status& error) const;

  // Copies of what is registered, in registration order (for tests and diagnostics).
  std::vector<FfiHandlerRegistration> handlers() const;
  std::vector<FfiTypeRegistration> types() const;
  // The refusals of attached clients (at Attach or when forwarded), oldest first (at most
  // kMaxRefusals; a client's go when it is detached).
  std::vector<Status> refusals() const;

  // How many refusals are kept.
  static constexpr size_t kMaxRefusals = 64;

 private:
  // Sends `registration` to every attached client (mu_ held) and returns the first error that
  // is not UNIMPLEMENTED. `*keep` says whether to keep it for replay: true unless every attached
  // client refused it (when some accepted it, they and XLA's registries hold it, so it is kept
  // and the other refusals are recorded like replay refusals).
  template <typename Registration>
  Status ForwardLocked(const Registration& registration, bool* keep);

  // A registration a client refused.
  struct Refusal {
    const Client* client;  // The client that refused it (attached).
    std::string name;      // The handler's target name or the type's name.
    Status status;         // Why, with context.
  };

  // Records a refusal (mu_ held; dropped beyond kMaxRefusals).
  void RecordLocked(const Client* client, const std::string& name, Status status);

  mutable std::mutex mu_;                         // Guards everything below.
  std::vector<FfiHandlerRegistration> handlers_;  // In registration order.
  std::vector<FfiTypeRegistration> types_;        // In registration order; ids nonzero.
  std::vector<Client*> clients_;                  // Attached, not owned.
  std::vector<Refusal> refusals_;                 // At most kMaxRefusals.
  int64_t next_type_id_ = kFirstTypeId;           // Next id AddType assigns.
};

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_FFI_REGISTRY_H_
