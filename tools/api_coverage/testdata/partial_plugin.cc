// A deliberately incomplete PJRT plugin for api_coverage_test: a few slots implemented (one of
// them crashes on zeroed args), one UNIMPLEMENTED, the rest NULL, and two extensions (the second
// of a type newer than the 0.81 header's).
#include <cstring>

#include "xla/pjrt/c/pjrt_c_api.h"

namespace {

// The header defines PJRT_Error as a function-table pointer (left null here); a code is the only
// other state this plugin's errors have.
struct PartialError : PJRT_Error {
  explicit PartialError(PJRT_Error_Code c) : PJRT_Error{nullptr}, code(c) {}
  PJRT_Error_Code code;
};

PJRT_Error* GetCode(PJRT_Error_GetCode_Args* args) {
  args->code = static_cast<const PartialError*>(args->error)->code;
  return nullptr;
}

void Destroy(PJRT_Error_Destroy_Args* args) { delete static_cast<PartialError*>(args->error); }

// Checks struct_size like a well-behaved entry point.
PJRT_Error* Initialize(PJRT_Plugin_Initialize_Args* args) {
  if (args->struct_size < PJRT_Plugin_Initialize_Args_STRUCT_SIZE) {
    return new PartialError(PJRT_Error_Code_INVALID_ARGUMENT);
  }
  return nullptr;
}

// Dereferences its (null) client without checking anything.
PJRT_Error* CrashingPlatformName(PJRT_Client_PlatformName_Args* args) {
  volatile int* null_pointer = reinterpret_cast<volatile int*>(args->client);
  return reinterpret_cast<PJRT_Error*>(static_cast<intptr_t>(*null_pointer));
}

PJRT_Error* DmaMap(PJRT_Client_DmaMap_Args*) {
  return new PartialError(PJRT_Error_Code_UNIMPLEMENTED);
}

// Accepts anything.
PJRT_Error* ProcessIndex(PJRT_Client_ProcessIndex_Args*) { return nullptr; }

PJRT_Extension_Base kTransform = {PJRT_Extension_Base_STRUCT_SIZE,
                                  PJRT_Extension_Type_XlaTransform, nullptr};
PJRT_Extension_Base kExtension = {PJRT_Extension_Base_STRUCT_SIZE, PJRT_Extension_Type_Layouts,
                                  &kTransform};

PJRT_Api MakeApi() {
  PJRT_Api api;
  std::memset(&api, 0, sizeof(api));
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.extension_start = &kExtension;
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
  api.PJRT_Error_GetCode = GetCode;
  api.PJRT_Error_Destroy = Destroy;
  api.PJRT_Plugin_Initialize = Initialize;
  api.PJRT_Client_PlatformName = CrashingPlatformName;
  api.PJRT_Client_ProcessIndex = ProcessIndex;
  api.PJRT_Client_DmaMap = DmaMap;
  return api;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static const PJRT_Api api = MakeApi();
  return &api;
}
