// Lowering of stablehlo.custom_call: the sharding annotations of partitioned programs and
// @dce_sink, which lower to identities, shard boundaries or nothing, and typed XLA FFI calls, which
// become one kCustomCall instruction each (the device runs the handler registered for the
// target; sim_ffi_calls.h).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/devices/sim/compiler/lowerer.h"
#include "xla_plugin/devices/sim/compiler/op_attributes.h"
#include "xla_plugin/devices/sim/compiler/partitioner.h"
#include "xla_plugin/devices/sim/compiler/sdy_sharding.h"

namespace pjrtkit {
namespace sim {
namespace {

using stablehlo::Operation;

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
// The shardings of a shard_map boundary (`xla.sdy.in_shardings` entering, `xla.sdy.out_shardings`
// leaving), one per operand, when the program is partitioned and they can be read against the
// module's meshes; nullopt otherwise (the pieces are then taken as they come). Sub-axes are
// UNIMPLEMENTED.
StatusOr<std::optional<std::vector<TileSharding>>> BoundaryShardings(
    Lowerer& lowerer, const Operation& op, const std::vector<ValueIndex>& operands,
    bool to_local, bool to_global) {
  const int64_t devices = lowerer.state().num_replicas * lowerer.state().num_partitions;
  if ((!to_local && !to_global) || devices == 1 || lowerer.state().meshes.empty()) {
    return std::optional<std::vector<TileSharding>>();
  }
  const stablehlo::Attribute* frontend = op.Find("mhlo.frontend_attributes");
  const stablehlo::Attribute* text =
      frontend == nullptr
          ? nullptr
          : frontend->Find(to_local ? "xla.sdy.in_shardings" : "xla.sdy.out_shardings");
  if (text == nullptr || text->kind != stablehlo::Attribute::Kind::kString) {
    return std::optional<std::vector<TileSharding>>();
  }
  std::vector<int> ranks;
  for (ValueIndex v : operands) ranks.push_back(static_cast<int>(lowerer.graph().type(v).dims.size()));
  // A shard_map over some of the mesh's axes cuts its pieces by those only.
  std::optional<std::set<std::string>> manual;
  if (const stablehlo::Attribute* axes = frontend->Find("xla.sdy.manual_axes")) {
    StatusOr<std::set<std::string>> read_axes = ParseSdyManualAxes(axes->string_value);
    if (!read_axes.ok()) return lowerer.Invalid(op, read_axes.status().message());
    manual = std::move(read_axes).value();
  }
  StatusOr<std::vector<TileSharding>> read =
      ParseSdyShardings(text->string_value, lowerer.state().meshes, ranks, devices,
                        manual ? &*manual : nullptr);
  if (read.status().code() == StatusCode::kUnimplemented) {
    return lowerer.Unsupported(op, read.status().message());
  }
  if (!read.ok()) return lowerer.Invalid(op, read.status().message());
  return std::optional<std::vector<TileSharding>>(std::move(read).value());
}

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
  PJRTKIT_ASSIGN_OR_RETURN(std::optional<std::vector<TileSharding>> boundary,
                           BoundaryShardings(lowerer, op, operands, to_local, to_global));
  for (size_t i = 0; i < operands.size(); ++i) {
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType declared, lowerer.TypeOf(op.results[i], op));
    const GraphValue& value = graph.values[operands[i]];
    ValueIndex result = operands[i];
    const int64_t devices = lowerer.state().num_replicas * lowerer.state().num_partitions;
    TileSharding storage = TileSharding::Replicated(0, devices);
    const TileSharding* held =
        boundary ? HeldAs(graph, operands[i], devices, &storage) : nullptr;
    if (to_local && held != nullptr) {
      // The piece shard_map's in_specs give this device, from however the value is held.
      PJRTKIT_ASSIGN_OR_RETURN(ValueIndex piece, Reshard(lowerer, Lowerer::Origin(op), operands[i],
                                                         *held, (*boundary)[i]));
      if (graph.type(piece) != declared) {
        return lowerer.Invalid(op, "enters shard_map as " + graph.type(piece).ToString() +
                                       " per device, the body takes " + declared.ToString());
      }
      // Inside shard_map the piece is the value (manual): a value of its own, not in pieces.
      Node alias;
      alias.kind = NodeKind::kAlias;
      alias.operands = {piece};
      alias.origin = Lowerer::Origin(op);
      result = graph.AddNode(std::move(alias), declared);
    } else if (to_global && boundary && !value.sharded) {
      // Leaving shard_map: each device's piece of the global value, cut as out_specs say.
      const TileSharding& cut = (*boundary)[i];
      PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> piece, cut.PieceDims(declared.dims));
      if (piece != value.type.dims) {
        return lowerer.Invalid(op, "leaves shard_map as " + value.type.ToString() +
                                       " per device, its out sharding needs pieces of " +
                                       ArrayType{declared.type, piece}.ToString());
      }
      if (!cut.IsReplicated()) {
        Node alias;
        alias.kind = NodeKind::kAlias;
        alias.operands = {operands[i]};
        alias.origin = Lowerer::Origin(op);
        result = graph.AddNode(std::move(alias), value.type);
        graph.values[result].sharded = true;
        graph.values[result].tiling = std::make_shared<const TileSharding>(cut);
        if (!lowerer.partitioned()) {
          // Inside a loop, a branch or another shard_map's body values are whole: gather it.
          PJRTKIT_ASSIGN_OR_RETURN(
              result, Reshard(lowerer, Lowerer::Origin(op), result, cut,
                              TileSharding::Replicated(static_cast<int>(declared.dims.size()),
                                                       devices)));
        }
      }
    } else if (to_local) {
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

const std::vector<OpLoweringEntry>& CustomCallLowerings() {
  static const std::vector<OpLoweringEntry>* const table = new std::vector<OpLoweringEntry>{
      {"stablehlo.custom_call", LowerCustomCall},
  };
  return *table;
}

}  // namespace sim
}  // namespace pjrtkit
