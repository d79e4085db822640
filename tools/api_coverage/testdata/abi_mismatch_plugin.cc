// A PJRT plugin whose struct sizes are wrong on purpose, for abi_probe_test: it claims the pinned
// C API version, answers struct_size 1 with OpenXLA's message for three slots (one size that no
// field ends at, one that ends at a field but is not the header's _STRUCT_SIZE, one right), accepts
// anything in a fourth, and chains a Layouts extension of an impossible size and an extension of
// a type no header knows.
#include <cstring>
#include <string>

#include "xla/pjrt/c/pjrt_c_api.h"

namespace {

// The header defines PJRT_Error as a function-table pointer (left null here); the message is the
// only other state this plugin's errors have.
struct MessageError : PJRT_Error {
  explicit MessageError(std::string m) : PJRT_Error{nullptr}, message(std::move(m)) {}
  std::string message;
};

// OpenXLA's answer to a struct_size below `expected`.
PJRT_Error* SizeError(const char* name, size_t expected, size_t got) {
  return new MessageError("Unexpected " + std::string(name) + " size: expected " +
                          std::to_string(expected) + ", got " + std::to_string(got) +
                          ". The plugin is likely built with a later version than the framework.");
}

PJRT_Error* GetCode(PJRT_Error_GetCode_Args* args) {
  args->code = PJRT_Error_Code_INVALID_ARGUMENT;
  return nullptr;
}

void Message(PJRT_Error_Message_Args* args) {
  const std::string& text = static_cast<const MessageError*>(args->error)->message;
  args->message = text.data();
  args->message_size = text.size();
}

void Destroy(PJRT_Error_Destroy_Args* args) { delete static_cast<MessageError*>(args->error); }

// 33: no field of PJRT_Client_Create_Args ends there.
PJRT_Error* ClientCreate(PJRT_Client_Create_Args* args) {
  return SizeError("PJRT_Client_Create_Args", 33, args->struct_size);
}

// Right.
PJRT_Error* ClientDestroy(PJRT_Client_Destroy_Args* args) {
  return SizeError("PJRT_Client_Destroy_Args", PJRT_Client_Destroy_Args_STRUCT_SIZE,
                   args->struct_size);
}

// Ends after `platform_name`, one field short of the header's _STRUCT_SIZE.
PJRT_Error* PlatformName(PJRT_Client_PlatformName_Args* args) {
  return SizeError("PJRT_Client_PlatformName_Args",
                   offsetof(PJRT_Client_PlatformName_Args, platform_name) + sizeof(const char*),
                   args->struct_size);
}

// Accepts anything.
PJRT_Error* BufferDestroy(PJRT_Buffer_Destroy_Args*) { return nullptr; }

PJRT_Extension_Base kStranger = {PJRT_Extension_Base_STRUCT_SIZE,
                                 static_cast<PJRT_Extension_Type>(999), nullptr};
PJRT_Extension_Base kLayouts = {30, PJRT_Extension_Type_Layouts, &kStranger};

PJRT_Api MakeApi() {
  PJRT_Api api;
  std::memset(&api, 0, sizeof(api));
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.extension_start = &kLayouts;
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
  api.PJRT_Error_GetCode = GetCode;
  api.PJRT_Error_Message = Message;
  api.PJRT_Error_Destroy = Destroy;
  api.PJRT_Client_Create = ClientCreate;
  api.PJRT_Client_Destroy = ClientDestroy;
  api.PJRT_Client_PlatformName = PlatformName;
  api.PJRT_Buffer_Destroy = BufferDestroy;
  return api;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static const PJRT_Api api = MakeApi();
  return &api;
}
