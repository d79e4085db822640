#include "xla_plugin/c_api/executable.h"

// C++ standard library.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

// pjrtkit.
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {
namespace {

// Frees what PJRT_Executable_Serialize returned.
void DeleteSerializedExecutable(PJRT_SerializedExecutable* serialized) { delete serialized; }

// Frees what PJRT_Executable_GetCompileOptions returned.
void DeleteCompileOptions(PJRT_SerializedCompileOptions* options) { delete options; }

// INTERNAL unless a per-output list has one entry per output.
Status CheckOutputCount(const char* fn, const char* what, size_t got, size_t num_outputs) {
  if (got == num_outputs) return OkStatus();
  return Internal(std::string(fn) + ": the executable reports " + std::to_string(got) + " " + what +
                  " for " + std::to_string(num_outputs) + " outputs");
}

}  // namespace

PJRT_Executable* WrapExecutable(std::shared_ptr<Executable> executable) {
  auto* handle = new PJRT_Executable();
  handle->num_outputs = executable->num_outputs();  // Asked on every execution by jaxlib.
  handle->executable = std::move(executable);
  return handle;
}

PJRT_Error* ExecutableDestroy(PJRT_Executable_Destroy_Args* args) {
  return Guard("PJRT_Executable_Destroy", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_Destroy_Args, executable)));
    delete args->executable;
    return OkStatus();
  });
}

PJRT_Error* ExecutableName(PJRT_Executable_Name_Args* args) {
  return Guard("PJRT_Executable_Name", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_Name_Args, executable_name_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    const std::string& name = args->executable->executable->name();
    args->executable_name = name.c_str();
    args->executable_name_size = name.size();
    return OkStatus();
  });
}

PJRT_Error* ExecutableNumReplicas(PJRT_Executable_NumReplicas_Args* args) {
  return Guard("PJRT_Executable_NumReplicas", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_NumReplicas_Args, num_replicas)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    args->num_replicas = static_cast<size_t>(args->executable->executable->num_replicas());
    return OkStatus();
  });
}

PJRT_Error* ExecutableNumPartitions(PJRT_Executable_NumPartitions_Args* args) {
  return Guard("PJRT_Executable_NumPartitions", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_NumPartitions_Args, num_partitions)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    args->num_partitions = static_cast<size_t>(args->executable->executable->num_partitions());
    return OkStatus();
  });
}

PJRT_Error* ExecutableNumOutputs(PJRT_Executable_NumOutputs_Args* args) {
  return Guard("PJRT_Executable_NumOutputs", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_NumOutputs_Args, num_outputs)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    args->num_outputs = args->executable->num_outputs;
    return OkStatus();
  });
}

PJRT_Error* ExecutableSizeOfGeneratedCodeInBytes(
    PJRT_Executable_SizeOfGeneratedCodeInBytes_Args* args) {
  return Guard("PJRT_Executable_SizeOfGeneratedCodeInBytes", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, size_in_bytes)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    args->size_in_bytes = args->executable->executable->SizeOfGeneratedCodeInBytes();
    return OkStatus();
  });
}

PJRT_Error* ExecutableGetCostAnalysis(PJRT_Executable_GetCostAnalysis_Args* args) {
  return Guard("PJRT_Executable_GetCostAnalysis", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_GetCostAnalysis_Args, properties)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    const Executable& executable = *args->executable->executable;
    PJRTKIT_ASSIGN_OR_RETURN(
        const NamedValueList* list,
        args->executable->cost_analysis.Get([&]() -> StatusOr<std::unique_ptr<NamedValueList>> {
          PJRTKIT_ASSIGN_OR_RETURN(AttributeMap properties, executable.GetCostAnalysis());
          return std::make_unique<NamedValueList>(std::move(properties));
        }));
    args->properties = list->data();
    args->num_properties = list->size();
    return OkStatus();
  });
}

PJRT_Error* ExecutableOutputMemoryKinds(PJRT_Executable_OutputMemoryKinds_Args* args) {
  return Guard("PJRT_Executable_OutputMemoryKinds", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_OutputMemoryKinds_Args, memory_kind_sizes)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    const Executable& executable = *args->executable->executable;
    PJRTKIT_ASSIGN_OR_RETURN(
        const ExecutableMemoryKinds* kinds,
        args->executable->memory_kinds.Get(
            [&]() -> StatusOr<std::unique_ptr<ExecutableMemoryKinds>> {
              auto out = std::make_unique<ExecutableMemoryKinds>();
              PJRTKIT_ASSIGN_OR_RETURN(out->kinds, executable.output_memory_kinds());
              PJRTKIT_RETURN_IF_ERROR(CheckOutputCount(fn, "memory kinds", out->kinds.size(),
                                                       executable.num_outputs()));
              for (const std::string& kind : out->kinds) {
                out->kind_ptrs.push_back(kind.c_str());
                out->kind_sizes.push_back(kind.size());
              }
              return out;
            }));
    args->num_outputs = kinds->kinds.size();
    args->memory_kinds = kinds->kind_ptrs.empty() ? nullptr : kinds->kind_ptrs.data();
    args->memory_kind_sizes = kinds->kind_sizes.empty() ? nullptr : kinds->kind_sizes.data();
    return OkStatus();
  });
}

PJRT_Error* ExecutableOptimizedProgram(PJRT_Executable_OptimizedProgram_Args* args) {
  return Guard("PJRT_Executable_OptimizedProgram", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_OptimizedProgram_Args, program)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "program", args->program));
    PJRT_Program& program = *args->program;
    if (program.struct_size < PJRTKIT_ARGS_SIZE(PJRT_Program, format_size)) {
      return InvalidArgument(std::string(fn) + ": PJRT_Program struct_size is " +
                             std::to_string(program.struct_size) + ", expected at least " +
                             std::to_string(PJRT_Program_STRUCT_SIZE));
    }
    const Executable& executable = *args->executable->executable;
    PJRTKIT_ASSIGN_OR_RETURN(
        const Program* optimized,
        args->executable->optimized_program.Get([&]() -> StatusOr<std::unique_ptr<Program>> {
          PJRTKIT_ASSIGN_OR_RETURN(Program p, executable.optimized_program());
          return std::make_unique<Program>(std::move(p));
        }));
    program.format = optimized->format.c_str();
    program.format_size = optimized->format.size();
    if (program.code == nullptr) {  // First call: report the size.
      program.code_size = optimized->code.size();
      return OkStatus();
    }
    if (program.code_size < optimized->code.size()) {
      return InvalidArgument(std::string(fn) + ": program->code_size is " +
                             std::to_string(program.code_size) + " but the program has " +
                             std::to_string(optimized->code.size()) +
                             " bytes (call with program->code == nullptr first to get the size)");
    }
    std::memcpy(program.code, optimized->code.data(), optimized->code.size());
    program.code_size = optimized->code.size();
    return OkStatus();
  });
}

PJRT_Error* ExecutableSerialize(PJRT_Executable_Serialize_Args* args) {
  return Guard("PJRT_Executable_Serialize", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Executable_Serialize_Args, serialized_executable_deleter)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRTKIT_ASSIGN_OR_RETURN(std::string bytes, args->executable->executable->Serialize());
    auto* serialized = new PJRT_SerializedExecutable{std::move(bytes)};
    args->serialized_bytes = serialized->bytes.data();
    args->serialized_bytes_size = serialized->bytes.size();
    args->serialized_executable = serialized;
    args->serialized_executable_deleter = &DeleteSerializedExecutable;
    return OkStatus();
  });
}

PJRT_Error* ExecutableOutputElementTypes(PJRT_Executable_OutputElementTypes_Args* args) {
  return Guard("PJRT_Executable_OutputElementTypes", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_OutputElementTypes_Args, num_output_types)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    const Executable& executable = *args->executable->executable;
    using Types = std::vector<PJRT_Buffer_Type>;
    PJRTKIT_ASSIGN_OR_RETURN(
        const Types* types,
        args->executable->element_types.Get([&]() -> StatusOr<std::unique_ptr<Types>> {
          PJRTKIT_ASSIGN_OR_RETURN(std::vector<ElementType> cpp_types,
                                   executable.output_element_types());
          PJRTKIT_RETURN_IF_ERROR(
              CheckOutputCount(fn, "element types", cpp_types.size(), executable.num_outputs()));
          auto out = std::make_unique<Types>();
          for (ElementType t : cpp_types) out->push_back(ToPjrtBufferType(t));
          return out;
        }));
    // The C API types this array as mutable; callers only read it.
    args->output_types = types->empty() ? nullptr : const_cast<PJRT_Buffer_Type*>(types->data());
    args->num_output_types = types->size();
    return OkStatus();
  });
}

PJRT_Error* ExecutableOutputDimensions(PJRT_Executable_OutputDimensions_Args* args) {
  return Guard("PJRT_Executable_OutputDimensions", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Executable_OutputDimensions_Args, dim_sizes)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    const Executable& executable = *args->executable->executable;
    PJRTKIT_ASSIGN_OR_RETURN(
        const ExecutableDims* dims,
        args->executable->dims.Get([&]() -> StatusOr<std::unique_ptr<ExecutableDims>> {
          PJRTKIT_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> per_output,
                                   executable.output_dimensions());
          PJRTKIT_RETURN_IF_ERROR(
              CheckOutputCount(fn, "dimension lists", per_output.size(), executable.num_outputs()));
          auto out = std::make_unique<ExecutableDims>();
          for (const std::vector<int64_t>& d : per_output) {
            out->dims.insert(out->dims.end(), d.begin(), d.end());
            out->dim_sizes.push_back(d.size());
          }
          return out;
        }));
    args->num_outputs = dims->dim_sizes.size();
    args->dims = dims->dims.empty() ? nullptr : dims->dims.data();
    args->dim_sizes = dims->dim_sizes.empty() ? nullptr : dims->dim_sizes.data();
    return OkStatus();
  });
}

PJRT_Error* ExecutableFingerprint(PJRT_Executable_Fingerprint_Args* args) {
  return Guard("PJRT_Executable_Fingerprint", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Executable_Fingerprint_Args, executable_fingerprint_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    const Executable& executable = *args->executable->executable;
    PJRTKIT_ASSIGN_OR_RETURN(
        const std::string* fingerprint,
        args->executable->fingerprint.Get([&]() -> StatusOr<std::unique_ptr<std::string>> {
          PJRTKIT_ASSIGN_OR_RETURN(std::string f, executable.fingerprint());
          return std::make_unique<std::string>(std::move(f));
        }));
    args->executable_fingerprint = fingerprint->c_str();
    args->executable_fingerprint_size = fingerprint->size();
    return OkStatus();
  });
}

PJRT_Error* ExecutableGetCompiledMemoryStats(PJRT_Executable_GetCompiledMemoryStats_Args* args) {
  return Guard("PJRT_Executable_GetCompiledMemoryStats", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Executable_GetCompiledMemoryStats_Args, peak_memory_in_bytes)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRTKIT_ASSIGN_OR_RETURN(CompiledMemoryStats stats,
                             args->executable->executable->GetCompiledMemoryStats());
    args->generated_code_size_in_bytes = stats.generated_code_size_in_bytes;
    args->argument_size_in_bytes = stats.argument_size_in_bytes;
    args->output_size_in_bytes = stats.output_size_in_bytes;
    args->alias_size_in_bytes = stats.alias_size_in_bytes;
    args->temp_size_in_bytes = stats.temp_size_in_bytes;
    args->host_generated_code_size_in_bytes = stats.host_generated_code_size_in_bytes;
    args->host_argument_size_in_bytes = stats.host_argument_size_in_bytes;
    args->host_output_size_in_bytes = stats.host_output_size_in_bytes;
    args->host_alias_size_in_bytes = stats.host_alias_size_in_bytes;
    args->host_temp_size_in_bytes = stats.host_temp_size_in_bytes;
    args->peak_memory_in_bytes = stats.peak_memory_in_bytes;
    // The fields below are newer than peak_memory_in_bytes: each written only when the caller's
    // struct has it.
#define PJRTKIT_SET_IF_PRESENT(field)                                                    \
  if (args->struct_size >=                                                               \
      PJRTKIT_ARGS_SIZE(PJRT_Executable_GetCompiledMemoryStats_Args, field)) {           \
    args->field = stats.field;                                                           \
  }
    PJRTKIT_SET_IF_PRESENT(total_size_in_bytes)
    PJRTKIT_SET_IF_PRESENT(total_allocation_bytes)
    PJRTKIT_SET_IF_PRESENT(indefinite_allocations)
    PJRTKIT_SET_IF_PRESENT(peak_unpadded_heap_bytes)
#undef PJRTKIT_SET_IF_PRESENT
    return OkStatus();
  });
}

PJRT_Error* ExecutableGetCompileOptions(PJRT_Executable_GetCompileOptions_Args* args) {
  return Guard("PJRT_Executable_GetCompileOptions", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Executable_GetCompileOptions_Args,
                          serialized_compile_options_deleter)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    PJRTKIT_ASSIGN_OR_RETURN(std::string bytes, args->executable->executable->compile_options());
    auto* serialized = new PJRT_SerializedCompileOptions{std::move(bytes)};
    args->serialized_bytes = serialized->bytes.data();
    args->serialized_bytes_size = serialized->bytes.size();
    args->serialized_compile_options = serialized;
    args->serialized_compile_options_deleter = &DeleteCompileOptions;
    return OkStatus();
  });
}

PJRT_Error* ExecutableParameterMemoryKinds(PJRT_Executable_ParameterMemoryKinds_Args* args) {
  return Guard("PJRT_Executable_ParameterMemoryKinds", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args,
        PJRTKIT_ARGS_SIZE(PJRT_Executable_ParameterMemoryKinds_Args, memory_kind_sizes)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "executable", args->executable));
    const Executable& executable = *args->executable->executable;
    PJRTKIT_ASSIGN_OR_RETURN(
        const ExecutableMemoryKinds* kinds,
        args->executable->parameter_memory_kinds.Get(
            [&]() -> StatusOr<std::unique_ptr<ExecutableMemoryKinds>> {
              auto out = std::make_unique<ExecutableMemoryKinds>();
              PJRTKIT_ASSIGN_OR_RETURN(out->kinds, executable.parameter_memory_kinds());
              for (const std::string& kind : out->kinds) {
                out->kind_ptrs.push_back(kind.c_str());
                out->kind_sizes.push_back(kind.size());
              }
              return out;
            }));
    args->num_parameters = kinds->kinds.size();
    args->memory_kinds = kinds->kind_ptrs.empty() ? nullptr : kinds->kind_ptrs.data();
    args->memory_kind_sizes = kinds->kind_sizes.empty() ? nullptr : kinds->kind_sizes.data();
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
