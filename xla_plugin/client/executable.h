// Executable: a compiled program, not bound to devices (what PJRT_Executable wraps).
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_EXECUTABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xla_plugin/client/layout_codec.h"
#include "xla_plugin/client/native_handle.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

// The device-independent view of a compiled program. Shared (std::shared_ptr) between its
// LoadedExecutable and every PJRT_Executable handle the framework asked for.
class Executable {
 public:
  virtual ~Executable() = default;

  // The other PJRT plugin's object behind this one (native_handle.h); default: none.
  virtual NativeHandle native_handle() const { return {}; }
  // Program name (the module name).
  virtual const std::string& name() const = 0;
  // Number of replicas it was compiled for.
  virtual int num_replicas() const = 0;
  // Number of partitions it was compiled for.
  virtual int num_partitions() const = 0;
  // Number of outputs per device.
  virtual size_t num_outputs() const = 0;
  // Element type of each output.
  virtual StatusOr<std::vector<ElementType>> output_element_types() const = 0;
  // Dimensions of each output.
  virtual StatusOr<std::vector<std::vector<int64_t>>> output_dimensions() const = 0;
  // The on-device layout of each output (what its output buffers' layout() will be), as PJRT's
  // Layouts extension reports it (PJRT_Layouts_PJRT_Executable_GetOutputLayouts); a program
  // compiled with non-default output layouts (JAX: jit out_shardings with a Format) must report
  // them here. Default: dense row-major for every output (from output_dimensions()).
  virtual StatusOr<std::vector<MemoryLayout>> output_layouts() const {
    StatusOr<std::vector<std::vector<int64_t>>> dims = output_dimensions();
    if (!dims.ok()) return dims.status();
    std::vector<MemoryLayout> layouts;
    for (const std::vector<int64_t>& d : *dims) layouts.push_back(RowMajorLayout(d.size()));
    return layouts;
  }
  // The layout each parameter must have (PJRT_Layouts_PJRT_Executable_GetParameterLayouts; JAX
  // reads them after every compile). UNIMPLEMENTED unless the device knows them.
  virtual StatusOr<std::vector<MemoryLayout>> parameter_layouts() const {
    return Unimplemented("Executable::parameter_layouts is not implemented by this device");
  }
  // The sharding of each parameter over the program's devices, each a serialized xla.OpSharding
  // (empty: replicated), as PJRT's Shardings extension reports it
  // (PJRT_Shardings_PJRT_Executable_ParameterShardings); jaxlib reads them for jit arguments whose
  // sharding the framework left to the compiler. std::nullopt (the default): the device does not
  // report shardings, and the framework assumes what it asked for.
  virtual StatusOr<std::optional<std::vector<std::string>>> parameter_shardings() const {
    return std::optional<std::vector<std::string>>();
  }
  // Likewise for each output (PJRT_Shardings_PJRT_Executable_OutputShardings): how the framework
  // assembles a multi-device program's results whose sharding it did not fix (jax.jit without
  // out_shardings, e.g. a shard_map's out_specs).
  virtual StatusOr<std::optional<std::vector<std::string>>> output_shardings() const {
    return std::optional<std::vector<std::string>>();
  }
  // Memory kind of each output ("device", "pinned_host", ...).
  virtual StatusOr<std::vector<std::string>> output_memory_kinds() const = 0;
  // A string identifying the compiled program (equal for equal programs and options).
  virtual StatusOr<std::string> fingerprint() const = 0;
  // The optimized program, as a Program with its format (e.g. "hlo" for an HloModuleProto).
  virtual StatusOr<Program> optimized_program() const = 0;
  // Bytes that DeserializeAndLoad of the same client turns back into this executable.
  virtual StatusOr<std::string> Serialize() const = 0;
  // Size of the generated code; -1 when unknown.
  virtual int64_t SizeOfGeneratedCodeInBytes() const { return -1; }
  // Memory statistics of the compiled program.
  virtual StatusOr<CompiledMemoryStats> GetCompiledMemoryStats() const {
    return Unimplemented("Executable::GetCompiledMemoryStats is not implemented by this device");
  }
  // The serialized xla.CompileOptionsProto the program was compiled with
  // (PJRT_Executable_GetCompileOptions); UNIMPLEMENTED unless the device keeps them.
  virtual StatusOr<std::string> compile_options() const {
    return Unimplemented("Executable::compile_options is not implemented by this device");
  }
  // Memory kind of each parameter ("device", "pinned_host", ...;
  // PJRT_Executable_ParameterMemoryKinds); UNIMPLEMENTED unless the device knows them.
  virtual StatusOr<std::vector<std::string>> parameter_memory_kinds() const {
    return Unimplemented("Executable::parameter_memory_kinds is not implemented by this device");
  }
  // Cost analysis properties ("flops", "bytes accessed", ...).
  virtual StatusOr<AttributeMap> GetCostAnalysis() const {
    return Unimplemented("Executable::GetCostAnalysis is not implemented by this device");
  }
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_EXECUTABLE_H_
