// pjrtkit's PJRT Layouts extension (PJRT_Extension_Type_Layouts; ABI in
// xla_plugin/abi/layouts_extension.h), served from the client layer for any device:
//
//   memory_layout_destroy          frees a layout the caller got (not an executable's own).
//   memory_layout_serialize        xla::Layout text (client/layout_codec.h), which jaxlib parses
//                                  with xla::PjRtLayout::Deserialize.
//   client_get_default_layout      Client::DefaultLayout(type, dims, /*memory=*/nullptr).
//   buffer_memory_layout           Buffer::layout(); "{}" for a token.
//   topology_get_default_layout    Topology::DefaultLayout(type, dims).
//   executable_get_output_layouts  Executable::output_layouts(), cached on the PJRT_Executable.
//
// Why it matters: jaxlib treats every buffer of a plugin without this extension as dense
// row-major. NumPy's zero-copy view of a CPU buffer (np.asarray, memoryview, DLPack) is then
// built with row-major strides over whatever the device laid out, so a column-major buffer (a
// device_put or jit output with a Format) read back transposed. With it, jaxlib asks each buffer.
// Every layout a device returns is checked (CheckMemoryLayout against the array's rank) before it
// is handed out: jaxlib aborts on output layouts it cannot parse, and this way a device bug is an
// INTERNAL error naming the entry point instead.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_LAYOUTS_EXTENSION_H_
#define PJRTKIT_XLA_PLUGIN_C_API_LAYOUTS_EXTENSION_H_

// PJRT C API and the Layouts extension ABI.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/abi/layouts_extension.h"

namespace pjrtkit {
namespace capi {

// The seven entry points of the extension (version 4), in the struct's order.
PJRT_Error* LayoutsMemoryLayoutDestroy(abi::LayoutsMemoryLayoutDestroyArgs* args);
PJRT_Error* LayoutsMemoryLayoutSerialize(abi::LayoutsMemoryLayoutSerializeArgs* args);
PJRT_Error* LayoutsClientGetDefaultLayout(abi::LayoutsClientGetDefaultLayoutArgs* args);
PJRT_Error* LayoutsBufferMemoryLayout(abi::LayoutsBufferMemoryLayoutArgs* args);
PJRT_Error* LayoutsTopologyGetDefaultLayout(abi::LayoutsTopologyGetDefaultLayoutArgs* args);
PJRT_Error* LayoutsExecutableGetOutputLayouts(abi::LayoutsExecutableGetOutputLayoutsArgs* args);
// The executable's parameter layouts (Executable::parameter_layouts), owned by the
// PJRT_Executable like its output layouts.
PJRT_Error* LayoutsExecutableGetParameterLayouts(
    abi::LayoutsExecutableGetParameterLayoutsArgs* args);

// The extension struct (a function-local static, built on first call with `next` as the next
// extension of the chain). Returns its PJRT_Extension_Base, ready to link into the chain.
PJRT_Extension_Base* LayoutsExtensionBase(PJRT_Extension_Base* next);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_LAYOUTS_EXTENSION_H_
