// PJRT_Extension_Type_Custom_Partitioner, forwarded: JAX registers custom_partitioning callbacks
// (jax.experimental.custom_partitioning) right after plugin discovery, before a client exists;
// the inner plugin's compiler calls them while it partitions. No handles; errors translated.
#include "xla/pjrt/c/pjrt_c_api_custom_partitioner_extension.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/forwarding/extensions.h"
#include "xla_plugin/c_api/forwarding/forwarding.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {
namespace {

const PJRT_Custom_Partitioner_Extension* inner_extension = nullptr;  // Set once, by the builder.

PJRT_Error* RegisterCustomPartitioner(PJRT_Register_Custom_Partitioner_Args* args) {
  return Guard("PJRT_Register_Custom_Partitioner", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Register_Custom_Partitioner_Args, callbacks)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "callbacks", args->callbacks));
    if (args->name == nullptr) return NullHandleError(fn, "name");
    return FromInner(fn, inner_extension->register_custom_partitioner(args));
  });
}

PJRT_Error* RegisterBatchPartitionable(PJRT_Register_Batch_Partitionable_Args* args) {
  return Guard("PJRT_Register_Batch_Partitionable", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Register_Batch_Partitionable_Args, name_size)));
    if (args->name == nullptr) return NullHandleError(fn, "name");
    return FromInner(fn, inner_extension->register_batch_partitionable(args));
  });
}

}  // namespace

PJRT_Extension_Base* ForwardCustomPartitioner(PJRT_Extension_Base* next) {
  const PJRT_Extension_Base* inner = FindInner(
      PJRT_Extension_Type_Custom_Partitioner,
      PJRTKIT_ARGS_SIZE(PJRT_Custom_Partitioner_Extension, register_custom_partitioner));
  if (inner == nullptr) return next;
  inner_extension = reinterpret_cast<const PJRT_Custom_Partitioner_Extension*>(inner);
  static PJRT_Custom_Partitioner_Extension extension;
  CopyExtension(inner, &extension.base, sizeof(extension), next);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, register_custom_partitioner,
                        &RegisterCustomPartitioner);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, register_batch_partitionable,
                        &RegisterBatchPartitionable);
  return &extension.base;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
