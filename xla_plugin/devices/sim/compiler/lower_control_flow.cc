// Lowerings of control flow (while, case, if, composite), collectives and partition/replica ids
// (custom calls: lower_custom_call.cc).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/devices/sim/compiler/lowerer.h"
#include "xla_plugin/devices/sim/compiler/op_attributes.h"
#include "xla_plugin/devices/sim/compiler/scalar_region.h"
#include "xla_plugin/stablehlo/stablehlo_attributes.h"

namespace pjrtkit {
namespace sim {
namespace {

using stablehlo::Operation;

// A region lowered into a graph of its own (a loop's condition or body, a branch).
struct LoweredRegion {
  int32_t graph = -1;                 // Index in LoweringState::graphs.
  std::vector<ValueIndex> captured;   // Outer values it reads, in its parameter order.
};

// Lowers `region` into a new graph whose first parameters are the block arguments, typed
// `argument_types`.
StatusOr<LoweredRegion> LowerRegionGraph(Lowerer& lowerer, const Operation& op,
                                         const stablehlo::Region& region,
                                         const std::vector<ArrayType>& argument_types,
                                         const std::string& name) {
  if (region.blocks.size() != 1) return lowerer.Invalid(op, "a region must have one block");
  const stablehlo::Block& block = region.blocks.front();
  if (block.arguments.size() != argument_types.size()) {
    return lowerer.Invalid(op, "a region takes " + std::to_string(block.arguments.size()) +
                                   " arguments, expected " +
                                   std::to_string(argument_types.size()));
  }
  LoweringState& state = lowerer.state();
  state.graphs.push_back(std::make_unique<Graph>());
  const int32_t index = static_cast<int32_t>(state.graphs.size() - 1);
  Graph& graph = *state.graphs.back();
  graph.name = name;
  Lowerer child(state, lowerer.function(), graph, &lowerer, lowerer.depth() + 1);
  for (size_t i = 0; i < block.arguments.size(); ++i) {
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType declared, lowerer.TypeOf(block.arguments[i], op));
    if (declared != argument_types[i]) {
      return lowerer.Invalid(op, "region argument " + std::to_string(i) + " is " +
                                     declared.ToString() + ", expected " +
                                     argument_types[i].ToString());
    }
    child.Bind(block.arguments[i], graph.AddParameter(argument_types[i]));
  }
  PJRTKIT_RETURN_IF_ERROR(child.LowerBlock(block, &graph.results));
  return LoweredRegion{index, child.captured()};
}

// Gives every graph of `regions` the parameters `first` + the union of the outer values they
// capture (returned, in order), adding an unused parameter where a region does not read one.
std::vector<ValueIndex> UnifyCaptures(LoweringState& state, const Graph& outer,
                                      const std::vector<LoweredRegion>& regions, size_t first) {
  std::vector<ValueIndex> all;
  for (const LoweredRegion& region : regions) {
    for (ValueIndex v : region.captured) {
      if (std::find(all.begin(), all.end(), v) == all.end()) all.push_back(v);
    }
  }
  for (const LoweredRegion& region : regions) {
    Graph& graph = *state.graphs[region.graph];
    std::vector<ValueIndex> parameters(graph.parameters.begin(),
                                       graph.parameters.begin() + first);
    for (ValueIndex outer_value : all) {
      auto it = std::find(region.captured.begin(), region.captured.end(), outer_value);
      if (it != region.captured.end()) {
        parameters.push_back(graph.parameters[first + (it - region.captured.begin())]);
      } else {
        graph.values.push_back(GraphValue{outer.type(outer_value), -1, 0, false});
        parameters.push_back(static_cast<ValueIndex>(graph.values.size() - 1));
      }
    }
    graph.parameters = std::move(parameters);
    for (size_t i = 0; i < graph.parameters.size(); ++i) {
      graph.values[graph.parameters[i]].parameter = static_cast<int32_t>(i);
    }
  }
  return all;
}

// When a region holds an effectful node, so does the node just emitted (a loop or branch over
// those regions) and the graph it is in.
void MarkEffectful(Lowerer& lowerer, const std::vector<LoweredRegion>& regions) {
  for (const LoweredRegion& region : regions) {
    if (!lowerer.state().graphs[region.graph]->effectful) continue;
    lowerer.graph().nodes.back().effectful = true;
    lowerer.graph().effectful = true;
  }
}

Status LowerWhile(Lowerer& lowerer, const Operation& op) {
  if (op.regions.size() != 2 || op.operands.size() != op.results.size()) {
    return lowerer.Invalid(op, "needs cond and body regions and one result per operand");
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  std::vector<ArrayType> types;
  for (ValueIndex v : operands) types.push_back(lowerer.graph().type(v));
  std::vector<LoweredRegion> regions(2);
  PJRTKIT_ASSIGN_OR_RETURN(regions[0], LowerRegionGraph(lowerer, op, op.regions[0], types,
                                                        "while_cond"));
  PJRTKIT_ASSIGN_OR_RETURN(regions[1], LowerRegionGraph(lowerer, op, op.regions[1], types,
                                                        "while_body"));
  LoweringState& state = lowerer.state();
  const std::vector<ValueIndex> captured =
      UnifyCaptures(state, lowerer.graph(), regions, operands.size());
  WhileParams params;
  params.cond = regions[0].graph;
  params.body = regions[1].graph;
  params.num_captured = static_cast<int32_t>(captured.size());
  std::vector<ValueIndex> all = operands;
  all.insert(all.end(), captured.begin(), captured.end());
  PJRTKIT_RETURN_IF_ERROR(lowerer.EmitInstruction(op, Opcode::kWhile, params, all));
  MarkEffectful(lowerer, regions);
  return OkStatus();
}

// Lowers branch regions (no arguments) with `index` (an s32 scalar) choosing one.
Status EmitCase(Lowerer& lowerer, const Operation& op, ValueIndex index,
                const std::vector<const stablehlo::Region*>& branches) {
  std::vector<LoweredRegion> regions;
  for (size_t b = 0; b < branches.size(); ++b) {
    PJRTKIT_ASSIGN_OR_RETURN(LoweredRegion region,
                             LowerRegionGraph(lowerer, op, *branches[b], {},
                                              "branch_" + std::to_string(b)));
    regions.push_back(std::move(region));
  }
  LoweringState& state = lowerer.state();
  const std::vector<ValueIndex> captured = UnifyCaptures(state, lowerer.graph(), regions, 0);
  CaseParams params;
  for (const LoweredRegion& region : regions) params.branches.push_back(region.graph);
  std::vector<ValueIndex> all = {index};
  all.insert(all.end(), captured.begin(), captured.end());
  PJRTKIT_RETURN_IF_ERROR(lowerer.EmitInstruction(op, Opcode::kCase, params, all));
  MarkEffectful(lowerer, regions);
  return OkStatus();
}

Status LowerCase(Lowerer& lowerer, const Operation& op) {
  if (op.operands.size() != 1 || op.regions.empty()) {
    return lowerer.Invalid(op, "needs an index operand and branches");
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  std::vector<const stablehlo::Region*> branches;
  for (const stablehlo::Region& region : op.regions) branches.push_back(&region);
  return EmitCase(lowerer, op, operands[0], branches);
}

Status LowerIf(Lowerer& lowerer, const Operation& op) {
  if (op.operands.size() != 1 || op.regions.size() != 2) {
    return lowerer.Invalid(op, "needs a pred operand and two branches");
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  // Branch 0 when the pred is true: index = convert(not(pred)).
  Graph& graph = lowerer.graph();
  Node negate;
  negate.kind = NodeKind::kElementwise;
  negate.op = EwOp::kNot;
  negate.operand_type = ElementType::kPred;
  negate.operands = {operands[0]};
  negate.origin = Lowerer::Origin(op);
  const ValueIndex flipped = graph.AddNode(std::move(negate), {ElementType::kPred, {}});
  Node convert;
  convert.kind = NodeKind::kElementwise;
  convert.op = EwOp::kConvert;
  convert.operand_type = ElementType::kPred;
  convert.operands = {flipped};
  convert.origin = Lowerer::Origin(op);
  const ValueIndex index = graph.AddNode(std::move(convert), {ElementType::kS32, {}});
  return EmitCase(lowerer, op, index, {&op.regions[0], &op.regions[1]});
}

Status LowerComposite(Lowerer& lowerer, const Operation& op) {
  const stablehlo::Attribute* decomposition = op.Find("decomposition");
  if (decomposition == nullptr ||
      decomposition->kind != stablehlo::Attribute::Kind::kSymbolRef) {
    return lowerer.Invalid(op, "has no decomposition");
  }
  // Lowered as a call of its decomposition.
  Operation call = op;
  call.name = "func.call";
  call.attributes = {{"callee", *decomposition}};
  call.regions.clear();
  return lowerer.LowerCall(call);
}

Status LowerProcessId(Lowerer& lowerer, const Operation& op) {
  if (!op.operands.empty() || op.results.size() != 1) {
    return lowerer.Invalid(op, "takes no operands and returns one value");
  }
  return lowerer.EmitInstruction(
      op, op.name == "stablehlo.partition_id" ? Opcode::kPartitionId : Opcode::kReplicaId,
      std::monostate{}, {});
}

// The groups of `op` resolved to logical ids (replica * partitions + partition), following the
// StableHLO spec's modes: cross_replica (no channel), cross_replica_and_partition (a channel), and
// flattened_ids (a channel and use_global_device_ids).
StatusOr<std::vector<std::vector<int64_t>>> ResolveGroups(Lowerer& lowerer, const Operation& op) {
  const int64_t replicas = lowerer.state().num_replicas;
  const int64_t partitions = lowerer.state().num_partitions;
  std::vector<std::vector<int64_t>> groups;
  const stablehlo::Attribute* attr = op.Find("replica_groups");
  if (attr != nullptr) {
    PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> ids, AttributeInts(*attr));
    const std::vector<int64_t>& shape = attr->type.dims;
    if (!ids.empty()) {
      const int64_t width = shape.size() == 2 ? shape[1] : static_cast<int64_t>(ids.size());
      if (width <= 0) return lowerer.Invalid(op, "replica_groups has no columns");
      for (size_t i = 0; i < ids.size(); i += width) {
        std::vector<int64_t> group;
        for (int64_t j = 0; j < width && i + j < ids.size(); ++j) {
          if (ids[i + j] >= 0) group.push_back(ids[i + j]);  // -1 pads uneven groups.
        }
        if (!group.empty()) groups.push_back(std::move(group));
      }
    }
  }
  bool channel = false;
  if (const stablehlo::Attribute* handle = op.Find("channel_handle")) {
    PJRTKIT_ASSIGN_OR_RETURN(stablehlo::ChannelHandle read, stablehlo::ReadChannelHandle(*handle));
    channel = read.handle > 0;
  }
  const bool global_ids = OpBool(op, "use_global_device_ids");
  // all_to_all and collective_broadcast: cross_partition with a channel (groups of partition
  // ids within each replica), cross_replica without.
  const bool partition_groups = channel && (op.name == "stablehlo.all_to_all" ||
                                            op.name == "stablehlo.collective_broadcast");
  if (partition_groups) {
    if (groups.empty()) {
      std::vector<int64_t> all;
      for (int64_t p = 0; p < partitions; ++p) all.push_back(p);
      groups.push_back(all);
    }
    std::vector<std::vector<int64_t>> resolved;
    for (int64_t r = 0; r < replicas; ++r) {
      for (const auto& group : groups) {
        std::vector<int64_t> ids;
        for (int64_t p : group) {
          if (p >= partitions) {
            return lowerer.Invalid(op, "replica_groups names partition " + std::to_string(p) +
                                           " of " + std::to_string(partitions));
          }
          ids.push_back(r * partitions + p);
        }
        resolved.push_back(std::move(ids));
      }
    }
    return resolved;
  }
  if (global_ids) {
    if (!channel) return lowerer.Invalid(op, "use_global_device_ids needs a channel_handle");
    for (const auto& group : groups) {
      for (int64_t id : group) {
        if (id >= replicas * partitions) {
          return lowerer.Invalid(op, "replica_groups names device " + std::to_string(id) +
                                         " of " + std::to_string(replicas * partitions));
        }
      }
    }
    return groups;
  }
  if (groups.empty()) {
    std::vector<int64_t> all;
    for (int64_t r = 0; r < replicas; ++r) all.push_back(r);
    groups.push_back(all);
  }
  for (const auto& group : groups) {
    for (int64_t r : group) {
      if (r >= replicas) {
        return lowerer.Invalid(op, "replica_groups names replica " + std::to_string(r) + " of " +
                                       std::to_string(replicas));
      }
    }
  }
  std::vector<std::vector<int64_t>> resolved;
  if (channel) {  // cross_replica_and_partition.
    for (const auto& group : groups) {
      std::vector<int64_t> ids;
      for (int64_t r : group) {
        for (int64_t p = 0; p < partitions; ++p) ids.push_back(r * partitions + p);
      }
      resolved.push_back(std::move(ids));
    }
  } else {  // cross_replica: the group within each partition.
    for (int64_t p = 0; p < partitions; ++p) {
      for (const auto& group : groups) {
        std::vector<int64_t> ids;
        for (int64_t r : group) ids.push_back(r * partitions + p);
        resolved.push_back(std::move(ids));
      }
    }
  }
  return resolved;
}

Status LowerCollective(Lowerer& lowerer, const Operation& op) {
  CollectiveParams p;
  const std::string& name = op.name;
  if (name == "stablehlo.all_reduce") {
    p.kind = CollectiveKind::kAllReduce;
  } else if (name == "stablehlo.all_gather") {
    p.kind = CollectiveKind::kAllGather;
    PJRTKIT_ASSIGN_OR_RETURN(p.dimension, OpInt(op, "all_gather_dim", std::nullopt));
  } else if (name == "stablehlo.reduce_scatter") {
    p.kind = CollectiveKind::kReduceScatter;
    PJRTKIT_ASSIGN_OR_RETURN(p.dimension, OpInt(op, "scatter_dimension", std::nullopt));
  } else if (name == "stablehlo.all_to_all") {
    p.kind = CollectiveKind::kAllToAll;
    PJRTKIT_ASSIGN_OR_RETURN(p.dimension, OpInt(op, "split_dimension", std::nullopt));
    PJRTKIT_ASSIGN_OR_RETURN(p.concat_dimension, OpInt(op, "concat_dimension", std::nullopt));
    PJRTKIT_ASSIGN_OR_RETURN(p.split_count, OpInt(op, "split_count", std::nullopt));
  } else if (name == "stablehlo.collective_broadcast") {
    p.kind = CollectiveKind::kCollectiveBroadcast;
  } else {
    p.kind = CollectiveKind::kCollectivePermute;
  }
  if (p.kind == CollectiveKind::kCollectivePermute) {
    PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> pairs,
                             OpInts(op, "source_target_pairs", std::nullopt));
    if (pairs.size() % 2 != 0) return lowerer.Invalid(op, "source_target_pairs must be pairs");
    bool channel = false;
    if (const stablehlo::Attribute* handle = op.Find("channel_handle")) {
      PJRTKIT_ASSIGN_OR_RETURN(stablehlo::ChannelHandle read,
                               stablehlo::ReadChannelHandle(*handle));
      channel = read.handle > 0;
    }
    const int64_t replicas = lowerer.state().num_replicas;
    const int64_t partitions = lowerer.state().num_partitions;
    const int64_t limit = channel ? partitions : replicas;
    for (size_t i = 0; i < pairs.size(); i += 2) {
      if (pairs[i] < 0 || pairs[i] >= limit || pairs[i + 1] < 0 || pairs[i + 1] >= limit) {
        return lowerer.Invalid(op, "source_target_pairs names a process outside 0.." +
                                       std::to_string(limit - 1));
      }
      // Channel: pairs of partitions within each replica; else of replicas within each partition.
      const int64_t copies = channel ? replicas : partitions;
      for (int64_t c = 0; c < copies; ++c) {
        if (channel) {
          p.source_target_pairs.push_back({c * partitions + pairs[i], c * partitions + pairs[i + 1]});
        } else {
          p.source_target_pairs.push_back({pairs[i] * partitions + c, pairs[i + 1] * partitions + c});
        }
      }
    }
  } else {
    PJRTKIT_ASSIGN_OR_RETURN(p.groups, ResolveGroups(lowerer, op));
  }
  if (p.kind == CollectiveKind::kAllReduce || p.kind == CollectiveKind::kReduceScatter) {
    if (op.regions.size() != 1) return lowerer.Invalid(op, "needs a reduction region");
    PJRTKIT_ASSIGN_OR_RETURN(p.reduction, LowerScalarRegion(lowerer, op, op.regions.front()));
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  return lowerer.EmitInstruction(op, Opcode::kCollective, std::move(p), operands);
}

}  // namespace

const std::vector<OpLoweringEntry>& ControlFlowLowerings() {
  static const std::vector<OpLoweringEntry>* const table = new std::vector<OpLoweringEntry>{
      {"stablehlo.while", LowerWhile},
      {"stablehlo.case", LowerCase},
      {"stablehlo.if", LowerIf},
      {"stablehlo.composite", LowerComposite},
  };
  return *table;
}

const std::vector<OpLoweringEntry>& CollectiveLowerings() {
  static const std::vector<OpLoweringEntry>* const table = new std::vector<OpLoweringEntry>{
      {"stablehlo.all_reduce", LowerCollective},
      {"stablehlo.all_gather", LowerCollective},
      {"stablehlo.reduce_scatter", LowerCollective},
      {"stablehlo.all_to_all", LowerCollective},
      {"stablehlo.collective_permute", LowerCollective},
      {"stablehlo.collective_broadcast", LowerCollective},
      {"stablehlo.partition_id", LowerProcessId},
      {"stablehlo.replica_id", LowerProcessId},
  };
  return *table;
}

}  // namespace sim
}  // namespace pjrtkit
