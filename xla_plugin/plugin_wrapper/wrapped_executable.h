// WrappedExecutable: the device-independent view of a program compiled by XLA:CPU.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_EXECUTABLE_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/client/executable.h"
#include "xla_plugin/plugin_wrapper/device_policy.h"
#include "xla_plugin/plugin_wrapper/donatable_parameters.h"
#include "xla_plugin/plugin_wrapper/inner_api.h"
#include "xla_plugin/plugin_wrapper/inner_client.h"
#include "xla_plugin/plugin_wrapper/parameter_shapes.h"

namespace pjrtkit {
namespace plugin_wrapper {

// Owns an inner PJRT_Executable; every query is answered by the inner plugin. Two kinds:
//   - the executable of an inner loaded executable (FromLoaded): shares that loaded executable and
//     the InnerClient that made it (the inner executable points into both; see inner_client.h);
//   - an executable the inner plugin compiled without a client (FromCompiled, PJRT_Compile on an
//     inner topology): shares whatever `owner` keeps alive (the inner topology).
// Either may outlive its LoadedExecutable, the pjrtkit client and, compiled ahead of time, the
// topology.
class WrappedExecutable : public Executable {
 public:
  // The executable of `loaded`, made by `client` (PJRT_LoadedExecutable_GetExecutable), with
  // name, replicas, partitions, output count and the parameter shapes (from the optimized
  // program) read once.
  static StatusOr<std::shared_ptr<WrappedExecutable>> FromLoaded(
      std::shared_ptr<InnerClient> client, InnerClient::LoadedPtr loaded);
  // `inner`, compiled by `api` without a client (PJRT_Compile) for a topology of `device_count`
  // devices of the device `policy` describes; takes ownership of `inner` (destroyed on error too)
  // and keeps `owner` (the inner topology) alive as long as it lives. Reads what FromLoaded reads.
  static StatusOr<std::shared_ptr<WrappedExecutable>> FromCompiled(
      std::shared_ptr<InnerApi> api, std::shared_ptr<const DevicePolicy> policy, int device_count,
      std::shared_ptr<const void> owner, PJRT_Executable* inner);
  ~WrappedExecutable() override;

  // The inner executable.
  NativeHandle native_handle() const override { return {api_->api(), inner_}; }
  const std::string& name() const override { return name_; }
  int num_replicas() const override { return num_replicas_; }
  int num_partitions() const override { return num_partitions_; }
  size_t num_outputs() const override { return num_outputs_; }
  StatusOr<std::vector<ElementType>> output_element_types() const override;
  StatusOr<std::vector<std::vector<int64_t>>> output_dimensions() const override;
  // XLA:CPU's own answer (its Layouts extension, inner_layouts.h): a program compiled with
  // non-default output layouts (mhlo.layout_mode on its results) reports them.
  StatusOr<std::vector<MemoryLayout>> output_layouts() const override;
  // The inner answer; XLA:CPU 0.81 answers UNIMPLEMENTED, which JAX tolerates.
  StatusOr<std::vector<std::string>> output_memory_kinds() const override;
  // The inner plugin's PJRT_Executable_ParameterMemoryKinds; from an inner plugin without it
  // (XLA:CPU 0.81), "device" for every parameter when the program's parameter shapes are known
  // and none is placed in another memory space, else UNIMPLEMENTED.
  StatusOr<std::vector<std::string>> parameter_memory_kinds() const override;
  // The inner Layouts extension's GetParameterLayouts; from a 0.81 extension without it, the
  // layouts of the optimized program's parameter shapes (dense row-major where a shape has none).
  StatusOr<std::vector<MemoryLayout>> parameter_layouts() const override;
  // The options the framework compiled with (RecordCompileOptions), else the inner plugin's
  // PJRT_Executable_GetCompileOptions, else UNIMPLEMENTED.
  StatusOr<std::string> compile_options() const override;
  // Records the serialized CompileOptionsProto the executable was compiled (or loaded) with;
  // the first call wins.
  void RecordCompileOptions(const std::string& options);
  StatusOr<std::string> fingerprint() const override;
  // The inner optimized program; XLA:CPU gives format "hlo_with_config".
  StatusOr<Program> optimized_program() const override;
  // The inner plugin's bytes behind a header naming the backend and the device count of the
  // topology it was compiled for (serialized_executable.h); WrappedClient::DeserializeAndLoad
  // checks it.
  StatusOr<std::string> Serialize() const override;
  int64_t SizeOfGeneratedCodeInBytes() const override;
  StatusOr<CompiledMemoryStats> GetCompiledMemoryStats() const override;
  StatusOr<AttributeMap> GetCostAnalysis() const override;

  // The shapes the arguments must have, read once from the optimized program; nullptr when they
  // could not be determined (then only XLA:CPU's byte-size check applies).
  const ParameterShapes* parameter_shapes() const {
    return parameter_shapes_.has_value() ? &*parameter_shapes_ : nullptr;
  }
  // True when the program has typed FFI custom calls (or its HLO could not be read): XLA:CPU will
  // call FFI handlers, which may look up execute-context user data, so every execution needs an
  // inner context (custom_call_targets.h). Read once from the optimized program.
  bool calls_ffi_handlers() const { return calls_ffi_handlers_; }
  // The arguments XLA:CPU may donate, read once from the optimized program; nullptr when unknown
  // (then every argument may be).
  const DonatableParameters* donatable_parameters() const {
    return donatable_parameters_.has_value() ? &*donatable_parameters_ : nullptr;
  }

 private:
  WrappedExecutable(std::shared_ptr<InnerApi> api, std::string backend, int device_count,
                    std::shared_ptr<InnerClient> client, InnerClient::LoadedPtr loaded,
                    std::shared_ptr<const void> owner, PJRT_Executable* inner);
  // Reads the fixed metadata.
  Status Init();

  std::shared_ptr<InnerApi> api_;        // The inner plugin.
  std::string backend_;                  // The device's backend ("xla_gpu"), for Serialize.
  int device_count_;                     // Devices of the topology it was compiled for.
  std::shared_ptr<InnerClient> client_;  // Compiled or loaded it (kept alive); null: FromCompiled.
  InnerClient::LoadedPtr loaded_;        // The inner loaded executable inner_ points into, or null.
  std::shared_ptr<const void> owner_;    // What FromCompiled keeps alive (the inner topology).
  PJRT_Executable* inner_;               // Owned inner executable; destroyed before the above.
  std::string name_;               // Module name.
  int num_replicas_ = 1;           // Replicas.
  int num_partitions_ = 1;         // Partitions.
  size_t num_outputs_ = 0;         // Outputs per device.
  std::optional<ParameterShapes> parameter_shapes_;  // Argument shapes, when known.
  std::optional<DonatableParameters> donatable_parameters_;  // Donatable arguments, when known.
  bool calls_ffi_handlers_ = true;  // See calls_ffi_handlers(); true until the HLO says not.
  mutable std::mutex options_mu_;                  // Guards compile_options_.
  std::optional<std::string> compile_options_;     // See RecordCompileOptions.
};

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_WRAPPED_EXECUTABLE_H_
