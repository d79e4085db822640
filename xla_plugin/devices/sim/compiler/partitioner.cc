#include "xla_plugin/devices/sim/compiler/partitioner.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "xla_plugin/devices/sim/compiler/op_attributes.h"
#include "xla_plugin/devices/sim/compiler/scalar_region.h"
#include "xla_plugin/devices/sim/compiler/sharding.h"
#include "xla_plugin/stablehlo/stablehlo_attributes.h"

namespace pjrtkit {
namespace sim {
namespace {

using stablehlo::Operation;
using stablehlo::ValueId;

int64_t DeviceCount(Lowerer& lowerer) {
  return lowerer.state().num_replicas * lowerer.state().num_partitions;
}

// Marks graph value `v` as held as `sharding`.
void SetHeld(Graph& graph, ValueIndex v, const TileSharding& sharding) {
  GraphValue& value = graph.values[v];
  if (sharding.IsReplicated()) {
    value.sharded = false;
    value.tiling.reset();
  } else {
    value.sharded = true;
    value.tiling = std::make_shared<const TileSharding>(sharding);
  }
}

// The ops that compute each element from the same element of their operands.
bool IsElementwise(const std::string& name) {
  static const std::set<std::string>* const kNames = new std::set<std::string>{
      "stablehlo.abs", "stablehlo.negate", "stablehlo.sign", "stablehlo.not",
      "stablehlo.exponential", "stablehlo.exponential_minus_one", "stablehlo.log",
      "stablehlo.log_plus_one", "stablehlo.logistic", "stablehlo.tanh", "stablehlo.sine",
      "stablehlo.cosine", "stablehlo.tan", "stablehlo.sqrt", "stablehlo.rsqrt", "stablehlo.cbrt",
      "stablehlo.floor", "stablehlo.ceil", "stablehlo.round_nearest_afz",
      "stablehlo.round_nearest_even", "stablehlo.is_finite", "stablehlo.popcnt",
      "stablehlo.count_leading_zeros", "stablehlo.real", "stablehlo.imag", "stablehlo.convert",
      "stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide",
      "stablehlo.remainder", "stablehlo.power", "stablehlo.maximum", "stablehlo.minimum",
      "stablehlo.and", "stablehlo.or", "stablehlo.xor", "stablehlo.shift_left",
      "stablehlo.shift_right_arithmetic", "stablehlo.shift_right_logical", "stablehlo.atan2",
      "stablehlo.complex", "stablehlo.select", "stablehlo.clamp", "stablehlo.compare",
      "stablehlo.bitcast_convert", "stablehlo.reduce_precision"};
  return kNames->count(name) > 0;
}

// "{{a}, {b}}" -> {"{a}", "{b}"}; any other text -> {text}.
std::vector<std::string> SplitTuple(const std::string& text) {
  if (text.size() < 4 || text.compare(0, 2, "{{") != 0) return {text};
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    if (text[i] == '{') {
      if (depth++ == 0) start = i;
    } else if (text[i] == '}') {
      if (--depth == 0) parts.push_back(text.substr(start, i - start + 1));
    }
  }
  return parts;
}

// The shardings Shardy's propagation wrote on `op`'s results (`mhlo.sharding`), where they are
// replicated or tiled and divide the result evenly; nullopt elsewhere.
std::vector<std::optional<TileSharding>> Annotated(Lowerer& lowerer, const Operation& op,
                                                   const std::vector<ArrayType>& globals) {
  std::vector<std::optional<TileSharding>> out(globals.size());
  const stablehlo::Attribute* attr = op.Find("mhlo.sharding");
  if (attr == nullptr || attr->kind != stablehlo::Attribute::Kind::kString) return out;
  const std::vector<std::string> parts = SplitTuple(attr->string_value);
  if (parts.size() != globals.size()) return out;
  for (size_t i = 0; i < parts.size(); ++i) {
    StatusOr<ShardingSpec> spec = ParseSharding(parts[i]);
    if (!spec.ok()) continue;
    StatusOr<TileSharding> tiling = TileSharding::FromSpec(
        *spec, static_cast<int>(globals[i].dims.size()), DeviceCount(lowerer));
    if (!tiling.ok() || !tiling->PieceDims(globals[i].dims).ok()) continue;
    out[i] = std::move(tiling).value();
  }
  return out;
}

// `s` carried to an array of `rank` whose dimension i is `s`'s dimension source[i] (-1: whole).
StatusOr<TileSharding> Project(const TileSharding& s, const std::vector<int>& source) {
  std::vector<int64_t> tiles(source.size(), 1);
  std::vector<std::vector<int64_t>> coords(static_cast<size_t>(s.devices()),
                                           std::vector<int64_t>(source.size(), 0));
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] < 0) continue;
    tiles[i] = s.tiles(source[i]);
    for (int64_t k = 0; k < s.devices(); ++k) coords[k][i] = s.coords(k)[source[i]];
  }
  return TileSharding::Make(std::move(tiles), std::move(coords));
}

// The global type of a graph value held as `held`.
ArrayType GlobalType(const Graph& graph, ValueIndex v, const TileSharding& held) {
  ArrayType type = graph.type(v);
  for (int d = 0; d < held.rank(); ++d) type.dims[d] *= held.tiles(d);
  return type;
}

ValueIndex AddScalarSplat(Graph& graph, const std::string& origin, ElementType type,
                          int64_t value) {
  Node node;
  node.kind = NodeKind::kSplat;
  node.origin = origin;
  const int bytes = ElementTypeBits(type) / 8;
  node.bytes.assign(static_cast<size_t>(bytes), '\0');
  std::memcpy(node.bytes.data(), &value, static_cast<size_t>(std::min(bytes, 8)));
  return graph.AddNode(std::move(node), ArrayType{type, {}});
}

// This device's entry of `table` (one s32 per device), as an s32 scalar.
ValueIndex LookUpByPartition(Graph& graph, const std::string& origin, ValueIndex partition,
                             const std::vector<int32_t>& table) {
  Node constant;
  constant.kind = NodeKind::kInstruction;
  constant.opcode = Opcode::kConstant;
  constant.origin = origin;
  std::string bytes(table.size() * sizeof(int32_t), '\0');
  std::memcpy(bytes.data(), table.data(), bytes.size());
  constant.params = ConstantParams{std::move(bytes)};
  const ValueIndex t = graph.AddNode(
      std::move(constant), ArrayType{ElementType::kS32, {static_cast<int64_t>(table.size())}});
  Node slice;
  slice.kind = NodeKind::kInstruction;
  slice.opcode = Opcode::kDynamicSlice;
  slice.origin = origin;
  slice.operands = {t, partition};
  slice.params = DynamicSliceParams{{1}};
  const ValueIndex one = graph.AddNode(std::move(slice), ArrayType{ElementType::kS32, {1}});
  Node scalar;
  scalar.kind = NodeKind::kAlias;
  scalar.operands = {one};
  scalar.origin = origin;
  return graph.AddNode(std::move(scalar), ArrayType{ElementType::kS32, {}});
}

// `value` (whole along `cut`, held as `to` elsewhere) -> this device's piece of `to`.
ValueIndex TakePieces(Graph& graph, const std::string& origin, ValueIndex value,
                      const TileSharding& to, const std::vector<int>& cut) {
  const ArrayType type = graph.type(value);
  ArrayType piece = type;
  for (int d : cut) piece.dims[d] = type.dims[d] / to.tiles(d);
  Node id;
  id.kind = NodeKind::kInstruction;
  id.opcode = Opcode::kPartitionId;
  id.origin = origin;
  const ValueIndex partition = graph.AddNode(std::move(id), ArrayType{ElementType::kU32, {}});
  std::vector<ValueIndex> operands = {value};
  for (int d = 0; d < to.rank(); ++d) {
    if (std::find(cut.begin(), cut.end(), d) == cut.end()) {
      operands.push_back(AddScalarSplat(graph, origin, ElementType::kS32, 0));
      continue;
    }
    std::vector<int32_t> offsets(static_cast<size_t>(to.devices()));
    for (int64_t k = 0; k < to.devices(); ++k) {
      offsets[k] = static_cast<int32_t>(to.coords(k)[d] * piece.dims[d]);
    }
    operands.push_back(LookUpByPartition(graph, origin, partition, offsets));
  }
  Node slice;
  slice.kind = NodeKind::kInstruction;
  slice.opcode = Opcode::kDynamicSlice;
  slice.origin = origin;
  slice.operands = std::move(operands);
  slice.params = DynamicSliceParams{piece.dims};
  return graph.AddNode(std::move(slice), piece);
}

// Adds the partial values `value` (pieces as `held`) over the devices that differ along `dims`.
ValueIndex AllReduce(Graph& graph, const std::string& origin, ValueIndex value,
                     const TileSharding& space, const std::vector<int>& dims,
                     const ScalarComputation& reduction) {
  CollectiveParams p;
  p.kind = CollectiveKind::kAllReduce;
  p.groups = space.GroupsAlong(dims);
  p.reduction = reduction;
  Node node;
  node.kind = NodeKind::kInstruction;
  node.opcode = Opcode::kCollective;
  node.origin = origin;
  node.operands = {value};
  node.params = std::move(p);
  return graph.AddNode(std::move(node), graph.type(value));
}

// x + y on scalars of `type`.
ScalarComputation AddComputation(ElementType type) {
  ScalarComputation c;
  c.body.inputs = {EwInput{type, {}}, EwInput{type, {}}};
  EwStep x, y, sum;
  x.op = EwOp::kInput;
  x.type = type;
  x.attr = 0;
  y.op = EwOp::kInput;
  y.type = type;
  y.attr = 1;
  sum.op = EwOp::kAdd;
  sum.type = type;
  sum.operands[0] = 0;
  sum.operands[1] = 1;
  c.body.steps = {x, y, sum};
  c.body.outputs = {2};
  c.combiner = Combiner::kAdd;
  return c;
}

// The bytes of `v` when it is a one-element constant.
std::optional<std::string> ConstantBytes(const Graph& graph, ValueIndex v) {
  const NodeIndex producer = graph.values[v].producer;
  if (producer < 0) return std::nullopt;
  const Node& node = graph.nodes[producer];
  if (node.kind == NodeKind::kSplat) return node.bytes;
  if (node.kind == NodeKind::kInstruction && node.opcode == Opcode::kConstant &&
      graph.type(v).num_elements() == 1) {
    return std::get<ConstantParams>(node.params).bytes;
  }
  return std::nullopt;
}

template <typename T>
std::string BytesOf(T value) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

// Whether `bytes` is the identity of `combiner` on `type`: the init with which partial reductions
// on each device's piece add up to the whole one.
bool IsIdentity(Combiner combiner, ElementType type, const std::string& bytes) {
  const bool zero = std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
  const bool ones =
      std::all_of(bytes.begin(), bytes.end(), [](char c) { return static_cast<uint8_t>(c) == 0xFF; });
  const int bits = ElementTypeBits(type);
  const bool is_signed = type == ElementType::kS8 || type == ElementType::kS16 ||
                         type == ElementType::kS32 || type == ElementType::kS64;
  const bool is_unsigned = type == ElementType::kU8 || type == ElementType::kU16 ||
                           type == ElementType::kU32 || type == ElementType::kU64;
  const bool is_int = is_signed || is_unsigned;
  auto float_bytes = [&](double value) -> std::optional<std::string> {
    switch (type) {
      case ElementType::kF32: return BytesOf(static_cast<float>(value));
      case ElementType::kF64: return BytesOf(value);
      default: return std::nullopt;
    }
  };
  // Half types: +-inf and 1 by their bit patterns.
  auto half_bytes = [&](uint16_t f16, uint16_t bf16) -> std::optional<std::string> {
    if (type == ElementType::kF16) return BytesOf(f16);
    if (type == ElementType::kBF16) return BytesOf(bf16);
    return std::nullopt;
  };
  const double inf = std::numeric_limits<double>::infinity();
  switch (combiner) {
    case Combiner::kAdd:
    case Combiner::kOr:
    case Combiner::kXor:
      return zero;
    case Combiner::kAnd:
      return type == ElementType::kPred ? bytes == std::string(1, '\x01') : (is_int && ones);
    case Combiner::kMultiply: {
      if (is_int) return bytes == BytesOf<int64_t>(1).substr(0, bits / 8);
      std::optional<std::string> one = float_bytes(1.0);
      if (!one) one = half_bytes(0x3C00, 0x3F80);
      return one && *one == bytes;
    }
    case Combiner::kMaximum: {
      if (is_unsigned) return zero;
      if (is_signed) {
        std::string lowest(static_cast<size_t>(bits / 8), '\0');
        lowest.back() = static_cast<char>(0x80);
        return bytes == lowest;
      }
      std::optional<std::string> low = float_bytes(-inf);
      if (!low) low = half_bytes(0xFC00, 0xFF80);
      return low && *low == bytes;
    }
    case Combiner::kMinimum: {
      if (is_unsigned) return ones;
      if (is_signed) {
        std::string highest(static_cast<size_t>(bits / 8), '\xFF');
        highest.back() = 0x7F;
        return bytes == highest;
      }
      std::optional<std::string> high = float_bytes(inf);
      if (!high) high = half_bytes(0x7C00, 0x7F80);
      return high && *high == bytes;
    }
    default:
      return false;
  }
}

// The values `region` reads that it does not define (StableHLO regions may read values of the
// enclosing function; branches of case and if always do).
void FreeValues(const stablehlo::Region& region, std::set<ValueId>* defined,
                std::vector<ValueId>* free) {
  for (const stablehlo::Block& block : region.blocks) {
    for (ValueId arg : block.arguments) defined->insert(arg);
    for (const Operation& inner : block.operations) {
      for (ValueId id : inner.operands) {
        if (defined->count(id) == 0 &&
            std::find(free->begin(), free->end(), id) == free->end()) {
          free->push_back(id);
        }
      }
      for (const stablehlo::Region& nested : inner.regions) FreeValues(nested, defined, free);
      for (ValueId id : inner.results) defined->insert(id);
    }
  }
}

// Runs `op`'s own lowering with its operands bound to `operands` (pieces), the values its regions
// read from outside to `captured` (id, value), and its results typed as the pieces of `results`;
// marks the results held so.
Status LowerOnPieces(Lowerer& lowerer, const Operation& op,
                     const std::vector<ValueIndex>& operands,
                     const std::vector<TileSharding>& results,
                     const std::vector<std::pair<ValueId, ValueIndex>>& captured = {}) {
  Graph& graph = lowerer.graph();
  struct Saved {
    ValueId id;
    std::optional<ValueIndex> bound;
    std::optional<ArrayType> type;
  };
  std::vector<Saved> saved;
  std::vector<std::pair<ValueId, ValueIndex>> bindings = captured;
  for (size_t i = 0; i < operands.size(); ++i) bindings.push_back({op.operands[i], operands[i]});
  for (const auto& [id, value] : bindings) {
    saved.push_back(Saved{id, lowerer.Bound(id), lowerer.LocalType(id)});
    lowerer.Bind(id, value);
    lowerer.SetLocalType(id, graph.type(value));
  }
  Status status = OkStatus();
  for (size_t j = 0; j < op.results.size() && status.ok(); ++j) {
    StatusOr<ArrayType> global = lowerer.TypeOf(op.results[j], op);
    if (!global.ok()) {
      status = global.status();
      break;
    }
    StatusOr<std::vector<int64_t>> piece = results[j].PieceDims(global->dims);
    if (!piece.ok()) {
      status = lowerer.Invalid(op, piece.status().message());
      break;
    }
    lowerer.SetLocalType(op.results[j], ArrayType{global->type, *piece});
  }
  if (status.ok()) status = lowerer.LowerDirect(op);
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
    if (it->bound) {
      lowerer.Bind(it->id, *it->bound);
    } else {
      lowerer.Unbind(it->id);
    }
    if (it->type) {
      lowerer.SetLocalType(it->id, *it->type);
    } else {
      lowerer.ClearLocalType(it->id);
    }
  }
  PJRTKIT_RETURN_IF_ERROR(status);
  for (size_t j = 0; j < op.results.size(); ++j) {
    std::optional<ValueIndex> v = lowerer.Bound(op.results[j]);
    if (!v) return Internal(Lowerer::Origin(op) + ": the lowering bound no result");
    SetHeld(graph, *v, results[j]);
  }
  return OkStatus();
}

// Each operand brought to `wanted`, then `op` on the pieces.
Status ReshardAndLower(Lowerer& lowerer, const Operation& op,
                       const std::vector<ValueIndex>& operands,
                       const std::vector<TileSharding>& held,
                       const std::vector<TileSharding>& wanted,
                       const std::vector<TileSharding>& results) {
  // One value read twice (x @ x) is bound once per id: both uses must want the same piece.
  for (size_t i = 0; i < operands.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (op.operands[i] == op.operands[j] && wanted[i] != wanted[j]) {
        std::vector<TileSharding> whole, whole_results;
        for (const TileSharding& h : held) {
          whole.push_back(TileSharding::Replicated(h.rank(), h.devices()));
        }
        for (const TileSharding& r : results) {
          whole_results.push_back(TileSharding::Replicated(r.rank(), r.devices()));
        }
        return ReshardAndLower(lowerer, op, operands, held, whole, whole_results);
      }
    }
  }
  std::vector<ValueIndex> pieces;
  for (size_t i = 0; i < operands.size(); ++i) {
    PJRTKIT_ASSIGN_OR_RETURN(ValueIndex v, Reshard(lowerer, Lowerer::Origin(op), operands[i],
                                                   held[i], wanted[i]));
    pieces.push_back(v);
  }
  return LowerOnPieces(lowerer, op, pieces, results);
}

// The whole operands on every device, and `op` as in a program of one device; values its regions
// read from outside are gathered whole too.
Status LowerWhole(Lowerer& lowerer, const Operation& op, const std::vector<ValueIndex>& operands,
                  const std::vector<TileSharding>& held) {
  const int64_t devices = DeviceCount(lowerer);
  std::vector<ValueIndex> whole;
  for (size_t i = 0; i < operands.size(); ++i) {
    PJRTKIT_ASSIGN_OR_RETURN(
        ValueIndex v, Reshard(lowerer, Lowerer::Origin(op), operands[i], held[i],
                              TileSharding::Replicated(held[i].rank(), devices)));
    whole.push_back(v);
  }
  std::vector<std::pair<ValueId, ValueIndex>> captured;
  std::set<ValueId> defined;
  std::vector<ValueId> free;
  for (const stablehlo::Region& region : op.regions) FreeValues(region, &defined, &free);
  Graph& graph = lowerer.graph();
  for (ValueId id : free) {
    std::optional<ValueIndex> v = lowerer.Bound(id);
    if (!v || !graph.values[*v].sharded) continue;
    if (graph.values[*v].tiling == nullptr) {
      return lowerer.Unsupported(op, "automatic SPMD partitioning of a shard_map result read "
                                     "inside a region");
    }
    const TileSharding& h = *graph.values[*v].tiling;
    PJRTKIT_ASSIGN_OR_RETURN(ValueIndex gathered,
                             Reshard(lowerer, Lowerer::Origin(op), *v, h,
                                     TileSharding::Replicated(h.rank(), devices)));
    captured.push_back({id, gathered});
  }
  std::vector<TileSharding> results;
  for (ValueId id : op.results) {
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType type, lowerer.TypeOf(id, op));
    results.push_back(TileSharding::Replicated(static_cast<int>(type.dims.size()), devices));
  }
  return LowerOnPieces(lowerer, op, whole, results, captured);
}

// The first operand held in pieces with `rank`, or replicated.
TileSharding FirstTiled(const std::vector<TileSharding>& held, int rank, int64_t devices) {
  for (const TileSharding& h : held) {
    if (h.rank() == rank && !h.IsReplicated()) return h;
  }
  return TileSharding::Replicated(rank, devices);
}

// For a reshape from `from` to `to` dims: for each dimension of `to`, the dimension of `from` it
// may take its cut from (the major-most dimension of size above one in its group, matched with
// the major-most of the same group in `from`), or -1.
std::vector<int> ReshapeMajors(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  std::vector<int> source(to.size(), -1);
  size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    // One group: the shortest runs from i and j with the same product.
    const size_t gi = i, gj = j;
    int64_t pf = 1, pt = 1;
    if (i < from.size()) pf *= from[i++];
    if (j < to.size()) pt *= to[j++];
    while (pf != pt) {
      if (pf < pt && i < from.size()) {
        pf *= from[i++];
      } else if (pt < pf && j < to.size()) {
        pt *= to[j++];
      } else {
        return std::vector<int>(to.size(), -1);
      }
    }
    int major_from = -1, major_to = -1;
    for (size_t a = gi; a < i && major_from < 0; ++a) {
      if (from[a] > 1) major_from = static_cast<int>(a);
    }
    for (size_t b = gj; b < j && major_to < 0; ++b) {
      if (to[b] > 1) major_to = static_cast<int>(b);
    }
    if (major_from >= 0 && major_to >= 0) source[major_to] = major_from;
  }
  return source;
}

Status LowerElementwiseOnPieces(Lowerer& lowerer, const Operation& op,
                                const std::vector<ValueIndex>& operands,
                                const std::vector<TileSharding>& held,
                                const std::optional<TileSharding>& annotated,
                                const ArrayType& global) {
  const int rank = static_cast<int>(global.dims.size());
  const int64_t devices = DeviceCount(lowerer);
  TileSharding out = annotated ? *annotated : FirstTiled(held, rank, devices);
  std::vector<TileSharding> wanted;
  for (const TileSharding& h : held) {
    if (h.rank() == 0) {
      wanted.push_back(TileSharding::Replicated(0, devices));
    } else if (h.rank() == rank) {
      wanted.push_back(out);
    } else {
      return LowerWhole(lowerer, op, operands, held);
    }
  }
  return ReshardAndLower(lowerer, op, operands, held, wanted, {out});
}

// broadcast_in_dim, transpose and reshape: operand dimension i feeds result dimension
// feeds[i] (or none: -1), and a cut result dimension needs its operand dimension cut alike.
Status LowerMovementOnPieces(Lowerer& lowerer, const Operation& op,
                             const std::vector<ValueIndex>& operands,
                             const std::vector<TileSharding>& held,
                             const std::optional<TileSharding>& annotated,
                             const ArrayType& global, const std::vector<int>& result_source) {
  const int rank = static_cast<int>(global.dims.size());
  const int64_t devices = DeviceCount(lowerer);
  // Without an annotation, the result keeps the operand's cuts where it can.
  TileSharding out = TileSharding::Replicated(rank, devices);
  if (annotated) {
    out = *annotated;
  } else {
    StatusOr<TileSharding> carried = Project(held[0], result_source);
    if (carried.ok() && carried->PieceDims(global.dims).ok()) out = std::move(carried).value();
  }
  // A result dimension cut without an operand dimension to take it from: the op runs whole.
  std::vector<int> operand_source(static_cast<size_t>(held[0].rank()), -1);
  for (int d = 0; d < rank; ++d) {
    if (out.tiles(d) == 1) continue;
    if (result_source[d] < 0) return LowerWhole(lowerer, op, operands, held);
    operand_source[result_source[d]] = d;
  }
  PJRTKIT_ASSIGN_OR_RETURN(TileSharding wanted, Project(out, operand_source));
  const ArrayType operand_global = GlobalType(lowerer.graph(), operands[0], held[0]);
  if (!wanted.PieceDims(operand_global.dims).ok()) return LowerWhole(lowerer, op, operands, held);
  return ReshardAndLower(lowerer, op, operands, held, {wanted}, {out});
}

Status LowerDotOnPieces(Lowerer& lowerer, const Operation& op,
                        const std::vector<ValueIndex>& operands,
                        const std::vector<TileSharding>& held,
                        const std::optional<TileSharding>& annotated, const ArrayType& global) {
  if (op.name != "stablehlo.dot_general" || operands.size() != 2) {
    return LowerWhole(lowerer, op, operands, held);
  }
  PJRTKIT_ASSIGN_OR_RETURN(stablehlo::DotDimensionNumbers dims,
                           stablehlo::ReadOpAttribute(op, "dot_dimension_numbers",
                                                      stablehlo::ReadDotDimensionNumbers));
  const int rank = static_cast<int>(global.dims.size());
  const int64_t devices = DeviceCount(lowerer);
  const int lhs_rank = held[0].rank(), rhs_rank = held[1].rank();
  const int contracting = static_cast<int>(dims.lhs_contracting_dimensions.size());
  // Malformed dimension numbers: the ordinary lowering and the validator report them.
  auto in_range = [](const std::vector<int64_t>& v, int rank) {
    for (int64_t d : v) {
      if (d < 0 || d >= rank) return false;
    }
    return true;
  };
  if (dims.rhs_contracting_dimensions.size() != static_cast<size_t>(contracting) ||
      dims.lhs_batching_dimensions.size() != dims.rhs_batching_dimensions.size() ||
      !in_range(dims.lhs_batching_dimensions, lhs_rank) ||
      !in_range(dims.rhs_batching_dimensions, rhs_rank) ||
      !in_range(dims.lhs_contracting_dimensions, lhs_rank) ||
      !in_range(dims.rhs_contracting_dimensions, rhs_rank)) {
    return lowerer.LowerDirect(op);
  }
  // Each operand dimension's place in the iteration space: result dimensions, then contracting.
  std::vector<int> lhs_space(lhs_rank, -1), rhs_space(rhs_rank, -1);
  int next = 0;
  for (size_t b = 0; b < dims.lhs_batching_dimensions.size(); ++b) {
    lhs_space[dims.lhs_batching_dimensions[b]] = next;
    rhs_space[dims.rhs_batching_dimensions[b]] = next;
    ++next;
  }
  for (int c = 0; c < contracting; ++c) {
    lhs_space[dims.lhs_contracting_dimensions[c]] = rank + c;
    rhs_space[dims.rhs_contracting_dimensions[c]] = rank + c;
  }
  for (int d = 0; d < lhs_rank; ++d) {
    if (lhs_space[d] < 0) lhs_space[d] = next++;
  }
  for (int d = 0; d < rhs_rank; ++d) {
    if (rhs_space[d] < 0) rhs_space[d] = next++;
  }
  if (next != rank) return LowerWhole(lowerer, op, operands, held);
  // The result's sharding: annotated, or the lhs's cuts on its batch and free dimensions.
  TileSharding out = TileSharding::Replicated(rank, devices);
  if (annotated) {
    out = *annotated;
  } else {
    std::vector<int> source(rank, -1);
    for (int d = 0; d < lhs_rank; ++d) {
      if (lhs_space[d] < rank) source[lhs_space[d]] = d;
    }
    StatusOr<TileSharding> carried = Project(held[0], source);
    if (carried.ok() && carried->PieceDims(global.dims).ok()) out = std::move(carried).value();
  }
  // Contracting dimensions stay cut as the lhs (else the rhs) holds them, when that combines
  // with the result's cuts into one sharding of the iteration space.
  const ElementType element = global.type;
  const bool can_add = element != ElementType::kPred;
  std::optional<TileSharding> space;
  for (int side = 0; side < 2 && can_add && !space; ++side) {
    const TileSharding& h = held[side];
    const std::vector<int64_t>& cdims =
        side == 0 ? dims.lhs_contracting_dimensions : dims.rhs_contracting_dimensions;
    bool cut = false;
    for (int64_t c : cdims) cut = cut || h.tiles(static_cast<int>(c)) > 1;
    if (!cut) continue;
    std::vector<int64_t> tiles = out.tiles();
    std::vector<std::vector<int64_t>> coords;
    for (int64_t k = 0; k < devices; ++k) {
      std::vector<int64_t> c = out.coords(k);
      for (int64_t cd : cdims) c.push_back(h.coords(k)[cd]);
      coords.push_back(std::move(c));
    }
    for (int64_t cd : cdims) tiles.push_back(h.tiles(static_cast<int>(cd)));
    StatusOr<TileSharding> made = TileSharding::Make(std::move(tiles), std::move(coords));
    if (made.ok()) space = std::move(made).value();
  }
  if (!space) {
    std::vector<int> source(rank + contracting, -1);
    for (int d = 0; d < rank; ++d) source[d] = d;
    PJRTKIT_ASSIGN_OR_RETURN(TileSharding whole_contracting, Project(out, source));
    space = std::move(whole_contracting);
  }
  std::vector<int> lhs_source(lhs_space.begin(), lhs_space.end());
  std::vector<int> rhs_source(rhs_space.begin(), rhs_space.end());
  PJRTKIT_ASSIGN_OR_RETURN(TileSharding lhs_wanted, Project(*space, lhs_source));
  PJRTKIT_ASSIGN_OR_RETURN(TileSharding rhs_wanted, Project(*space, rhs_source));
  const Graph& graph = lowerer.graph();
  if (!lhs_wanted.PieceDims(GlobalType(graph, operands[0], held[0]).dims).ok() ||
      !rhs_wanted.PieceDims(GlobalType(graph, operands[1], held[1]).dims).ok()) {
    return LowerWhole(lowerer, op, operands, held);
  }
  PJRTKIT_RETURN_IF_ERROR(
      ReshardAndLower(lowerer, op, operands, held, {lhs_wanted, rhs_wanted}, {out}));
  std::vector<int> partial;
  for (int c = 0; c < contracting; ++c) {
    if (space->tiles(rank + c) > 1) partial.push_back(rank + c);
  }
  if (partial.empty()) return OkStatus();
  // Each device holds a partial sum over its pieces of the contracting dimensions.
  Graph& g = lowerer.graph();
  const ValueIndex partial_sum = *lowerer.Bound(op.results[0]);
  const ValueIndex sum =
      AllReduce(g, Lowerer::Origin(op), partial_sum, *space, partial, AddComputation(element));
  SetHeld(g, sum, out);
  lowerer.Bind(op.results[0], sum);
  return OkStatus();
}

Status LowerReduceOnPieces(Lowerer& lowerer, const Operation& op,
                           const std::vector<ValueIndex>& operands,
                           const std::vector<TileSharding>& held,
                           const std::vector<std::optional<TileSharding>>& annotated,
                           const std::vector<ArrayType>& globals) {
  const size_t inputs = operands.size() / 2;
  if (inputs == 0 || op.regions.size() != 1 || operands.size() != 2 * inputs ||
      globals.size() != inputs) {
    return LowerWhole(lowerer, op, operands, held);
  }
  PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> reduced,
                           OpInts(op, "dimensions", std::nullopt));
  const int operand_rank = held[0].rank();
  const int rank = static_cast<int>(globals[0].dims.size());
  const int64_t devices = DeviceCount(lowerer);
  std::vector<bool> is_reduced(operand_rank, false);
  for (int64_t d : reduced) {
    if (d < 0 || d >= operand_rank) return LowerWhole(lowerer, op, operands, held);
    is_reduced[d] = true;
  }
  std::vector<int> kept;  // Result dimension j is operand dimension kept[j].
  for (int d = 0; d < operand_rank; ++d) {
    if (!is_reduced[d]) kept.push_back(d);
  }
  if (static_cast<int>(kept.size()) != rank) return LowerWhole(lowerer, op, operands, held);
  TileSharding out = TileSharding::Replicated(rank, devices);
  if (annotated[0]) {
    out = *annotated[0];
  } else {
    StatusOr<TileSharding> carried = Project(held[0], kept);
    if (carried.ok() && carried->PieceDims(globals[0].dims).ok()) out = std::move(carried).value();
  }
  // Reduced dimensions stay cut (partial reductions, then an all-reduce) for one input whose
  // body is a known combiner and whose init is its identity.
  std::optional<TileSharding> wanted;
  std::vector<int> partial;
  ScalarComputation body;
  if (inputs == 1) {
    StatusOr<ScalarComputation> lowered = LowerScalarRegion(lowerer, op, op.regions.front());
    std::optional<std::string> init = ConstantBytes(lowerer.graph(), operands[1]);
    bool cut = false;
    for (int64_t d : reduced) cut = cut || held[0].tiles(static_cast<int>(d)) > 1;
    if (cut && lowered.ok() && init &&
        IsIdentity(lowered->combiner, globals[0].type, *init)) {
      std::vector<int64_t> tiles(operand_rank, 1);
      std::vector<std::vector<int64_t>> coords(static_cast<size_t>(devices),
                                               std::vector<int64_t>(operand_rank, 0));
      for (int j = 0; j < rank; ++j) tiles[kept[j]] = out.tiles(j);
      for (int64_t d : reduced) tiles[d] = held[0].tiles(static_cast<int>(d));
      for (int64_t k = 0; k < devices; ++k) {
        for (int j = 0; j < rank; ++j) coords[k][kept[j]] = out.coords(k)[j];
        for (int64_t d : reduced) coords[k][d] = held[0].coords(k)[d];
      }
      StatusOr<TileSharding> made = TileSharding::Make(std::move(tiles), std::move(coords));
      if (made.ok()) {
        wanted = std::move(made).value();
        for (int64_t d : reduced) {
          if (wanted->tiles(static_cast<int>(d)) > 1) partial.push_back(static_cast<int>(d));
        }
        body = std::move(lowered).value();
      }
    }
  }
  if (!wanted) {
    std::vector<int> source(operand_rank, -1);
    for (int j = 0; j < rank; ++j) source[kept[j]] = j;
    PJRTKIT_ASSIGN_OR_RETURN(TileSharding projected, Project(out, source));
    wanted = std::move(projected);
  }
  const ArrayType operand_global = GlobalType(lowerer.graph(), operands[0], held[0]);
  if (!wanted->PieceDims(operand_global.dims).ok()) return LowerWhole(lowerer, op, operands, held);
  std::vector<TileSharding> wanted_all, results;
  for (size_t i = 0; i < inputs; ++i) wanted_all.push_back(*wanted);
  for (size_t i = 0; i < inputs; ++i) {
    wanted_all.push_back(TileSharding::Replicated(held[inputs + i].rank(), devices));
  }
  for (size_t i = 0; i < inputs; ++i) results.push_back(out);
  PJRTKIT_RETURN_IF_ERROR(ReshardAndLower(lowerer, op, operands, held, wanted_all, results));
  if (partial.empty()) return OkStatus();
  Graph& graph = lowerer.graph();
  const ValueIndex partial_value = *lowerer.Bound(op.results[0]);
  const ValueIndex whole = AllReduce(graph, Lowerer::Origin(op), partial_value, *wanted, partial, body);
  SetHeld(graph, whole, out);
  lowerer.Bind(op.results[0], whole);
  return OkStatus();
}

}  // namespace

const TileSharding* HeldAs(const Graph& graph, ValueIndex v, int64_t devices,
                           TileSharding* replicated_storage) {
  const GraphValue& value = graph.values[v];
  if (!value.sharded) {
    *replicated_storage =
        TileSharding::Replicated(static_cast<int>(value.type.dims.size()), devices);
    return replicated_storage;
  }
  return value.tiling.get();
}

StatusOr<ValueIndex> Reshard(Lowerer& lowerer, const std::string& origin, ValueIndex value,
                             const TileSharding& from, const TileSharding& to) {
  if (from == to) return value;
  if (from.rank() != to.rank() || from.devices() != to.devices()) {
    return Internal(origin + ": resharding between shardings of different ranks or devices");
  }
  Graph& graph = lowerer.graph();
  TileSharding current = from;
  ValueIndex v = value;
  // All-gathers along the dimensions cut otherwise than `to` cuts them.
  for (int d = 0; d < from.rank(); ++d) {
    if (current.tiles(d) == 1 || current.SameAlong(to, d)) continue;
    CollectiveParams p;
    p.kind = CollectiveKind::kAllGather;
    p.dimension = d;
    p.groups = current.GroupsAlong({d});
    ArrayType type = graph.type(v);
    type.dims[d] *= current.tiles(d);
    Node node;
    node.kind = NodeKind::kInstruction;
    node.opcode = Opcode::kCollective;
    node.origin = origin;
    node.operands = {v};
    node.params = std::move(p);
    v = graph.AddNode(std::move(node), type);
    current = current.Whole({d});
    SetHeld(graph, v, current);
  }
  // Then each device's piece along the dimensions `to` cuts and the value holds whole.
  std::vector<int> cut;
  for (int d = 0; d < to.rank(); ++d) {
    if (!current.SameAlong(to, d)) cut.push_back(d);
  }
  if (!cut.empty()) v = TakePieces(graph, origin, v, to, cut);
  SetHeld(graph, v, to);
  return v;
}

Status LowerPartitioned(Lowerer& lowerer, const Operation& op) {
  Graph& graph = lowerer.graph();
  const int64_t devices = DeviceCount(lowerer);
  std::vector<ValueIndex> operands;
  std::vector<TileSharding> held;
  bool any_cut = false;
  bool opaque = false;
  for (ValueId id : op.operands) {
    StatusOr<ValueIndex> v = lowerer.Lookup(id);
    if (!v.ok()) return lowerer.LowerDirect(op);  // Reports the unknown value as always.
    TileSharding storage = TileSharding::Replicated(0, devices);
    const TileSharding* h = HeldAs(graph, *v, devices, &storage);
    if (h == nullptr) {
      opaque = true;
      h = &storage;
    }
    any_cut = any_cut || !h->IsReplicated();
    held.push_back(*h);
    operands.push_back(*v);
  }
  const stablehlo::Attribute* target = op.Find("call_target_name");
  const std::string target_name =
      op.name == "stablehlo.custom_call" && target != nullptr ? target->string_value : "";
  // shard_map's boundaries and the custom calls that only annotate take a piece as it is.
  static const std::set<std::string>* const kBoundaries = new std::set<std::string>{
      "xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape", "SPMDFullToShardShape",
      "SPMDShardToFullShape", "xla.sdy.FuncResultSharding", "annotate_device_placement",
      "MoveToHost", "MoveToDevice", "dce_sink"};
  if (kBoundaries->count(target_name) > 0) return lowerer.LowerDirect(op);
  if (opaque) {
    return lowerer.Unsupported(
        op, "automatic SPMD partitioning of a shard_map result (the op reads the pieces a "
            "shard_map returned; return it from jit, or compute with it inside shard_map)");
  }
  std::vector<ArrayType> globals;
  for (ValueId id : op.results) {
    StatusOr<ArrayType> type = lowerer.TypeOf(id, op);
    if (!type.ok()) return lowerer.LowerDirect(op);  // Reports the type as always.
    globals.push_back(std::move(type).value());
  }
  // Regions (case and if branches above all) may read cut values of the entry directly.
  bool captures_cut = false;
  if (!op.regions.empty()) {
    std::set<ValueId> defined;
    std::vector<ValueId> free;
    for (const stablehlo::Region& region : op.regions) FreeValues(region, &defined, &free);
    for (ValueId id : free) {
      std::optional<ValueIndex> v = lowerer.Bound(id);
      captures_cut = captures_cut || (v && graph.values[*v].sharded);
    }
  }
  if (captures_cut) {
    if (lowerer.state().num_replicas != 1) {
      return lowerer.Unsupported(op, "automatic SPMD partitioning in a program of " +
                                         std::to_string(lowerer.state().num_replicas) +
                                         " replicas");
    }
    return LowerWhole(lowerer, op, operands, held);
  }
  const std::vector<std::optional<TileSharding>> annotated = Annotated(lowerer, op, globals);
  bool cut_result = false;
  for (const auto& a : annotated) cut_result = cut_result || (a && !a->IsReplicated());
  const bool makes_pieces = op.name == "stablehlo.broadcast_in_dim" || op.name == "stablehlo.iota";
  if (!any_cut && !(cut_result && makes_pieces)) return lowerer.LowerDirect(op);
  if (lowerer.state().num_replicas != 1) {
    return lowerer.Unsupported(op, "automatic SPMD partitioning in a program of " +
                                       std::to_string(lowerer.state().num_replicas) +
                                       " replicas");
  }
  if (op.name == "stablehlo.custom_call") {
    if ((target_name == "Sharding" || target_name == "xla.sdy.ShardingConstraint") &&
        operands.size() == 1 && globals.size() == 1 && annotated[0]) {
      PJRTKIT_ASSIGN_OR_RETURN(ValueIndex v, Reshard(lowerer, Lowerer::Origin(op), operands[0],
                                                     held[0], *annotated[0]));
      lowerer.Bind(op.results[0], v);
      lowerer.SetLocalType(op.results[0], graph.type(v));
      return OkStatus();
    }
    return LowerWhole(lowerer, op, operands, held);
  }
  if (globals.size() != 1 && op.name != "stablehlo.reduce") {
    return LowerWhole(lowerer, op, operands, held);
  }
  if (globals.size() == 1 && IsElementwise(op.name)) {
    return LowerElementwiseOnPieces(lowerer, op, operands, held, annotated[0], globals[0]);
  }
  if (op.name == "stablehlo.broadcast_in_dim" && operands.size() == 1) {
    PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> bd,
                             OpInts(op, "broadcast_dimensions", std::nullopt));
    const ArrayType operand_global = GlobalType(graph, operands[0], held[0]);
    std::vector<int> source(globals[0].dims.size(), -1);
    for (size_t i = 0; i < bd.size() && i < operand_global.dims.size(); ++i) {
      if (bd[i] < 0 || bd[i] >= static_cast<int64_t>(source.size())) {
        return lowerer.LowerDirect(op);  // Reports the attribute.
      }
      if (operand_global.dims[i] == globals[0].dims[bd[i]]) source[bd[i]] = static_cast<int>(i);
    }
    return LowerMovementOnPieces(lowerer, op, operands, held, annotated[0], globals[0], source);
  }
  if (op.name == "stablehlo.transpose" && operands.size() == 1) {
    PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> perm, OpInts(op, "permutation", std::nullopt));
    if (perm.size() != globals[0].dims.size() ||
        static_cast<int>(perm.size()) != held[0].rank()) {
      return lowerer.LowerDirect(op);
    }
    for (int64_t p : perm) {
      if (p < 0 || p >= held[0].rank()) return lowerer.LowerDirect(op);
    }
    std::vector<int> source(perm.begin(), perm.end());
    return LowerMovementOnPieces(lowerer, op, operands, held, annotated[0], globals[0], source);
  }
  if (op.name == "stablehlo.reshape" && operands.size() == 1) {
    const ArrayType operand_global = GlobalType(graph, operands[0], held[0]);
    const std::vector<int> source = ReshapeMajors(operand_global.dims, globals[0].dims);
    return LowerMovementOnPieces(lowerer, op, operands, held, annotated[0], globals[0], source);
  }
  if (op.name == "stablehlo.iota" && annotated[0]) {
    PJRTKIT_ASSIGN_OR_RETURN(int64_t dimension, OpInt(op, "iota_dimension", std::nullopt));
    if (dimension >= 0 && dimension < annotated[0]->rank() &&
        annotated[0]->tiles(static_cast<int>(dimension)) == 1) {
      return LowerOnPieces(lowerer, op, {}, {*annotated[0]});
    }
    return lowerer.LowerDirect(op);
  }
  if (op.name == "stablehlo.dot_general" && globals.size() == 1) {
    return LowerDotOnPieces(lowerer, op, operands, held, annotated[0], globals[0]);
  }
  if (op.name == "stablehlo.reduce") {
    return LowerReduceOnPieces(lowerer, op, operands, held, annotated, globals);
  }
  return LowerWhole(lowerer, op, operands, held);
}

}  // namespace sim
}  // namespace pjrtkit
