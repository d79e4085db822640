// The fake compiler: a "program" is a signature such as "f32[2,3] s32[] pred[4]", and the
// executable it compiles to returns copies of its arguments (which must match the signature).
//
// Compile options are "key=value" pairs separated by ';':
//   replicas=N   run on the first N addressable devices (default 1)
//   donate=1     donate every argument not listed in non_donatable_input_indices
//   name=S       the executable's name (default "fake_identity")
//   topology_devices=N  compiled ahead of time for a topology of N devices (FakeTopology adds
//                it); FakeClient::DeserializeAndLoad refuses it on a client of another count
//   output_layout=row|column|invalid  the output layouts it reports (and its outputs' layout()):
//                row (default) is the client layer's default, column reverses minor_to_major
//                (the bytes stay row-major: nothing reads them here), invalid reports a
//                minor_to_major that is not a permutation (for the C-API layer's check); the
//                parameter layouts are the same
//   shardings=none|reported|short  what the Shardings extension gets: none (default) reports
//                none, reported gives every parameter and output a sharding (replicated for even
//                indices, MANUAL for odd), short one output sharding fewer than the outputs
//   logical_ids=short  addressable_device_logical_ids() gives one id fewer than the devices
//                (for the C-API layer's check)
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_EXECUTABLE_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_EXECUTABLE_H_

// C++ standard library.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

// pjrtkit client layer.
#include "xla_plugin/client/executable.h"
#include "xla_plugin/client/loaded_executable.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {
namespace testing {

class FakeClient;

// One array of a signature.
struct FakeShape {
  ElementType type = ElementType::kInvalid;  // Element type.
  std::vector<int64_t> dims;                 // Dimensions.
};

// Parses "f32[2,3] s32[]" (element type names as ElementTypeName prints them).
StatusOr<std::vector<FakeShape>> ParseSignature(const std::string& text);

// The compiled identity program.
class FakeExecutable : public Executable {
 public:
  // Compiles `program` with `options` (see the file comment).
  static StatusOr<std::shared_ptr<FakeExecutable>> Compile(const Program& program,
                                                           const std::string& options);
  // Reverses Serialize(); `options_override`, when given, replaces the serialized options.
  static StatusOr<std::shared_ptr<FakeExecutable>> Deserialize(
      const std::string& bytes, const std::optional<std::string>& options_override);

  // The signature (inputs == outputs).
  const std::vector<FakeShape>& signature() const { return signature_; }
  // Whether arguments are donated.
  bool donate() const { return donate_; }
  // The device count of the topology it was compiled for ahead of time; 0 for a client compile.
  int topology_devices() const { return topology_devices_; }
  // The output_layout option ("row", "column" or "invalid").
  const std::string& output_layout() const { return output_layout_; }
  // The layout an output of `rank` dimensions reports under output_layout().
  MemoryLayout OutputLayout(size_t rank) const;

  // Executable:
  const std::string& name() const override { return name_; }
  int num_replicas() const override { return replicas_; }
  int num_partitions() const override { return 1; }
  size_t num_outputs() const override { return signature_.size(); }
  StatusOr<std::vector<ElementType>> output_element_types() const override;
  StatusOr<std::vector<std::vector<int64_t>>> output_dimensions() const override;
  StatusOr<std::vector<MemoryLayout>> output_layouts() const override;
  StatusOr<std::vector<std::string>> output_memory_kinds() const override;
  StatusOr<std::string> fingerprint() const override;
  StatusOr<Program> optimized_program() const override;
  StatusOr<std::string> Serialize() const override;
  int64_t SizeOfGeneratedCodeInBytes() const override;
  StatusOr<CompiledMemoryStats> GetCompiledMemoryStats() const override;
  StatusOr<AttributeMap> GetCostAnalysis() const override;
  // OutputLayout of each parameter (the parameters are the outputs).
  StatusOr<std::vector<MemoryLayout>> parameter_layouts() const override;
  // "device" for each parameter.
  StatusOr<std::vector<std::string>> parameter_memory_kinds() const override;
  // The compile options text it was compiled with (or deserialized with).
  StatusOr<std::string> compile_options() const override;
  // The shardings option's (see the file comment).
  StatusOr<std::optional<std::vector<std::string>>> parameter_shardings() const override;
  StatusOr<std::optional<std::vector<std::string>>> output_shardings() const override;
  // Whether logical_ids=short was given.
  bool short_logical_ids() const { return short_logical_ids_; }

 private:
  FakeExecutable() = default;

  Program program_;                     // The source.
  std::string options_;                 // The compile options text.
  std::string name_ = "fake_identity";  // Name.
  int replicas_ = 1;                    // Replica count.
  bool donate_ = false;                 // Donate arguments.
  int topology_devices_ = 0;            // See topology_devices().
  std::string output_layout_ = "row";   // See output_layout().
  bool short_logical_ids_ = false;      // See short_logical_ids().
  std::string shardings_ = "none";      // The shardings option.
  std::vector<FakeShape> signature_;    // Inputs == outputs.
};

// The identity program loaded on devices of a FakeClient.
class FakeLoadedExecutable : public LoadedExecutable {
 public:
  // Loads `executable` on the first num_replicas addressable devices of `client`.
  static StatusOr<std::unique_ptr<LoadedExecutable>> Load(
      FakeClient* client, std::shared_ptr<FakeExecutable> executable);

  std::shared_ptr<Executable> executable() const override { return executable_; }
  const std::vector<Device*>& addressable_devices() const override { return devices_; }
  void Delete() override { deleted_ = true; }
  bool IsDeleted() const override { return deleted_.load(); }
  StatusOr<ExecuteResult> Execute(const std::vector<std::vector<Buffer*>>& arguments,
                                  const ExecuteOptions& options) override;
  StatusOr<std::string> SerializedDeviceAssignment() const override;
  // Replica i, partition 0 for device i (one fewer with logical_ids=short).
  StatusOr<std::vector<LogicalDeviceId>> addressable_device_logical_ids() const override;

 private:
  FakeLoadedExecutable() = default;

  FakeClient* client_ = nullptr;                // The client (for its test records).
  std::shared_ptr<FakeExecutable> executable_;  // The program.
  std::vector<Device*> devices_;                // Where it runs.
  std::atomic<bool> deleted_{false};            // Delete() was called.
};

}  // namespace testing
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TESTING_FAKE_EXECUTABLE_H_
