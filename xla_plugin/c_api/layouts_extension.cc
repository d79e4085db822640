#include "xla_plugin/c_api/layouts_extension.h"

// C++ standard library.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

// pjrtkit.
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/client/layout_codec.h"
#include "xla_plugin/client/shape_checks.h"

namespace pjrtkit {
namespace capi {
namespace {

// Frees what PJRT_Layouts_MemoryLayout_Serialize returned.
void DeleteSerializedLayout(PJRT_Layouts_SerializedLayout* serialized) { delete serialized; }

// The element type and dimensions of a default-layout query, checked: a known PJRT_Buffer_Type,
// `dims` non-null when `num_dims` > 0, every dimension >= 0.
struct ArrayQuery {
  ElementType type = ElementType::kInvalid;  // Element type.
  std::vector<int64_t> dims;                 // Dimensions.
};
StatusOr<ArrayQuery> ReadArrayQuery(const char* fn, PJRT_Buffer_Type type, const int64_t* dims,
                                    size_t num_dims) {
  ArrayQuery query;
  PJRTKIT_ASSIGN_OR_RETURN(query.type, FromPjrtBufferType(fn, type));
  if (dims == nullptr && num_dims > 0) {
    return InvalidArgument(std::string(fn) + ": args->dims is null but args->num_dims is " +
                           std::to_string(num_dims));
  }
  query.dims.assign(dims, dims + num_dims);
  PJRTKIT_RETURN_IF_ERROR(CheckDimensions(fn, "args->dims", query.dims));
  return query;
}

// A new caller-owned handle for `layout`, which the device returned for an array of `rank`
// dimensions; INTERNAL naming `fn` and `what` when the layout cannot describe such an array.
StatusOr<PJRT_Layouts_MemoryLayout*> NewLayout(const char* fn, const std::string& what,
                                               StatusOr<MemoryLayout> layout, size_t rank) {
  if (!layout.ok()) return layout.status();
  Status valid = CheckMemoryLayout(*layout, rank);
  if (!valid.ok()) {
    return Internal(std::string(fn) + ": the device returned an invalid layout for " + what +
                    ": " + valid.message());
  }
  auto handle = std::make_unique<PJRT_Layouts_MemoryLayout>();
  handle->layout = std::move(layout).value();
  return handle.release();
}

// The PJRT_Executable's output layouts, each checked against the output's rank when the
// executable reports its output dimensions.
// Handles for `layouts` (the executable's parameter layouts), owned by the executable.
StatusOr<std::unique_ptr<ExecutableOutputLayouts>> OwnedLayouts(const char* fn, const char* what,
                                                                std::vector<MemoryLayout> layouts) {
  auto out = std::make_unique<ExecutableOutputLayouts>();
  for (size_t i = 0; i < layouts.size(); ++i) {
    const size_t rank = layouts[i].minor_to_major.size();
    PJRTKIT_ASSIGN_OR_RETURN(
        PJRT_Layouts_MemoryLayout * layout,
        NewLayout(fn, what + (" " + std::to_string(i)), std::move(layouts[i]), rank));
    layout->owned_by_executable = true;
    out->layouts.emplace_back(layout);
    out->pointers.push_back(layout);
  }
  return out;
}

StatusOr<std::unique_ptr<ExecutableOutputLayouts>> MakeOutputLayouts(const char* fn,
                                                                     const Executable& executable,
                                                                     size_t num_outputs) {
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<MemoryLayout> layouts, executable.output_layouts());
  if (layouts.size() != num_outputs) {
    return Internal(std::string(fn) + ": the executable reports " +
                    std::to_string(layouts.size()) + " output layouts for " +
                    std::to_string(num_outputs) + " outputs");
  }
  StatusOr<std::vector<std::vector<int64_t>>> dims = executable.output_dimensions();
  auto out = std::make_unique<ExecutableOutputLayouts>();
  for (size_t i = 0; i < num_outputs; ++i) {
    const size_t rank = dims.ok() && dims->size() == num_outputs
                            ? (*dims)[i].size()
                            : layouts[i].minor_to_major.size();
    PJRTKIT_ASSIGN_OR_RETURN(
        PJRT_Layouts_MemoryLayout * layout,
        NewLayout(fn, "output " + std::to_string(i), std::move(layouts[i]), rank));
    layout->owned_by_executable = true;
    out->layouts.emplace_back(layout);
    out->pointers.push_back(layout);
  }
  return out;
}

}  // namespace

PJRT_Error* LayoutsMemoryLayoutDestroy(abi::LayoutsMemoryLayoutDestroyArgs* args) {
  return Guard("PJRT_Layouts_MemoryLayout_Destroy", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, abi::kLayoutsMemoryLayoutDestroyArgsSize));
    if (args->layout == nullptr) return OkStatus();  // As the header allows.
    if (args->layout->owned_by_executable) {
      return InvalidArgument(std::string(fn) +
                             ": args->layout is an output or parameter layout of an executable, "
                             "which the PJRT_Executable owns and frees (do not destroy it)");
    }
    delete args->layout;
    return OkStatus();
  });
}

PJRT_Error* LayoutsMemoryLayoutSerialize(abi::LayoutsMemoryLayoutSerializeArgs* args) {
  return Guard("PJRT_Layouts_MemoryLayout_Serialize", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, abi::kLayoutsMemoryLayoutSerializeArgsSize));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "layout", args->layout));
    auto serialized = std::make_unique<PJRT_Layouts_SerializedLayout>();
    serialized->bytes = EncodeXlaLayout(args->layout->layout);
    args->serialized_bytes = serialized->bytes.data();
    args->serialized_bytes_size = serialized->bytes.size();
    args->serialized_layout = serialized.release();
    args->serialized_layout_deleter = &DeleteSerializedLayout;
    return OkStatus();
  });
}

PJRT_Error* LayoutsClientGetDefaultLayout(abi::LayoutsClientGetDefaultLayoutArgs* args) {
  return Guard("PJRT_Layouts_PJRT_Client_GetDefaultLayout", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, abi::kLayoutsClientGetDefaultLayoutArgsSize));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    PJRTKIT_ASSIGN_OR_RETURN(ArrayQuery query,
                             ReadArrayQuery(fn, args->type, args->dims, args->num_dims));
    StatusOr<MemoryLayout> layout =
        query.type == ElementType::kToken
            ? StatusOr<MemoryLayout>(MemoryLayout())  // A token has no dimensions: "{}".
            : args->client->client->DefaultLayout(query.type, query.dims, /*memory=*/nullptr);
    PJRTKIT_ASSIGN_OR_RETURN(args->layout, NewLayout(fn, "the default layout", std::move(layout),
                                                     query.dims.size()));
    return OkStatus();
  });
}

PJRT_Error* LayoutsBufferMemoryLayout(abi::LayoutsBufferMemoryLayoutArgs* args) {
  return Guard("PJRT_Layouts_PJRT_Buffer_MemoryLayout", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, abi::kLayoutsBufferMemoryLayoutArgsSize));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "buffer", args->buffer));
    const Buffer& buffer = *args->buffer->buffer;
    // Metadata: answered for deleted and donated buffers too, as jaxlib may ask about any.
    StatusOr<MemoryLayout> layout = buffer.element_type() == ElementType::kToken
                                        ? StatusOr<MemoryLayout>(MemoryLayout())
                                        : buffer.layout();
    PJRTKIT_ASSIGN_OR_RETURN(args->layout, NewLayout(fn, "the buffer", std::move(layout),
                                                     buffer.dimensions().size()));
    return OkStatus();
  });
}

PJRT_Error* LayoutsTopologyGetDefaultLayout(abi::LayoutsTopologyGetDefaultLayoutArgs* args) {
  return Guard("PJRT_Layouts_PJRT_Topology_GetDefaultLayout", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, abi::kLayoutsTopologyGetDefaultLayoutArgsSize));
    PJRTKIT_RETURN_IF_ERROR(
        CheckHandle(fn, "topology_description", args->topology_description));
    PJRTKIT_ASSIGN_OR_RETURN(ArrayQuery query,
                             ReadArrayQuery(fn, args->type, args->dims, args->num_dims));
    StatusOr<MemoryLayout> layout =
        query.type == ElementType::kToken
            ? StatusOr<MemoryLayout>(MemoryLayout())
            : args->topology_description->topology->DefaultLayout(query.type, query.dims);
    PJRTKIT_ASSIGN_OR_RETURN(args->layout, NewLayout(fn, "the default layout", std::move(layout),
                                                     query.dims.size()));
    return OkStatus();
  });
}

PJRT_Error* LayoutsExecutableGetOutputLayouts(abi::LayoutsExecutableGetOutputLayoutsArgs* args) {
  return Guard("PJRT_Layouts_PJRT_Executable_GetOutputLayouts", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, abi::kLayoutsExecutableGetOutputLayoutsArgsSize));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRT_Executable& handle = *args->executable;
    PJRTKIT_ASSIGN_OR_RETURN(const ExecutableOutputLayouts* layouts,
                             handle.output_layouts.Get([&] {
                               return MakeOutputLayouts(fn, *handle.executable,
                                                        handle.num_outputs);
                             }));
    args->num_outputs = layouts->pointers.size();
    args->layouts = const_cast<PJRT_Layouts_MemoryLayout**>(layouts->pointers.data());
    return OkStatus();
  });
}

PJRT_Error* LayoutsExecutableGetParameterLayouts(
    abi::LayoutsExecutableGetParameterLayoutsArgs* args) {
  return Guard("PJRT_Layouts_PJRT_Executable_GetParameterLayouts", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, abi::kLayoutsExecutableGetParameterLayoutsArgsSize));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRT_Executable& handle = *args->executable;
    PJRTKIT_ASSIGN_OR_RETURN(
        const ExecutableOutputLayouts* layouts,
        handle.parameter_layouts.Get([&]() -> StatusOr<std::unique_ptr<ExecutableOutputLayouts>> {
          PJRTKIT_ASSIGN_OR_RETURN(std::vector<MemoryLayout> all,
                                   handle.executable->parameter_layouts());
          return OwnedLayouts(fn, "parameter", std::move(all));
        }));
    args->num_parameters = layouts->pointers.size();
    args->layouts = const_cast<PJRT_Layouts_MemoryLayout**>(layouts->pointers.data());
    return OkStatus();
  });
}

PJRT_Extension_Base* LayoutsExtensionBase(PJRT_Extension_Base* next) {
  static abi::LayoutsExtension extension = [next] {
    abi::LayoutsExtension e{};
    e.base.struct_size = abi::kLayoutsExtensionSize;
    e.base.type = PJRT_Extension_Type_Layouts;
    e.base.next = next;
    e.memory_layout_destroy = &LayoutsMemoryLayoutDestroy;
    e.memory_layout_serialize = &LayoutsMemoryLayoutSerialize;
    e.client_get_default_layout = &LayoutsClientGetDefaultLayout;
    e.buffer_memory_layout = &LayoutsBufferMemoryLayout;
    e.topology_get_default_layout = &LayoutsTopologyGetDefaultLayout;
    e.executable_get_output_layouts = &LayoutsExecutableGetOutputLayouts;
    e.executable_get_parameter_layouts = &LayoutsExecutableGetParameterLayouts;
    return e;
  }();
  return &extension.base;
}

}  // namespace capi
}  // namespace pjrtkit
