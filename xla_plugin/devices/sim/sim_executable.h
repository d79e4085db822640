// SimExecutable: a compiled sim program, not bound to devices (PJRT_Executable): its program, the
// options it was compiled with, and the StableHLO it came from.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_EXECUTABLE_H_

#include <memory>
#include <string>
#include <vector>

#include "xla_plugin/client/executable.h"
#include "xla_plugin/devices/sim/compiler/compiler.h"
#include "xla_plugin/devices/sim/program/device_program.h"
#include "xla_plugin/devices/sim/sim_compile_options.h"

namespace pjrtkit {
namespace sim {

// Immutable after construction; shared by its loaded executable and every PJRT_Executable handle.
class SimExecutable : public Executable {
 public:
  // `program` passed ValidateProgram. `compile_options` are the serialized options it was compiled
  // with, `stablehlo` the program bytes it was compiled from (what optimized_program() returns).
  SimExecutable(std::shared_ptr<const DeviceProgram> program, SimCompileOptions options,
                std::string compile_options, std::string stablehlo, CompileReport report);

  // Reads bytes Serialize() made (program, options, StableHLO), validating the program;
  // INVALID_ARGUMENT naming what is wrong (not a sim executable, another format version,
  // corrupted bytes, an invalid program). The options are not checked against a client here.
  static StatusOr<std::shared_ptr<SimExecutable>> Deserialize(const std::string& bytes,
                                                              int device_count);

  const DeviceProgram& program() const { return *program_; }
  const std::shared_ptr<const DeviceProgram>& shared_program() const { return program_; }
  const SimCompileOptions& options() const { return options_; }
  const std::string& stablehlo() const { return stablehlo_; }
  const CompileReport& report() const { return report_; }

  // Executable:
  const std::string& name() const override { return program_->name; }
  int num_replicas() const override { return static_cast<int>(program_->num_replicas); }
  int num_partitions() const override { return static_cast<int>(program_->num_partitions); }
  size_t num_outputs() const override { return program_->entry().results.size(); }
  StatusOr<std::vector<ElementType>> output_element_types() const override;
  StatusOr<std::vector<std::vector<int64_t>>> output_dimensions() const override;
  // Every parameter dense row-major.
  StatusOr<std::vector<MemoryLayout>> parameter_layouts() const override;
  // "device" for every output.
  StatusOr<std::vector<std::string>> output_memory_kinds() const override;
  // From the program's mhlo.sharding attributes (replicated where it has none).
  StatusOr<std::optional<std::vector<std::string>>> parameter_shardings() const override;
  StatusOr<std::optional<std::vector<std::string>>> output_shardings() const override;
  // "device" for every parameter.
  StatusOr<std::vector<std::string>> parameter_memory_kinds() const override;
  // A hash of the serialized program and options (equal programs, equal fingerprints).
  StatusOr<std::string> fingerprint() const override { return fingerprint_; }
  // The StableHLO the program was compiled from (format "mlir"): the device program has no
  // HLO form, and jaxlib turns StableHLO into the HLO text that Compiled.as_text() shows.
  StatusOr<Program> optimized_program() const override;
  StatusOr<std::string> Serialize() const override { return serialized_; }
  // The serialized program's size (the device has no machine code).
  int64_t SizeOfGeneratedCodeInBytes() const override;
  // Argument, output and temporary (scratch) bytes of one device's execution.
  StatusOr<CompiledMemoryStats> GetCompiledMemoryStats() const override;
  StatusOr<std::string> compile_options() const override { return compile_options_; }
  // The compiler's estimate (cost_model.h): "flops", "transcendentals", "bytes accessed".
  StatusOr<AttributeMap> GetCostAnalysis() const override;

 private:
  std::shared_ptr<const DeviceProgram> program_;  // The program.
  SimCompileOptions options_;                     // Replicas, partitions, devices.
  std::string compile_options_;                   // As given to the compile.
  std::string stablehlo_;                         // The program bytes compiled.
  CompileReport report_;                          // What the compiler did.
  std::string program_bytes_;                     // SerializeProgram(*program_).
  std::string serialized_;                        // Serialize()'s bytes.
  std::string fingerprint_;                       // Hex hash of serialized_.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_SIM_EXECUTABLE_H_
