// MakePjrtApi(): the complete PJRT_Api table over the client layer, given the entry points that
// depend on the Factory (api.h builds those), and the head of pjrtkit's extension chain.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_MAKE_API_H_
#define PJRTKIT_XLA_PLUGIN_C_API_MAKE_API_H_

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {

// The slots that depend on the Factory, plus the head of the extension chain.
struct FactoryEntryPoints {
  PJRT_Plugin_Initialize* plugin_initialize = nullptr;         // PJRT_Plugin_Initialize.
  PJRT_Plugin_Attributes* plugin_attributes = nullptr;         // PJRT_Plugin_Attributes.
  PJRT_Client_Create* client_create = nullptr;                 // PJRT_Client_Create.
  PJRT_TopologyDescription_Create* topology_create = nullptr;  // TopologyDescription_Create.
  // First PJRT_Extension_Base of the chain PJRT_Api.extension_start points to. Extensions are
  // statics linked through `next` (see ExtensionChain()).
  PJRT_Extension_Base* extension_start = nullptr;
};

// Builds the complete table: every slot non-NULL (unsupported ones return UNIMPLEMENTED), the
// version set to the PJRT_API_MAJOR / PJRT_API_MINOR this was compiled with.
PJRT_Api MakePjrtApi(const FactoryEntryPoints& entry_points);

// The head of pjrtkit's extension chain: the FFI extension (ffi_extension.h), the Layouts
// extension (layouts_extension.h), pjrtkit's own (executable_binding.h), then those of `inner`
// (null: none) that pjrtkit forwards (forwarding/extensions.h). Built once: later calls return
// the first chain.
PJRT_Extension_Base* ExtensionChain(const PJRT_Api* inner);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_MAKE_API_H_
