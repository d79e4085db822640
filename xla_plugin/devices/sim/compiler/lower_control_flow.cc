// Lowerings of control flow (while, case, if, composite), collectives, partition/replica ids and
// the custom calls the device understands (sharding annotations of partitioned programs).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <memory>
#include <set>
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

// The value of one backend_config entry, as the FFI handler receives it.
StatusOr<FfiAttribute> FfiAttributeOf(Lowerer& lowerer, const Operation& op,
                                      const std::string& target,
                                      const stablehlo::NamedAttribute& entry) {
  using Kind = stablehlo::Attribute::Kind;
  FfiAttribute out;
  out.name = entry.name;
  const stablehlo::Attribute& a = entry.value;
  auto little_endian = [](uint64_t bits, int bytes) {
    std::string text(static_cast<size_t>(bytes), '\0');
    for (int i = 0; i < bytes; ++i) text[i] = static_cast<char>((bits >> (8 * i)) & 0xff);
    return text;
  };
  const bool scalar_type = a.type.kind == stablehlo::Type::Kind::kScalar;
  switch (a.kind) {
    case Kind::kBool:
      out.type = ElementType::kPred;
      out.bytes = std::string(1, a.bool_value ? '\1' : '\0');
      return out;
    case Kind::kInteger: {
      out.type = scalar_type ? a.type.element_type : ElementType::kS64;
      if (out.type == ElementType::kPred) {
        out.bytes = std::string(1, a.int_value != 0 ? '\1' : '\0');
        return out;
      }
      if (out.type < ElementType::kS8 || out.type > ElementType::kU64) break;
      out.bytes = little_endian(static_cast<uint64_t>(a.int_value), ElementTypeBits(out.type) / 8);
      return out;
    }
    case Kind::kFloat: {
      out.type = scalar_type ? a.type.element_type : ElementType::kF64;
      if (out.type == ElementType::kF32) {
        const float value = static_cast<float>(a.float_value);
        uint32_t bits = 0;
        std::memcpy(&bits, &value, sizeof(bits));
        out.bytes = little_endian(bits, 4);
        return out;
      }
      if (out.type == ElementType::kF64) {
        uint64_t bits = 0;
        std::memcpy(&bits, &a.float_value, sizeof(bits));
        out.bytes = little_endian(bits, 8);
        return out;
      }
      break;
    }
    case Kind::kString:
      out.kind = FfiAttribute::Kind::kString;
      out.type = ElementType::kInvalid;
      out.bytes = a.string_value;
      return out;
    default:
      break;
  }
  return lowerer.Unsupported(op, "custom_call @" + target + " attribute '" + entry.name +
                                     "' (FFI attributes other than integer, f32, f64, bool and "
                                     "string scalars)");
}

// The values of `dense<...> : tensor<Nxindex>`, which the reader keeps as text (a builtin form
// of an element type it does not model): "dense<0> : tensor<1xindex>" -> {0},
// "dense<[1, 0]> : tensor<2xindex>" -> {1, 0}, "dense<> : tensor<0xindex>" -> {}.
StatusOr<std::vector<int64_t>> IndexTensorInts(const stablehlo::Attribute& attribute) {
  const std::string& text = attribute.text;
  const size_t open = text.find("dense<");
  const size_t close = text.find('>', open == std::string::npos ? 0 : open);
  const size_t count_at = text.find("tensor<");
  const size_t x = text.find("xindex>");
  if (attribute.kind != stablehlo::Attribute::Kind::kDialect || open != 0 ||
      close == std::string::npos || count_at == std::string::npos || x == std::string::npos ||
      x < count_at + 7) {
    return InvalidArgument("is not an index tensor");
  }
  std::vector<int64_t> values;
  const std::string body = text.substr(open + 6, close - open - 6);
  for (size_t i = 0; i < body.size();) {
    if (std::isdigit(static_cast<unsigned char>(body[i]))) {
      int64_t value = 0;
      for (; i < body.size() && std::isdigit(static_cast<unsigned char>(body[i])); ++i) {
        if (value > 1000000) return InvalidArgument("holds an index out of range");
        value = value * 10 + (body[i] - '0');
      }
      values.push_back(value);
    } else if (std::string("[], ").find(body[i]) != std::string::npos) {
      ++i;
    } else {
      return InvalidArgument("is not an index tensor");
    }
  }
  const std::string count = text.substr(count_at + 7, x - count_at - 7);
  if (count.empty() || count.size() > 6 ||
      count.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("is not a 1-d index tensor of a layout");
  }
  const size_t n = static_cast<size_t>(std::stoll(count));
  if (values.size() == 1 && n > 1) values.assign(n, values[0]);  // A splat.
  if (values.size() != n) return InvalidArgument("has the wrong number of values");
  return values;
}

// The major-to-minor dimension order of each entry of `name` (operand_layouts / result_layouts,
// minor-to-major lists of dimensions) for values of `ranks`; the default (row-major) order for
// each value when the attribute is absent. INVALID_ARGUMENT when an entry is not a permutation.
StatusOr<std::vector<std::vector<int32_t>>> MajorToMinor(Lowerer& lowerer, const Operation& op,
                                                         const char* name,
                                                         const std::vector<size_t>& ranks) {
  std::vector<std::vector<int32_t>> orders(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (size_t d = 0; d < ranks[i]; ++d) orders[i].push_back(static_cast<int32_t>(d));
  }
  const stablehlo::Attribute* layouts = op.Find(name);
  if (layouts == nullptr) return orders;
  if (layouts->kind != stablehlo::Attribute::Kind::kArray ||
      layouts->elements.size() != ranks.size()) {
    return lowerer.Invalid(op, std::string(name) + " needs one layout per value");
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    const stablehlo::Attribute& layout = layouts->elements[i];
    StatusOr<std::vector<int64_t>> minor_to_major = AttributeInts(layout);
    if (!minor_to_major.ok()) minor_to_major = IndexTensorInts(layout);
    std::vector<bool> seen(ranks[i], false);
    bool ok = minor_to_major.ok() && minor_to_major->size() == ranks[i];
    for (size_t k = 0; ok && k < ranks[i]; ++k) {
      const int64_t d = (*minor_to_major)[k];
      ok = d >= 0 && d < static_cast<int64_t>(ranks[i]) && !seen[d];
      if (ok) seen[d] = true;
    }
    if (!ok) {
      return lowerer.Invalid(op, std::string(name) + "[" + std::to_string(i) +
                                     "] is not a permutation of the value's dimensions");
    }
    for (size_t k = 0; k < ranks[i]; ++k) {
      orders[i][k] = static_cast<int32_t>((*minor_to_major)[ranks[i] - 1 - k]);
    }
  }
  return orders;
}

// The integers of "NAME = [a, b]" or "NAME = a" in `text`; nullopt when absent or malformed.
std::optional<std::vector<int64_t>> IntsAfter(const std::string& text, const std::string& name) {
  const size_t at = text.find(name + " = ");
  if (at == std::string::npos) return std::nullopt;
  size_t i = at + name.size() + 3;
  const bool list = i < text.size() && text[i] == '[';
  if (list) ++i;
  std::vector<int64_t> values;
  while (i < text.size()) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      int64_t value = 0;
      for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        if (value > 1000000) return std::nullopt;
        value = value * 10 + (text[i] - '0');
      }
      values.push_back(value);
      if (!list) return values;
    } else if (list && text[i] == ']') {
      return values;
    } else if (list && (text[i] == ',' || text[i] == ' ')) {
      ++i;
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// The (result, operand) pairs of `op`'s output_operand_aliases (none when absent).
StatusOr<std::vector<std::pair<int64_t, int64_t>>> OutputOperandAliases(Lowerer& lowerer,
                                                                       const Operation& op) {
  std::vector<std::pair<int64_t, int64_t>> aliases;
  const stablehlo::Attribute* attribute = op.Find("output_operand_aliases");
  if (attribute == nullptr) return aliases;
  if (attribute->kind != stablehlo::Attribute::Kind::kArray) {
    return lowerer.Invalid(op, "output_operand_aliases is not a list");
  }
  for (const stablehlo::Attribute& alias : attribute->elements) {
    const std::optional<std::vector<int64_t>> output =
        IntsAfter(alias.text, "output_tuple_indices");
    const std::optional<std::vector<int64_t>> operand = IntsAfter(alias.text, "operand_index");
    const std::optional<std::vector<int64_t>> operand_tuple =
        IntsAfter(alias.text, "operand_tuple_indices");
    const bool single = op.results.size() == 1 && output.has_value() && output->empty();
    if (alias.kind != stablehlo::Attribute::Kind::kDialect || !operand.has_value() ||
        operand->size() != 1 || !output.has_value() || (!single && output->size() != 1) ||
        (operand_tuple.has_value() && !operand_tuple->empty())) {
      return lowerer.Unsupported(op, "output_operand_aliases entry " + alias.text);
    }
    const int64_t result = single ? 0 : output->front();
    if (result >= static_cast<int64_t>(op.results.size()) ||
        operand->front() >= static_cast<int64_t>(op.operands.size())) {
      return lowerer.Invalid(op, "output_operand_aliases entry " + alias.text + " is out of range");
    }
    aliases.emplace_back(result, operand->front());
  }
  return aliases;
}

// True when `order` is 0, 1, ..., n-1 (row-major).
bool RowMajor(const std::vector<int32_t>& order) {
  for (size_t k = 0; k < order.size(); ++k) {
    if (order[k] != static_cast<int32_t>(k)) return false;
  }
  return true;
}

// `type` with its dimensions in `order`.
ArrayType Permuted(const ArrayType& type, const std::vector<int32_t>& order) {
  ArrayType out = type;
  for (size_t k = 0; k < order.size(); ++k) out.dims[k] = type.dims[order[k]];
  return out;
}

// A view of `value` whose dimension k is `value`'s dimension source[k].
ValueIndex AddTranspose(Lowerer& lowerer, const Operation& op, ValueIndex value,
                        std::vector<int32_t> source) {
  const ArrayType type = Permuted(lowerer.graph().type(value), source);
  Node node;
  node.kind = NodeKind::kView;
  node.operands = {value};
  node.source_dims = std::move(source);
  node.origin = Lowerer::Origin(op);
  return lowerer.graph().AddNode(std::move(node), type);
}

// A typed XLA FFI custom call (api_version 4, attributes in a dictionary): one kCustomCall
// instruction, effectful, whose handler is looked up on the device's platform when the program
// is loaded.
Status LowerFfiCustomCall(Lowerer& lowerer, const Operation& op, const std::string& target,
                          const stablehlo::Attribute* config) {
  // A call JAX placed on one device of a multi-device program (a host callback outside
  // shard_map: {maximal device=0}) runs once in XLA; here every device would run it.
  const int64_t participants = lowerer.state().num_replicas * lowerer.state().num_partitions;
  if (participants > 1) {
    std::string placement;
    if (const stablehlo::Attribute* s = op.Find("mhlo.sharding")) placement += s->string_value;
    if (const stablehlo::Attribute* s = op.Find("sdy.sharding")) placement += s->text;
    if (const stablehlo::Attribute* f = op.Find("mhlo.frontend_attributes")) {
      if (const stablehlo::Attribute* s = f->Find("xla.sdy.sharding")) placement += s->string_value;
    }
    if (placement.find("maximal") != std::string::npos) {
      return lowerer.Unsupported(
          op, "custom_call @" + target + " placed on one device of a program over " +
                  std::to_string(participants) + " devices (a host callback outside shard_map; "
                  "call it inside shard_map, or from a single-device jit)");
    }
  }
  CustomCallParams p;
  p.target = target;
  p.has_side_effect = OpBool(op, "has_side_effect");
  const bool has_side_effect = p.has_side_effect;
  if (config != nullptr) {
    for (const stablehlo::NamedAttribute& entry : config->entries) {
      PJRTKIT_ASSIGN_OR_RETURN(FfiAttribute attribute,
                               FfiAttributeOf(lowerer, op, target, entry));
      p.attributes.push_back(std::move(attribute));
    }
  }
  std::sort(p.attributes.begin(), p.attributes.end(),
            [](const FfiAttribute& a, const FfiAttribute& b) { return a.name < b.name; });
  for (size_t i = 1; i < p.attributes.size(); ++i) {
    if (p.attributes[i - 1].name == p.attributes[i].name) {
      return lowerer.Invalid(op, "names attribute '" + p.attributes[i].name + "' twice");
    }
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  for (ValueIndex v : operands) {
    const GraphValue& value = lowerer.graph().values[v];
    if (value.sharded) {
      return lowerer.Unsupported(op, "automatic SPMD partitioning (custom_call @" + target +
                                         " reads an array sharded across devices)");
    }
    if (ElementTypeBits(value.type.type) % 8 != 0) {
      return lowerer.Unsupported(op, "custom_call @" + target + " on " +
                                         value.type.ToString() + " (elements of less than a byte)");
    }
  }
  std::vector<ArrayType> result_types;
  for (stablehlo::ValueId id : op.results) {
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType type, lowerer.TypeOf(id, op));
    if (ElementTypeBits(type.type) % 8 != 0) {
      return lowerer.Unsupported(op, "custom_call @" + target + " returning " + type.ToString() +
                                         " (elements of less than a byte)");
    }
    result_types.push_back(std::move(type));
  }
  // Layouts other than row-major (LAPACK's column-major matrices): the handler gets a transposed
  // copy of the operand, and its result is transposed back.
  std::vector<size_t> operand_ranks, result_ranks;
  for (ValueIndex v : operands) operand_ranks.push_back(lowerer.graph().type(v).dims.size());
  for (const ArrayType& t : result_types) result_ranks.push_back(t.dims.size());
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<std::vector<int32_t>> operand_orders,
                           MajorToMinor(lowerer, op, "operand_layouts", operand_ranks));
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<std::vector<int32_t>> result_orders,
                           MajorToMinor(lowerer, op, "result_layouts", result_ranks));
  PJRTKIT_ASSIGN_OR_RETURN(p.aliases, OutputOperandAliases(lowerer, op));
  for (const auto& [result, operand] : p.aliases) {
    if (Permuted(lowerer.graph().type(operands[operand]), operand_orders[operand]) !=
        Permuted(result_types[result], result_orders[result])) {
      return lowerer.Invalid(op, "result " + std::to_string(result) + " aliases operand " +
                                     std::to_string(operand) + " of another type or layout");
    }
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!RowMajor(operand_orders[i])) {
      operands[i] = AddTranspose(lowerer, op, operands[i], operand_orders[i]);
      p.operand_orders.resize(operands.size());
      p.operand_orders[i] = operand_orders[i];
    }
  }
  for (size_t j = 0; j < result_orders.size(); ++j) {
    if (!RowMajor(result_orders[j])) {
      p.result_orders.resize(result_orders.size());
      p.result_orders[j] = result_orders[j];
    }
  }
  std::vector<ArrayType> physical;
  for (size_t j = 0; j < result_types.size(); ++j) {
    physical.push_back(Permuted(result_types[j], result_orders[j]));
  }
  Node node;
  node.kind = NodeKind::kInstruction;
  node.opcode = Opcode::kCustomCall;
  node.params = std::move(p);
  node.operands = operands;
  node.origin = Lowerer::Origin(op);
  // As in XLA: a call without side effects whose results nothing reads is dropped.
  node.effectful = has_side_effect;
  const std::vector<ValueIndex> results = lowerer.graph().AddNode(std::move(node), physical);
  if (has_side_effect) lowerer.graph().effectful = true;
  for (size_t j = 0; j < results.size(); ++j) {
    ValueIndex logical = results[j];
    if (!RowMajor(result_orders[j])) {
      // Logical dimension d is physical dimension k where order[k] = d.
      std::vector<int32_t> inverse(result_orders[j].size());
      for (size_t k = 0; k < inverse.size(); ++k) {
        inverse[result_orders[j][k]] = static_cast<int32_t>(k);
      }
      logical = AddTranspose(lowerer, op, results[j], std::move(inverse));
    }
    lowerer.Bind(op.results[j], logical);
  }
  return OkStatus();
}

// Custom calls of partitioned programs that only annotate shardings or placements, and
// @dce_sink (lax.dce_sink with prevent_mlir_dce: marks its operands used, has no result), which
// lowers to nothing: sim programs have no side effects a dropped computation could lose, so the
// emitter may still drop what only the sink reads.
Status LowerCustomCall(Lowerer& lowerer, const Operation& op) {
  const stablehlo::Attribute* target = op.Find("call_target_name");
  const std::string name = target != nullptr ? target->string_value : "";
  if (name == "dce_sink") {
    if (!op.results.empty()) return lowerer.Invalid(op, "@dce_sink has no results");
    // Operands must be defined (a reference to an unknown value is still an error).
    PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> unused, lowerer.Operands(op));
    (void)unused;
    return OkStatus();
  }
  static const std::set<std::string>* const kIdentity = new std::set<std::string>{
      "Sharding", "xla.sdy.FuncResultSharding", "xla.sdy.ShardingConstraint",
      "annotate_device_placement", "MoveToHost", "MoveToDevice",
      "xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape", "SPMDFullToShardShape",
      "SPMDShardToFullShape", "xla.sdy.manual_computation_body"};
  if (kIdentity->count(name) == 0) {
    // A typed FFI call: api_version 4, or its attributes in a dictionary (JAX's mlir.custom_call
    // writes them as mhlo.backend_config = {...}).
    const stablehlo::Attribute* config = op.Find("mhlo.backend_config");
    if (config == nullptr) config = op.Find("backend_config");
    const bool dictionary =
        config != nullptr && config->kind == stablehlo::Attribute::Kind::kDictionary;
    StatusOr<int64_t> api_version = OpInt(op, "api_version", 1);
    if (dictionary || (api_version.ok() && *api_version == 4)) {
      return LowerFfiCustomCall(lowerer, op, name, dictionary ? config : nullptr);
    }
    return lowerer.Unsupported(op, "custom_call @" + name);
  }
  if (op.operands.size() != op.results.size()) {
    return lowerer.Invalid(op, "expects one result per operand");
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<ValueIndex> operands, lowerer.Operands(op));
  Graph& graph = lowerer.graph();
  const bool to_local = name == "xla.sdy.GlobalToLocalShape" || name == "SPMDFullToShardShape";
  const bool to_global = name == "xla.sdy.LocalToGlobalShape" || name == "SPMDShardToFullShape";
  for (size_t i = 0; i < operands.size(); ++i) {
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType declared, lowerer.TypeOf(op.results[i], op));
    const GraphValue& value = graph.values[operands[i]];
    ValueIndex result = operands[i];
    if (to_local) {
      // The device already holds the shard when the argument was sharded as shard_map needs.
      if (value.type != declared) {
        return lowerer.Unsupported(
            op, "entering shard_map with a value that is not sharded as its in_specs say (" +
                    value.type.ToString() + " here, shards of " + declared.ToString() +
                    " expected); pass the argument with that sharding");
      }
      if (value.sharded) {
        // Inside shard_map the shard is the value (manual): a value of its own, not sharded.
        Node alias;
        alias.kind = NodeKind::kAlias;
        alias.operands = {operands[i]};
        alias.origin = Lowerer::Origin(op);
        result = graph.AddNode(std::move(alias), declared);
      }
    } else if (to_global) {
      // Leaving shard_map: a replicated result is the same array on every device; a sharded one
      // stays this device's shard, which only the program's results may carry.
      if (value.type != declared) {
        Node alias;
        alias.kind = NodeKind::kAlias;
        alias.operands = {operands[i]};
        alias.origin = Lowerer::Origin(op);
        result = graph.AddNode(std::move(alias), value.type);
        graph.values[result].sharded = true;
      }
    } else if (!value.sharded && value.type != declared) {
      return lowerer.Invalid(op, "changes " + value.type.ToString() + " to " + declared.ToString());
    }
    lowerer.Bind(op.results[i], result);
  }
  return OkStatus();
}

}  // namespace

const std::vector<OpLoweringEntry>& ControlFlowLowerings() {
  static const std::vector<OpLoweringEntry>* const table = new std::vector<OpLoweringEntry>{
      {"stablehlo.while", LowerWhile},
      {"stablehlo.case", LowerCase},
      {"stablehlo.if", LowerIf},
      {"stablehlo.composite", LowerComposite},
      {"stablehlo.custom_call", LowerCustomCall},
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
