#include "xla_plugin/c_api/shardings_extension.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {
namespace {

// `shardings` (or none) as the extension hands them out; when `count` is known (the outputs), a
// device reporting another number of shardings is an INTERNAL error naming the entry point.
StatusOr<std::unique_ptr<ExecutableShardings>> MakeShardings(
    const char* fn, const char* what, StatusOr<std::optional<std::vector<std::string>>> shardings,
    std::optional<size_t> count) {
  if (!shardings.ok()) return shardings.status();
  auto out = std::make_unique<ExecutableShardings>();
  if (!shardings->has_value()) return out;
  if (count.has_value() && (*shardings)->size() != *count) {
    return Internal(std::string(fn) + ": the executable reports " +
                    std::to_string((*shardings)->size()) + " " + what + " shardings for " +
                    std::to_string(*count) + " " + what + "s");
  }
  out->reported = true;
  out->protos = std::move(**shardings);
  for (const std::string& proto : out->protos) {
    out->ptrs.push_back(proto.data());
    out->sizes.push_back(proto.size());
  }
  return out;
}

}  // namespace

PJRT_Error* ShardingsParameterShardings(
    PJRT_Shardings_PJRT_Executable_ParameterShardings_Args* args) {
  return Guard("PJRT_Shardings_PJRT_Executable_ParameterShardings", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Shardings_PJRT_Executable_ParameterShardings_Args, sharding_sizes)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRT_Executable& handle = *args->executable;
    PJRTKIT_ASSIGN_OR_RETURN(
        const ExecutableShardings* shardings,
        handle.parameter_shardings.Get([&] {
          // The C API knows no parameter count to check the device's against.
          return MakeShardings(fn, "parameter", handle.executable->parameter_shardings(),
                               std::nullopt);
        }));
    args->num_parameters = shardings->protos.size();
    args->shardings = shardings->reported ? shardings->ptrs.data() : nullptr;
    args->sharding_sizes = shardings->reported ? shardings->sizes.data() : nullptr;
    return OkStatus();
  });
}

PJRT_Error* ShardingsOutputShardings(PJRT_Shardings_PJRT_Executable_OutputShardings_Args* args) {
  return Guard("PJRT_Shardings_PJRT_Executable_OutputShardings", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Shardings_PJRT_Executable_OutputShardings_Args, sharding_sizes)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRT_Executable& handle = *args->executable;
    PJRTKIT_ASSIGN_OR_RETURN(
        const ExecutableShardings* shardings,
        handle.output_shardings.Get([&] {
          return MakeShardings(fn, "output", handle.executable->output_shardings(),
                               handle.num_outputs);
        }));
    args->num_outputs = shardings->protos.size();
    args->shardings = shardings->reported ? shardings->ptrs.data() : nullptr;
    args->sharding_sizes = shardings->reported ? shardings->sizes.data() : nullptr;
    return OkStatus();
  });
}

PJRT_Extension_Base* ShardingsExtensionBase(PJRT_Extension_Base* next) {
  static PJRT_Shardings_Extension extension = [next] {
    PJRT_Shardings_Extension e{};
    e.base.struct_size = PJRT_Shardings_Extension_STRUCT_SIZE;
    e.base.type = PJRT_Extension_Type_Shardings;
    e.base.next = next;
    e.PJRT_Shardings_PJRT_Executable_ParameterShardings = &ShardingsParameterShardings;
    e.PJRT_Shardings_PJRT_Executable_OutputShardings = &ShardingsOutputShardings;
    return e;
  }();
  return &extension.base;
}

}  // namespace capi
}  // namespace pjrtkit
