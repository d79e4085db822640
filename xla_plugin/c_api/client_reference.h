// A counted reference to a PJRT_Client, held by every handle that needs its client after the
// framework may have called PJRT_Client_Destroy (buffers, loaded executables, transfer managers).
#ifndef PJRTKIT_XLA_PLUGIN_C_API_CLIENT_REFERENCE_H_
#define PJRTKIT_XLA_PLUGIN_C_API_CLIENT_REFERENCE_H_

// PJRT C API (PJRT_Client is opaque there and defined in handles.h).
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {

// PJRT_Client_Destroy drops the framework's reference; the client (its pjrtkit::Client, the inner
// plugin's client and every device/memory wrapper) is deleted when the last reference goes, so
// buffers and executables destroyed after their client find it alive, as with OpenXLA's plugins.
// Declare it as the first member of a handle: members are destroyed in reverse order, so the
// handle's device objects go before the client they belong to.
class ClientReference {
 public:
  ClientReference() = default;
  ClientReference(const ClientReference&) = delete;
  ClientReference& operator=(const ClientReference&) = delete;
  // Drops the reference held, if any.
  ~ClientReference();

  // Holds a reference to `client` (nullptr: none), dropping the one held before.
  void Reset(PJRT_Client* client);

  // Drops one reference to `client` (the framework's, from PJRT_Client_Destroy); deletes the
  // client when it was the last.
  static void Release(PJRT_Client* client);

 private:
  PJRT_Client* client_ = nullptr;  // Referenced client, or nullptr.
};

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_CLIENT_REFERENCE_H_
