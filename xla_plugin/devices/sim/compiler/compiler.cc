#include "xla_plugin/devices/sim/compiler/compiler.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/devices/sim/compiler/emitter.h"
#include "xla_plugin/devices/sim/compiler/lowerer.h"
#include "xla_plugin/devices/sim/compiler/partitioner.h"
#include "xla_plugin/devices/sim/compiler/sharding.h"
#include "xla_plugin/devices/sim/compiler/tile_sharding.h"
#include "xla_plugin/devices/sim/executor/program_validator.h"

namespace pjrtkit {
namespace sim {
namespace {

// A node without effects whose one result has no elements computes nothing anyone can read: it
// becomes a splat of that empty shape, with no operands, so what only it read is dropped too (as
// XLA's zero-sized-instruction elimination does). LAPACK's calls on 0x0 matrices, whose status
// only selects among empty arrays, are never made then (LAPACK refuses n = 0 with lda = 0).
void ReplaceZeroSizedValues(Graph* graph) {
  for (Node& node : graph->nodes) {
    if (node.effectful || node.dead || node.kind == NodeKind::kSplat || node.results.size() != 1) {
      continue;
    }
    const ArrayType& type = graph->type(node.results[0]);
    if (type.num_elements() != 0) continue;
    node.kind = NodeKind::kSplat;
    node.operands.clear();
    node.source_dims.clear();
    node.params = std::monostate{};
    node.bytes.assign(static_cast<size_t>(type.element_bytes()), '\0');
  }
}


// The shape one device holds of a value with `attributes` (arg_attrs / res_attrs) and global
// `type` in a program of `devices` devices; `op_sharding` receives the sharding as a serialized
// xla.OpSharding (empty: replicated).
StatusOr<ArrayType> LocalType(const stablehlo::AttributeList& attributes, const ArrayType& type,
                              int64_t devices, const std::string& what, std::string* op_sharding,
                              std::shared_ptr<const TileSharding>* tiling) {
  op_sharding->clear();
  tiling->reset();
  const stablehlo::Attribute* sharding = stablehlo::FindAttribute(attributes, "mhlo.sharding");
  if (devices == 1 || sharding == nullptr ||
      sharding->kind != stablehlo::Attribute::Kind::kString) {
    return type;
  }
  StatusOr<ShardingSpec> spec = ParseSharding(sharding->string_value);
  if (!spec.ok()) return InvalidArgument(what + ": " + spec.status().message());
  if (spec->kind == ShardingSpec::Kind::kMaximal) {
    return Unimplemented(what + " is placed on one device only (" + sharding->string_value +
                         "), which the sim device does not support");
  }
  // A tiled sharding places its tiles (and their copies) on every device of the program once.
  std::vector<bool> seen(static_cast<size_t>(devices), false);
  for (int64_t device : spec->devices) {
    if (device < 0 || device >= devices || seen[static_cast<size_t>(device)]) {
      return InvalidArgument(what + ": the sharding " + sharding->string_value + " names device " +
                             std::to_string(device) + ", which is not a distinct device of the "
                             "program's " + std::to_string(devices));
    }
    seen[static_cast<size_t>(device)] = true;
  }
  if (spec->kind == ShardingSpec::Kind::kTiled &&
      static_cast<int64_t>(spec->devices.size()) != devices) {
    return InvalidArgument(what + ": the sharding " + sharding->string_value + " spans " +
                           std::to_string(spec->devices.size()) + " devices of the program's " +
                           std::to_string(devices));
  }
  StatusOr<std::vector<int64_t>> dims = ShardDims(*spec, type.dims);
  if (!dims.ok()) return InvalidArgument(what + ": " + dims.status().message());
  *op_sharding = OpShardingProto(*spec);
  if (spec->kind == ShardingSpec::Kind::kTiled) {
    StatusOr<TileSharding> cut =
        TileSharding::FromSpec(*spec, static_cast<int>(type.dims.size()), devices);
    if (!cut.ok()) return InvalidArgument(what + ": " + cut.status().message());
    *tiling = std::make_shared<const TileSharding>(std::move(cut).value());
  }
  return ArrayType{type.type, *dims};
}

// Donation facts of the entry's arguments: tf.aliasing_output and jax.buffer_donor.
void ReadDonation(const stablehlo::Function& main, DeviceProgram* program) {
  for (const stablehlo::AttributeList& attributes : main.argument_attributes) {
    int32_t alias = -1;
    bool donor = false;
    if (const stablehlo::Attribute* a = stablehlo::FindAttribute(attributes, "tf.aliasing_output")) {
      if (a->kind == stablehlo::Attribute::Kind::kInteger) alias = static_cast<int32_t>(a->int_value);
      donor = true;
    }
    if (const stablehlo::Attribute* d = stablehlo::FindAttribute(attributes, "jax.buffer_donor")) {
      donor = donor || d->kind != stablehlo::Attribute::Kind::kBool || d->bool_value;
    }
    program->parameter_aliases.push_back(alias);
    program->parameter_donatable.push_back(donor);
  }
  program->parameter_aliases.resize(main.argument_types.size(), -1);
  program->parameter_donatable.resize(main.argument_types.size(), false);
}

}  // namespace

StatusOr<DeviceProgram> CompileModule(const stablehlo::Module& module, const CompileFacts& facts,
                                      CompileReport* report) {
  const stablehlo::Function* main = module.FindFunction("main");
  if (main == nullptr || main->body.blocks.empty()) {
    return InvalidArgument("the module has no function 'main' to compile");
  }
  if (facts.num_replicas < 1 || facts.num_partitions < 1) {
    return InvalidArgument("num_replicas and num_partitions must be at least 1");
  }
  const int64_t devices = facts.num_replicas * facts.num_partitions;
  LoweringState state;
  state.module = &module;
  state.num_replicas = facts.num_replicas;
  state.num_partitions = facts.num_partitions;
  state.device_name = facts.device_name;
  if (const stablehlo::Attribute* frontend =
          stablehlo::FindAttribute(module.attributes, "mhlo.frontend_attributes")) {
    if (const stablehlo::Attribute* meshes = frontend->Find("xla.sdy.meshes")) {
      StatusOr<std::map<std::string, SdyMesh>> read = ParseSdyMeshes(meshes->string_value);
      if (read.ok()) state.meshes = std::move(read).value();
    }
  }
  state.graphs.push_back(std::make_unique<Graph>());
  Graph& entry = *state.graphs.front();
  entry.name = module.name.empty() ? "main" : module.name;
  Lowerer lowerer(state, *main, entry, nullptr, 0);
  lowerer.set_partitioned(devices > 1);
  const stablehlo::Block& block = main->body.blocks.front();
  if (block.arguments.size() != main->argument_types.size()) {
    return InvalidArgument("main's block arguments do not match its type");
  }
  std::vector<std::string> parameter_shardings, result_shardings;
  stablehlo::Operation main_op;
  main_op.name = "func.func @main";
  main_op.location = main->location;
  for (size_t i = 0; i < block.arguments.size(); ++i) {
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType global, lowerer.ToArrayType(main->argument_types[i], main_op));
    const stablehlo::AttributeList empty;
    const stablehlo::AttributeList& attributes =
        i < main->argument_attributes.size() ? main->argument_attributes[i] : empty;
    std::string op_sharding;
    std::shared_ptr<const TileSharding> tiling;
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType local, LocalType(attributes, global, devices,
                                                        "argument " + std::to_string(i),
                                                        &op_sharding, &tiling));
    parameter_shardings.push_back(std::move(op_sharding));
    const ValueIndex v = entry.AddParameter(local);
    entry.values[v].sharded = local != global;
    if (entry.values[v].sharded) entry.values[v].tiling = std::move(tiling);
    lowerer.Bind(block.arguments[i], v);
  }
  PJRTKIT_RETURN_IF_ERROR(lowerer.LowerBlock(block, &entry.results));
  if (entry.results.size() != main->result_types.size()) {
    return InvalidArgument("main returns " + std::to_string(entry.results.size()) +
                           " values but its type says " +
                           std::to_string(main->result_types.size()));
  }
  for (size_t j = 0; j < entry.results.size(); ++j) {
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType global, lowerer.ToArrayType(main->result_types[j], main_op));
    const stablehlo::AttributeList empty;
    const stablehlo::AttributeList& attributes =
        j < main->result_attributes.size() ? main->result_attributes[j] : empty;
    std::string op_sharding;
    std::shared_ptr<const TileSharding> tiling;
    const std::string what = "result " + std::to_string(j);
    PJRTKIT_ASSIGN_OR_RETURN(ArrayType local, LocalType(attributes, global, devices, what,
                                                        &op_sharding, &tiling));
    const GraphValue& value = entry.values[entry.results[j]];
    if (devices > 1 && (!value.sharded || value.tiling != nullptr)) {
      // The partitioner knows how the value is held: it is brought to the result's sharding, or,
      // where the program names none, reported as it is held.
      TileSharding storage = TileSharding::Replicated(0, devices);
      const TileSharding held = *HeldAs(entry, entry.results[j], devices, &storage);
      const bool named = stablehlo::FindAttribute(attributes, "mhlo.sharding") != nullptr;
      const TileSharding wanted =
          tiling != nullptr ? *tiling
          : named ? TileSharding::Replicated(static_cast<int>(global.dims.size()), devices)
                  : held;
      PJRTKIT_ASSIGN_OR_RETURN(entry.results[j], Reshard(lowerer, what + " of main",
                                                         entry.results[j], held, wanted));
      op_sharding = OpShardingProto(wanted.ToSpec());
      PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> piece, wanted.PieceDims(global.dims));
      local = ArrayType{global.type, std::move(piece)};
    }
    result_shardings.push_back(std::move(op_sharding));
    const ArrayType& actual = entry.type(entry.results[j]);
    if (actual != local) {
      return Unimplemented("result " + std::to_string(j) + " of main is " + actual.ToString() +
                           " on each device but its sharding needs " + local.ToString() +
                           " (resharding results is not supported by the " + facts.device_name +
                           " device)");
    }
  }
  DeviceProgram program;
  program.name = entry.name;
  program.num_replicas = facts.num_replicas;
  program.num_partitions = facts.num_partitions;
  CompileReport totals;
  for (const std::unique_ptr<Graph>& graph : state.graphs) {
    ReplaceZeroSizedValues(graph.get());
    EmitStats stats;
    PJRTKIT_ASSIGN_OR_RETURN(Computation computation, EmitComputation(*graph, &stats));
    totals.instructions += static_cast<int64_t>(computation.instructions.size());
    totals.fused_instructions += stats.fused_instructions;
    totals.fused_ops += stats.fused_nodes;
    program.computations.push_back(std::move(computation));
  }
  totals.computations = static_cast<int64_t>(program.computations.size());
  ReadDonation(*main, &program);
  program.parameter_shardings = std::move(parameter_shardings);
  program.result_shardings = std::move(result_shardings);
  Status valid = ValidateProgram(program);
  if (!valid.ok()) {
    return Internal("the sim compiler built an invalid program (a compiler bug): " +
                    valid.message());
  }
  if (report != nullptr) *report = totals;
  return program;
}

}  // namespace sim
}  // namespace pjrtkit
