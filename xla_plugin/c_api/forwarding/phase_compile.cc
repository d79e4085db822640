// PJRT_Extension_Type_PhaseCompile, forwarded: compiling a program phase by phase for a topology.
// The phase compiler and the output buffers are the inner plugin's (they go back to it through the
// forwarded destroy entry points); pjrtkit's topology is translated, and the compile options pass
// through Topology::PrepareCompileOptions (XLA:CPU aborts on options it cannot honour).
#include <string>

#include "xla/pjrt/c/pjrt_c_api_phase_compile_extension.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/forwarding/extensions.h"
#include "xla_plugin/c_api/forwarding/forwarding.h"

namespace pjrtkit {
namespace capi {
namespace forwarding {
namespace {

const PJRT_PhaseCompile_Extension* inner_extension = nullptr;  // Set once, by the builder.

PJRT_Error* GetCompiler(PJRT_PhaseCompile_Get_Compiler_Args* args) {
  return Guard("PJRT_PhaseCompile_Get_Compiler", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_PhaseCompile_Get_Compiler_Args, phase_compiler)));
    PJRT_PhaseCompile_Get_Compiler_Args inner{};
    inner.struct_size = PJRT_PhaseCompile_Get_Compiler_Args_STRUCT_SIZE;
    PJRTKIT_RETURN_IF_ERROR(FromInner(fn, inner_extension->phase_compile_get_compiler(&inner)));
    args->phase_compiler = inner.phase_compiler;
    return OkStatus();
  });
}

void DestroyCompiler(PJRT_PhaseCompile_Destroy_Compiler_Args* args) {
  if (args == nullptr || args->phase_compiler == nullptr) return;
  PJRT_PhaseCompile_Destroy_Compiler_Args inner{};
  inner.struct_size = PJRT_PhaseCompile_Destroy_Compiler_Args_STRUCT_SIZE;
  inner.phase_compiler = args->phase_compiler;
  inner_extension->phase_compile_destroy_compiler(&inner);
}

PJRT_Error* RunPhases(PJRT_PhaseCompile_Run_Phase_Args* args) {
  return Guard("PJRT_PhaseCompile_Run_Phase", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_PhaseCompile_Run_Phase_Args, num_output_programs)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "phase_compiler", args->phase_compiler));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "topology", args->topology));
    PJRTKIT_ASSIGN_OR_RETURN(std::string given,
                             ToString(fn, "compile_options", args->compile_options,
                                      args->compile_options_size));
    PJRTKIT_ASSIGN_OR_RETURN(std::string options,
                             args->topology->topology->PrepareCompileOptions(given));
    PJRT_PhaseCompile_Run_Phase_Args inner = *args;
    inner.struct_size = PJRT_PhaseCompile_Run_Phase_Args_STRUCT_SIZE;
    inner.extension_start = nullptr;
    inner.compile_options = options.data();
    inner.compile_options_size = options.size();
    PJRTKIT_ASSIGN_OR_RETURN(inner.topology, InnerTopology(fn, "topology", args->topology));
    PJRTKIT_RETURN_IF_ERROR(FromInner(fn, inner_extension->phase_compile_run_phases(&inner)));
    args->output_programs = inner.output_programs;
    args->output_programs_sizes = inner.output_programs_sizes;
    args->num_output_programs = inner.num_output_programs;
    return OkStatus();
  });
}

PJRT_Error* GetPhaseNames(PJRT_PhaseCompile_Get_PhaseNames_Args* args) {
  return Guard("PJRT_PhaseCompile_Get_PhaseNames", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(
        fn, args, PJRTKIT_ARGS_SIZE(PJRT_PhaseCompile_Get_PhaseNames_Args, num_phase_names)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "phase_compiler", args->phase_compiler));
    PJRT_PhaseCompile_Get_PhaseNames_Args inner{};
    inner.struct_size = PJRT_PhaseCompile_Get_PhaseNames_Args_STRUCT_SIZE;
    inner.phase_compiler = args->phase_compiler;
    PJRTKIT_RETURN_IF_ERROR(FromInner(fn, inner_extension->phase_compile_get_phase_names(&inner)));
    args->phase_names = inner.phase_names;
    args->phase_names_sizes = inner.phase_names_sizes;
    args->num_phase_names = inner.num_phase_names;
    return OkStatus();
  });
}

void DestroyBuffers(PJRT_PhaseCompile_C_Buffers_Destroy_Args* args) {
  if (args == nullptr || args->num_char_buffers == 0) return;
  PJRT_PhaseCompile_C_Buffers_Destroy_Args inner = *args;
  inner.struct_size = PJRT_PhaseCompile_C_Buffers_Destroy_Args_STRUCT_SIZE;
  inner.extension_start = nullptr;
  inner_extension->phase_compile_c_buffers_destroy(&inner);
}

}  // namespace

PJRT_Extension_Base* ForwardPhaseCompile(PJRT_Extension_Base* next) {
  const PJRT_Extension_Base* inner =
      FindInner(PJRT_Extension_Type_PhaseCompile, PJRT_PhaseCompile_Extension_STRUCT_SIZE);
  if (inner == nullptr) return next;
  inner_extension = reinterpret_cast<const PJRT_PhaseCompile_Extension*>(inner);
  static PJRT_PhaseCompile_Extension extension;
  CopyExtension(inner, &extension.base, sizeof(extension), next);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, phase_compile_get_compiler, &GetCompiler);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, phase_compile_destroy_compiler,
                        &DestroyCompiler);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, phase_compile_run_phases, &RunPhases);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, phase_compile_get_phase_names, &GetPhaseNames);
  PJRTKIT_FORWARD_ENTRY(extension, inner_extension, phase_compile_c_buffers_destroy,
                        &DestroyBuffers);
  return &extension.base;
}

}  // namespace forwarding
}  // namespace capi
}  // namespace pjrtkit
