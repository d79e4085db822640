#include "xla_plugin/devices/xla_cpu/builtin_ffi_handlers.h"

#include <string>

#include "xla/ffi/api/c_api.h"

namespace pjrtkit {
namespace xla_cpu {
namespace {

// True when XLA asks the handler for its metadata (at registration) instead of running it.
bool IsMetadataQuery(const XLA_FFI_CallFrame* frame) {
  return frame->extension_start != nullptr &&
         frame->extension_start->type == XLA_FFI_Extension_Metadata;
}

// Answers the metadata query: XLA:CPU's own API version (nothing newer is used), no traits.
XLA_FFI_Error* AnswerMetadata(XLA_FFI_CallFrame* frame) {
  auto* extension = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
  extension->metadata->api_version = frame->api->api_version;
  extension->metadata->traits = 0;
  return nullptr;
}

// An XLA FFI error with `message` (copied by XLA).
XLA_FFI_Error* MakeError(XLA_FFI_CallFrame* frame, XLA_FFI_Error_Code code,
                         const std::string& message) {
  XLA_FFI_Error_Create_Args args{};
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.message = message.c_str();
  args.errc = code;
  return frame->api->XLA_FFI_Error_Create(&args);
}

// dce_sink: one operand of any type, no results, nothing to do (see the header).
XLA_FFI_Error* DceSink(XLA_FFI_CallFrame* frame) {
  if (IsMetadataQuery(frame)) return AnswerMetadata(frame);
  if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) return nullptr;
  if (frame->args.size != 1 || frame->rets.size != 0) {
    return MakeError(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "dce_sink takes 1 operand and returns nothing; got " +
                         std::to_string(frame->args.size) + " operand(s) and " +
                         std::to_string(frame->rets.size) + " result(s)");
  }
  return nullptr;
}

}  // namespace

std::vector<FfiHandlerRegistration> BuiltinFfiHandlers::All() {
  FfiHandlerRegistration dce_sink;
  dce_sink.target_name = "dce_sink";
  dce_sink.platform_name = "pjrtkit";
  dce_sink.handler = reinterpret_cast<void*>(&DceSink);
  return {dce_sink};
}

Status BuiltinFfiHandlers::RegisterAll(const plugin_wrapper::InnerFfi& ffi,
                                       const plugin_wrapper::FfiPlatform& platform) {
  for (const FfiHandlerRegistration& registration : All()) {
    PJRTKIT_RETURN_IF_ERROR(ffi.RegisterHandler(registration, platform));
  }
  return OkStatus();
}

}  // namespace xla_cpu
}  // namespace pjrtkit
