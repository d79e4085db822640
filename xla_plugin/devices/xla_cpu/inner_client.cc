#include "xla_plugin/devices/xla_cpu/inner_client.h"

#include <cstring>
#include <utility>

#include "xla_plugin/devices/xla_cpu/compile_options.h"

namespace pjrtkit {
namespace xla_cpu {
namespace {

// The inner create option that sets XLA:CPU's device count.
constexpr char kInnerDeviceCountOption[] = "cpu_device_count";

}  // namespace

StatusOr<std::shared_ptr<InnerClient>> InnerClient::Create(std::shared_ptr<InnerApi> api,
                                                           int device_count) {
  if (api == nullptr) return Internal("InnerClient::Create: no inner plugin");
  PJRT_NamedValue option{};
  option.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  option.name = kInnerDeviceCountOption;
  option.name_size = std::strlen(kInnerDeviceCountOption);
  option.type = PJRT_NamedValue_kInt64;
  option.int64_value = device_count;
  option.value_size = 1;
  PJRTKIT_INNER_ARGS(PJRT_Client_Create, args);
  args.create_options = &option;
  args.num_options = 1;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api, PJRT_Client_Create, &args));
  if (args.client == nullptr) return Internal("XLA:CPU PJRT_Client_Create returned no client");
  return std::shared_ptr<InnerClient>(new InnerClient(std::move(api), args.client, device_count));
}

InnerClient::InnerClient(std::shared_ptr<InnerApi> api, PJRT_Client* client, int device_count)
    : api_(std::move(api)), client_(client), device_count_(device_count) {}

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
  if (args.executable == nullptr) return Internal("XLA:CPU PJRT_Client_Compile returned nothing");
  return Adopt(args.executable);
}

}  // namespace xla_cpu
}  // namespace pjrtkit
