#include "xla_plugin/plugin_wrapper/wrapped_executable.h"

#include <utility>

#include "xla_plugin/plugin_wrapper/custom_call_targets.h"
#include "xla_plugin/plugin_wrapper/inner_layouts.h"
#include "xla_plugin/plugin_wrapper/serialized_executable.h"

namespace pjrtkit {
namespace plugin_wrapper {

StatusOr<std::shared_ptr<WrappedExecutable>> WrappedExecutable::FromLoaded(
    std::shared_ptr<InnerClient> client, InnerClient::LoadedPtr loaded) {
  if (loaded == nullptr) {
    return Internal(client->api().name() + " returned a null loaded executable");
  }
  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_GetExecutable, args);
  args.loaded_executable = loaded.get();
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(client->api(), PJRT_LoadedExecutable_GetExecutable, &args));
  if (args.executable == nullptr) {
    return Internal(client->api().name() + " returned a null executable");
  }
  std::shared_ptr<InnerApi> api = client->shared_api();
  std::string backend = client->policy().backend();
  const int device_count = client->device_count();
  std::shared_ptr<WrappedExecutable> executable(new WrappedExecutable(
      std::move(api), std::move(backend), device_count, std::move(client), std::move(loaded),
      /*owner=*/nullptr, args.executable));
  PJRTKIT_RETURN_IF_ERROR(executable->Init());
  return executable;
}

StatusOr<std::shared_ptr<WrappedExecutable>> WrappedExecutable::FromCompiled(
    std::shared_ptr<InnerApi> api, std::shared_ptr<const DevicePolicy> policy, int device_count,
    std::shared_ptr<const void> owner, PJRT_Executable* inner) {
  if (inner == nullptr) return Internal(api->name() + " PJRT_Compile returned a null executable");
  std::shared_ptr<WrappedExecutable> executable(new WrappedExecutable(
      std::move(api), policy->backend(), device_count, /*client=*/nullptr, /*loaded=*/nullptr,
      std::move(owner), inner));
  PJRTKIT_RETURN_IF_ERROR(executable->Init());
  return executable;
}

WrappedExecutable::WrappedExecutable(std::shared_ptr<InnerApi> api, std::string backend,
                                     int device_count, std::shared_ptr<InnerClient> client,
                                     InnerClient::LoadedPtr loaded,
                                     std::shared_ptr<const void> owner, PJRT_Executable* inner)
    : api_(std::move(api)),
      backend_(std::move(backend)),
      device_count_(device_count),
      client_(std::move(client)),
      loaded_(std::move(loaded)),
      owner_(std::move(owner)),
      inner_(inner) {}

WrappedExecutable::~WrappedExecutable() { api_->DestroyExecutable(inner_); }

Status WrappedExecutable::Init() {
  PJRTKIT_INNER_ARGS(PJRT_Executable_Name, name_args);
  name_args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_Name, &name_args));
  name_.assign(name_args.executable_name, name_args.executable_name_size);
  PJRTKIT_INNER_ARGS(PJRT_Executable_NumReplicas, replica_args);
  replica_args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_NumReplicas, &replica_args));
  num_replicas_ = static_cast<int>(replica_args.num_replicas);
  PJRTKIT_INNER_ARGS(PJRT_Executable_NumPartitions, partition_args);
  partition_args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*api_, PJRT_Executable_NumPartitions, &partition_args));
  num_partitions_ = static_cast<int>(partition_args.num_partitions);
  PJRTKIT_INNER_ARGS(PJRT_Executable_NumOutputs, output_args);
  output_args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_NumOutputs, &output_args));
  num_outputs_ = output_args.num_outputs;
  // Unknown shapes are not an error: Execute then relies on XLA:CPU's byte-size check.
  StatusOr<Program> program = optimized_program();
  if (program.ok()) {
    StatusOr<ParameterShapes> shapes = ParameterShapes::FromOptimizedProgram(*program);
    if (shapes.ok()) parameter_shapes_ = std::move(shapes).value();
    StatusOr<DonatableParameters> donatable = DonatableParameters::FromOptimizedProgram(*program);
    if (donatable.ok()) donatable_parameters_ = std::move(donatable).value();
    StatusOr<CustomCallTargets> targets = CustomCallTargets::FromOptimizedProgram(*program);
    // A program whose custom calls cannot be read is taken to call FFI handlers (the safe side).
    calls_ffi_handlers_ = !targets.ok() || !targets->typed_ffi().empty();
  }
  return OkStatus();
}

StatusOr<std::vector<ElementType>> WrappedExecutable::output_element_types() const {
  PJRTKIT_INNER_ARGS(PJRT_Executable_OutputElementTypes, args);
  args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_OutputElementTypes, &args));
  std::vector<ElementType> types;
  for (size_t i = 0; i < args.num_output_types; ++i) {
    PJRTKIT_ASSIGN_OR_RETURN(ElementType type, FromInnerType(args.output_types[i]));
    types.push_back(type);
  }
  return types;
}

StatusOr<std::vector<std::vector<int64_t>>> WrappedExecutable::output_dimensions() const {
  PJRTKIT_INNER_ARGS(PJRT_Executable_OutputDimensions, args);
  args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_OutputDimensions, &args));
  std::vector<std::vector<int64_t>> dims;
  const int64_t* next = args.dims;
  for (size_t i = 0; i < args.num_outputs; ++i) {
    dims.emplace_back(next, next + args.dim_sizes[i]);
    next += args.dim_sizes[i];
  }
  return dims;
}

StatusOr<std::vector<MemoryLayout>> WrappedExecutable::output_layouts() const {
  PJRTKIT_ASSIGN_OR_RETURN(InnerLayouts layouts, InnerLayouts::Find(api_));
  return layouts.OutputLayouts(inner_);
}

StatusOr<std::vector<MemoryLayout>> WrappedExecutable::parameter_layouts() const {
  PJRTKIT_ASSIGN_OR_RETURN(InnerLayouts layouts, InnerLayouts::Find(api_));
  StatusOr<std::vector<MemoryLayout>> inner = layouts.ParameterLayouts(inner_);
  if (inner.ok() || inner.status().code() != StatusCode::kUnimplemented) return inner;
  if (!parameter_shapes_.has_value()) {
    return Unimplemented(api_->name() + " reports no parameter layouts (PJRT C API " +
                         api_->ApiVersionString() + ") and the parameter shapes of '" + name_ +
                         "' are unknown");
  }
  std::vector<MemoryLayout> out;
  for (const HloShape& shape : parameter_shapes_->shapes()) {
    out.push_back(shape.layout.has_value() ? *shape.layout : RowMajorLayout(shape.dims.size()));
  }
  return out;
}

StatusOr<std::vector<std::string>> WrappedExecutable::parameter_memory_kinds() const {
  PJRTKIT_INNER_ARGS(PJRT_Executable_ParameterMemoryKinds, args);
  args.executable = inner_;
  Status inner = PJRTKIT_INNER_CALL(*api_, PJRT_Executable_ParameterMemoryKinds, &args);
  if (inner.ok()) {
    std::vector<std::string> kinds;
    for (size_t i = 0; i < args.num_parameters; ++i) {
      kinds.emplace_back(args.memory_kinds[i], args.memory_kind_sizes[i]);
    }
    return kinds;
  }
  if (inner.code() != StatusCode::kUnimplemented || !parameter_shapes_.has_value()) return inner;
  // Every parameter in device memory (memory space 0, tuple elements included) is "device";
  // another space (XLA's host memory is 5) has no name pjrtkit can be sure of.
  const std::vector<HloShape>& shapes = parameter_shapes_->shapes();
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<const HloShape*> pending = {&shapes[i]};
    while (!pending.empty()) {
      const HloShape* shape = pending.back();
      pending.pop_back();
      if (shape->memory_space != 0) {
        return Unimplemented(inner.message() + "; parameter " + std::to_string(i) + " of '" +
                             name_ + "' is in memory space " +
                             std::to_string(shape->memory_space) +
                             ", which pjrtkit cannot name without it");
      }
      for (const HloShape& element : shape->tuple_shapes) pending.push_back(&element);
    }
  }
  return std::vector<std::string>(shapes.size(), "device");
}

StatusOr<std::string> WrappedExecutable::compile_options() const {
  {
    std::lock_guard<std::mutex> lock(options_mu_);
    if (compile_options_.has_value()) return *compile_options_;
  }
  PJRTKIT_INNER_ARGS(PJRT_Executable_GetCompileOptions, args);
  args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_GetCompileOptions, &args));
  std::string bytes(args.serialized_bytes == nullptr ? "" : args.serialized_bytes,
                    args.serialized_bytes == nullptr ? 0 : args.serialized_bytes_size);
  if (args.serialized_compile_options_deleter != nullptr) {
    args.serialized_compile_options_deleter(args.serialized_compile_options);
  }
  return bytes;
}

void WrappedExecutable::RecordCompileOptions(const std::string& options) {
  std::lock_guard<std::mutex> lock(options_mu_);
  if (!compile_options_.has_value()) compile_options_ = options;
}

StatusOr<std::vector<std::string>> WrappedExecutable::output_memory_kinds() const {
  PJRTKIT_INNER_ARGS(PJRT_Executable_OutputMemoryKinds, args);
  args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_OutputMemoryKinds, &args));
  std::vector<std::string> kinds;
  for (size_t i = 0; i < args.num_outputs; ++i) {
    kinds.emplace_back(args.memory_kinds[i], args.memory_kind_sizes[i]);
  }
  return kinds;
}

StatusOr<std::string> WrappedExecutable::fingerprint() const {
  PJRTKIT_INNER_ARGS(PJRT_Executable_Fingerprint, args);
  args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_Fingerprint, &args));
  if (args.executable_fingerprint == nullptr) return std::string();
  return std::string(args.executable_fingerprint, args.executable_fingerprint_size);
}

StatusOr<Program> WrappedExecutable::optimized_program() const {
  // Two calls: the first (code == nullptr) gives the size, the second fills our buffer.
  PJRT_Program program{};
  program.struct_size = PJRT_Program_STRUCT_SIZE;
  PJRTKIT_INNER_ARGS(PJRT_Executable_OptimizedProgram, args);
  args.executable = inner_;
  args.program = &program;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_OptimizedProgram, &args));
  Program out;
  out.code.resize(program.code_size);
  program.code = out.code.empty() ? nullptr : &out.code[0];
  if (program.code != nullptr) {
    PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_OptimizedProgram, &args));
    out.code.resize(program.code_size);
  }
  if (program.format != nullptr) out.format.assign(program.format, program.format_size);
  return out;
}

StatusOr<std::string> WrappedExecutable::Serialize() const {
  PJRTKIT_INNER_ARGS(PJRT_Executable_Serialize, args);
  args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_Serialize, &args));
  std::string bytes = SerializedExecutable::Encode(
      backend_, device_count_,
      std::string_view(args.serialized_bytes, args.serialized_bytes_size));
  if (args.serialized_executable_deleter != nullptr) {
    args.serialized_executable_deleter(args.serialized_executable);
  }
  return bytes;
}

int64_t WrappedExecutable::SizeOfGeneratedCodeInBytes() const {
  PJRTKIT_INNER_ARGS(PJRT_Executable_SizeOfGeneratedCodeInBytes, args);
  args.executable = inner_;
  Status status = PJRTKIT_INNER_CALL(*api_, PJRT_Executable_SizeOfGeneratedCodeInBytes, &args);
  return status.ok() ? args.size_in_bytes : -1;
}

StatusOr<CompiledMemoryStats> WrappedExecutable::GetCompiledMemoryStats() const {
  PJRTKIT_INNER_ARGS(PJRT_Executable_GetCompiledMemoryStats, args);
  args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(*api_, PJRT_Executable_GetCompiledMemoryStats, &args));
  CompiledMemoryStats stats;
  stats.generated_code_size_in_bytes = args.generated_code_size_in_bytes;
  stats.argument_size_in_bytes = args.argument_size_in_bytes;
  stats.output_size_in_bytes = args.output_size_in_bytes;
  stats.alias_size_in_bytes = args.alias_size_in_bytes;
  stats.temp_size_in_bytes = args.temp_size_in_bytes;
  stats.host_generated_code_size_in_bytes = args.host_generated_code_size_in_bytes;
  stats.host_argument_size_in_bytes = args.host_argument_size_in_bytes;
  stats.host_output_size_in_bytes = args.host_output_size_in_bytes;
  stats.host_alias_size_in_bytes = args.host_alias_size_in_bytes;
  stats.host_temp_size_in_bytes = args.host_temp_size_in_bytes;
  stats.peak_memory_in_bytes = args.peak_memory_in_bytes;
  // Inner plugins older than C API 0.82 leave the fields below zero.
  stats.total_allocation_bytes = args.total_allocation_bytes;
  stats.indefinite_allocations = args.indefinite_allocations;
  stats.peak_unpadded_heap_bytes = args.peak_unpadded_heap_bytes;
  // What the program needs at once, counting aliased bytes once, when the inner plugin does not
  // say.
  stats.total_size_in_bytes = args.total_size_in_bytes != 0
                                  ? args.total_size_in_bytes
                                  : args.generated_code_size_in_bytes +
                                        args.argument_size_in_bytes + args.output_size_in_bytes -
                                        args.alias_size_in_bytes + args.temp_size_in_bytes;
  return stats;
}

StatusOr<AttributeMap> WrappedExecutable::GetCostAnalysis() const {
  PJRTKIT_INNER_ARGS(PJRT_Executable_GetCostAnalysis, args);
  args.executable = inner_;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*api_, PJRT_Executable_GetCostAnalysis, &args));
  return InnerApi::ToAttributeMap(args.properties, args.num_properties);
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
