#include "xla_plugin/client/call_checks.h"
#include "xla_plugin/c_api/loaded_executable.h"

// C++ standard library.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// pjrtkit.
#include "xla_plugin/c_api/buffer.h"
#include "xla_plugin/c_api/client.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/event.h"
#include "xla_plugin/c_api/executable.h"
#include "xla_plugin/c_api/executable_binding.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {
namespace {

// Frees what PJRT_LoadedExecutable_GetDeviceAssignment returned.
void DeleteDeviceAssignment(PJRT_DeviceAssignmentSerialized* serialized) { delete serialized; }

// "argument_lists[d][i]" for messages.
std::string ArgName(size_t d, size_t i) {
  return "argument_lists[" + std::to_string(d) + "][" + std::to_string(i) + "]";
}

// Converts PJRT_ExecuteOptions into ExecuteOptions (execute_device is set by the caller).
StatusOr<ExecuteOptions> ConvertOptions(const char* fn, const PJRT_ExecuteOptions& options) {
  // Fields after num_non_donatable_input_indices are newer: `context` is read when present;
  // call_location and the task incarnations are not read; a request pjrtkit cannot honour (a
  // multi-slice configuration, HLO output callbacks, custom options) is refused, not dropped.
  if (options.struct_size <
      PJRTKIT_ARGS_SIZE(PJRT_ExecuteOptions, num_non_donatable_input_indices)) {
    return InvalidArgument(
        std::string(fn) + ": PJRT_ExecuteOptions struct_size is " +
        std::to_string(options.struct_size) + ", expected at least " +
        std::to_string(PJRTKIT_ARGS_SIZE(PJRT_ExecuteOptions, num_non_donatable_input_indices)));
  }
  if (options.num_send_ops > 0 || options.num_recv_ops > 0) {
    return Unimplemented(std::string(fn) +
                         ": send/recv callbacks (host send/recv ops) are not supported by pjrtkit");
  }
  if (options.struct_size >= PJRTKIT_ARGS_SIZE(PJRT_ExecuteOptions, multi_slice_config) &&
      options.multi_slice_config != nullptr) {
    return Unimplemented(std::string(fn) +
                         ": options->multi_slice_config is not supported by pjrtkit (null "
                         "runs on this process's devices)");
  }
  if (options.struct_size >= PJRTKIT_ARGS_SIZE(PJRT_ExecuteOptions, num_hlo_output_callbacks) &&
      options.num_hlo_output_callbacks > 0) {
    return Unimplemented(std::string(fn) + ": options->hlo_output_callbacks (" +
                         std::to_string(options.num_hlo_output_callbacks) +
                         " given) are not supported by pjrtkit (0 accepted)");
  }
  if (options.struct_size >= PJRTKIT_ARGS_SIZE(PJRT_ExecuteOptions, num_custom_options) &&
      options.num_custom_options > 0) {
    return Unimplemented(std::string(fn) + ": options->custom_options (" +
                         std::to_string(options.num_custom_options) +
                         " given) are not supported by pjrtkit (0 accepted)");
  }
  ExecuteOptions out;
  out.launch_id = options.launch_id;
  if (options.struct_size >= PJRTKIT_ARGS_SIZE(PJRT_ExecuteOptions, context) &&
      options.context != nullptr) {
    out.context = options.context->context.get();
  }
  if (options.num_non_donatable_input_indices > 0) {
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "options->non_donatable_input_indices",
                                        options.non_donatable_input_indices));
    out.non_donatable_input_indices.insert(
        options.non_donatable_input_indices,
        options.non_donatable_input_indices + options.num_non_donatable_input_indices);
  }
  return out;
}

// Collects the argument buffers [num_devices][num_args] into `out` (reusing its capacity),
// checking each handle.
Status CollectArguments(const char* fn, const PJRT_LoadedExecutable_Execute_Args& args,
                        const PJRT_Client* client, std::vector<std::vector<Buffer*>>* out_lists) {
  std::vector<std::vector<Buffer*>>& out = *out_lists;
  out.resize(args.num_devices);
  for (std::vector<Buffer*>& list : out) list.clear();
  if (args.num_args == 0) return OkStatus();
  if (args.num_devices > 0)
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "argument_lists", args.argument_lists));
  for (size_t d = 0; d < args.num_devices; ++d) {
    PJRT_Buffer* const* list = args.argument_lists[d];
    if (list == nullptr) {
      return InvalidArgument(std::string(fn) + ": argument_lists[" + std::to_string(d) +
                             "] is null");
    }
    out[d].reserve(args.num_args);
    for (size_t i = 0; i < args.num_args; ++i) {
      const PJRT_Buffer* buffer = list[i];
      if (buffer == nullptr)
        return InvalidArgument(std::string(fn) + ": " + ArgName(d, i) + " is null");
      if (buffer->client != client) {  // ArgName only on error: this loop is on every Execute.
        PJRTKIT_RETURN_IF_ERROR(
            CheckSameClient(fn, ArgName(d, i).c_str(), client, buffer->client));
      }
      if (buffer->IsDeleted()) return DeletedBufferError(fn, ArgName(d, i));
      if (buffer->error != nullptr) {  // An error buffer: the execution fails with its error.
        Status failed(buffer->error->code(), std::string(fn) + ": " + ArgName(d, i) +
                                                 " is an error buffer: " +
                                                 buffer->error->message());
        for (const auto& [key, value] : buffer->error->payloads()) failed.SetPayload(key, value);
        return failed;
      }
      out[d].push_back(buffer->buffer.get());
    }
  }
  return OkStatus();
}

// Lends a PJRT_LoadedExecutable's scratch argument lists and result when no other Execute
// holds them (else its own), and empties them, keeping their storage, when done.
class ExecuteScratch {
 public:
  explicit ExecuteScratch(PJRT_LoadedExecutable& loaded) : loaded_(loaded) {
    bool expected = false;
    borrowed_ = loaded_.scratch_busy.compare_exchange_strong(expected, true);
  }
  ExecuteScratch(const ExecuteScratch&) = delete;
  ExecuteScratch& operator=(const ExecuteScratch&) = delete;
  ~ExecuteScratch() {
    for (std::vector<std::unique_ptr<Buffer>>& outputs : result()->outputs) outputs.clear();
    result()->completion.clear();
    if (borrowed_) loaded_.scratch_busy.store(false, std::memory_order_release);
  }
  // The argument lists to fill.
  std::vector<std::vector<Buffer*>>* arguments() {
    return borrowed_ ? &loaded_.scratch_arguments : &own_arguments_;
  }
  // The result to fill.
  ExecuteResult* result() { return borrowed_ ? &loaded_.scratch_result : &own_result_; }

 private:
  PJRT_LoadedExecutable& loaded_;                    // Owner of the scratch lists.
  bool borrowed_ = false;                            // Its scratch is ours until destruction.
  std::vector<std::vector<Buffer*>> own_arguments_;  // Used when the scratch is busy.
  ExecuteResult own_result_;                         // Used when the scratch is busy.
};

// Checks that `result` has num_devices x num_outputs non-null buffers.
Status CheckResult(const char* fn, const ExecuteResult& result, size_t num_devices,
                   size_t num_outputs) {
  if (result.outputs.size() != num_devices) {
    return Internal(std::string(fn) + ": the executable returned outputs for " +
                    std::to_string(result.outputs.size()) + " devices, expected " +
                    std::to_string(num_devices));
  }
  for (const std::vector<std::unique_ptr<Buffer>>& outputs : result.outputs) {
    if (outputs.size() != num_outputs) {
      return Internal(std::string(fn) + ": the executable returned " +
                      std::to_string(outputs.size()) + " outputs, but NumOutputs is " +
                      std::to_string(num_outputs));
    }
    for (const std::unique_ptr<Buffer>& buffer : outputs) {
      if (buffer == nullptr)
        return Internal(std::string(fn) + ": the executable returned a null output");
    }
  }
  return OkStatus();
}

// The completion event of device `d` (taken out of `result`): the device's own, or else "all
// outputs ready".
std::shared_ptr<Event> CompletionEvent(ExecuteResult& result, size_t d) {
  if (d < result.completion.size() && result.completion[d] != nullptr) {
    return std::move(result.completion[d]);
  }
  std::vector<std::shared_ptr<Event>> ready;
  for (std::unique_ptr<Buffer>& buffer : result.outputs[d]) ready.push_back(buffer->ReadyEvent());
  return Event::AfterAll(ready);
}

}  // namespace

StatusOr<PJRT_LoadedExecutable*> WrapLoadedExecutable(const char* fn, PJRT_Client* client,
                                                      std::unique_ptr<LoadedExecutable> loaded) {
  if (loaded == nullptr) return Internal(std::string(fn) + ": the client returned null");
  if (loaded->executable() == nullptr) {
    return Internal(std::string(fn) + ": the loaded executable has no executable");
  }
  auto handle = std::make_unique<PJRT_LoadedExecutable>();
  for (Device* device : loaded->addressable_devices()) {
    PJRT_Device* found = client->FindDevice(device);
    if (found == nullptr) {
      return Internal(std::string(fn) +
                      ": the executable runs on a device the client does not list");
    }
    handle->addressable_devices.push_back(found);
  }
  handle->num_outputs = loaded->executable()->num_outputs();
  handle->loaded = std::move(loaded);
  handle->client = client;
  handle->client_reference.Reset(client);
  ApplyThreadBinding(handle.get());  // Compile and DeserializeAndLoad both come here.
  return handle.release();
}

PJRT_Error* LoadedExecutableDestroy(PJRT_LoadedExecutable_Destroy_Args* args) {
  return Guard("PJRT_LoadedExecutable_Destroy", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_LoadedExecutable_Destroy_Args, executable)));
    if (args->executable == nullptr) return OkStatus();
    if (!args->executable->loaded->IsDeleted()) args->executable->loaded->Delete();
    delete args->executable;
    return OkStatus();
  });
}

PJRT_Error* LoadedExecutableGetExecutable(PJRT_LoadedExecutable_GetExecutable_Args* args) {
  return Guard("PJRT_LoadedExecutable_GetExecutable", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_LoadedExecutable_GetExecutable_Args, executable)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "loaded_executable", args->loaded_executable));
    std::shared_ptr<Executable> executable = args->loaded_executable->loaded->executable();
    if (executable == nullptr) return Internal(std::string(fn) + ": the executable is gone");
    args->executable = WrapExecutable(std::move(executable));
    return OkStatus();
  });
}

PJRT_Error* LoadedExecutableAddressableDevices(
    PJRT_LoadedExecutable_AddressableDevices_Args* args) {
  return Guard("PJRT_LoadedExecutable_AddressableDevices", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_LoadedExecutable_AddressableDevices_Args, num_addressable_devices)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    const std::vector<PJRT_Device*>& devices = args->executable->addressable_devices;
    args->addressable_devices = devices.empty() ? nullptr : devices.data();
    args->num_addressable_devices = devices.size();
    return OkStatus();
  });
}

PJRT_Error* LoadedExecutableDelete(PJRT_LoadedExecutable_Delete_Args* args) {
  return Guard("PJRT_LoadedExecutable_Delete", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_LoadedExecutable_Delete_Args, executable)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    args->executable->loaded->Delete();
    return OkStatus();
  });
}

PJRT_Error* LoadedExecutableIsDeleted(PJRT_LoadedExecutable_IsDeleted_Args* args) {
  return Guard("PJRT_LoadedExecutable_IsDeleted", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_LoadedExecutable_IsDeleted_Args, is_deleted)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    args->is_deleted = args->executable->loaded->IsDeleted();
    return OkStatus();
  });
}

PJRT_Error* LoadedExecutableExecute(PJRT_LoadedExecutable_Execute_Args* args) {
  return Guard("PJRT_LoadedExecutable_Execute", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_LoadedExecutable_Execute_Args, execute_device)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "options", args->options));
    PJRT_LoadedExecutable& loaded = *args->executable;
    PJRTKIT_RETURN_IF_ERROR(CheckExecutableNotDeleted(fn, "executable", *loaded.loaded));
    PJRTKIT_ASSIGN_OR_RETURN(ExecuteOptions options, ConvertOptions(fn, *args->options));
    if (args->execute_device != nullptr) {
      PJRTKIT_RETURN_IF_ERROR(
          CheckSameClient(fn, "args->execute_device", loaded.client, args->execute_device->client));
      options.execute_device = args->execute_device->device;
    }
    PJRTKIT_RETURN_IF_ERROR(
        CheckExecuteDevices(fn, *loaded.loaded, args->num_devices, options.execute_device));
    const size_t num_outputs = loaded.num_outputs;
    if (args->num_devices > 0)
      PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "output_lists", args->output_lists));
    for (size_t d = 0; num_outputs > 0 && d < args->num_devices; ++d) {
      if (args->output_lists[d] == nullptr) {
        return InvalidArgument(std::string(fn) + ": output_lists[" + std::to_string(d) +
                               "] is null");
      }
    }
    // An executable loaded under a binding passes its entry (merged with the caller's context).
    std::unique_ptr<ExecuteContext> merged_context;
    if (loaded.bound_context != nullptr) {
      PJRTKIT_ASSIGN_OR_RETURN(options.context,
                               BoundContext(fn, loaded, options.context, &merged_context));
    }
    ExecuteScratch scratch(loaded);
    PJRTKIT_RETURN_IF_ERROR(CollectArguments(fn, *args, loaded.client, scratch.arguments()));
    options.want_completion_events = args->device_complete_events != nullptr;
    ExecuteResult& result = *scratch.result();
    PJRTKIT_RETURN_IF_ERROR(loaded.loaded->ExecuteInto(*scratch.arguments(), options, &result));
    PJRTKIT_RETURN_IF_ERROR(CheckResult(fn, result, args->num_devices, num_outputs));
    // Nothing below fails: fill the caller's arrays.
    for (size_t d = 0; d < args->num_devices; ++d) {
      if (args->device_complete_events != nullptr) {
        args->device_complete_events[d] = WrapEvent(CompletionEvent(result, d));
      }
      // The handles of device d and of its default memory, where outputs normally live.
      PJRT_Device* device = args->execute_device != nullptr ? args->execute_device
                                                            : loaded.addressable_devices[d];
      PJRT_Memory* memory = device->default_memory;
      for (size_t i = 0; i < num_outputs; ++i) {
        PJRT_Buffer* output = WrapBuffer(loaded.client, std::move(result.outputs[d][i]));
        if (output->buffer->device() == device->device) output->device_handle = device;
        if (memory != nullptr && output->buffer->memory() == Impl(memory)->memory) {
          output->memory_handle = memory;
        }
        args->output_lists[d][i] = output;
      }
    }
    return OkStatus();
  });
}

PJRT_Error* ExecutableDeserializeAndLoad(PJRT_Executable_DeserializeAndLoad_Args* args) {
  return Guard("PJRT_Executable_DeserializeAndLoad", [&](const char* fn) -> Status {
    // The overridden_serialized_compile_options fields are newer: read only when present.
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_DeserializeAndLoad_Args, loaded_executable)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "client", args->client));
    PJRTKIT_ASSIGN_OR_RETURN(std::string serialized,
                             ToString(fn, "serialized_executable", args->serialized_executable,
                                      args->serialized_executable_size));
    std::optional<std::string> options;
    if (args->struct_size >= PJRTKIT_ARGS_SIZE(PJRT_Executable_DeserializeAndLoad_Args,
                                               overridden_serialized_compile_options_size) &&
        args->overridden_serialized_compile_options != nullptr) {
      options.emplace(args->overridden_serialized_compile_options,
                      args->overridden_serialized_compile_options_size);
    }
    PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<LoadedExecutable> loaded,
                             args->client->client->DeserializeAndLoad(serialized, options));
    PJRTKIT_ASSIGN_OR_RETURN(args->loaded_executable,
                             WrapLoadedExecutable(fn, args->client, std::move(loaded)));
    return OkStatus();
  });
}

PJRT_Error* LoadedExecutableFingerprint(PJRT_LoadedExecutable_Fingerprint_Args* args) {
  return Guard("PJRT_LoadedExecutable_Fingerprint", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_LoadedExecutable_Fingerprint_Args, executable_fingerprint_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    const LoadedExecutable& loaded = *args->executable->loaded;
    PJRTKIT_ASSIGN_OR_RETURN(
        const std::string* fingerprint,
        args->executable->fingerprint.Get([&]() -> StatusOr<std::unique_ptr<std::string>> {
          PJRTKIT_ASSIGN_OR_RETURN(std::string f, loaded.executable()->fingerprint());
          return std::make_unique<std::string>(std::move(f));
        }));
    args->executable_fingerprint = fingerprint->c_str();
    args->executable_fingerprint_size = fingerprint->size();
    return OkStatus();
  });
}

PJRT_Error* LoadedExecutableGetDeviceAssignment(
    PJRT_LoadedExecutable_GetDeviceAssignment_Args* args) {
  return Guard("PJRT_LoadedExecutable_GetDeviceAssignment", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args,
                  PJRTKIT_ARGS_SIZE(PJRT_LoadedExecutable_GetDeviceAssignment_Args,
                                    serialized_device_assignment_deleter)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRTKIT_ASSIGN_OR_RETURN(std::string bytes,
                             args->executable->loaded->SerializedDeviceAssignment());
    auto* serialized = new PJRT_DeviceAssignmentSerialized{std::move(bytes)};
    args->serialized_bytes = serialized->bytes.data();
    args->serialized_bytes_size = serialized->bytes.size();
    args->serialized_device_assignment = serialized;
    args->serialized_device_assignment_deleter = &DeleteDeviceAssignment;
    return OkStatus();
  });
}

PJRT_Error* LoadedExecutableAddressableDeviceLogicalIds(
    PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args* args) {
  return Guard("PJRT_LoadedExecutable_AddressableDeviceLogicalIds", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args,
                  PJRTKIT_ARGS_SIZE(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args,
                                    num_addressable_device_logical_ids)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    const PJRT_LoadedExecutable& handle = *args->executable;
    PJRTKIT_ASSIGN_OR_RETURN(
        const std::vector<PJRT_LogicalDeviceIds>* ids,
        args->executable->logical_ids.Get(
            [&]() -> StatusOr<std::unique_ptr<std::vector<PJRT_LogicalDeviceIds>>> {
              PJRTKIT_ASSIGN_OR_RETURN(std::vector<LogicalDeviceId> logical,
                                       handle.loaded->addressable_device_logical_ids());
              if (logical.size() != handle.addressable_devices.size()) {
                return Internal(std::string(fn) + ": the device gave " +
                                std::to_string(logical.size()) + " logical ids for " +
                                std::to_string(handle.addressable_devices.size()) +
                                " addressable devices");
              }
              auto out = std::make_unique<std::vector<PJRT_LogicalDeviceIds>>();
              for (const LogicalDeviceId& id : logical) {
                PJRT_LogicalDeviceIds c{};
                c.replica = id.replica;
                c.partition = id.partition;
                out->push_back(c);
              }
              return out;
            }));
    args->addressable_device_logical_ids =
        ids->empty() ? nullptr : const_cast<PJRT_LogicalDeviceIds*>(ids->data());
    args->num_addressable_device_logical_ids = ids->size();
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
