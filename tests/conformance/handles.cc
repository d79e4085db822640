#include "tests/conformance/handles.h"

#include "gtest/gtest.h"
#include "tests/conformance/status.h"

namespace pjrt_conformance {
namespace {

// Reports a failed destroy; destroying a valid handle must succeed.
void ReportDestroyError(const PJRT_Api* api, PJRT_Error* error, const char* what) {
  const Status status = TakeError(api, error);
  EXPECT_TRUE(status.ok()) << what << " failed: " << status;
}

}  // namespace

void DestroyBuffer(const PJRT_Api* api, PJRT_Buffer* buffer) {
  PJRT_ARGS(PJRT_Buffer_Destroy_Args, args);
  args.buffer = buffer;
  ReportDestroyError(api, api->PJRT_Buffer_Destroy(&args), "PJRT_Buffer_Destroy");
}

void DestroyEvent(const PJRT_Api* api, PJRT_Event* event) {
  PJRT_ARGS(PJRT_Event_Destroy_Args, args);
  args.event = event;
  ReportDestroyError(api, api->PJRT_Event_Destroy(&args), "PJRT_Event_Destroy");
}

void DestroyClient(const PJRT_Api* api, PJRT_Client* client) {
  PJRT_ARGS(PJRT_Client_Destroy_Args, args);
  args.client = client;
  ReportDestroyError(api, api->PJRT_Client_Destroy(&args), "PJRT_Client_Destroy");
}

void DestroyLoadedExecutable(const PJRT_Api* api, PJRT_LoadedExecutable* executable) {
  PJRT_ARGS(PJRT_LoadedExecutable_Destroy_Args, args);
  args.executable = executable;
  ReportDestroyError(api, api->PJRT_LoadedExecutable_Destroy(&args),
                     "PJRT_LoadedExecutable_Destroy");
}

void DestroyExecutable(const PJRT_Api* api, PJRT_Executable* executable) {
  PJRT_ARGS(PJRT_Executable_Destroy_Args, args);
  args.executable = executable;
  ReportDestroyError(api, api->PJRT_Executable_Destroy(&args), "PJRT_Executable_Destroy");
}

void DestroyTopology(const PJRT_Api* api, PJRT_TopologyDescription* topology) {
  PJRT_ARGS(PJRT_TopologyDescription_Destroy_Args, args);
  args.topology = topology;
  ReportDestroyError(api, api->PJRT_TopologyDescription_Destroy(&args),
                     "PJRT_TopologyDescription_Destroy");
}

void DestroyExecuteContext(const PJRT_Api* api, PJRT_ExecuteContext* context) {
  PJRT_ARGS(PJRT_ExecuteContext_Destroy_Args, args);
  args.context = context;
  ReportDestroyError(api, api->PJRT_ExecuteContext_Destroy(&args),
                     "PJRT_ExecuteContext_Destroy");
}

void DestroyTransferManager(const PJRT_Api* api,
                            PJRT_AsyncHostToDeviceTransferManager* manager) {
  PJRT_ARGS(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args, args);
  args.transfer_manager = manager;
  ReportDestroyError(api, api->PJRT_AsyncHostToDeviceTransferManager_Destroy(&args),
                     "PJRT_AsyncHostToDeviceTransferManager_Destroy");
}

}  // namespace pjrt_conformance
