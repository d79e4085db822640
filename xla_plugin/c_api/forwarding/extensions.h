// The inner plugin's extensions pjrtkit forwards, one builder each (one .cc per extension). Each
// builder copies the inner extension struct into a function-local static of pjrtkit's, links it
// in front of `next`, replaces every entry point with one that translates pjrtkit's handles and
// errors (forwarding.h), and returns its base; it returns `next` unchanged when the inner plugin
// has no such extension. ForwardedChain (chain.cc) calls them all.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_FORWARDING_EXTENSIONS_H_
#define PJRTKIT_XLA_PLUGIN_C_API_FORWARDING_EXTENSIONS_H_

#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {

// PJRT_Extension_Type_Profiler: the inner plugin's profiler (no handles; the same struct).
PJRT_Extension_Base* ForwardProfiler(PJRT_Extension_Base* next);
// PJRT_Extension_Type_Custom_Partitioner: custom-call partitioners (no handles; errors translated).
PJRT_Extension_Base* ForwardCustomPartitioner(PJRT_Extension_Base* next);
// PJRT_Extension_Type_Gpu_Custom_Call: GPU custom-call targets (no handles; errors translated).
PJRT_Extension_Base* ForwardGpuCustomCall(PJRT_Extension_Base* next);
// PJRT_Extension_Type_Stream: a device's stream, waiting for a buffer on a stream.
PJRT_Extension_Base* ForwardStream(PJRT_Extension_Base* next);
// PJRT_Extension_Type_Shardings: an executable's parameter and output shardings.
PJRT_Extension_Base* ForwardShardings(PJRT_Extension_Base* next);
// PJRT_Extension_Type_MemoryDescriptions: the memories of a device description.
PJRT_Extension_Base* ForwardMemoryDescriptions(PJRT_Extension_Base* next);
// PJRT_Extension_Type_PhaseCompile: compiling in phases for a topology.
PJRT_Extension_Base* ForwardPhaseCompile(PJRT_Extension_Base* next);
// PJRT_Extension_Type_AbiVersion: runtime and executable ABI versions.
PJRT_Extension_Base* ForwardAbiVersion(PJRT_Extension_Base* next);
// PJRT_Extension_Type_Callback: client callbacks (prefatal, slice builder).
PJRT_Extension_Base* ForwardCallback(PJRT_Extension_Base* next);

// The chain of every forwarded extension the inner plugin has, in front of `next`.
PJRT_Extension_Base* ForwardedChain(PJRT_Extension_Base* next);

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_FORWARDING_EXTENSIONS_H_
