#include "xla_plugin/plugin_wrapper/inner_client.h"

#include <cstring>
#include <utility>
#include <vector>

#include "xla_plugin/plugin_wrapper/compile_options.h"
#include "xla_plugin/plugin_wrapper/hlo_id_check.h"
#include "xla_plugin/plugin_wrapper/inner_key_value_callbacks.h"

namespace pjrtkit {
namespace plugin_wrapper {

StatusOr<std::shared_ptr<InnerClient>> InnerClient::Create(
    std::shared_ptr<InnerApi> api, std::shared_ptr<const DevicePolicy> policy, int device_count,
    const MultiProcess& forward) {
  if (api == nullptr) return Internal("InnerClient::Create: no inner plugin");
  if (policy == nullptr) return Internal("InnerClient::Create: no device policy");
  AttributeMap options = policy->InnerClientOptions(device_count);
  if (forward.node_options_given()) {
    options[kNodeIdOption] = int64_t{forward.process_index()};
    options[kNumNodesOption] = int64_t{forward.num_processes()};
  }
  std::vector<PJRT_NamedValue> values = InnerApi::ToNamedValues(options);
  PJRTKIT_INNER_ARGS(PJRT_Client_Create, args);
  args.create_options = values.data();
  args.num_options = values.size();
  if (forward.store() != nullptr) InnerKeyValueCallbacks::Fill(forward.store().get(), &args);
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api, PJRT_Client_Create, &args));
  if (args.client == nullptr) {
    return Internal(api->name() + " PJRT_Client_Create returned no client");
  }
  // From here on the client is owned, so an error below destroys it.
  std::shared_ptr<InnerClient> client(
      new InnerClient(std::move(api), std::move(policy), args.client, device_count));
  client->store_ = forward.store();
  PJRTKIT_INNER_ARGS(PJRT_Client_Devices, devices_args);
  devices_args.client = client->client_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*client->api_, PJRT_Client_Devices, &devices_args));
  client->device_count_ = static_cast<int>(devices_args.num_devices);
  return client;
}

InnerClient::InnerClient(std::shared_ptr<InnerApi> api,
                         std::shared_ptr<const DevicePolicy> policy, PJRT_Client* client,
                         int device_count)
    : api_(std::move(api)),
      policy_(std::move(policy)),
      client_(client),
      device_count_(device_count) {}

InnerClient::~InnerClient() { api_->DestroyClient(client_); }

InnerClient::LoadedPtr InnerClient::Adopt(PJRT_LoadedExecutable* loaded) const {
  if (loaded == nullptr) return nullptr;
  std::shared_ptr<const InnerClient> self = shared_from_this();
  return LoadedPtr(loaded, [self](PJRT_LoadedExecutable* executable) {
    self->api().DestroyLoadedExecutable(executable);
  });
}

StatusOr<InnerClient::LoadedPtr> InnerClient::Compile(const Program& program,
                                                      const std::string& compile_options,
                                                      const char* what) const {
  if (program.format.empty()) {
    return InvalidArgument(std::string(what) + ": the program has no format (\"mlir\" or \"hlo\")");
  }
  PJRTKIT_RETURN_IF_ERROR(HloIdCheck::Check(program, what));
  PJRTKIT_ASSIGN_OR_RETURN(std::string options,
                           NormalizeCompileOptions(compile_options, device_count_));
  PJRT_Program inner_program{};
  inner_program.struct_size = PJRT_Program_STRUCT_SIZE;
  inner_program.code = const_cast<char*>(program.code.data());  // The inner plugin only reads.
  inner_program.code_size = program.code.size();
  inner_program.format = program.format.data();
  inner_program.format_size = program.format.size();
  PJRTKIT_INNER_ARGS(PJRT_Client_Compile, args);
  args.client = client_;
  args.program = &inner_program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Client_Compile, &args));
  if (args.executable == nullptr) {
    return Internal(api_->name() + " PJRT_Client_Compile returned nothing");
  }
  return Adopt(args.executable);
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
