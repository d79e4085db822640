// XlaCpuExecutable: the device-independent view of a program compiled by XLA:CPU.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_EXECUTABLE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/executable.h"
#include "xla_plugin/devices/xla_cpu/inner_api.h"
#include "xla_plugin/devices/xla_cpu/donatable_parameters.h"
#include "xla_plugin/devices/xla_cpu/parameter_shapes.h"

namespace pjrtkit {
namespace xla_cpu {

// Owns an inner PJRT_Executable; every query is answered by the inner plugin. Holds only the
// InnerApi, so it may outlive its LoadedExecutable (not the client).
class XlaCpuExecutable : public Executable {
 public:
  // Wraps `inner` (taking ownership; destroyed on error) and reads name, replicas, partitions,
  // output count and the parameter shapes (from the optimized program).
  static StatusOr<std::shared_ptr<XlaCpuExecutable>> Wrap(std::shared_ptr<InnerApi> api,
                                                          PJRT_Executable* inner);
  ~XlaCpuExecutable() override;

  const std::string& name() const override { return name_; }
  int num_replicas() const override { return num_replicas_; }
  int num_partitions() const override { return num_partitions_; }
  size_t num_outputs() const override { return num_outputs_; }
  StatusOr<std::vector<ElementType>> output_element_types() const override;
  StatusOr<std::vector<std::vector<int64_t>>> output_dimensions() const override;
  // The inner answer; XLA:CPU 0.81 answers UNIMPLEMENTED, which JAX tolerates.
  StatusOr<std::vector<std::string>> output_memory_kinds() const override;
  StatusOr<std::string> fingerprint() const override;
  // The inner optimized program; XLA:CPU gives format "hlo_with_config".
  StatusOr<Program> optimized_program() const override;
  StatusOr<std::string> Serialize() const override;
  int64_t SizeOfGeneratedCodeInBytes() const override;
  StatusOr<CompiledMemoryStats> GetCompiledMemoryStats() const override;
  StatusOr<AttributeMap> GetCostAnalysis() const override;

  // The shapes the arguments must have, read once from the optimized program; nullptr when they
  // could not be determined (then only XLA:CPU's byte-size check applies).
  const ParameterShapes* parameter_shapes() const {
    return parameter_shapes_.has_value() ? &*parameter_shapes_ : nullptr;
  }
  // The arguments XLA:CPU may donate, read once from the optimized program; nullptr when unknown
  // (then every argument may be).
  const DonatableParameters* donatable_parameters() const {
    return donatable_parameters_.has_value() ? &*donatable_parameters_ : nullptr;
  }

 private:
  XlaCpuExecutable(std::shared_ptr<InnerApi> api, PJRT_Executable* inner);
  // Reads the fixed metadata.
  Status Init();

  std::shared_ptr<InnerApi> api_;  // The inner plugin.
  PJRT_Executable* inner_;         // Owned inner executable.
  std::string name_;               // Module name.
  int num_replicas_ = 1;           // Replicas.
  int num_partitions_ = 1;         // Partitions.
  size_t num_outputs_ = 0;         // Outputs per device.
  std::optional<ParameterShapes> parameter_shapes_;  // Argument shapes, when known.
  std::optional<DonatableParameters> donatable_parameters_;  // Donatable arguments, when known.
};

}  // namespace xla_cpu
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_XLA_CPU_EXECUTABLE_H_
