// ForwardedChain: every extension of the inner plugin that pjrtkit forwards, in one chain.
//
// Not forwarded (pjrtkit serves its own, over the client layer): FFI, Layouts. Left out, with
// the reason (docs/pjrt-c-api.md lists them): RawBuffer (hands out the raw device memory of
// buffers whose lifetime pjrtkit tracks: donation and external references would be bypassed),
// CrossHostTransfers and ExecutableMetadata (no published header to declare them from and
// check them against), HostAllocator / HostMemoryAllocator (host allocations pjrtkit's host
// buffer pool would not see), the TPU-only ones (TpuTopology, TpuExecutable, Megascale,
// MultiSlice), Collectives and XlaTransform (the inner plugin's compiler internals), Triton
// (deprecated by OpenXLA; no published header), Example and Unknown.
#include "xla_plugin/c_api/forwarding/extensions.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {

PJRT_Extension_Base* ForwardedChain(PJRT_Extension_Base* next) {
  // Built back to front: the chain reads in PJRT_Extension_Type order.
  next = ForwardCallback(next);
  next = ForwardAbiVersion(next);
  next = ForwardShardings(next);
  next = ForwardPhaseCompile(next);
  next = ForwardMemoryDescriptions(next);
  next = ForwardStream(next);
  next = ForwardCustomPartitioner(next);
  next = ForwardProfiler(next);
  next = ForwardGpuCustomCall(next);
  return next;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
