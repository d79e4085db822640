#include "xla_plugin/plugin_wrapper/wrapped_loaded_executable.h"

#include <algorithm>
#include <utility>

#include "xla_plugin/plugin_wrapper/device_assignment.h"
#include "xla_plugin/plugin_wrapper/inline_vector.h"
#include "xla_plugin/plugin_wrapper/inner_ffi.h"
#include "xla_plugin/plugin_wrapper/wrapped_buffer.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// `status` with `prefix` before its message (OK stays OK).
Status Prefixed(const char* prefix, const Status& status) {
  if (status.ok()) return Status();
  return Status(status.code(), prefix + status.message());
}

// "Execute argument <i> for device list <d>", for error messages only (not built on success).
std::string ArgumentName(size_t i, size_t d) {
  return "Execute argument " + std::to_string(i) + " for device list " + std::to_string(d);
}

}  // namespace

StatusOr<std::unique_ptr<WrappedLoadedExecutable>> WrappedLoadedExecutable::Wrap(
    WrappedClient* client, InnerClient::LoadedPtr inner) {
  if (inner == nullptr) {
    return Internal(client->inner().name() + " returned a null loaded executable");
  }
  std::unique_ptr<WrappedLoadedExecutable> loaded(
      new WrappedLoadedExecutable(client, std::move(inner)));
  PJRTKIT_RETURN_IF_ERROR(loaded->Init());
  return loaded;
}

WrappedLoadedExecutable::WrappedLoadedExecutable(WrappedClient* client,
                                               InnerClient::LoadedPtr inner)
    : client_(client),
      owned_inner_(std::move(inner)),
      inner_(owned_inner_.get()),
      output_infos_(client->devices().size()) {}

// The inner loaded executable goes when the executable (possibly still held through a
// PJRT_Executable) lets go of it too.
WrappedLoadedExecutable::~WrappedLoadedExecutable() = default;

Status WrappedLoadedExecutable::Init() {
  const InnerApi& api = client_->inner();
  PJRTKIT_ASSIGN_OR_RETURN(
      executable_, WrappedExecutable::FromLoaded(client_->shared_inner_client(), owned_inner_));
  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_AddressableDevices, device_args);
  device_args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(api, PJRT_LoadedExecutable_AddressableDevices, &device_args));
  std::string remote;  // Devices of other processes the program was compiled for.
  for (size_t i = 0; i < device_args.num_addressable_devices; ++i) {
    WrappedDevice* device = client_->FromInner(device_args.addressable_devices[i]);
    if (device == nullptr) {
      return Internal(api.name() + " loaded an executable on an unknown device");
    }
    if (!device->IsAddressable()) {
      remote += (remote.empty() ? "" : ", ") + std::to_string(device->description().id()) +
                " (process " + std::to_string(device->description().process_index()) + ")";
      continue;
    }
    devices_.push_back(device);
  }
  // Only a plugin that knows nothing of other processes (pjrtkit placed the devices: XLA:CPU)
  // loads a program on them; it would run their shards here, and its collectives would stay
  // inside this process: refused rather than computed wrongly or left to hang.
  if (!remote.empty()) {
    return Unimplemented(
        "pjrtkit (" + client_->policy().backend() + "): this program spans processes (it runs on "
        "devices " + remote + " besides this process's " + std::to_string(devices_.size()) +
        "), but " + api.name() + " runs programs and collectives within one process only; run "
        "it on this process's devices (jax.local_devices()), or on a device whose inner plugin "
        "does cross-process collectives (xla_gpu: NCCL)");
  }
  return OkStatus();
}

void WrappedLoadedExecutable::Delete() {
  deleted_ = true;
  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_Delete, args);
  args.executable = inner_;
  PJRTKIT_INNER_CALL(client_->inner(), PJRT_LoadedExecutable_Delete, &args);
}

// XLA:CPU's PJRT_LoadedExecutable_Delete is a no-op and its IsDeleted never turns true, so the
// flag is the whole answer (asking the inner plugin cost two calls per Execute).
bool WrappedLoadedExecutable::IsDeleted() const { return deleted_; }

Status WrappedLoadedExecutable::InnerArguments(const std::vector<std::vector<Buffer*>>& arguments,
                                              const std::vector<Device*>& devices,
                                              PJRT_Buffer** inner) const {
  const size_t num_args = arguments.empty() ? 0 : arguments[0].size();
  // XLA:CPU checks only byte sizes; check element types and dimensions here when known.
  const ParameterShapes* shapes = executable_->parameter_shapes();
  if (shapes != nullptr) {
    PJRTKIT_RETURN_IF_ERROR(
        Prefixed("Execute: ", shapes->CheckCount(num_args, executable_->name())));
  }
  for (size_t d = 0; d < arguments.size(); ++d) {
    if (arguments[d].size() != num_args) {
      return InvalidArgument("Execute: argument list " + std::to_string(d) + " has " +
                             std::to_string(arguments[d].size()) + " buffers, list 0 has " +
                             std::to_string(num_args));
    }
    for (size_t i = 0; i < num_args; ++i) {
      auto* buffer = dynamic_cast<WrappedBuffer*>(arguments[d][i]);
      if (buffer == nullptr || buffer->client() != client_) {
        return client_->OwnBuffer(arguments[d][i], ArgumentName(i, d)).status();
      }
      if (buffer->device() != devices[d]) {
        return InvalidArgument(ArgumentName(i, d) + " is on " +
                               buffer->device()->description().debug_string() +
                               ", but that list runs on " +
                               devices[d]->description().debug_string());
      }
      if (shapes != nullptr) {
        PJRTKIT_RETURN_IF_ERROR(Prefixed(
            "Execute: ", shapes->CheckArgument(i, buffer->element_type(), buffer->dimensions(),
                                               executable_->name())));
        // XLA:CPU reads an argument's bytes in the program's layout, whatever the buffer's is.
        const WrappedBufferInfo& info = *buffer->info();
        if (!(info.row_major && shapes->row_major(i)) && info.layout.ok() &&
            client_->policy().moves_bytes_ignoring_layouts()) {
          PJRTKIT_RETURN_IF_ERROR(Prefixed(
              "Execute: ", shapes->CheckArgumentLayout(i, *info.layout, info.dims,
                                                       executable_->name(),
                                                       client_->inner().name())));
        }
      }
      inner[d * num_args + i] = buffer->inner();
    }
  }
  return OkStatus();
}

StatusOr<ExecuteResult> WrappedLoadedExecutable::Execute(
    const std::vector<std::vector<Buffer*>>& arguments, const ExecuteOptions& options) {
  ExecuteResult result;
  PJRTKIT_RETURN_IF_ERROR(ExecuteInto(arguments, options, &result));
  return result;
}

Status WrappedLoadedExecutable::ExecuteInto(const std::vector<std::vector<Buffer*>>& arguments,
                                           const ExecuteOptions& options, ExecuteResult* result) {
  // FFI user data reaches XLA:CPU's FFI handlers through an inner execute context, which must
  // live until the execution completes (it runs asynchronously): the completion events hold it.
  // An empty context changes nothing, and most executions have none: they pass no inner context,
  // exactly as before (a context changes how XLA:CPU runs an execution; see README).
  std::shared_ptr<PJRT_ExecuteContext> inner_context;
  if (options.context != nullptr && !options.context->empty()) {
    PJRTKIT_ASSIGN_OR_RETURN(InnerFfi ffi, InnerFfi::Find(client_->shared_inner()));
    PJRTKIT_ASSIGN_OR_RETURN(inner_context, ffi.ForwardContext(*options.context));
  } else if (executable_->calls_ffi_handlers() &&
             client_->policy().ffi_programs_need_a_context()) {
    // XLA:CPU crashes when a handler looks user data up in an execution without a context (an
    // executable with host callbacks loaded outside JAX's compile path has no binding): give it
    // the client's empty one, and the lookup answers "not found" (custom_call_targets.h).
    PJRTKIT_ASSIGN_OR_RETURN(inner_context, client_->EmptyInnerContext());
  }
  // The devices the argument lists run on (no copy of devices_: Execute is the hot path).
  std::vector<Device*> execute_devices;
  const std::vector<Device*>& devices =
      options.execute_device != nullptr ? execute_devices : devices_;
  PJRT_Device* execute_device = nullptr;
  if (options.execute_device != nullptr) {
    PJRTKIT_ASSIGN_OR_RETURN(WrappedDevice * device,
                             client_->OwnDevice(options.execute_device, "Execute execute_device"));
    execute_devices.push_back(device);
    execute_device = device->inner();
  }
  // A caller that skipped CheckExecuteDevices (call_checks.h; the C layer runs it): refused
  // before the lists are indexed by device.
  if (arguments.size() != devices.size()) {
    return Internal("Execute: " + std::to_string(arguments.size()) + " argument lists for " +
                    std::to_string(devices.size()) + " device(s); the caller must run "
                    "CheckExecuteDevices first");
  }
  const size_t num_devices = devices.size();
  const size_t num_args = arguments.empty() ? 0 : arguments[0].size();
  // The per-call arrays stay on the stack for up to kInline entries (no heap allocation).
  constexpr size_t kInline = 16;
  InlineVector<PJRT_Buffer*, kInline> inner_args(num_devices * num_args);  // InnerArguments fills.
  PJRTKIT_RETURN_IF_ERROR(InnerArguments(arguments, devices, inner_args.data()));

  // Arguments the framework holds raw references to (DLPack) must not be donated either.
  InlineVector<int64_t, kInline> non_donatable;
  for (int64_t index : options.non_donatable_input_indices) non_donatable.push_back(index);
  for (size_t i = 0; i < num_args; ++i) {
    for (size_t d = 0; d < num_devices; ++d) {
      if (arguments[d][i]->external_reference_count() > 0 &&
          options.non_donatable_input_indices.count(static_cast<int64_t>(i)) == 0) {
        non_donatable.push_back(static_cast<int64_t>(i));
        break;
      }
    }
  }

  const size_t num_outputs = executable_->num_outputs();
  // The inner call fills `outputs` (and `events` when asked); they are read only after it.
  InlineVector<PJRT_Buffer*, kInline> outputs(num_devices * num_outputs);
  InlineVector<PJRT_Event*, kInline> events(num_devices);
  InlineVector<PJRT_Buffer* const*, kInline> arg_lists(num_devices);
  InlineVector<PJRT_Buffer**, kInline> output_lists(num_devices);
  for (size_t d = 0; d < num_devices; ++d) {
    arg_lists[d] = inner_args.data() + d * num_args;
    output_lists[d] = outputs.data() + d * num_outputs;
    events[d] = nullptr;
  }

  PJRT_ExecuteOptions inner_options{};
  inner_options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  inner_options.launch_id = options.launch_id;
  inner_options.non_donatable_input_indices = non_donatable.data();
  inner_options.num_non_donatable_input_indices = non_donatable.size();
  inner_options.context = inner_context.get();

  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_Execute, args);
  args.executable = inner_;
  args.options = &inner_options;
  args.argument_lists = arg_lists.data();
  args.num_devices = num_devices;
  args.num_args = num_args;
  args.output_lists = output_lists.data();
  // A forwarded context needs the completion events even when the caller does not.
  const bool need_events = options.want_completion_events || inner_context != nullptr;
  args.device_complete_events = need_events ? events.data() : nullptr;
  args.execute_device = execute_device;
  const InnerApi& api = client_->inner();
  Status execute_status = PJRTKIT_INNER_CALL(api, PJRT_LoadedExecutable_Execute, &args);
  // Inputs the inner plugin donated are deleted now: mark them (which also updates the memory
  // counts). Only arguments that could be donated are asked about.
  RefreshDonated(arguments, non_donatable.data(), non_donatable.size());
  PJRTKIT_RETURN_IF_ERROR(execute_status);

  // Take ownership of everything the inner call returned before anything can fail. `result`'s
  // vectors may keep storage from an earlier call (see LoadedExecutable::ExecuteInto).
  result->completion.clear();
  if (need_events) {
    result->completion.reserve(num_devices);
    for (PJRT_Event* event : events) {
      result->completion.push_back(api.WrapEvent(event, "PJRT_LoadedExecutable_Execute"));
      // Each device's completion holds the forwarded context; the last one frees it.
      if (inner_context != nullptr) {
        result->completion.back()->OnReady([inner_context](const Status&) {});
      }
    }
  }
  Status wrap_status;
  result->outputs.resize(num_devices);
  for (size_t d = 0; d < num_devices; ++d) {
    result->outputs[d].clear();
    // An execution that already finished well (XLA:CPU runs small programs inline) made its
    // outputs ready: they share the completion event, so asking for their ReadyEvent is free.
    const bool ready =
        d < result->completion.size() && result->completion[d] == api.ready_event();
    // Outputs of list d always go to the same device: d identifies it, except for a portable
    // executable, which runs on any device (then its id does).
    const int key =
        execute_device != nullptr ? devices[d]->description().id() : static_cast<int>(d);
    wrap_status = WrapOutputs(key, outputs.data() + d * num_outputs, num_outputs, ready,
                              wrap_status, &result->outputs[d]);
  }
  if (!options.want_completion_events) result->completion.clear();  // Only for the context.
  return wrap_status;
}

Status WrappedLoadedExecutable::WrapOutputs(int key, PJRT_Buffer* const* inner_outputs,
                                           size_t num_outputs, bool ready, Status status,
                                           std::vector<std::unique_ptr<Buffer>>* outputs) {
  const OutputInfoCache::Infos* known = output_infos_.Find(key);
  OutputInfoCache::Infos infos;  // Read for the first execution on `device`.
  outputs->reserve(num_outputs);
  for (size_t o = 0; o < num_outputs; ++o) {
    if (!status.ok()) {  // Destroy what is left after an error.
      client_->inner().DestroyBuffer(inner_outputs[o]);
      continue;
    }
    if (known != nullptr && o < known->size()) {
      outputs->push_back(
          WrappedBuffer::WrapWithInfo(client_, inner_outputs[o], (*known)[o], ready));
      continue;
    }
    StatusOr<std::shared_ptr<const WrappedBufferInfo>> info =
        WrappedBuffer::ReadInfo(client_, inner_outputs[o]);
    if (!info.ok()) {
      client_->inner().DestroyBuffer(inner_outputs[o]);
      status = info.status();
      continue;
    }
    if (known == nullptr) infos.push_back(info.value());
    outputs->push_back(
        WrappedBuffer::WrapWithInfo(client_, inner_outputs[o], std::move(info).value(), ready));
  }
  if (status.ok() && known == nullptr) output_infos_.Remember(key, std::move(infos));
  return status;
}

void WrappedLoadedExecutable::RefreshDonated(const std::vector<std::vector<Buffer*>>& arguments,
                                            const int64_t* non_donatable,
                                            size_t num_non_donatable) const {
  const DonatableParameters* donatable = executable_->donatable_parameters();
  if (donatable != nullptr && donatable->none()) return;
  const int64_t* end = non_donatable + num_non_donatable;
  for (const std::vector<Buffer*>& list : arguments) {
    for (size_t i = 0; i < list.size(); ++i) {
      if ((donatable == nullptr || donatable->MayDonate(i)) &&
          std::find(non_donatable, end, static_cast<int64_t>(i)) == end) {
        static_cast<WrappedBuffer*>(list[i])->RefreshDeleted();  // Checked by InnerArguments.
      }
    }
  }
}

NativeHandle WrappedLoadedExecutable::native_handle() const {
  return {client_->inner().api(), inner_};
}

StatusOr<std::vector<LogicalDeviceId>> WrappedLoadedExecutable::addressable_device_logical_ids()
    const {
  if (devices_.empty()) return std::vector<LogicalDeviceId>();  // Portable: no assignment.
  const InnerApi& api = client_->inner();
  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds, args);
  args.executable = inner_;
  Status inner = PJRTKIT_INNER_CALL(api, PJRT_LoadedExecutable_AddressableDeviceLogicalIds, &args);
  if (inner.ok()) {
    if (args.num_addressable_device_logical_ids != devices_.size()) {
      return Internal(api.name() + " gave " +
                      std::to_string(args.num_addressable_device_logical_ids) +
                      " logical device ids for " + std::to_string(devices_.size()) +
                      " addressable devices");
    }
    std::vector<LogicalDeviceId> out;
    for (size_t i = 0; i < args.num_addressable_device_logical_ids; ++i) {
      out.push_back({args.addressable_device_logical_ids[i].replica,
                     args.addressable_device_logical_ids[i].partition});
    }
    return out;
  }
  if (inner.code() != StatusCode::kUnimplemented) return inner;
  PJRTKIT_ASSIGN_OR_RETURN(std::string bytes, SerializedDeviceAssignment());
  PJRTKIT_ASSIGN_OR_RETURN(DeviceAssignment assignment, DeviceAssignment::Parse(bytes));
  std::vector<int> ids;
  for (const Device* device : devices_) ids.push_back(device->description().id());
  return assignment.LogicalIdsOf(ids);
}

StatusOr<std::string> WrappedLoadedExecutable::SerializedDeviceAssignment() const {
  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_GetDeviceAssignment, args);
  args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(client_->inner(), PJRT_LoadedExecutable_GetDeviceAssignment, &args));
  std::string bytes;
  if (args.serialized_bytes != nullptr) {
    bytes.assign(args.serialized_bytes, args.serialized_bytes_size);
  }
  if (args.serialized_device_assignment_deleter != nullptr) {
    args.serialized_device_assignment_deleter(args.serialized_device_assignment);
  }
  return bytes;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
