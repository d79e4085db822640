// Graph: the compiler's working form of one computation, between lowering (StableHLO ops ->
// nodes) and emission (nodes -> fused instructions, slots and a buffer plan).
//
// Lowering turns every StableHLO op into nodes over values. Elementwise ops, broadcasts,
// transposes, degenerate reshapes, splat constants and iotas are not instructions yet: fusion
// (emitter.cc) groups them into kFused instructions, so a chain of them costs one loop.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_GRAPH_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_GRAPH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xla_plugin/devices/sim/compiler/tile_sharding.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/program/array_type.h"
#include "xla_plugin/devices/sim/program/device_program.h"

namespace pjrtkit {
namespace sim {

// Index of a value / node in its Graph.
using ValueIndex = int32_t;
using NodeIndex = int32_t;

// A value of the computation.
struct GraphValue {
  ArrayType type;
  NodeIndex producer = -1;  // The node defining it; -1 for a parameter.
  int32_t parameter = -1;   // Its parameter index, for a parameter.
  // In a partitioned program: the StableHLO value is a global array of which this device holds
  // one piece (`type` is the piece's).
  bool sharded = false;
  // How the pieces are cut and which device holds which (partitioner.h); null for a piece whose
  // cut the compiler does not know (a shard_map result), which only the program may return.
  std::shared_ptr<const TileSharding> tiling;
};

// What a node does.
enum class NodeKind : uint8_t {
  kElementwise,  // One EwOp over same-shaped operands (scalars broadcast); fusable.
  kView,         // Its result reads operand 0 through `source_dims` (broadcast, transpose).
  kSplat,        // Every element equals `bytes` (one element of the result's type).
  kIota,         // The index along `attr` (a dimension), as the result's type.
  kAlias,        // Its result is operand 0's bytes under another type of the same size.
  kInstruction,  // A regular instruction (`opcode`, `params`).
};

// One node: operands and results are values of the same Graph.
struct Node {
  NodeKind kind = NodeKind::kInstruction;
  std::vector<ValueIndex> operands;
  std::vector<ValueIndex> results;
  std::string origin;  // The StableHLO op and its location, for messages.

  // kElementwise.
  EwOp op = EwOp::kAdd;
  ElementType operand_type = ElementType::kInvalid;
  int64_t attr = 0;  // kElementwise's EwStep::attr; kIota's dimension.
  // kView: for each result dimension, the operand dimension it indexes, or -1 (broadcast).
  std::vector<int32_t> source_dims;
  // kSplat: one element; kInstruction kConstant: see params.
  std::string bytes;
  // kInstruction.
  Opcode opcode = Opcode::kCopy;
  InstructionParams params;
  bool dead = false;  // Removed by a rewrite.
  // Has an effect beyond its results (a custom call, or a loop or branch holding one): kept even
  // when nothing reads its results.
  bool effectful = false;
};

// One computation being compiled.
struct Graph {
  std::string name;
  std::vector<GraphValue> values;
  std::vector<Node> nodes;
  std::vector<ValueIndex> parameters;
  std::vector<ValueIndex> results;
  bool effectful = false;  // Some node, here or in a computation it runs, is effectful.

  // Adds a value of `type` produced by `producer`.
  ValueIndex AddValue(const ArrayType& type, NodeIndex producer) {
    values.push_back(GraphValue{type, producer, -1, false, nullptr});
    return static_cast<ValueIndex>(values.size() - 1);
  }
  // Adds a parameter of `type`.
  ValueIndex AddParameter(const ArrayType& type) {
    values.push_back(GraphValue{type, -1, static_cast<int32_t>(parameters.size()), false, nullptr});
    const ValueIndex v = static_cast<ValueIndex>(values.size() - 1);
    parameters.push_back(v);
    return v;
  }
  // Adds `node` with one result of `type` and returns that result.
  ValueIndex AddNode(Node node, const ArrayType& type) {
    const NodeIndex n = static_cast<NodeIndex>(nodes.size());
    node.results = {AddValue(type, n)};
    nodes.push_back(std::move(node));
    return nodes.back().results[0];
  }
  // Adds `node` with results of `types` and returns them.
  std::vector<ValueIndex> AddNode(Node node, const std::vector<ArrayType>& types) {
    const NodeIndex n = static_cast<NodeIndex>(nodes.size());
    node.results.clear();
    for (const ArrayType& t : types) node.results.push_back(AddValue(t, n));
    nodes.push_back(std::move(node));
    return nodes.back().results;
  }
  const ArrayType& type(ValueIndex v) const { return values[v].type; }
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_COMPILER_GRAPH_H_
