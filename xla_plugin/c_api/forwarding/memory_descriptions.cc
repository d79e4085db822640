// PJRT_Extension_Type_MemoryDescriptions, forwarded: the memory spaces of a device description (a
// client device's or a topology's; JAX reads them for compile-only devices). The memory
// descriptions handed out are the inner plugin's and go back to it through
// PJRT_MemoryDescription_Kind, which is forwarded too. jaxlib asks for every device description
// it makes and aborts on an error, so only null arguments are errors.
#include "xla/pjrt/c/pjrt_c_api_memory_descriptions_extension.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/forwarding/extensions.h"
#include "xla_plugin/c_api/forwarding/forwarding.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {
namespace {

const PJRT_MemoryDescriptions_Extension* inner_extension = nullptr;  // Set once, by the builder.

PJRT_Error* MemoryDescriptions(PJRT_DeviceDescription_MemoryDescriptions_Args* args) {
  return Guard("PJRT_DeviceDescription_MemoryDescriptions", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_DeviceDescription_MemoryDescriptions_Args, default_memory_index)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "device_description", args->device_description));
    PJRT_DeviceDescription_MemoryDescriptions_Args inner{};
    inner.struct_size = PJRT_DeviceDescription_MemoryDescriptions_Args_STRUCT_SIZE;
    StatusOr<PJRT_DeviceDescription*> description =
        InnerDeviceDescription(fn, "device_description", args->device_description);
    if (!description.ok()) {
      // No inner description to ask (a topology that cannot reach the inner plugin): no memory
      // descriptions, as from a plugin without the extension. jaxlib aborts on an error here.
      args->memory_descriptions = nullptr;
      args->num_memory_descriptions = 0;
      args->default_memory_index = 0;
      return OkStatus();
    }
    inner.device_description = *description;
    PJRTKIT_RETURN_IF_ERROR(
        FromInner(fn, inner_extension->PJRT_DeviceDescription_MemoryDescriptions(&inner)));
    args->memory_descriptions = inner.memory_descriptions;
    args->num_memory_descriptions = inner.num_memory_descriptions;
    args->default_memory_index = inner.default_memory_index;
    return OkStatus();
  });
}

PJRT_Error* MemoryKind(PJRT_MemoryDescription_Kind_Args* args) {
  return Guard("PJRT_MemoryDescription_Kind", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_MemoryDescription_Kind_Args, kind_id)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "memory_description", args->memory_description));
    PJRT_MemoryDescription_Kind_Args inner{};
    inner.struct_size = PJRT_MemoryDescription_Kind_Args_STRUCT_SIZE;
    inner.memory_description = args->memory_description;  // The inner plugin's own.
    PJRTKIT_RETURN_IF_ERROR(FromInner(fn, inner_extension->PJRT_MemoryDescription_Kind(&inner)));
    args->kind = inner.kind;
    args->kind_size = inner.kind_size;
    args->kind_id = inner.kind_id;
    return OkStatus();
  });
}

}  // namespace

PJRT_Extension_Base* ForwardMemoryDescriptions(PJRT_Extension_Base* next) {
  const PJRT_Extension_Base* inner = FindInner(PJRT_Extension_Type_MemoryDescriptions,
                                               PJRT_MemoryDescriptions_Extension_STRUCT_SIZE);
  if (inner == nullptr) return next;
  inner_extension = reinterpret_cast<const PJRT_MemoryDescriptions_Extension*>(inner);
  static PJRT_MemoryDescriptions_Extension extension;
  CopyExtension(inner, &extension.base, sizeof(extension), next);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, PJRT_DeviceDescription_MemoryDescriptions,
                        &MemoryDescriptions);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, PJRT_MemoryDescription_Kind, &MemoryKind);
  return &extension.base;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
