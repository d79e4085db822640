#include "xla_plugin/c_api/forwarding/forwarding.h"

// C++ standard library.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/entry_point.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {
namespace {

// The installed inner plugin (see the header: written once, before any reader).
std::atomic<const PJRT_Api*>& InnerSlot() {
  static std::atomic<const PJRT_Api*> inner{nullptr};
  return inner;
}

// True when `slot` (a PJRT_Api member at `offset`) lies inside the inner table.
bool InnerHas(size_t offset) {
  const PJRT_Api* api = Inner();
  return api != nullptr && api->struct_size >= offset + sizeof(void*);
}

// Collects the payloads of an inner error.
void AddPayload(const char* key, size_t key_size, const char* value, size_t value_size,
                void* user_arg) {
  static_cast<Status*>(user_arg)->SetPayload(std::string(key, key_size),
                                             std::string(value, value_size));
}

}  // namespace

void Install(const PJRT_Api* inner) {
  const PJRT_Api* expected = nullptr;
  InnerSlot().compare_exchange_strong(expected, inner);
}

const PJRT_Api* Inner() { return InnerSlot().load(std::memory_order_acquire); }

std::string InnerName() {
  const PJRT_Api* api = Inner();
  if (api == nullptr) return "no inner plugin";
  return "the inner PJRT plugin (PJRT C API " + std::to_string(api->pjrt_api_version.major_version) +
         "." + std::to_string(api->pjrt_api_version.minor_version) + ")";
}

const PJRT_Extension_Base* FindInner(PJRT_Extension_Type type, size_t min_size) {
  const PJRT_Api* api = Inner();
  if (api == nullptr) return nullptr;
  for (const PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next) {
    if (e->type == type) return e->struct_size >= min_size ? e : nullptr;
  }
  return nullptr;
}

Status FromInner(const char* fn, PJRT_Error* error) {
  if (error == nullptr) return OkStatus();
  const PJRT_Api* api = Inner();
  PJRT_Error_Message_Args message{};
  message.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  message.error = error;
  api->PJRT_Error_Message(&message);
  PJRT_Error_GetCode_Args code{};
  code.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  code.error = error;
  PJRT_Error* code_error = api->PJRT_Error_GetCode(&code);
  StatusCode status_code = StatusCode::kUnknown;
  if (code_error == nullptr && code.code != PJRT_Error_Code_OK) {
    status_code = static_cast<StatusCode>(code.code);
  }
  Status status(status_code,
                std::string(fn) + ": " +
                    (message.message == nullptr ? std::string()
                                                : std::string(message.message,
                                                              message.message_size)));
  if (InnerHas(offsetof(PJRT_Api, PJRT_Error_ForEachPayload)) &&
      api->PJRT_Error_ForEachPayload != nullptr) {
    PJRT_Error_ForEachPayload_Args payloads{};
    payloads.struct_size = PJRT_Error_ForEachPayload_Args_STRUCT_SIZE;
    payloads.error = error;
    payloads.visitor = &AddPayload;
    payloads.user_arg = &status;
    PJRT_Error* payload_error = api->PJRT_Error_ForEachPayload(&payloads);
    if (payload_error != nullptr) {
      PJRT_Error_Destroy_Args destroy{};
      destroy.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
      destroy.error = payload_error;
      api->PJRT_Error_Destroy(&destroy);
    }
  }
  for (PJRT_Error* e : {code_error, error}) {
    if (e == nullptr) continue;
    PJRT_Error_Destroy_Args destroy{};
    destroy.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
    destroy.error = e;
    api->PJRT_Error_Destroy(&destroy);
  }
  return status;
}

Status Missing(const char* fn) {
  return Unimplemented(std::string(fn) + " is not provided by " + InnerName());
}

Status CheckNative(const char* fn, const char* what, const NativeHandle& native) {
  if (native.handle == nullptr || native.api == nullptr) {
    return InvalidArgument(std::string(fn) + ": " + what +
                           " has no object in the inner plugin whose extension this is");
  }
  if (native.api != Inner()) {
    return InvalidArgument(std::string(fn) + ": " + what +
                           " belongs to another PJRT plugin than the one whose extension this "
                           "is (a client created with another inner plugin path)");
  }
  return OkStatus();
}

StatusOr<PJRT_Client*> InnerClient(const char* fn, const char* what, const PJRT_Client* client) {
  PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, what, client));
  return NativeOf<PJRT_Client>(fn, what, client->client->native_handle());
}

StatusOr<PJRT_Device*> InnerDevice(const char* fn, const char* what, const PJRT_Device* device) {
  PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, what, device));
  return NativeOf<PJRT_Device>(fn, what, device->device->native_handle());
}

StatusOr<PJRT_Buffer*> InnerBuffer(const char* fn, const char* what, const PJRT_Buffer* buffer) {
  PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, what, buffer));
  if (buffer->IsDeleted()) {
    return FailedPrecondition(std::string(fn) + ": " + what + " has been deleted or donated");
  }
  return NativeOf<PJRT_Buffer>(fn, what, buffer->buffer->native_handle());
}

StatusOr<PJRT_Executable*> InnerExecutable(const char* fn, const char* what,
                                           const PJRT_Executable* executable) {
  PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, what, executable));
  return NativeOf<PJRT_Executable>(fn, what, executable->executable->native_handle());
}

StatusOr<PJRT_LoadedExecutable*> InnerLoadedExecutable(const char* fn, const char* what,
                                                       const PJRT_LoadedExecutable* executable) {
  PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, what, executable));
  return NativeOf<PJRT_LoadedExecutable>(fn, what, executable->loaded->native_handle());
}

StatusOr<PJRT_TopologyDescription*> InnerTopology(const char* fn, const char* what,
                                                  const PJRT_TopologyDescription* topology) {
  PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, what, topology));
  return NativeOf<PJRT_TopologyDescription>(fn, what, topology->topology->native_handle());
}

StatusOr<PJRT_DeviceDescription*> InnerDeviceDescription(
    const char* fn, const char* what, const PJRT_DeviceDescription* description) {
  PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, what, description));
  const PJRT_Api* api = Inner();
  if (description->device != nullptr) {
    PJRTKIT_ASSIGN_OR_RETURN(PJRT_Device * device, InnerDevice(fn, what, description->device));
    PJRT_Device_GetDescription_Args args{};
    args.struct_size = PJRT_Device_GetDescription_Args_STRUCT_SIZE;
    args.device = device;
    PJRTKIT_RETURN_IF_ERROR(FromInner(fn, api->PJRT_Device_GetDescription(&args)));
    return args.device_description;
  }
  if (description->topology != nullptr) {
    PJRTKIT_ASSIGN_OR_RETURN(PJRT_TopologyDescription * topology,
                             InnerTopology(fn, what, description->topology));
    PJRT_TopologyDescription_GetDeviceDescriptions_Args args{};
    args.struct_size = PJRT_TopologyDescription_GetDeviceDescriptions_Args_STRUCT_SIZE;
    args.topology = topology;
    PJRTKIT_RETURN_IF_ERROR(FromInner(fn, api->PJRT_TopologyDescription_GetDeviceDescriptions(&args)));
    // pjrtkit's devices are the inner plugin's, id for id.
    const int id = description->description->id();
    for (size_t i = 0; i < args.num_descriptions; ++i) {
      PJRT_DeviceDescription_Id_Args id_args{};
      id_args.struct_size = PJRT_DeviceDescription_Id_Args_STRUCT_SIZE;
      id_args.device_description = args.descriptions[i];
      PJRTKIT_RETURN_IF_ERROR(FromInner(fn, api->PJRT_DeviceDescription_Id(&id_args)));
      if (id_args.id == id) return args.descriptions[i];
    }
    return InvalidArgument(std::string(fn) + ": the inner topology has no device " +
                           std::to_string(id));
  }
  return InvalidArgument(std::string(fn) + ": " + what +
                         " is neither a client's device nor a topology's");
}

void CopyExtension(const PJRT_Extension_Base* inner, PJRT_Extension_Base* ours, size_t our_size,
                   PJRT_Extension_Base* next) {
  const size_t bytes = std::min(inner->struct_size, our_size);
  std::memset(ours, 0, our_size);
  std::memcpy(ours, inner, bytes);
  ours->struct_size = bytes;
  ours->next = next;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
