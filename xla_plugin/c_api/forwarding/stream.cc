// PJRT_Extension_Type_Stream, forwarded: the CUDA stream a device's external work should go on
// and a wait for a buffer on a stream (what DLPack exchanges use); pjrtkit's device and buffer are
// translated to the inner plugin's.
#include "xla/pjrt/c/pjrt_c_api_stream_extension.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/forwarding/extensions.h"
#include "xla_plugin/c_api/forwarding/forwarding.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {
namespace {

const PJRT_Stream_Extension* inner_extension = nullptr;  // Set once, by the builder.

PJRT_Error* GetStream(PJRT_Get_Stream_For_External_Ready_Events_Args* args) {
  return Guard("PJRT_Get_Stream_For_External_Ready_Events", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Get_Stream_For_External_Ready_Events_Args, stream)));
    PJRT_Get_Stream_For_External_Ready_Events_Args inner{};
    inner.struct_size = PJRT_Get_Stream_For_External_Ready_Events_Args_STRUCT_SIZE;
    PJRTKIT_ASSIGN_OR_RETURN(inner.device, InnerDevice(fn, "device", args->device));
    PJRTKIT_RETURN_IF_ERROR(FromInner(fn, inner_extension->get_stream(&inner)));
    args->stream = inner.stream;
    return OkStatus();
  });
}

PJRT_Error* WaitStream(PJRT_Wait_Until_Buffer_Ready_On_Stream_Args* args) {
  return Guard("PJRT_Wait_Until_Buffer_Ready_On_Stream", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Wait_Until_Buffer_Ready_On_Stream_Args, buffer)));
    PJRT_Wait_Until_Buffer_Ready_On_Stream_Args inner{};
    inner.struct_size = PJRT_Wait_Until_Buffer_Ready_On_Stream_Args_STRUCT_SIZE;
    inner.stream = args->stream;
    PJRTKIT_ASSIGN_OR_RETURN(inner.buffer, InnerBuffer(fn, "buffer", args->buffer));
    return FromInner(fn, inner_extension->wait_stream(&inner));
  });
}

}  // namespace

PJRT_Extension_Base* ForwardStream(PJRT_Extension_Base* next) {
  const PJRT_Extension_Base* inner =
      FindInner(PJRT_Extension_Type_Stream, PJRT_Stream_Extension_STRUCT_SIZE);
  if (inner == nullptr) return next;
  inner_extension = reinterpret_cast<const PJRT_Stream_Extension*>(inner);
  static PJRT_Stream_Extension extension;
  CopyExtension(inner, &extension.base, sizeof(extension), next);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, get_stream, &GetStream);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, wait_stream, &WaitStream);
  return &extension.base;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
