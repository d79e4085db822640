#include "xla_plugin/devices/sim/sim_ffi_calls.h"

#include <cstddef>
#include <cstring>
#include <utility>

#include "xla/ffi/api/c_api.h"

// The opaque types of the XLA FFI C API, as this runtime defines them.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  std::string message;
};
struct XLA_FFI_InvokeContext {
  const pjrtkit::sim::SimFfiCalls* calls;
};

namespace pjrtkit {
namespace sim {
namespace {

// True when `args` is non-null and at least as large as the struct up to `last` (what every API
// function checks before reading its arguments).
template <typename Args>
bool Valid(const Args* args, size_t needed) {
  return args != nullptr && args->struct_size >= needed;
}
#define PJRTKIT_FFI_SIZE(type, last) (offsetof(type, last) + sizeof(type::last))

XLA_FFI_Error* MakeError(XLA_FFI_Error_Code code, std::string message) {
  return new XLA_FFI_Error{code, std::move(message)};
}
XLA_FFI_Error* BadArgs(const char* function) {
  return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                   std::string(function) + ": arguments missing or too small");
}
XLA_FFI_Error* Unimplemented(const char* what) {
  return MakeError(XLA_FFI_Error_Code_UNIMPLEMENTED,
                   std::string(what) + " is not implemented by the pjrtkit sim device");
}

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  if (!Valid(args, PJRTKIT_FFI_SIZE(XLA_FFI_Error_Create_Args, errc))) {
    return BadArgs("XLA_FFI_Error_Create");
  }
  return MakeError(args->errc, args->message != nullptr ? args->message : "");
}
void ErrorGetDetails(XLA_FFI_Error_GetDetails_Args* args) {
  if (!Valid(args, PJRTKIT_FFI_SIZE(XLA_FFI_Error_GetDetails_Args, errc)) ||
      args->error == nullptr) {
    return;
  }
  args->message = args->error->message.c_str();
  args->errc = args->error->code;
}
void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) {
  if (!Valid(args, PJRTKIT_FFI_SIZE(XLA_FFI_Error_Destroy_Args, error))) return;
  delete args->error;
}
XLA_FFI_Error* HandlerRegister(XLA_FFI_Handler_Register_Args*) {
  return Unimplemented("XLA_FFI_Handler_Register (register through the PJRT FFI extension)");
}
XLA_FFI_Error* StreamGet(XLA_FFI_Stream_Get_Args*) {
  return Unimplemented("XLA_FFI_Stream_Get (handlers run in program order on the device's "
                       "queue, with host-addressable memory; there is no stream)");
}
XLA_FFI_Error* TypeRegister(XLA_FFI_Type_Register_Args*) {
  return Unimplemented("XLA_FFI_Type_Register (register types through the PJRT FFI extension)");
}
XLA_FFI_Error* InvokeContextGet(XLA_FFI_InvokeContext_Get_Args* args) {
  if (!Valid(args, PJRTKIT_FFI_SIZE(XLA_FFI_InvokeContext_Get_Args, data)) ||
      args->ctx == nullptr || args->type_id == nullptr) {
    return BadArgs("XLA_FFI_InvokeContext_Get");
  }
  void* data = args->ctx->calls->UserData(args->type_id->type_id);
  if (data == nullptr) {
    return MakeError(XLA_FFI_Error_Code_NOT_FOUND,
                     "the execution has no user data of FFI type id " +
                         std::to_string(args->type_id->type_id));
  }
  args->data = data;
  return nullptr;
}
XLA_FFI_Error* StateSet(XLA_FFI_State_Set_Args*) { return Unimplemented("XLA_FFI_State_Set"); }
XLA_FFI_Error* StateGet(XLA_FFI_State_Get_Args*) { return Unimplemented("XLA_FFI_State_Get"); }
XLA_FFI_Error* DeviceMemoryAllocate(XLA_FFI_DeviceMemory_Allocate_Args*) {
  return Unimplemented("XLA_FFI_DeviceMemory_Allocate");
}
XLA_FFI_Error* DeviceMemoryFree(XLA_FFI_DeviceMemory_Free_Args*) {
  return Unimplemented("XLA_FFI_DeviceMemory_Free");
}
XLA_FFI_Error* ThreadPoolSchedule(XLA_FFI_ThreadPool_Schedule_Args*) {
  return Unimplemented("XLA_FFI_ThreadPool_Schedule");
}
XLA_FFI_Error* ThreadPoolNumThreads(XLA_FFI_ThreadPool_NumThreads_Args*) {
  return Unimplemented("XLA_FFI_ThreadPool_NumThreads");
}
XLA_FFI_Error* FutureCreate(XLA_FFI_Future_Create_Args*) {
  return Unimplemented("XLA_FFI_Future_Create (asynchronous handlers)");
}
XLA_FFI_Error* FutureSetAvailable(XLA_FFI_Future_SetAvailable_Args*) {
  return Unimplemented("XLA_FFI_Future_SetAvailable");
}
XLA_FFI_Error* FutureSetError(XLA_FFI_Future_SetError_Args* args) {
  if (Valid(args, PJRTKIT_FFI_SIZE(XLA_FFI_Future_SetError_Args, error))) delete args->error;
  return Unimplemented("XLA_FFI_Future_SetError");
}
XLA_FFI_Error* RunIdGet(XLA_FFI_RunId_Get_Args*) { return Unimplemented("XLA_FFI_RunId_Get"); }
XLA_FFI_Error* DeviceOrdinalGet(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  if (!Valid(args, PJRTKIT_FFI_SIZE(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal)) ||
      args->ctx == nullptr) {
    return BadArgs("XLA_FFI_DeviceOrdinal_Get");
  }
  args->device_ordinal = args->ctx->calls->device_ordinal();
  return nullptr;
}
XLA_FFI_Error* FindExtension(XLA_FFI_InvokeContext_FindExtension_Args* args) {
  if (!Valid(args, PJRTKIT_FFI_SIZE(XLA_FFI_InvokeContext_FindExtension_Args, extension))) {
    return BadArgs("XLA_FFI_InvokeContext_FindExtension");
  }
  return MakeError(XLA_FFI_Error_Code_NOT_FOUND, "the sim device attaches no FFI extensions");
}
XLA_FFI_Error* CustomOptionsGet(XLA_FFI_CustomOptions_Get_Args*) {
  return Unimplemented("XLA_FFI_CustomOptions_Get");
}

// The API table handlers receive (constant; built on first use).
const XLA_FFI_Api* Api() {
  static const XLA_FFI_Api* const api = [] {
    auto* table = new XLA_FFI_Api{};
    table->struct_size = XLA_FFI_Api_STRUCT_SIZE;
    table->extension_start = nullptr;
    table->api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, XLA_FFI_API_MAJOR,
                          XLA_FFI_API_MINOR};
    table->internal_api = nullptr;
    table->XLA_FFI_Error_Create = ErrorCreate;
    table->XLA_FFI_Error_GetDetails = ErrorGetDetails;
    table->XLA_FFI_Error_Destroy = ErrorDestroy;
    table->XLA_FFI_Handler_Register = HandlerRegister;
    table->XLA_FFI_Stream_Get = StreamGet;
    table->XLA_FFI_Type_Register = TypeRegister;
    table->XLA_FFI_InvokeContext_Get = InvokeContextGet;
    table->XLA_FFI_State_Set = StateSet;
    table->XLA_FFI_State_Get = StateGet;
    table->XLA_FFI_DeviceMemory_Allocate = DeviceMemoryAllocate;
    table->XLA_FFI_DeviceMemory_Free = DeviceMemoryFree;
    table->XLA_FFI_ThreadPool_Schedule = ThreadPoolSchedule;
    table->XLA_FFI_ThreadPool_NumThreads = ThreadPoolNumThreads;
    table->XLA_FFI_Future_Create = FutureCreate;
    table->XLA_FFI_Future_SetAvailable = FutureSetAvailable;
    table->XLA_FFI_Future_SetError = FutureSetError;
    table->XLA_FFI_RunId_Get = RunIdGet;
    table->XLA_FFI_DeviceOrdinal_Get = DeviceOrdinalGet;
    table->XLA_FFI_InvokeContext_FindExtension = FindExtension;
    table->XLA_FFI_CustomOptions_Get = CustomOptionsGet;
    return table;
  }();
  return api;
}

// XLA's data type codes (xla.PrimitiveType) for pjrtkit's element types (PJRT_Buffer_Type).
XLA_FFI_DataType DataTypeOf(ElementType type) {
  switch (type) {
    case ElementType::kPred: return XLA_FFI_DataType_PRED;
    case ElementType::kS8: return XLA_FFI_DataType_S8;
    case ElementType::kS16: return XLA_FFI_DataType_S16;
    case ElementType::kS32: return XLA_FFI_DataType_S32;
    case ElementType::kS64: return XLA_FFI_DataType_S64;
    case ElementType::kU8: return XLA_FFI_DataType_U8;
    case ElementType::kU16: return XLA_FFI_DataType_U16;
    case ElementType::kU32: return XLA_FFI_DataType_U32;
    case ElementType::kU64: return XLA_FFI_DataType_U64;
    case ElementType::kF16: return XLA_FFI_DataType_F16;
    case ElementType::kF32: return XLA_FFI_DataType_F32;
    case ElementType::kF64: return XLA_FFI_DataType_F64;
    case ElementType::kBF16: return XLA_FFI_DataType_BF16;
    case ElementType::kC64: return XLA_FFI_DataType_C64;
    case ElementType::kC128: return XLA_FFI_DataType_C128;
    case ElementType::kF8E5M2: return XLA_FFI_DataType_F8E5M2;
    case ElementType::kF8E4M3FN: return XLA_FFI_DataType_F8E4M3FN;
    case ElementType::kF8E4M3B11FNUZ: return XLA_FFI_DataType_F8E4M3B11FNUZ;
    case ElementType::kF8E5M2FNUZ: return XLA_FFI_DataType_F8E5M2FNUZ;
    case ElementType::kF8E4M3FNUZ: return XLA_FFI_DataType_F8E4M3FNUZ;
    case ElementType::kF8E4M3: return XLA_FFI_DataType_F8E4M3;
    case ElementType::kF8E3M4: return XLA_FFI_DataType_F8E3M4;
    case ElementType::kF8E8M0FNU: return XLA_FFI_DataType_F8E8M0FNU;
    default: return XLA_FFI_DataType_INVALID;  // Refused by the compiler and the validator.
  }
}

StatusCode StatusCodeOf(XLA_FFI_Error_Code code) {
  return code >= XLA_FFI_Error_Code_OK && code <= XLA_FFI_Error_Code_UNAUTHENTICATED
             ? static_cast<StatusCode>(code)
             : StatusCode::kUnknown;
}

// One buffer of the call frame, with its dims.
struct FrameBuffer {
  std::vector<int64_t> dims;
  XLA_FFI_Buffer buffer{};
};

// `type` is the slot's (its dimensions in `order` when one is given: the array transposed as the
// handler's layout wants it); the handler gets the array's own dimensions.
void Fill(const ArrayType& type, const std::vector<std::vector<int32_t>>& orders, size_t index,
          void* data, FrameBuffer* out) {
  out->dims = type.dims;
  if (index < orders.size() && !orders[index].empty()) {
    for (size_t k = 0; k < orders[index].size(); ++k) out->dims[orders[index][k]] = type.dims[k];
  }
  out->buffer.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  out->buffer.extension_start = nullptr;
  out->buffer.dtype = DataTypeOf(type.type);
  out->buffer.data = data;
  out->buffer.rank = static_cast<int64_t>(out->dims.size());
  out->buffer.dims = out->dims.data();
}

}  // namespace

SimFfiCalls::SimFfiCalls(const SimFfiHandlers& handlers, std::map<int64_t, void*> user_data,
                         int device_ordinal, std::string platform)
    : handlers_(handlers),
      user_data_(std::move(user_data)),
      device_ordinal_(device_ordinal),
      platform_(std::move(platform)) {}

void* SimFfiCalls::UserData(int64_t type_id) const {
  auto it = user_data_.find(type_id);
  return it == user_data_.end() ? nullptr : it->second;
}

Status SimFfiCalls::Call(const CustomCallParams& params, const std::vector<ArrayArg>& operands,
                         const std::vector<ArrayResult>& results) const {
  try {
    return CallHandler(params, operands, results);
  } catch (...) {  // Allocating the frame, or the handler: the execution fails, nothing hangs.
    return Internal("custom call @" + params.target + ": an exception was thrown while calling "
                    "the FFI handler");
  }
}

Status SimFfiCalls::CallHandler(const CustomCallParams& params,
                                const std::vector<ArrayArg>& operands,
                                const std::vector<ArrayResult>& results) const {
  auto* handler = reinterpret_cast<XLA_FFI_Handler*>(handlers_.Find(params.target));
  if (handler == nullptr) {
    return NotFound("custom call @" + params.target + ": no FFI handler is registered for it on "
                    "platform " + platform_);
  }
  // Buffers (vectors sized up front: the frame points into them).
  std::vector<FrameBuffer> in(operands.size()), out(results.size());
  std::vector<XLA_FFI_ArgType> arg_types(operands.size(), XLA_FFI_ArgType_BUFFER);
  std::vector<XLA_FFI_RetType> ret_types(results.size(), XLA_FFI_RetType_BUFFER);
  std::vector<void*> args(operands.size()), rets(results.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    Fill(*operands[i].type, params.operand_orders, i, const_cast<void*>(operands[i].data), &in[i]);
    args[i] = &in[i].buffer;
  }
  for (size_t i = 0; i < results.size(); ++i) {
    Fill(*results[i].type, params.result_orders, i, results[i].data, &out[i]);
    rets[i] = &out[i].buffer;
  }
  // Attributes, in name order (the compiler sorted them).
  const size_t n = params.attributes.size();
  std::vector<XLA_FFI_AttrType> attr_types(n);
  std::vector<XLA_FFI_ByteSpan> names(n), strings(n);
  std::vector<XLA_FFI_ByteSpan*> name_pointers(n);
  std::vector<XLA_FFI_Scalar> scalars(n);
  std::vector<void*> attrs(n);
  for (size_t i = 0; i < n; ++i) {
    const FfiAttribute& a = params.attributes[i];
    names[i] = {a.name.data(), a.name.size()};
    name_pointers[i] = &names[i];
    if (a.kind == FfiAttribute::Kind::kString) {
      attr_types[i] = XLA_FFI_AttrType_STRING;
      strings[i] = {a.bytes.data(), a.bytes.size()};
      attrs[i] = &strings[i];
    } else {
      attr_types[i] = XLA_FFI_AttrType_SCALAR;
      scalars[i] = {DataTypeOf(a.type), const_cast<char*>(a.bytes.data())};
      attrs[i] = &scalars[i];
    }
  }
  XLA_FFI_InvokeContext context{this};
  XLA_FFI_CallFrame frame{};
  // XLA's sizes (up to each struct's last field in this header), which handlers check exactly.
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.extension_start = nullptr;
  frame.api = Api();
  frame.ctx = &context;
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, static_cast<int64_t>(args.size()),
                arg_types.data(), args.data()};
  frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, static_cast<int64_t>(rets.size()),
                ret_types.data(), rets.data()};
  frame.attrs = {XLA_FFI_Attrs_STRUCT_SIZE, nullptr, static_cast<int64_t>(n), attr_types.data(),
                 name_pointers.data(), attrs.data()};
  frame.future = nullptr;
  // Aliased results start as their operand (the validator checked that the types match).
  for (const auto& [result, operand] : params.aliases) {
    std::memcpy(results[result].data, operands[operand].data,
                static_cast<size_t>(results[result].type->byte_size()));
  }
  XLA_FFI_Error* error = handler(&frame);
  if (error != nullptr) {
    Status status(StatusCodeOf(error->code), "custom call @" + params.target + ": " +
                                                 error->message);
    if (status.ok()) status = Status(StatusCode::kUnknown, "custom call @" + params.target +
                                                              ": the handler failed with code 0");
    delete error;
    return status;
  }
  if (frame.future != nullptr) {
    return Internal("custom call @" + params.target + ": the FFI handler returned a future, "
                    "which the sim device does not support");
  }
  return OkStatus();
}

}  // namespace sim
}  // namespace pjrtkit
