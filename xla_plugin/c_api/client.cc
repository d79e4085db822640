#include "xla_plugin/client/call_checks.h"
#include "xla_plugin/c_api/client.h"

// C++ standard library.
#include <string>
#include <utility>
#include <vector>

// pjrtkit.
#include "xla_plugin/c_api/client_reference.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/ffi_registry.h"
#include "xla_plugin/c_api/handles.h"
#include "xla_plugin/c_api/key_value_callbacks.h"
#include "xla_plugin/c_api/loaded_executable.h"

namespace pjrtkit {
namespace capi {
namespace {

// Builds the device and memory wrappers of a client handle; each C++ object gets one handle.
class WrapperBuilder {
 public:
  WrapperBuilder(const char* fn, PJRT_Client* handle) : fn_(fn), handle_(handle) {}

  // The handle of `device`, made on first sight.
  StatusOr<PJRT_Device*> Device(pjrtkit::Device* device) {
    if (device == nullptr) return Internal(std::string(fn_) + ": the client lists a null device");
    if (PJRT_Device* found = handle_->FindDevice(device)) return found;
    handle_->owned_devices.push_back(std::make_unique<PJRT_Device>(device, handle_));
    PJRT_Device* made = handle_->owned_devices.back().get();
    handle_->device_handles[device] = made;
    return made;
  }

  // The handle of `memory`, made on first sight.
  StatusOr<PJRT_Memory*> Memory(pjrtkit::Memory* memory) {
    if (memory == nullptr) return Internal(std::string(fn_) + ": the client lists a null memory");
    if (PJRT_Memory* found = handle_->FindMemory(memory)) return found;
    handle_->owned_memories.push_back(std::make_unique<MemoryImpl>());
    MemoryImpl* made = handle_->owned_memories.back().get();
    made->memory = memory;
    made->client = handle_;
    handle_->memory_handles[memory] = made;
    return made;
  }

 private:
  const char* fn_;       // Entry point, for messages.
  PJRT_Client* handle_;  // The handle being built.
};

}  // namespace

StatusOr<std::unique_ptr<PJRT_Client>> WrapClient(const char* fn, std::unique_ptr<Client> client) {
  if (client == nullptr) return Internal(std::string(fn) + ": the factory returned a null client");
  auto handle = std::make_unique<PJRT_Client>();
  handle->client = std::move(client);
  const Client& c = *handle->client;
  WrapperBuilder builder(fn, handle.get());
  for (pjrtkit::Device* d : c.devices()) {
    PJRTKIT_ASSIGN_OR_RETURN(PJRT_Device * device, builder.Device(d));
    handle->devices.push_back(device);
  }
  for (pjrtkit::Device* d : c.addressable_devices()) {
    PJRTKIT_ASSIGN_OR_RETURN(PJRT_Device * device, builder.Device(d));
    handle->addressable_devices.push_back(device);
  }
  for (pjrtkit::Memory* m : c.memories()) {
    PJRTKIT_ASSIGN_OR_RETURN(PJRT_Memory * memory, builder.Memory(m));
    handle->addressable_memories.push_back(memory);
  }
  // Devices first (the loop below only adds memories), then each memory's devices.
  for (const std::unique_ptr<PJRT_Device>& device : handle->owned_devices) {
    for (pjrtkit::Memory* m : device->device->memories()) {
      PJRTKIT_ASSIGN_OR_RETURN(PJRT_Memory * memory, builder.Memory(m));
      device->memories.push_back(memory);
    }
    if (pjrtkit::Memory* m = device->device->default_memory()) {
      PJRTKIT_ASSIGN_OR_RETURN(device->default_memory, builder.Memory(m));
    }
  }
  for (const std::unique_ptr<MemoryImpl>& memory : handle->owned_memories) {
    for (pjrtkit::Device* d : memory->memory->addressable_by_devices()) {
      PJRT_Device* device = handle->FindDevice(d);
      if (device == nullptr) {
        return Internal(std::string(fn) + ": memory " + memory->memory->debug_string() +
                        " is addressable by a device the client does not list");
      }
      memory->devices.push_back(device);
    }
  }
  StatusOr<const Topology*> topology = c.topology();
  if (!topology.ok()) {
    handle->topology_status = topology.status();
  } else if (*topology == nullptr) {
    handle->topology_status = Internal("the client returned a null topology");
  } else {
    handle->topology = std::make_unique<PJRT_TopologyDescription>(*topology, nullptr, handle.get());
  }
  return handle;
}

Status CheckSameClient(const char* fn, const char* what, const PJRT_Client* expected,
                       const PJRT_Client* actual) {
  if (expected == actual) return OkStatus();
  return ::pjrtkit::CheckSameClient(fn, what, expected == nullptr ? nullptr : expected->client.get(),
                                    actual == nullptr ? nullptr : actual->client.get());
}

PJRT_Error* ClientCreateWith(PJRT_Client_Create_Args* args, CreateClientFn create) {
  return Guard("PJRT_Client_Create", [&](const char* fn) -> Status {
    // kv_try_get_callback and kv_try_get_user_arg are newer: read only when present.
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_Create_Args, client)));
    PJRTKIT_ASSIGN_OR_RETURN(AttributeMap options,
                             ToAttributeMap(fn, args->create_options, args->num_options));
    PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<CallbackKeyValueStore> store,
                             CallbackKeyValueStore::FromArgs(*args));
    // However creation ends, the framework's callbacks are not called after this call unless the
    // client exists (PJRT_Client_Destroy closes the store then).
    struct CloseUnlessKept {
      std::shared_ptr<CallbackKeyValueStore> store;
      ~CloseUnlessKept() {
        if (store != nullptr) store->Close();
      }
    } close_on_failure{store};
    PJRTKIT_ASSIGN_OR_RETURN(MultiProcess multi_process,
                             MultiProcess::FromOptions(&options, store));
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<Client> client, create(options, multi_process));
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<PJRT_Client> handle,
                             WrapClient(fn, std::move(client)));
    // FFI handlers/types registered so far (often before any client existed) reach it now.
    PJRTKIT_RETURN_IF_ERROR(FfiRegistry::Global().Attach(handle->client.get()));
    handle->kv_store = std::move(close_on_failure.store);
    args->client = handle.release();
    return OkStatus();
  });
}

PJRT_Error* ClientDestroy(PJRT_Client_Destroy_Args* args) {
  return Guard("PJRT_Client_Destroy", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_Destroy_Args, client)));
    if (args->client == nullptr) return OkStatus();
    FfiRegistry::Global().Detach(args->client->client.get());
    // The framework may free its key-value callbacks once this returns; a device's inner client
    // kept alive by executables must not call them any more.
    if (args->client->kv_store != nullptr) args->client->kv_store->Close();
    // Buffers, executables and transfer managers still alive keep the client until they go.
    ClientReference::Release(args->client);
    return OkStatus();
  });
}

PJRT_Error* ClientUpdateGlobalProcessInfo(PJRT_Client_UpdateGlobalProcessInfo_Args* args) {
  return Guard("PJRT_Client_UpdateGlobalProcessInfo", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_UpdateGlobalProcessInfo_Args, num_process_infos)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    if (args->num_process_infos > 0 && args->process_infos == nullptr) {
      return InvalidArgument(std::string(fn) + ": process_infos is null but num_process_infos is " +
                             std::to_string(args->num_process_infos));
    }
    return OkStatus();
  });
}

PJRT_Error* ClientPlatformName(PJRT_Client_PlatformName_Args* args) {
  return Guard("PJRT_Client_PlatformName", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_PlatformName_Args, platform_name_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    const std::string& name = args->client->client->platform_name();
    args->platform_name = name.c_str();
    args->platform_name_size = name.size();
    return OkStatus();
  });
}

PJRT_Error* ClientProcessIndex(PJRT_Client_ProcessIndex_Args* args) {
  return Guard("PJRT_Client_ProcessIndex", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_ProcessIndex_Args, process_index)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    args->process_index = args->client->client->process_index();
    return OkStatus();
  });
}

PJRT_Error* ClientPlatformVersion(PJRT_Client_PlatformVersion_Args* args) {
  return Guard("PJRT_Client_PlatformVersion", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_PlatformVersion_Args, platform_version_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    const std::string& version = args->client->client->platform_version();
    args->platform_version = version.c_str();
    args->platform_version_size = version.size();
    return OkStatus();
  });
}

PJRT_Error* ClientDevices(PJRT_Client_Devices_Args* args) {
  return Guard("PJRT_Client_Devices", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_Devices_Args, num_devices)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    const std::vector<PJRT_Device*>& devices = args->client->devices;
    args->devices = devices.empty() ? nullptr : devices.data();
    args->num_devices = devices.size();
    return OkStatus();
  });
}

PJRT_Error* ClientAddressableDevices(PJRT_Client_AddressableDevices_Args* args) {
  return Guard("PJRT_Client_AddressableDevices", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_AddressableDevices_Args, num_addressable_devices)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    const std::vector<PJRT_Device*>& devices = args->client->addressable_devices;
    args->addressable_devices = devices.empty() ? nullptr : devices.data();
    args->num_addressable_devices = devices.size();
    return OkStatus();
  });
}

PJRT_Error* ClientLookupDevice(PJRT_Client_LookupDevice_Args* args) {
  return Guard("PJRT_Client_LookupDevice", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_LookupDevice_Args, device)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    PJRTKIT_ASSIGN_OR_RETURN(pjrtkit::Device * device,
                             args->client->client->LookupDevice(args->id));
    args->device = args->client->FindDevice(device);
    if (args->device == nullptr) {
      return Internal(std::string(fn) +
                      ": LookupDevice returned a device the client does not list");
    }
    return OkStatus();
  });
}

PJRT_Error* ClientLookupAddressableDevice(PJRT_Client_LookupAddressableDevice_Args* args) {
  return Guard("PJRT_Client_LookupAddressableDevice", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_LookupAddressableDevice_Args, addressable_device)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    PJRTKIT_ASSIGN_OR_RETURN(
        pjrtkit::Device * device,
        args->client->client->LookupAddressableDevice(args->local_hardware_id));
    args->addressable_device = args->client->FindDevice(device);
    if (args->addressable_device == nullptr) {
      return Internal(std::string(fn) +
                      ": LookupAddressableDevice returned a device the client does not list");
    }
    return OkStatus();
  });
}

PJRT_Error* ClientAddressableMemories(PJRT_Client_AddressableMemories_Args* args) {
  return Guard("PJRT_Client_AddressableMemories", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Client_AddressableMemories_Args, num_addressable_memories)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    const std::vector<PJRT_Memory*>& memories = args->client->addressable_memories;
    args->addressable_memories = memories.empty() ? nullptr : memories.data();
    args->num_addressable_memories = memories.size();
    return OkStatus();
  });
}

PJRT_Error* ClientCompile(PJRT_Client_Compile_Args* args) {
  return Guard("PJRT_Client_Compile", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_Compile_Args, executable)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    PJRTKIT_ASSIGN_OR_RETURN(Program cpp_program, ToProgram(fn, args->program));
    PJRTKIT_ASSIGN_OR_RETURN(
        std::string options,
        ToString(fn, "compile_options", args->compile_options, args->compile_options_size));
    StatusOr<std::unique_ptr<LoadedExecutable>> compiled =
        args->client->client->Compile(cpp_program, options);
    if (!compiled.ok()) {
      // "No FFI handler registered for x" says why when x was refused at registration.
      return FfiRegistry::Global().ExplainCompileError(args->client->client.get(),
                                                       compiled.status());
    }
    std::unique_ptr<LoadedExecutable> loaded = std::move(compiled).value();
    PJRTKIT_ASSIGN_OR_RETURN(args->executable,
                             WrapLoadedExecutable(fn, args->client, std::move(loaded)));
    return OkStatus();
  });
}

PJRT_Error* ClientLoad(PJRT_Client_Load_Args* args) {
  return Guard("PJRT_Client_Load", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_Load_Args, loaded_executable)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRTKIT_ASSIGN_OR_RETURN(
        std::string options,
        ToString(fn, "compile_options", args->compile_options, args->compile_options_size));
    std::optional<std::string> override_options;
    if (!options.empty()) override_options = std::move(options);
    PJRTKIT_ASSIGN_OR_RETURN(
        std::unique_ptr<LoadedExecutable> loaded,
        args->client->client->Load(*args->executable->executable, override_options));
    PJRTKIT_ASSIGN_OR_RETURN(args->loaded_executable,
                             WrapLoadedExecutable(fn, args->client, std::move(loaded)));
    return OkStatus();
  });
}

PJRT_Error* ClientDefaultDeviceAssignment(PJRT_Client_DefaultDeviceAssignment_Args* args) {
  return Guard("PJRT_Client_DefaultDeviceAssignment", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_DefaultDeviceAssignment_Args, default_assignment)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    if (args->num_replicas < 1 || args->num_partitions < 1) {
      return InvalidArgument(std::string(fn) +
                             ": num_replicas and num_partitions must be >= 1; "
                             "got " +
                             std::to_string(args->num_replicas) + " and " +
                             std::to_string(args->num_partitions));
    }
    const size_t needed =
        static_cast<size_t>(args->num_replicas) * static_cast<size_t>(args->num_partitions);
    if (args->default_assignment_size < needed) {
      return InvalidArgument(std::string(fn) + ": default_assignment_size is " +
                             std::to_string(args->default_assignment_size) + " but " +
                             std::to_string(args->num_replicas) + " replicas x " +
                             std::to_string(args->num_partitions) + " partitions need " +
                             std::to_string(needed));
    }
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "default_assignment", args->default_assignment));
    PJRTKIT_ASSIGN_OR_RETURN(std::vector<int> ids, args->client->client->DefaultDeviceAssignment(
                                                       args->num_replicas, args->num_partitions));
    if (ids.size() != needed) {
      return Internal(std::string(fn) + ": the client returned " + std::to_string(ids.size()) +
                      " device ids, expected " + std::to_string(needed));
    }
    for (size_t i = 0; i < needed; ++i) args->default_assignment[i] = ids[i];
    return OkStatus();
  });
}

PJRT_Error* ClientTopologyDescription(PJRT_Client_TopologyDescription_Args* args) {
  return Guard("PJRT_Client_TopologyDescription", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Client_TopologyDescription_Args, topology)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    if (args->client->topology == nullptr) return args->client->topology_status;
    args->topology = args->client->topology.get();
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
