#include "xla_plugin/c_api/host_buffer_pool_extension.h"

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/ffi_registry.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/client/client.h"

namespace pjrtkit {
namespace capi {
namespace {

// Trims `client`'s pool when asked, then adds its counts to `args`.
void Visit(Client* client, abi::HostBufferPoolArgs* args) {
  if (args->trim != 0) args->trimmed_bytes += client->TrimHostBufferPool();
  const HostBufferPoolStats stats = client->host_buffer_pool_stats();
  args->held_bytes += stats.held_bytes;
  args->held_blocks += static_cast<size_t>(stats.held_blocks);
  args->in_use_bytes += stats.in_use_bytes;
  args->in_use_blocks += static_cast<size_t>(stats.in_use_blocks);
  args->limit_bytes += stats.limit_bytes;
  ++args->clients;
}

}  // namespace

PJRT_Error* HostBufferPool(abi::HostBufferPoolArgs* args) {
  return Guard("PJRT_Pjrtkit_HostBufferPool", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, abi::kHostBufferPoolArgsSize));
    args->trimmed_bytes = 0;
    args->held_bytes = 0;
    args->held_blocks = 0;
    args->in_use_bytes = 0;
    args->in_use_blocks = 0;
    args->limit_bytes = 0;
    args->clients = 0;
    if (args->client != nullptr) {
      if (args->client->client == nullptr) {
        return InvalidArgument(std::string(fn) + ": args->client is not a live PJRT_Client");
      }
      Visit(args->client->client.get(), args);
      return OkStatus();
    }
    FfiRegistry::Global().ForEachAttached([args](Client* client) { Visit(client, args); });
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
