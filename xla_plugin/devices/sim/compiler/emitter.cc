#include "xla_plugin/devices/sim/compiler/emitter.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/devices/sim/compiler/buffer_planner.h"

namespace pjrtkit {
namespace sim {
namespace {

// Nodes that are not instructions of their own: they are computed inside the loop of whatever
// elementwise instruction reads them.
bool IsLeafLike(NodeKind kind) {
  return kind == NodeKind::kView || kind == NodeKind::kSplat || kind == NodeKind::kIota;
}

// Builds the FusedElementwise of one group of elementwise nodes (or of one leaf-like value).
class FusedBuilder {
 public:
  FusedBuilder(const Graph& graph, std::vector<int64_t> dims,
               const std::vector<Slot>& slot_of_value)
      : graph_(graph), slot_of_value_(slot_of_value) {
    fused_.dims = std::move(dims);
  }

  // The step of `value` (an operand of a member, of the group's shape or a scalar).
  int32_t Operand(ValueIndex value) {
    auto it = member_steps_.find(value);
    if (it != member_steps_.end()) return it->second;
    const ArrayType& type = graph_.type(value);
    std::vector<int32_t> mapping(fused_.dims.size(), -1);
    if (!type.dims.empty()) {
      for (size_t e = 0; e < mapping.size(); ++e) mapping[e] = static_cast<int32_t>(e);
    }
    return Leaf(value, mapping);
  }

  // Adds member node `node` (elementwise) computing `value`.
  void AddMember(const Node& node, ValueIndex value) {
    EwStep step;
    step.op = node.op;
    step.type = graph_.type(value).type;
    step.operand_type = node.operand_type;
    step.attr = node.attr;
    for (size_t k = 0; k < node.operands.size() && k < 3; ++k) {
      step.operands[k] = Operand(node.operands[k]);
    }
    member_steps_[value] = Add(std::move(step));
  }

  // The step computing `value` read through `mapping` (for each output dimension: the value's
  // dimension it indexes, or -1).
  int32_t Leaf(ValueIndex value, const std::vector<int32_t>& mapping) {
    const GraphValue& v = graph_.values[value];
    const ArrayType& type = v.type;
    if (v.producer >= 0 && slot_of_value_[value] < 0) {
      const Node& node = graph_.nodes[v.producer];
      if (node.kind == NodeKind::kSplat) return Constant(type.type, node.bytes);
      if (node.kind == NodeKind::kIota) {
        for (size_t e = 0; e < mapping.size(); ++e) {
          if (mapping[e] == node.attr) {
            EwStep step;
            step.op = EwOp::kIota;
            step.type = type.type;
            step.attr = static_cast<int64_t>(e);
            return Add(std::move(step));
          }
        }
        // The iota dimension has size 1 here: index 0 everywhere.
        return Constant(type.type, std::string(type.element_bytes(), '\0'));
      }
      if (node.kind == NodeKind::kView) {
        std::vector<int32_t> composed(mapping.size(), -1);
        for (size_t e = 0; e < mapping.size(); ++e) {
          if (mapping[e] >= 0) composed[e] = node.source_dims[mapping[e]];
        }
        return Leaf(node.operands[0], composed);
      }
    }
    // A value in memory: an input read with strides.
    const Slot slot = slot_of_value_[value];
    if (slot < 0) {
      failed_ = true;  // A compiler bug: reported by the caller.
      return 0;
    }
    const std::vector<int64_t> row_major = RowMajorStrides(type.dims);
    std::vector<int64_t> strides(mapping.size(), 0);
    for (size_t e = 0; e < mapping.size(); ++e) {
      if (mapping[e] >= 0 && type.dims[mapping[e]] > 1) strides[e] = row_major[mapping[e]];
    }
    auto key = std::make_pair(slot, strides);
    auto it = inputs_.find(key);
    if (it != inputs_.end()) return it->second;
    fused_.inputs.push_back(EwInput{type.type, strides});
    input_slots_.push_back(slot);
    EwStep step;
    step.op = EwOp::kInput;
    step.type = type.type;
    step.attr = static_cast<int64_t>(fused_.inputs.size() - 1);
    const int32_t index = Add(std::move(step));
    inputs_[key] = index;
    return index;
  }

  int32_t StepOf(ValueIndex value) const { return member_steps_.at(value); }
  void AddOutput(int32_t step) { fused_.outputs.push_back(step); }
  FusedElementwise& fused() { return fused_; }
  const std::vector<Slot>& input_slots() const { return input_slots_; }
  // True when a value it needed was not in memory (an internal error).
  bool failed() const { return failed_; }

 private:
  int32_t Add(EwStep step) {
    fused_.steps.push_back(std::move(step));
    return static_cast<int32_t>(fused_.steps.size() - 1);
  }

  int32_t Constant(ElementType type, const std::string& bytes) {
    auto key = std::make_pair(static_cast<int>(type), bytes);
    auto it = constants_.find(key);
    if (it != constants_.end()) return it->second;
    EwStep step;
    step.op = EwOp::kConstant;
    step.type = type;
    step.constant = bytes;
    const int32_t index = Add(std::move(step));
    constants_[key] = index;
    return index;
  }

  const Graph& graph_;
  const std::vector<Slot>& slot_of_value_;
  FusedElementwise fused_;
  std::map<ValueIndex, int32_t> member_steps_;
  std::map<std::pair<Slot, std::vector<int64_t>>, int32_t> inputs_;
  std::map<std::pair<int, std::string>, int32_t> constants_;
  std::vector<Slot> input_slots_;
  bool failed_ = false;
};

// Emits one graph.
class Emitter {
 public:
  explicit Emitter(const Graph& graph) : graph_(graph) {}

  StatusOr<Computation> Emit(EmitStats* stats) {
    computation_.name = graph_.name;
    MarkLive();
    FormGroups();
    ChooseSlots();
    PJRTKIT_RETURN_IF_ERROR(EmitInstructions());
    if (stats != nullptr) *stats = stats_;
    PJRTKIT_RETURN_IF_ERROR(PlanBuffers(alias_of_, &computation_));
    return std::move(computation_);
  }

 private:
  // Nodes whose results something needs (the graph's results, transitively).
  void MarkLive() {
    live_.assign(graph_.nodes.size(), false);
    std::vector<ValueIndex> work(graph_.results.begin(), graph_.results.end());
    // Effectful nodes are needed whether or not anything reads their results.
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(graph_.nodes.size()); ++n) {
      const Node& node = graph_.nodes[n];
      if (!node.effectful || node.dead) continue;
      live_[n] = true;
      work.insert(work.end(), node.operands.begin(), node.operands.end());
    }
    std::vector<bool> seen(graph_.values.size(), false);
    while (!work.empty()) {
      const ValueIndex v = work.back();
      work.pop_back();
      if (seen[v]) continue;
      seen[v] = true;
      const NodeIndex n = graph_.values[v].producer;
      if (n < 0 || live_[n]) continue;
      live_[n] = true;
      for (ValueIndex o : graph_.nodes[n].operands) work.push_back(o);
    }
    consumers_.assign(graph_.values.size(), {});
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(graph_.nodes.size()); ++n) {
      if (!live_[n]) continue;
      for (ValueIndex o : graph_.nodes[n].operands) consumers_[o].push_back(n);
    }
    returned_.assign(graph_.values.size(), false);
    for (ValueIndex v : graph_.results) returned_[v] = true;
  }

  int Find(int g) {
    while (parent_[g] != g) g = parent_[g] = parent_[parent_[g]];
    return g;
  }

  // The elementwise node at the end of `value`'s chain of views, or -1; `direct` says whether
  // no view was passed.
  NodeIndex TraceElementwise(ValueIndex value, bool* direct) const {
    *direct = true;
    while (true) {
      const NodeIndex n = graph_.values[value].producer;
      if (n < 0) return -1;
      const Node& node = graph_.nodes[n];
      if (node.kind == NodeKind::kElementwise) return n;
      if (node.kind != NodeKind::kView) return -1;
      *direct = false;
      value = node.operands[0];
    }
  }

  void Close(NodeIndex n) {
    if (n >= 0 && group_of_[n] >= 0) open_[Find(group_of_[n])] = false;
  }

  // Groups elementwise nodes: a node joins the open groups of its same-shaped elementwise
  // operands; a group closes when anything else reads one of its values, so emitting it at its
  // last member keeps every reader after it.
  void FormGroups() {
    group_of_.assign(graph_.nodes.size(), -1);
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(graph_.nodes.size()); ++n) {
      if (!live_[n]) continue;
      const Node& node = graph_.nodes[n];
      if (node.kind == NodeKind::kElementwise) {
        const std::vector<int64_t>& dims = graph_.type(node.results[0]).dims;
        std::set<int> candidates, bad;
        for (ValueIndex o : node.operands) {
          bool direct = false;
          const NodeIndex producer = TraceElementwise(o, &direct);
          if (producer < 0) continue;
          const int g = Find(group_of_[producer]);
          if (direct && graph_.type(o).dims == dims && open_[g]) {
            candidates.insert(g);
          } else {
            bad.insert(g);
          }
        }
        for (int g : bad) {
          candidates.erase(g);
          open_[g] = false;
        }
        const int group = static_cast<int>(parent_.size());
        parent_.push_back(group);
        open_.push_back(true);
        for (int g : candidates) parent_[g] = group;
        group_of_[n] = group;
      } else if (!IsLeafLike(node.kind)) {
        for (ValueIndex o : node.operands) {
          bool direct = false;
          Close(TraceElementwise(o, &direct));
        }
      }
    }
    // Members of each group, in node order; a group is emitted at its last member.
    last_of_group_.assign(parent_.size(), -1);
    members_.assign(parent_.size(), {});
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(graph_.nodes.size()); ++n) {
      if (group_of_[n] < 0) continue;
      const int g = Find(group_of_[n]);
      members_[g].push_back(n);
      last_of_group_[g] = n;
    }
  }

  Slot NewSlot(const ArrayType& type) {
    computation_.slot_types.push_back(type);
    alias_of_.push_back(-1);
    return static_cast<Slot>(computation_.slot_types.size() - 1);
  }

  // Values kept in memory: parameters, instruction and alias results, and elementwise values
  // read by anything but members of their own group (or returned).
  void ChooseSlots() {
    slot_of_value_.assign(graph_.values.size(), -1);
    for (ValueIndex p : graph_.parameters) {
      slot_of_value_[p] = NewSlot(graph_.type(p));
      computation_.parameters.push_back(slot_of_value_[p]);
    }
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(graph_.nodes.size()); ++n) {
      if (!live_[n]) continue;
      const Node& node = graph_.nodes[n];
      if (node.kind == NodeKind::kInstruction) {
        for (ValueIndex r : node.results) slot_of_value_[r] = NewSlot(graph_.type(r));
        continue;
      }
      if (node.kind != NodeKind::kElementwise) continue;
      const ValueIndex r = node.results[0];
      const int g = Find(group_of_[n]);
      bool outside = returned_[r];
      for (NodeIndex c : consumers_[r]) {
        if (graph_.nodes[c].kind != NodeKind::kElementwise || Find(group_of_[c]) != g) {
          outside = true;
        } else {
          // A member reading it through a view (another shape) also needs it in memory.
          for (ValueIndex o : graph_.nodes[c].operands) {
            if (o == r) continue;
            bool direct = false;
            if (TraceElementwise(o, &direct) == n && !direct) outside = true;
          }
        }
      }
      if (outside) slot_of_value_[r] = NewSlot(graph_.type(r));
    }
  }

  // Emits the kFused instruction of group `g`.
  Status EmitGroup(int g) {
    const std::vector<NodeIndex>& members = members_[g];
    const std::vector<int64_t>& dims = graph_.type(graph_.nodes[members.front()].results[0]).dims;
    FusedBuilder builder(graph_, dims, slot_of_value_);
    for (NodeIndex n : members) builder.AddMember(graph_.nodes[n], graph_.nodes[n].results[0]);
    Instruction instruction;
    instruction.opcode = Opcode::kFused;
    for (NodeIndex n : members) {
      const ValueIndex r = graph_.nodes[n].results[0];
      if (slot_of_value_[r] < 0) continue;
      builder.AddOutput(builder.StepOf(r));
      instruction.results.push_back(slot_of_value_[r]);
    }
    if (builder.failed()) {
      return Internal("sim compiler: a fused value of " + graph_.nodes[members.back()].origin +
                      " is not in memory");
    }
    instruction.operands = builder.input_slots();
    instruction.origin = graph_.nodes[members.back()].origin;
    if (members.size() > 1) {
      instruction.origin += " (fused with " + std::to_string(members.size() - 1) + " more)";
    }
    instruction.params = std::move(builder.fused());
    stats_.fused_instructions++;
    stats_.fused_nodes += static_cast<int64_t>(members.size());
    computation_.instructions.push_back(std::move(instruction));
    return OkStatus();
  }

  // Puts a leaf-like value (a view, splat or iota) in memory with a kFused instruction of its
  // own, once.
  Slot Materialize(ValueIndex value) {
    if (slot_of_value_[value] >= 0) return slot_of_value_[value];
    const ArrayType& type = graph_.type(value);
    FusedBuilder builder(graph_, type.dims, slot_of_value_);
    std::vector<int32_t> identity(type.dims.size());
    for (size_t e = 0; e < identity.size(); ++e) identity[e] = static_cast<int32_t>(e);
    builder.AddOutput(builder.Leaf(value, identity));
    const Slot slot = NewSlot(type);
    Instruction instruction;
    instruction.opcode = Opcode::kFused;
    instruction.operands = builder.input_slots();
    instruction.results = {slot};
    instruction.origin = graph_.nodes[graph_.values[value].producer].origin;
    instruction.params = std::move(builder.fused());
    computation_.instructions.push_back(std::move(instruction));
    slot_of_value_[value] = slot;
    return slot;
  }

  // The slot of `value` for a reader that needs it in memory.
  Slot InMemory(ValueIndex value) {
    if (slot_of_value_[value] >= 0) return slot_of_value_[value];
    return Materialize(value);
  }

  Status EmitInstructions() {
    for (NodeIndex n = 0; n < static_cast<NodeIndex>(graph_.nodes.size()); ++n) {
      if (!live_[n]) continue;
      const Node& node = graph_.nodes[n];
      switch (node.kind) {
        case NodeKind::kElementwise: {
          const int g = Find(group_of_[n]);
          if (last_of_group_[g] == n) PJRTKIT_RETURN_IF_ERROR(EmitGroup(g));
          break;
        }
        case NodeKind::kAlias: {
          // After its source, which may be put in memory only now: an alias names an earlier slot.
          const Slot source = InMemory(node.operands[0]);
          const Slot slot = NewSlot(graph_.type(node.results[0]));
          alias_of_[slot] = source;
          slot_of_value_[node.results[0]] = slot;
          break;
        }
        case NodeKind::kInstruction: {
          Instruction instruction;
          instruction.opcode = node.opcode;
          instruction.params = node.params;
          instruction.origin = node.origin;
          for (ValueIndex o : node.operands) instruction.operands.push_back(InMemory(o));
          for (ValueIndex r : node.results) instruction.results.push_back(slot_of_value_[r]);
          computation_.instructions.push_back(std::move(instruction));
          break;
        }
        default:
          break;  // Leaf-like: computed where it is read.
      }
    }
    for (ValueIndex v : graph_.results) computation_.results.push_back(InMemory(v));
    return OkStatus();
  }

  const Graph& graph_;
  Computation computation_;
  EmitStats stats_;
  std::vector<bool> live_;
  std::vector<std::vector<NodeIndex>> consumers_;
  std::vector<bool> returned_;
  std::vector<int> group_of_;       // Per node: its group (before Find), or -1.
  std::vector<int> parent_;         // Union-find over groups.
  std::vector<bool> open_;          // Per group root: may still take members.
  std::vector<NodeIndex> last_of_group_;
  std::vector<std::vector<NodeIndex>> members_;
  std::vector<Slot> slot_of_value_;
  std::vector<Slot> alias_of_;
};

}  // namespace

StatusOr<Computation> EmitComputation(const Graph& graph, EmitStats* stats) {
  return Emitter(graph).Emit(stats);
}

}  // namespace sim
}  // namespace pjrtkit
