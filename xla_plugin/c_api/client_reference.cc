#include "xla_plugin/c_api/client_reference.h"

// C++ standard library.
#include <atomic>

// pjrtkit.
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {

ClientReference::~ClientReference() { Reset(nullptr); }

void ClientReference::Reset(PJRT_Client* client) {
  if (client != nullptr) client->references.fetch_add(1, std::memory_order_relaxed);
  PJRT_Client* previous = client_;
  client_ = client;
  Release(previous);
}

void ClientReference::Release(PJRT_Client* client) {
  if (client == nullptr) return;
  if (client->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete client;
}

}  // namespace capi
}  // namespace pjrtkit
