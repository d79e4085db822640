// PJRT_Executable_* entry points (the device-independent view of a compiled program), except
// PJRT_Executable_DeserializeAndLoad, which makes a loaded executable (loaded_executable.h).
#ifndef PJRTKIT_XLA_PLUGIN_C_API_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_C_API_EXECUTABLE_H_

// C++ standard library.
#include <memory>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit client layer.
#include "xla_plugin/client/executable.h"

namespace pjrtkit {
namespace capi {

// A new handle sharing `executable` (non-null). Freed with PJRT_Executable_Destroy.
PJRT_Executable* WrapExecutable(std::shared_ptr<Executable> executable);

// PJRT_Executable_Destroy: frees the handle (nullptr is fine).
PJRT_Error* ExecutableDestroy(PJRT_Executable_Destroy_Args* args);
// PJRT_Executable_Name: the program name.
PJRT_Error* ExecutableName(PJRT_Executable_Name_Args* args);
// PJRT_Executable_NumReplicas: replicas it was compiled for.
PJRT_Error* ExecutableNumReplicas(PJRT_Executable_NumReplicas_Args* args);
// PJRT_Executable_NumPartitions: partitions it was compiled for.
PJRT_Error* ExecutableNumPartitions(PJRT_Executable_NumPartitions_Args* args);
// PJRT_Executable_NumOutputs: outputs per device.
PJRT_Error* ExecutableNumOutputs(PJRT_Executable_NumOutputs_Args* args);
// PJRT_Executable_SizeOfGeneratedCodeInBytes: generated code size (-1 when unknown).
PJRT_Error* ExecutableSizeOfGeneratedCodeInBytes(
    PJRT_Executable_SizeOfGeneratedCodeInBytes_Args* args);
// PJRT_Executable_GetCostAnalysis: cost properties (owned by the handle).
PJRT_Error* ExecutableGetCostAnalysis(PJRT_Executable_GetCostAnalysis_Args* args);
// PJRT_Executable_OutputMemoryKinds: the memory kind of each output (owned by the handle).
PJRT_Error* ExecutableOutputMemoryKinds(PJRT_Executable_OutputMemoryKinds_Args* args);
// PJRT_Executable_OptimizedProgram: two calls: with program->code == nullptr it sets code_size
// (and the format); then it copies the program into the caller's code buffer.
PJRT_Error* ExecutableOptimizedProgram(PJRT_Executable_OptimizedProgram_Args* args);
// PJRT_Executable_Serialize: bytes for DeserializeAndLoad, freed with the returned deleter.
PJRT_Error* ExecutableSerialize(PJRT_Executable_Serialize_Args* args);
// PJRT_Executable_OutputElementTypes: the element type of each output (owned by the handle).
PJRT_Error* ExecutableOutputElementTypes(PJRT_Executable_OutputElementTypes_Args* args);
// PJRT_Executable_OutputDimensions: the dimensions of each output (owned by the handle).
PJRT_Error* ExecutableOutputDimensions(PJRT_Executable_OutputDimensions_Args* args);
// PJRT_Executable_Fingerprint: a string identifying the compiled program.
PJRT_Error* ExecutableFingerprint(PJRT_Executable_Fingerprint_Args* args);
// PJRT_Executable_GetCompiledMemoryStats: memory statistics of the compiled program.
PJRT_Error* ExecutableGetCompiledMemoryStats(PJRT_Executable_GetCompiledMemoryStats_Args* args);
// PJRT_Executable_GetCompileOptions: the serialized xla.CompileOptionsProto the executable was
// compiled with (Executable::compile_options), with a deleter.
PJRT_Error* ExecutableGetCompileOptions(PJRT_Executable_GetCompileOptions_Args* args);
// PJRT_Executable_ParameterMemoryKinds: the memory kind of each parameter (cached on the handle).
PJRT_Error* ExecutableParameterMemoryKinds(PJRT_Executable_ParameterMemoryKinds_Args* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_EXECUTABLE_H_
