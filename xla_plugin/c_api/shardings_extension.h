// pjrtkit's PJRT Shardings extension (PJRT_Extension_Type_Shardings, version 1), served from the
// client layer (Executable::parameter_shardings / output_shardings) for devices whose executables
// are pjrtkit's own; a device over an inner plugin that has the extension forwards the inner one
// instead (forwarding/shardings.cc, chosen in make_api.cc).
//
// Why it matters: jaxlib asks a compiled multi-device program how its results are sharded when
// jax.jit left that to the compiler (a shard_map's out_specs, jit without out_shardings), and
// assembles the global arrays from the answer. A device that does not report them gets
// shardings=nullptr from here (as the header allows) and jaxlib falls back to what it asked for.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_SHARDINGS_EXTENSION_H_
#define PJRTKIT_XLA_PLUGIN_C_API_SHARDINGS_EXTENSION_H_

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla/pjrt/c/pjrt_c_api_shardings_extension.h"

namespace pjrtkit {
namespace capi {

// The executable's parameter shardings, owned by the PJRT_Executable.
PJRT_Error* ShardingsParameterShardings(
    PJRT_Shardings_PJRT_Executable_ParameterShardings_Args* args);
// The executable's output shardings, owned by the PJRT_Executable.
PJRT_Error* ShardingsOutputShardings(PJRT_Shardings_PJRT_Executable_OutputShardings_Args* args);

// The extension struct (a function-local static, built on first call with `next` as the next
// extension of the chain). Returns its PJRT_Extension_Base, ready to link into the chain.
PJRT_Extension_Base* ShardingsExtensionBase(PJRT_Extension_Base* next);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_SHARDINGS_EXTENSION_H_
