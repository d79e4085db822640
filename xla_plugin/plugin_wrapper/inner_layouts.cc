#include "xla_plugin/plugin_wrapper/inner_layouts.h"

// C++ standard library.
#include <string>
#include <utility>

// pjrtkit.
#include "xla_plugin/client/layout_codec.h"
#include "xla_plugin/client/shape_checks.h"

namespace pjrtkit {
namespace plugin_wrapper {

StatusOr<InnerLayouts> InnerLayouts::Find(std::shared_ptr<const InnerApi> inner) {
  for (const PJRT_Extension_Base* ext = inner->api()->extension_start; ext != nullptr;
       ext = ext->next) {
    if (ext->type != PJRT_Extension_Type_Layouts) continue;
    if (ext->struct_size < abi::kLayoutsExtensionSize081) {
      return Unimplemented("the " + inner->name() + " plugin at " + inner->path() +
                           " has a Layouts extension of " + std::to_string(ext->struct_size) +
                           " bytes; pjrtkit needs PJRT C API 0.81's (" +
                           std::to_string(abi::kLayoutsExtensionSize081) + " bytes) or newer");
    }
    return InnerLayouts(std::move(inner), reinterpret_cast<const abi::LayoutsExtension*>(ext));
  }
  return Unimplemented("the " + inner->name() + " plugin at " + inner->path() +
                       " has no PJRT Layouts extension (PJRT C API " + inner->ApiVersionString() +
                       ")");
}

StatusOr<MemoryLayout> InnerLayouts::Decode(PJRT_Layouts_MemoryLayout* layout, bool owned) const {
  if (layout == nullptr) {
    return Internal(inner_->name() + " returned a null PJRT_Layouts_MemoryLayout");
  }
  abi::LayoutsMemoryLayoutSerializeArgs args{};
  args.struct_size = abi::kLayoutsMemoryLayoutSerializeArgsSize;
  args.layout = layout;
  Status serialized =
      inner_->ToStatus(extension_->memory_layout_serialize(&args),
                       "PJRT_Layouts_MemoryLayout_Serialize");
  StatusOr<MemoryLayout> decoded = serialized;
  if (serialized.ok()) {
    decoded = DecodeXlaLayout(std::string(args.serialized_bytes, args.serialized_bytes_size));
    if (args.serialized_layout_deleter != nullptr) {
      args.serialized_layout_deleter(args.serialized_layout);
    }
  }
  if (owned) {
    abi::LayoutsMemoryLayoutDestroyArgs destroy{};
    destroy.struct_size = abi::kLayoutsMemoryLayoutDestroyArgsSize;
    destroy.layout = layout;
    // Nothing can be done about an error here; the answer stands.
    (void)inner_->ToStatus(extension_->memory_layout_destroy(&destroy),
                           "PJRT_Layouts_MemoryLayout_Destroy");
  }
  return decoded;
}

StatusOr<MemoryLayout> InnerLayouts::DefaultLayout(PJRT_Client* client, ElementType type,
                                                   const std::vector<int64_t>& dims) const {
  if (type == ElementType::kToken || type == ElementType::kInvalid) {
    return InvalidArgument(std::string("DefaultLayout: ") + ElementTypeName(type) +
                           " arrays have no layout on " + inner_->name());
  }
  PJRTKIT_RETURN_IF_ERROR(CheckDimensions("DefaultLayout", "dims", dims));
  abi::LayoutsClientGetDefaultLayoutArgs args{};
  args.struct_size = abi::kLayoutsClientGetDefaultLayoutArgsSize;
  args.client = client;
  PJRTKIT_ASSIGN_OR_RETURN(args.type, inner_->ToInnerType(type));
  args.dims = dims.data();
  args.num_dims = dims.size();
  PJRTKIT_RETURN_IF_ERROR(inner_->ToStatus(extension_->client_get_default_layout(&args),
                                           "PJRT_Layouts_PJRT_Client_GetDefaultLayout"));
  return Decode(args.layout, /*owned=*/true);
}

StatusOr<MemoryLayout> InnerLayouts::BufferLayout(PJRT_Buffer* buffer) const {
  abi::LayoutsBufferMemoryLayoutArgs args{};
  args.struct_size = abi::kLayoutsBufferMemoryLayoutArgsSize;
  args.buffer = buffer;
  PJRTKIT_RETURN_IF_ERROR(inner_->ToStatus(extension_->buffer_memory_layout(&args),
                                           "PJRT_Layouts_PJRT_Buffer_MemoryLayout"));
  return Decode(args.layout, /*owned=*/true);
}

StatusOr<std::vector<MemoryLayout>> InnerLayouts::ParameterLayouts(
    PJRT_Executable* executable) const {
  if (extension_->base.struct_size < abi::kLayoutsExtensionSize) {
    return Unimplemented("PJRT_Layouts_PJRT_Executable_GetParameterLayouts is not in the Layouts "
                         "extension of the " + inner_->name() + " plugin (PJRT C API " +
                         inner_->ApiVersionString() + ")");
  }
  abi::LayoutsExecutableGetParameterLayoutsArgs args{};
  args.struct_size = abi::kLayoutsExecutableGetParameterLayoutsArgsSize;
  args.executable = executable;
  PJRTKIT_RETURN_IF_ERROR(inner_->ToStatus(extension_->executable_get_parameter_layouts(&args),
                                           "PJRT_Layouts_PJRT_Executable_GetParameterLayouts"));
  std::vector<MemoryLayout> layouts;
  for (size_t i = 0; i < args.num_parameters; ++i) {
    PJRTKIT_ASSIGN_OR_RETURN(MemoryLayout layout, Decode(args.layouts[i], /*owned=*/false));
    layouts.push_back(std::move(layout));
  }
  return layouts;
}

StatusOr<std::vector<MemoryLayout>> InnerLayouts::OutputLayouts(
    PJRT_Executable* executable) const {
  abi::LayoutsExecutableGetOutputLayoutsArgs args{};
  args.struct_size = abi::kLayoutsExecutableGetOutputLayoutsArgsSize;
  args.executable = executable;
  PJRTKIT_RETURN_IF_ERROR(inner_->ToStatus(extension_->executable_get_output_layouts(&args),
                                           "PJRT_Layouts_PJRT_Executable_GetOutputLayouts"));
  std::vector<MemoryLayout> layouts;
  for (size_t i = 0; i < args.num_outputs; ++i) {
    PJRTKIT_ASSIGN_OR_RETURN(MemoryLayout layout, Decode(args.layouts[i], /*owned=*/false));
    layouts.push_back(std::move(layout));
  }
  return layouts;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
