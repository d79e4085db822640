// Lowerer: StableHLO ops of one function body (or region) -> nodes of a Graph.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_LOWERER_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_LOWERER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/devices/sim/compiler/graph.h"
#include "xla_plugin/devices/sim/compiler/sdy_sharding.h"
#include "xla_plugin/stablehlo/ir.h"

namespace pjrtkit {
namespace sim {

// What every lowerer of one compilation shares: the module, the graphs made so far (graphs[0] is
// the entry; loops and branches add theirs) and the program's facts.
struct LoweringState {
  const stablehlo::Module* module = nullptr;
  std::vector<std::unique_ptr<Graph>> graphs;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  std::string device_name = "sim";  // For messages: "not supported by the sim device".
  // The module's Shardy meshes (`xla.sdy.meshes`), by name: what shard_map boundaries' shardings
  // refer to. Empty when the module declares none or they cannot be read.
  std::map<std::string, SdyMesh> meshes;
};

// Lowers the operations of a block into `graph`. One Lowerer per function body being lowered
// (calls are inlined with a Lowerer of their own on the same graph) and per region that becomes
// a computation (a loop's condition and body, a branch), whose values defined outside become
// captured parameters.
class Lowerer {
 public:
  // `parent`: the lowerer of the enclosing computation when this one lowers a region that may
  // read values defined above it (null for function bodies).
  Lowerer(LoweringState& state, const stablehlo::Function& function, Graph& graph,
          Lowerer* parent, int depth);

  // Binds `id` to `value`.
  void Bind(stablehlo::ValueId id, ValueIndex value) { values_[id] = value; }
  // The graph value of `id`: bound here, or captured from the parent.
  StatusOr<ValueIndex> Lookup(stablehlo::ValueId id);
  // Lowers `block`'s operations; the operands of its terminator (func.return / stablehlo.return)
  // become `*returned`.
  Status LowerBlock(const stablehlo::Block& block, std::vector<ValueIndex>* returned);

  // The value bound to `id` in this lowerer (not its parent's), if any; Unbind forgets it.
  std::optional<ValueIndex> Bound(stablehlo::ValueId id) const;
  void Unbind(stablehlo::ValueId id) { values_.erase(id); }

  // A partitioned program's entry (and the calls inlined into it) lowers through the automatic
  // partitioner (partitioner.h); regions that become computations of their own do not.
  bool partitioned() const { return partitioned_; }
  void set_partitioned(bool partitioned) { partitioned_ = partitioned; }
  // The type TypeOf gives `id` instead of its StableHLO type: the piece one device holds.
  void SetLocalType(stablehlo::ValueId id, ArrayType type) { local_types_[id] = std::move(type); }
  void ClearLocalType(stablehlo::ValueId id) { local_types_.erase(id); }
  std::optional<ArrayType> LocalType(stablehlo::ValueId id) const;
  // Lowers `op` with its family's lowering (FindOpLowering), without the partitioner.
  Status LowerDirect(const stablehlo::Operation& op);

  // The values of the parent this lowerer captured, in the order of the parameters it added
  // after the ones bound before lowering.
  const std::vector<ValueIndex>& captured() const { return captured_; }

  LoweringState& state() { return state_; }
  Graph& graph() { return graph_; }
  const stablehlo::Function& function() const { return function_; }
  int depth() const { return depth_; }

  // The ArrayType of `type`, or UNIMPLEMENTED / INVALID_ARGUMENT for what the device cannot hold
  // (tokens, tuples, dynamic dimensions, sub-byte element types), naming `op`.
  StatusOr<ArrayType> ToArrayType(const stablehlo::Type& type, const stablehlo::Operation& op);
  // The type of IR value `id` (its local type when one is set).
  StatusOr<ArrayType> TypeOf(stablehlo::ValueId id, const stablehlo::Operation& op);
  // "stablehlo.add at "jit(f)/add" at f.py:3:4" for messages.
  static std::string Origin(const stablehlo::Operation& op);
  // UNIMPLEMENTED: `op` (what) is not supported by the device, naming op, location and device.
  Status Unsupported(const stablehlo::Operation& op, const std::string& what) const;
  // INVALID_ARGUMENT naming op and location.
  Status Invalid(const stablehlo::Operation& op, const std::string& what) const;

  // Inlines the func.call (or call-like op) `op`: its callee's ops become nodes of this graph.
  Status LowerCall(const stablehlo::Operation& op);
  // Adds an instruction node with `operands` and results of `op`'s result types, and binds them.
  Status EmitInstruction(const stablehlo::Operation& op, Opcode opcode, InstructionParams params,
                         const std::vector<ValueIndex>& operands);
  // The operands of `op` as graph values.
  StatusOr<std::vector<ValueIndex>> Operands(const stablehlo::Operation& op);

 private:
  Status LowerOperation(const stablehlo::Operation& op);

  LoweringState& state_;
  const stablehlo::Function& function_;
  Graph& graph_;
  Lowerer* parent_;
  const int depth_;
  std::unordered_map<stablehlo::ValueId, ValueIndex> values_;
  std::unordered_map<stablehlo::ValueId, ArrayType> local_types_;
  std::vector<ValueIndex> captured_;
  bool partitioned_ = false;
};

// The lowering of one StableHLO op (lower_*.cc register them).
using OpLowering = Status (*)(Lowerer& lowerer, const stablehlo::Operation& op);

// The lowering of the op named `name`, or null when the device has none.
OpLowering FindOpLowering(const std::string& name);

// Lowering tables of each family (name -> lowering), merged by FindOpLowering.
struct OpLoweringEntry {
  const char* name;
  OpLowering lowering;
};
const std::vector<OpLoweringEntry>& ElementwiseLowerings();
const std::vector<OpLoweringEntry>& DataMovementLowerings();
const std::vector<OpLoweringEntry>& ComputeLowerings();
const std::vector<OpLoweringEntry>& ControlFlowLowerings();
const std::vector<OpLoweringEntry>& CollectiveLowerings();
const std::vector<OpLoweringEntry>& CustomCallLowerings();

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_LOWERER_H_
