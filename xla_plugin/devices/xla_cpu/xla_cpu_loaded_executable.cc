#include "xla_plugin/devices/xla_cpu/xla_cpu_loaded_executable.h"

#include <utility>

#include "xla_plugin/devices/xla_cpu/xla_cpu_buffer.h"
#include "xla_plugin/devices/xla_cpu/xla_cpu_client.h"

namespace pjrtkit {
namespace xla_cpu {

StatusOr<std::unique_ptr<XlaCpuLoadedExecutable>> XlaCpuLoadedExecutable::Wrap(
    XlaCpuClient* client, PJRT_LoadedExecutable* inner) {
  if (inner == nullptr) return Internal("XLA:CPU returned a null loaded executable");
  std::unique_ptr<XlaCpuLoadedExecutable> loaded(new XlaCpuLoadedExecutable(client, inner));
  PJRTKIT_RETURN_IF_ERROR(loaded->Init());
  return loaded;
}

XlaCpuLoadedExecutable::XlaCpuLoadedExecutable(XlaCpuClient* client, PJRT_LoadedExecutable* inner)
    : client_(client), inner_(inner) {}

XlaCpuLoadedExecutable::~XlaCpuLoadedExecutable() {
  client_->inner().DestroyLoadedExecutable(inner_);
}

Status XlaCpuLoadedExecutable::Init() {
  const InnerApi& api = client_->inner();
  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_GetExecutable, exe_args);
  exe_args.loaded_executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_LoadedExecutable_GetExecutable, &exe_args));
  PJRTKIT_ASSIGN_OR_RETURN(
      executable_,
      XlaCpuExecutable::Wrap(client_->shared_inner(), exe_args.executable));
  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_AddressableDevices, device_args);
  device_args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(api, PJRT_LoadedExecutable_AddressableDevices, &device_args));
  for (size_t i = 0; i < device_args.num_addressable_devices; ++i) {
    XlaCpuDevice* device = client_->FromInner(device_args.addressable_devices[i]);
    if (device == nullptr) return Internal("XLA:CPU loaded an executable on an unknown device");
    devices_.push_back(device);
  }
  return OkStatus();
}

void XlaCpuLoadedExecutable::Delete() {
  deleted_ = true;
  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_Delete, args);
  args.executable = inner_;
  PJRTKIT_INNER_CALL(client_->inner(), PJRT_LoadedExecutable_Delete, &args);
}

bool XlaCpuLoadedExecutable::IsDeleted() const {
  if (deleted_) return true;
  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_IsDeleted, args);
  args.executable = inner_;
  Status status = PJRTKIT_INNER_CALL(client_->inner(), PJRT_LoadedExecutable_IsDeleted, &args);
  return !status.ok() || args.is_deleted;
}

StatusOr<std::vector<std::vector<PJRT_Buffer*>>> XlaCpuLoadedExecutable::InnerArguments(
    const std::vector<std::vector<Buffer*>>& arguments,
    const std::vector<Device*>& devices) const {
  std::vector<std::vector<PJRT_Buffer*>> inner(arguments.size());
  const size_t num_args = arguments.empty() ? 0 : arguments[0].size();
  for (size_t d = 0; d < arguments.size(); ++d) {
    if (arguments[d].size() != num_args) {
      return InvalidArgument("Execute: argument list " + std::to_string(d) + " has " +
                             std::to_string(arguments[d].size()) + " buffers, list 0 has " +
                             std::to_string(num_args));
    }
    for (size_t i = 0; i < num_args; ++i) {
      const std::string what =
          "Execute argument " + std::to_string(i) + " for device list " + std::to_string(d);
      PJRTKIT_ASSIGN_OR_RETURN(XlaCpuBuffer * buffer, client_->OwnBuffer(arguments[d][i], what));
      if (buffer->IsDeleted()) {
        return FailedPrecondition(what + " is a buffer that was deleted or donated");
      }
      if (buffer->device() != devices[d]) {
        return InvalidArgument(what + " is on " + buffer->device()->description().debug_string() +
                               ", but that list runs on " +
                               devices[d]->description().debug_string());
      }
      inner[d].push_back(buffer->inner());
    }
  }
  return inner;
}

StatusOr<ExecuteResult> XlaCpuLoadedExecutable::Execute(
    const std::vector<std::vector<Buffer*>>& arguments, const ExecuteOptions& options) {
  if (IsDeleted()) {
    return FailedPrecondition("Execute called on executable '" + executable_->name() +
                              "' after Delete()");
  }
  // The devices the argument lists run on.
  std::vector<Device*> devices = devices_;
  PJRT_Device* execute_device = nullptr;
  if (options.execute_device != nullptr) {
    PJRTKIT_ASSIGN_OR_RETURN(XlaCpuDevice * device,
                             client_->OwnDevice(options.execute_device, "Execute execute_device"));
    devices = {device};
    execute_device = device->inner();
  } else if (devices.empty()) {
    return InvalidArgument("Execute: executable '" + executable_->name() +
                           "' is portable (compiled for no device); set execute_device");
  }
  if (arguments.size() != devices.size()) {
    return InvalidArgument("Execute: got " + std::to_string(arguments.size()) +
                           " argument lists for executable '" + executable_->name() +
                           "', which runs on " + std::to_string(devices.size()) + " device(s)");
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<std::vector<PJRT_Buffer*>> inner_args,
                           InnerArguments(arguments, devices));
  const size_t num_devices = devices.size();
  const size_t num_args = arguments.empty() ? 0 : arguments[0].size();

  // Arguments the framework holds raw references to (DLPack) must not be donated either.
  std::vector<int64_t> non_donatable(options.non_donatable_input_indices.begin(),
                                     options.non_donatable_input_indices.end());
  for (size_t i = 0; i < num_args; ++i) {
    for (size_t d = 0; d < num_devices; ++d) {
      if (arguments[d][i]->external_reference_count() > 0 &&
          options.non_donatable_input_indices.count(static_cast<int64_t>(i)) == 0) {
        non_donatable.push_back(static_cast<int64_t>(i));
        break;
      }
    }
  }

  std::vector<PJRT_Buffer* const*> arg_lists;
  for (const auto& list : inner_args) arg_lists.push_back(list.data());
  const size_t num_outputs = executable_->num_outputs();
  std::vector<std::vector<PJRT_Buffer*>> outputs(num_devices,
                                                 std::vector<PJRT_Buffer*>(num_outputs, nullptr));
  std::vector<PJRT_Buffer**> output_lists;
  for (auto& list : outputs) output_lists.push_back(list.data());
  std::vector<PJRT_Event*> events(num_devices, nullptr);

  PJRT_ExecuteOptions inner_options{};
  inner_options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  inner_options.launch_id = options.launch_id;
  inner_options.non_donatable_input_indices = non_donatable.data();
  inner_options.num_non_donatable_input_indices = non_donatable.size();

  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_Execute, args);
  args.executable = inner_;
  args.options = &inner_options;
  args.argument_lists = arg_lists.data();
  args.num_devices = num_devices;
  args.num_args = num_args;
  args.output_lists = output_lists.data();
  args.device_complete_events = options.want_completion_events ? events.data() : nullptr;
  args.execute_device = execute_device;
  const InnerApi& api = client_->inner();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_LoadedExecutable_Execute, &args));

  // Take ownership of everything the inner call returned before anything can fail.
  ExecuteResult result;
  for (PJRT_Event* event : events) {
    if (options.want_completion_events) {
      result.completion.push_back(api.WrapEvent(event, "PJRT_LoadedExecutable_Execute"));
    }
  }
  Status wrap_status;
  result.outputs.resize(num_devices);
  for (size_t d = 0; d < num_devices; ++d) {
    for (size_t o = 0; o < num_outputs; ++o) {
      if (!wrap_status.ok()) {
        api.DestroyBuffer(outputs[d][o]);
        continue;
      }
      StatusOr<std::unique_ptr<XlaCpuBuffer>> buffer = XlaCpuBuffer::Wrap(client_, outputs[d][o]);
      if (buffer.ok()) {
        result.outputs[d].push_back(std::move(buffer).value());
      } else {
        wrap_status = buffer.status();
      }
    }
  }
  // Donated inputs are now deleted by the inner plugin: asking updates their memory count.
  for (const auto& list : arguments) {
    for (Buffer* buffer : list) buffer->IsDeleted();
  }
  if (!wrap_status.ok()) return wrap_status;
  return result;
}

StatusOr<std::string> XlaCpuLoadedExecutable::SerializedDeviceAssignment() const {
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

}  // namespace xla_cpu
}  // namespace pjrtkit
