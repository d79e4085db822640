#include "xla_plugin/c_api/make_api.h"

// pjrtkit: one header per handle family.
#include "xla_plugin/c_api/buffer.h"
#include "xla_plugin/c_api/client.h"
#include "xla_plugin/c_api/device.h"
#include "xla_plugin/c_api/error.h"
#include "xla_plugin/c_api/event.h"
#include "xla_plugin/c_api/executable.h"
#include "xla_plugin/c_api/executable_binding.h"
#include "xla_plugin/c_api/execute_context.h"
#include "xla_plugin/c_api/ffi_extension.h"
#include "xla_plugin/c_api/forwarding/extensions.h"
#include "xla_plugin/c_api/forwarding/forwarding.h"
#include "xla_plugin/c_api/layouts_extension.h"
#include "xla_plugin/c_api/shardings_extension.h"
#include "xla_plugin/c_api/loaded_executable.h"
#include "xla_plugin/c_api/memory.h"
#include "xla_plugin/c_api/topology.h"
#include "xla_plugin/c_api/transfer_manager.h"
#include "xla_plugin/c_api/unimplemented.h"

namespace pjrtkit {
namespace capi {

PJRT_Extension_Base* ExtensionChain(const PJRT_Api* inner) {
  // Extensions are function-local statics linked through `next`.
  // FFI (ffi_extension.h): handler/type registration, kept process-wide in FfiRegistry.
  // Layouts (layouts_extension.h): default, buffer and output layouts from the client layer.
  // pjrtkit's own (executable_binding.h): per-executable FFI user data.
  // Then the inner plugin's, forwarded (forwarding/extensions.h).
  // Shardings (shardings_extension.h): from the client layer for a device without an inner plugin
  // (its executables are its own); a device over an inner plugin forwards the inner plugin's, or
  // has none (jaxlib then reads shardings from the optimized HLO, as for the inner plugin itself).
  forwarding::Install(inner);
  PJRT_Extension_Base* forwarded = forwarding::ForwardedChain(/*next=*/nullptr);
  if (inner == nullptr) forwarded = ShardingsExtensionBase(/*next=*/forwarded);
  return FfiExtensionBase(/*next=*/LayoutsExtensionBase(
      /*next=*/PjrtkitExtensionBase(/*next=*/forwarded)));
}

PJRT_Api MakePjrtApi(const FactoryEntryPoints& entry_points) {
  EmergencyError();  // Allocate the out-of-memory error now, while memory is plentiful.
  PJRT_Api api{};    // Zero-filled: a slot forgotten below would be NULL (api_test checks none is).
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.extension_start = entry_points.extension_start;
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.extension_start = nullptr;
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;

  // Errors.
  api.PJRT_Error_Destroy = ErrorDestroy;
  api.PJRT_Error_Message = ErrorMessage;
  api.PJRT_Error_GetCode = ErrorGetCode;
  api.PJRT_Error_ForEachPayload = ErrorForEachPayload;

  // Plugin (Factory).
  api.PJRT_Plugin_Initialize = entry_points.plugin_initialize;
  api.PJRT_Plugin_Attributes = entry_points.plugin_attributes;

  // Events.
  api.PJRT_Event_Destroy = EventDestroy;
  api.PJRT_Event_IsReady = EventIsReady;
  api.PJRT_Event_Error = EventError;
  api.PJRT_Event_Await = EventAwait;
  api.PJRT_Event_OnReady = EventOnReady;
  api.PJRT_Event_Create = EventCreate;
  api.PJRT_Event_Set = EventSet;

  // Client.
  api.PJRT_Client_Create = entry_points.client_create;
  api.PJRT_Client_Destroy = ClientDestroy;
  api.PJRT_Client_PlatformName = ClientPlatformName;
  api.PJRT_Client_ProcessIndex = ClientProcessIndex;
  api.PJRT_Client_PlatformVersion = ClientPlatformVersion;
  api.PJRT_Client_Devices = ClientDevices;
  api.PJRT_Client_AddressableDevices = ClientAddressableDevices;
  api.PJRT_Client_LookupDevice = ClientLookupDevice;
  api.PJRT_Client_LookupAddressableDevice = ClientLookupAddressableDevice;
  api.PJRT_Client_AddressableMemories = ClientAddressableMemories;
  api.PJRT_Client_Compile = ClientCompile;
  api.PJRT_Client_DefaultDeviceAssignment = ClientDefaultDeviceAssignment;
  api.PJRT_Client_BufferFromHostBuffer = ClientBufferFromHostBuffer;
  api.PJRT_Client_TopologyDescription = ClientTopologyDescription;
  api.PJRT_Client_CreateUninitializedBuffer = ClientCreateUninitializedBuffer;
  api.PJRT_Client_CreateViewOfDeviceBuffer = ClientCreateViewOfDeviceBuffer;
  api.PJRT_Client_CreateBuffersForAsyncHostToDevice = ClientCreateBuffersForAsyncHostToDevice;
  api.PJRT_Client_DmaMap = ClientDmaMap;                                    // UNIMPLEMENTED.
  api.PJRT_Client_DmaUnmap = ClientDmaUnmap;                                // UNIMPLEMENTED.
  api.PJRT_Client_UpdateGlobalProcessInfo = ClientUpdateGlobalProcessInfo;
  api.PJRT_Client_CreateAliasBuffer = ClientCreateAliasBuffer;              // UNIMPLEMENTED.
  api.PJRT_Client_FulfillAliasBuffer = ClientFulfillAliasBuffer;            // UNIMPLEMENTED.
  api.PJRT_Client_CreateErrorBuffer = ClientCreateErrorBuffer;
  api.PJRT_Client_Load = ClientLoad;

  // Device descriptions.
  api.PJRT_DeviceDescription_Id = DeviceDescriptionId;
  api.PJRT_DeviceDescription_ProcessIndex = DeviceDescriptionProcessIndex;
  api.PJRT_DeviceDescription_Attributes = DeviceDescriptionAttributes;
  api.PJRT_DeviceDescription_Kind = DeviceDescriptionKind;
  api.PJRT_DeviceDescription_DebugString = DeviceDescriptionDebugString;
  api.PJRT_DeviceDescription_ToString = DeviceDescriptionToString;

  // Devices.
  api.PJRT_Device_GetDescription = DeviceGetDescription;
  api.PJRT_Device_IsAddressable = DeviceIsAddressable;
  api.PJRT_Device_LocalHardwareId = DeviceLocalHardwareId;
  api.PJRT_Device_AddressableMemories = DeviceAddressableMemories;
  api.PJRT_Device_DefaultMemory = DeviceDefaultMemory;
  api.PJRT_Device_MemoryStats = DeviceMemoryStats;
  api.PJRT_Device_ClearMemoryStats = DeviceClearMemoryStats;
  api.PJRT_Device_GetAttributes = DeviceGetAttributes;
  api.PJRT_Device_PoisonExecution = DevicePoisonExecution;
  api.PJRT_Device_CreateAsyncTrackingEvent = DeviceCreateAsyncTrackingEvent;
  api.PJRT_AsyncTrackingEvent_Destroy = AsyncTrackingEventDestroy;

  // Memories.
  api.PJRT_Memory_Id = MemoryId;
  api.PJRT_Memory_Kind = MemoryKind;
  api.PJRT_Memory_Kind_Id = MemoryKindId;
  api.PJRT_Memory_DebugString = MemoryDebugString;
  api.PJRT_Memory_ToString = MemoryToString;
  api.PJRT_Memory_AddressableByDevices = MemoryAddressableByDevices;

  // Executables.
  api.PJRT_Executable_Destroy = ExecutableDestroy;
  api.PJRT_Executable_Name = ExecutableName;
  api.PJRT_Executable_NumReplicas = ExecutableNumReplicas;
  api.PJRT_Executable_NumPartitions = ExecutableNumPartitions;
  api.PJRT_Executable_NumOutputs = ExecutableNumOutputs;
  api.PJRT_Executable_SizeOfGeneratedCodeInBytes = ExecutableSizeOfGeneratedCodeInBytes;
  api.PJRT_Executable_GetCostAnalysis = ExecutableGetCostAnalysis;
  api.PJRT_Executable_OutputMemoryKinds = ExecutableOutputMemoryKinds;
  api.PJRT_Executable_OptimizedProgram = ExecutableOptimizedProgram;
  api.PJRT_Executable_Serialize = ExecutableSerialize;
  api.PJRT_Executable_OutputElementTypes = ExecutableOutputElementTypes;
  api.PJRT_Executable_OutputDimensions = ExecutableOutputDimensions;
  api.PJRT_Executable_Fingerprint = ExecutableFingerprint;
  api.PJRT_Executable_GetCompiledMemoryStats = ExecutableGetCompiledMemoryStats;
  api.PJRT_Executable_DeserializeAndLoad = ExecutableDeserializeAndLoad;
  api.PJRT_Executable_GetCompileOptions = ExecutableGetCompileOptions;
  api.PJRT_Executable_ParameterMemoryKinds = ExecutableParameterMemoryKinds;

  // Loaded executables.
  api.PJRT_LoadedExecutable_Destroy = LoadedExecutableDestroy;
  api.PJRT_LoadedExecutable_GetExecutable = LoadedExecutableGetExecutable;
  api.PJRT_LoadedExecutable_AddressableDevices = LoadedExecutableAddressableDevices;
  api.PJRT_LoadedExecutable_Delete = LoadedExecutableDelete;
  api.PJRT_LoadedExecutable_IsDeleted = LoadedExecutableIsDeleted;
  api.PJRT_LoadedExecutable_Execute = LoadedExecutableExecute;
  api.PJRT_LoadedExecutable_Fingerprint = LoadedExecutableFingerprint;
  api.PJRT_LoadedExecutable_GetDeviceAssignment = LoadedExecutableGetDeviceAssignment;
  api.PJRT_LoadedExecutable_AddressableDeviceLogicalIds =
      LoadedExecutableAddressableDeviceLogicalIds;

  // Execute contexts.
  api.PJRT_ExecuteContext_Create = ExecuteContextCreate;
  api.PJRT_ExecuteContext_Destroy = ExecuteContextDestroy;

  // Buffers.
  api.PJRT_Buffer_Destroy = BufferDestroy;
  api.PJRT_Buffer_ElementType = BufferElementType;
  api.PJRT_Buffer_Dimensions = BufferDimensions;
  api.PJRT_Buffer_UnpaddedDimensions = BufferUnpaddedDimensions;
  api.PJRT_Buffer_DynamicDimensionIndices = BufferDynamicDimensionIndices;
  api.PJRT_Buffer_GetMemoryLayout = BufferGetMemoryLayout;
  api.PJRT_Buffer_OnDeviceSizeInBytes = BufferOnDeviceSizeInBytes;
  api.PJRT_Buffer_Device = BufferDevice;
  api.PJRT_Buffer_Memory = BufferMemory;
  api.PJRT_Buffer_Delete = BufferDelete;
  api.PJRT_Buffer_IsDeleted = BufferIsDeleted;
  api.PJRT_Buffer_CopyToDevice = BufferCopyToDevice;
  api.PJRT_Buffer_CopyToMemory = BufferCopyToMemory;
  api.PJRT_Buffer_ToHostBuffer = BufferToHostBuffer;
  api.PJRT_Buffer_IsOnCpu = BufferIsOnCpu;
  api.PJRT_Buffer_ReadyEvent = BufferReadyEvent;
  api.PJRT_Buffer_UnsafePointer = BufferUnsafePointer;
  api.PJRT_Buffer_IncreaseExternalReferenceCount = BufferIncreaseExternalReferenceCount;
  api.PJRT_Buffer_DecreaseExternalReferenceCount = BufferDecreaseExternalReferenceCount;
  api.PJRT_Buffer_OpaqueDeviceMemoryDataPointer = BufferOpaqueDeviceMemoryDataPointer;
  api.PJRT_Buffer_CopyRawToHost = BufferCopyRawToHost;
  api.PJRT_Buffer_CopyRawToHostFuture = BufferCopyRawToHostFuture;
  api.PJRT_Buffer_Bitcast = BufferBitcast;
  api.PJRT_Buffer_DonateWithControlDependency = BufferDonateWithControlDependency;

  // Copy-to-device streams (UNIMPLEMENTED).
  api.PJRT_CopyToDeviceStream_Destroy = CopyToDeviceStreamDestroy;
  api.PJRT_CopyToDeviceStream_AddChunk = CopyToDeviceStreamAddChunk;
  api.PJRT_CopyToDeviceStream_TotalBytes = CopyToDeviceStreamTotalBytes;
  api.PJRT_CopyToDeviceStream_GranuleSize = CopyToDeviceStreamGranuleSize;
  api.PJRT_CopyToDeviceStream_CurrentBytes = CopyToDeviceStreamCurrentBytes;

  // Asynchronous host-to-device transfer managers.
  api.PJRT_AsyncHostToDeviceTransferManager_Destroy = TransferManagerDestroy;
  api.PJRT_AsyncHostToDeviceTransferManager_TransferData = TransferManagerTransferData;
  api.PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer = TransferManagerRetrieveBuffer;
  api.PJRT_AsyncHostToDeviceTransferManager_Device = TransferManagerDevice;
  api.PJRT_AsyncHostToDeviceTransferManager_BufferCount = TransferManagerBufferCount;
  api.PJRT_AsyncHostToDeviceTransferManager_BufferSize = TransferManagerBufferSize;
  api.PJRT_AsyncHostToDeviceTransferManager_SetBufferError = TransferManagerSetBufferError;
  api.PJRT_AsyncHostToDeviceTransferManager_AddMetadata = TransferManagerAddMetadata;
  api.PJRT_AsyncHostToDeviceTransferManager_TransferLiteral = TransferManagerTransferLiteral;

  // Topologies.
  api.PJRT_TopologyDescription_Create = entry_points.topology_create;
  api.PJRT_TopologyDescription_Destroy = TopologyDestroy;
  api.PJRT_TopologyDescription_PlatformName = TopologyPlatformName;
  api.PJRT_TopologyDescription_PlatformVersion = TopologyPlatformVersion;
  api.PJRT_TopologyDescription_GetDeviceDescriptions = TopologyGetDeviceDescriptions;
  api.PJRT_TopologyDescription_Serialize = TopologySerialize;
  api.PJRT_TopologyDescription_Attributes = TopologyAttributes;
  api.PJRT_TopologyDescription_Deserialize = TopologyDeserialize;
  api.PJRT_Compile = TopologyCompile;
  api.PJRT_TopologyDescription_Fingerprint = TopologyFingerprint;
  api.PJRT_TopologyDescription_GetMemorySpaceKindIds = TopologyGetMemorySpaceKindIds;
  api.PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace =
      TopologyMakeCanonicalShapeForMemorySpace;

  return api;
}

}  // namespace capi
}  // namespace pjrtkit
