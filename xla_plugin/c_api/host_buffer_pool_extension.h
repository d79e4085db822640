// The host buffer pool entry of pjrtkit's own PJRT extension (ABI in
// xla_plugin/abi/pjrtkit_extension.h): a client's (or every live client's) pool statistics, and
// its trim.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_HOST_BUFFER_POOL_EXTENSION_H_
#define PJRTKIT_XLA_PLUGIN_C_API_HOST_BUFFER_POOL_EXTENSION_H_

// PJRT C API and pjrtkit's extension ABI.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/abi/pjrtkit_extension.h"

namespace pjrtkit {
namespace capi {

// PjrtkitExtension::host_buffer_pool: with args->trim, frees the kept blocks of args->client (or,
// when it is null, of every client FfiRegistry::Global() has attached, i.e. every client not yet
// destroyed by the framework), then reports the sums of Client::host_buffer_pool_stats().
PJRT_Error* HostBufferPool(abi::HostBufferPoolArgs* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_HOST_BUFFER_POOL_EXTENSION_H_
