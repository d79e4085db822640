// The PJRT Layouts extension (PJRT_Extension_Type_Layouts), declared by pjrtkit.
//
// OpenXLA defines this extension in xla/pjrt/c/pjrt_c_api_layouts_extension.h. These are our own
// declarations of the same C ABI (names in pjrtkit's style), at the extension's current version
// (PJRT_API_LAYOUTS_EXTENSION_VERSION 4: seven entry points, 80 bytes). An inner plugin of PJRT C
// API 0.81 (XLA:CPU 0.0.1) has the first six (72 bytes): kLayoutsExtensionSize081, and
// GetParameterLayouts is read only from a larger struct. Every size is static_assert'ed against
// OpenXLA's header below, and the reference device's tests check them against the real XLA:CPU
// plugin's extension.
//
// What a framework does with it (jaxlib's PjRtCApiClient, checked against 0.11.2 and 0.12.0.1):
// with the extension present it asks each buffer for its layout (PJRT_Buffer -> MemoryLayout ->
// Serialize -> xla::PjRtLayout::Deserialize) and builds NumPy's zero-copy view with the strides of
// that layout; without it every buffer is taken to be dense row-major. Serialized bytes are
// xla::Layout::ToString() text ("{1,0}", "{0,1:T(2,128)}", "{0:E(4)}"), parsed with XLA's HLO
// layout parser; jaxlib CHECK-fails (aborts) on bytes it cannot parse for an executable's output
// layouts. Output layouts are owned by the executable (the caller never destroys them); every
// other MemoryLayout is the caller's and freed with MemoryLayout_Destroy.
//
// Layout (x86-64 / aarch64 LP64):
//   LayoutsExtension                 base (24) | 7 function pointers                       = 80
//   LayoutsMemoryLayoutDestroyArgs   struct_size | extension_start | layout                = 24
//   LayoutsMemoryLayoutSerializeArgs struct_size | extension_start | layout |
//                                    serialized_bytes | serialized_bytes_size |
//                                    serialized_layout | serialized_layout_deleter         = 56
//   LayoutsClientGetDefaultLayoutArgs struct_size | extension_start | client | type (enum,
//                                    padded to 8) | dims | num_dims | layout               = 56
//   LayoutsBufferMemoryLayoutArgs    struct_size | extension_start | buffer | layout       = 32
//   LayoutsTopologyGetDefaultLayoutArgs as the client's, with topology_description         = 56
//   LayoutsExecutableGetOutputLayoutsArgs struct_size | extension_start | executable |
//                                    num_outputs | layouts                                 = 40
//   LayoutsExecutableGetParameterLayoutsArgs as the output one, with num_parameters        = 40
#ifndef PJRTKIT_XLA_PLUGIN_ABI_LAYOUTS_EXTENSION_H_
#define PJRTKIT_XLA_PLUGIN_ABI_LAYOUTS_EXTENSION_H_

// C and C++ standard library.
#include <cstddef>
#include <cstdint>

// PJRT C API (PJRT_Extension_Base, PJRT_Error, handles, PJRT_Buffer_Type), and OpenXLA's
// declaration of this extension, which the sizes below are checked against.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla/pjrt/c/pjrt_c_api_layouts_extension.h"

// Opaque handles of the extension; the plugin that serves it defines them (XLA:
// PJRT_Layouts_MemoryLayout, PJRT_Layouts_SerializedLayout, global C names as in XLA's header).
extern "C" {
typedef struct PJRT_Layouts_MemoryLayout PJRT_Layouts_MemoryLayout;
typedef struct PJRT_Layouts_SerializedLayout PJRT_Layouts_SerializedLayout;
}

namespace pjrtkit {
namespace abi {

// Arguments of LayoutsExtension::memory_layout_destroy (XLA:
// PJRT_Layouts_MemoryLayout_Destroy_Args).
struct LayoutsMemoryLayoutDestroyArgs {
  size_t struct_size;                    // kLayoutsMemoryLayoutDestroyArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  PJRT_Layouts_MemoryLayout* layout;     // The layout to free; may be null.
};

// Arguments of LayoutsExtension::memory_layout_serialize (XLA:
// PJRT_Layouts_MemoryLayout_Serialize_Args).
struct LayoutsMemoryLayoutSerializeArgs {
  size_t struct_size;                    // kLayoutsMemoryLayoutSerializeArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  PJRT_Layouts_MemoryLayout* layout;     // The layout to serialize.
  const char* serialized_bytes;          // Out: valid until the deleter runs.
  size_t serialized_bytes_size;          // Out.
  PJRT_Layouts_SerializedLayout* serialized_layout;  // Out: backs serialized_bytes.
  // Out: the caller calls it once on serialized_layout to free the bytes.
  void (*serialized_layout_deleter)(PJRT_Layouts_SerializedLayout* serialized_layout);
};

// Arguments of LayoutsExtension::client_get_default_layout (XLA:
// PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args).
struct LayoutsClientGetDefaultLayoutArgs {
  size_t struct_size;                    // kLayoutsClientGetDefaultLayoutArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  PJRT_Client* client;                   // The client.
  PJRT_Buffer_Type type;                 // Element type.
  const int64_t* dims;                   // num_dims dimensions; may be null when num_dims is 0.
  size_t num_dims;                       // Rank.
  PJRT_Layouts_MemoryLayout* layout;     // Out: the caller frees it with memory_layout_destroy.
};

// Arguments of LayoutsExtension::buffer_memory_layout (XLA:
// PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args).
struct LayoutsBufferMemoryLayoutArgs {
  size_t struct_size;                    // kLayoutsBufferMemoryLayoutArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  PJRT_Buffer* buffer;                   // The buffer.
  PJRT_Layouts_MemoryLayout* layout;     // Out: the caller frees it with memory_layout_destroy.
};

// Arguments of LayoutsExtension::topology_get_default_layout (XLA:
// PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args).
struct LayoutsTopologyGetDefaultLayoutArgs {
  size_t struct_size;                    // kLayoutsTopologyGetDefaultLayoutArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  PJRT_TopologyDescription* topology_description;  // The topology.
  PJRT_Buffer_Type type;                 // Element type.
  const int64_t* dims;                   // num_dims dimensions; may be null when num_dims is 0.
  size_t num_dims;                       // Rank.
  PJRT_Layouts_MemoryLayout* layout;     // Out: the caller frees it with memory_layout_destroy.
};

// Arguments of LayoutsExtension::executable_get_output_layouts (XLA:
// PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args).
struct LayoutsExecutableGetOutputLayoutsArgs {
  size_t struct_size;                    // kLayoutsExecutableGetOutputLayoutsArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  PJRT_Executable* executable;           // The executable.
  size_t num_outputs;                    // Out.
  PJRT_Layouts_MemoryLayout** layouts;   // Out: num_outputs layouts owned by the executable.
};

// Arguments of LayoutsExtension::executable_get_parameter_layouts (XLA:
// PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args).
struct LayoutsExecutableGetParameterLayoutsArgs {
  size_t struct_size;                    // kLayoutsExecutableGetParameterLayoutsArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  PJRT_Executable* executable;           // The executable.
  size_t num_parameters;                 // Out.
  PJRT_Layouts_MemoryLayout** layouts;   // Out: num_parameters layouts owned by the executable.
};

// Entry points of the extension; each returns nullptr or an error of the plugin that serves it.
using LayoutsMemoryLayoutDestroyFn = PJRT_Error* (*)(LayoutsMemoryLayoutDestroyArgs* args);
using LayoutsMemoryLayoutSerializeFn = PJRT_Error* (*)(LayoutsMemoryLayoutSerializeArgs* args);
using LayoutsClientGetDefaultLayoutFn = PJRT_Error* (*)(LayoutsClientGetDefaultLayoutArgs* args);
using LayoutsBufferMemoryLayoutFn = PJRT_Error* (*)(LayoutsBufferMemoryLayoutArgs* args);
using LayoutsTopologyGetDefaultLayoutFn =
    PJRT_Error* (*)(LayoutsTopologyGetDefaultLayoutArgs* args);
using LayoutsExecutableGetOutputLayoutsFn =
    PJRT_Error* (*)(LayoutsExecutableGetOutputLayoutsArgs* args);
using LayoutsExecutableGetParameterLayoutsFn =
    PJRT_Error* (*)(LayoutsExecutableGetParameterLayoutsArgs* args);

// The extension struct found in a PJRT_Api's extension chain with type
// PJRT_Extension_Type_Layouts (XLA: PJRT_Layouts_Extension), in XLA's field order.
struct LayoutsExtension {
  PJRT_Extension_Base base;                                    // type == _Layouts.
  LayoutsMemoryLayoutDestroyFn memory_layout_destroy;          // Frees a MemoryLayout.
  LayoutsMemoryLayoutSerializeFn memory_layout_serialize;      // Layout -> xla::Layout text.
  LayoutsClientGetDefaultLayoutFn client_get_default_layout;   // Default layout of a client.
  LayoutsBufferMemoryLayoutFn buffer_memory_layout;            // A buffer's layout.
  LayoutsTopologyGetDefaultLayoutFn topology_get_default_layout;  // Default of a topology.
  LayoutsExecutableGetOutputLayoutsFn executable_get_output_layouts;  // Output layouts.
  // Parameter layouts (version 2, PJRT C API 0.93; absent from a 72-byte struct).
  LayoutsExecutableGetParameterLayoutsFn executable_get_parameter_layouts;
};

// The struct sizes of PJRT C API 0.81 (offset of the last field + its size, as XLA computes them).
inline constexpr size_t kLayoutsMemoryLayoutDestroyArgsSize =
    offsetof(LayoutsMemoryLayoutDestroyArgs, layout) +
    sizeof(LayoutsMemoryLayoutDestroyArgs::layout);
inline constexpr size_t kLayoutsMemoryLayoutSerializeArgsSize =
    offsetof(LayoutsMemoryLayoutSerializeArgs, serialized_layout_deleter) +
    sizeof(LayoutsMemoryLayoutSerializeArgs::serialized_layout_deleter);
inline constexpr size_t kLayoutsClientGetDefaultLayoutArgsSize =
    offsetof(LayoutsClientGetDefaultLayoutArgs, layout) +
    sizeof(LayoutsClientGetDefaultLayoutArgs::layout);
inline constexpr size_t kLayoutsBufferMemoryLayoutArgsSize =
    offsetof(LayoutsBufferMemoryLayoutArgs, layout) + sizeof(LayoutsBufferMemoryLayoutArgs::layout);
inline constexpr size_t kLayoutsTopologyGetDefaultLayoutArgsSize =
    offsetof(LayoutsTopologyGetDefaultLayoutArgs, layout) +
    sizeof(LayoutsTopologyGetDefaultLayoutArgs::layout);
inline constexpr size_t kLayoutsExecutableGetOutputLayoutsArgsSize =
    offsetof(LayoutsExecutableGetOutputLayoutsArgs, layouts) +
    sizeof(LayoutsExecutableGetOutputLayoutsArgs::layouts);
inline constexpr size_t kLayoutsExecutableGetParameterLayoutsArgsSize =
    offsetof(LayoutsExecutableGetParameterLayoutsArgs, layouts) +
    sizeof(LayoutsExecutableGetParameterLayoutsArgs::layouts);
// The whole struct as pjrtkit serves it, and as PJRT C API 0.81 plugins have it (without
// executable_get_parameter_layouts).
inline constexpr size_t kLayoutsExtensionSize =
    offsetof(LayoutsExtension, executable_get_parameter_layouts) +
    sizeof(LayoutsExtension::executable_get_parameter_layouts);
inline constexpr size_t kLayoutsExtensionSize081 =
    offsetof(LayoutsExtension, executable_get_output_layouts) +
    sizeof(LayoutsExtension::executable_get_output_layouts);

#if defined(__LP64__)
static_assert(kLayoutsMemoryLayoutDestroyArgsSize == 24, "Destroy_Args is 24 bytes");
static_assert(kLayoutsMemoryLayoutSerializeArgsSize == 56, "Serialize_Args is 56 bytes");
static_assert(kLayoutsClientGetDefaultLayoutArgsSize == 56, "Client_GetDefaultLayout is 56");
static_assert(kLayoutsBufferMemoryLayoutArgsSize == 32, "Buffer_MemoryLayout_Args is 32 bytes");
static_assert(kLayoutsTopologyGetDefaultLayoutArgsSize == 56, "Topology_GetDefaultLayout is 56");
static_assert(kLayoutsExecutableGetOutputLayoutsArgsSize == 40, "GetOutputLayouts_Args is 40");
static_assert(kLayoutsExecutableGetParameterLayoutsArgsSize == 40, "GetParameterLayouts is 40");
static_assert(kLayoutsExtensionSize == 80, "PJRT_Layouts_Extension is 80 bytes at version 4");
static_assert(kLayoutsExtensionSize081 == 72, "PJRT_Layouts_Extension is 72 bytes at 0.81");
#endif

// The same sizes as OpenXLA's header.
static_assert(kLayoutsMemoryLayoutDestroyArgsSize ==
              PJRT_Layouts_MemoryLayout_Destroy_Args_STRUCT_SIZE, "Destroy_Args");
static_assert(kLayoutsMemoryLayoutSerializeArgsSize ==
              PJRT_Layouts_MemoryLayout_Serialize_Args_STRUCT_SIZE, "Serialize_Args");
static_assert(kLayoutsClientGetDefaultLayoutArgsSize ==
              PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args_STRUCT_SIZE, "Client_GetDefault");
static_assert(kLayoutsBufferMemoryLayoutArgsSize ==
              PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args_STRUCT_SIZE, "Buffer_MemoryLayout");
static_assert(kLayoutsTopologyGetDefaultLayoutArgsSize ==
              PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args_STRUCT_SIZE, "Topology_Default");
static_assert(kLayoutsExecutableGetOutputLayoutsArgsSize ==
              PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args_STRUCT_SIZE, "GetOutputLayouts");
static_assert(kLayoutsExecutableGetParameterLayoutsArgsSize ==
              PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args_STRUCT_SIZE,
              "GetParameterLayouts");
static_assert(kLayoutsExtensionSize == PJRT_Layouts_Extension_STRUCT_SIZE, "the extension");
static_assert(offsetof(LayoutsExtension, executable_get_parameter_layouts) ==
                  offsetof(PJRT_Layouts_Extension,
                           PJRT_Layouts_PJRT_Executable_GetParameterLayouts),
              "GetParameterLayouts is the seventh entry");

}  // namespace abi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_ABI_LAYOUTS_EXTENSION_H_
