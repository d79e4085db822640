// The automatic SPMD partitioner: StableHLO programs over arrays that main receives in pieces,
// compiled for 4 partitions and run on 4 devices (ProgramRunner), against the values of the same
// program on one device; and which collectives the compiler chose.
#include "xla_plugin/devices/sim/compiler/partitioner.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/compiler/compiler.h"
#include "xla_plugin/devices/sim/testing/program_runner.h"

namespace pjrtkit {
namespace sim {
namespace {

using stablehlo::HostTensor;
using testing::CompileText;
using testing::RunCompiled;
using testing::RunOnSim;
using testing::Tensor;
using testing::Values;

// Collectives of the entry computation by kind: "all_gather", "all_reduce".
std::map<std::string, int> Collectives(const DeviceProgram& program) {
  std::map<std::string, int> out;
  for (const Instruction& instruction : program.computations.front().instructions) {
    if (instruction.opcode != Opcode::kCollective) continue;
    const auto& p = std::get<CollectiveParams>(instruction.params);
    out[p.kind == CollectiveKind::kAllGather   ? "all_gather"
        : p.kind == CollectiveKind::kAllReduce ? "all_reduce"
                                               : "other"]++;
  }
  return out;
}

std::vector<double> Iota(int n, double scale = 1.0) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = (i % 7 - 3) * scale;
  return v;
}

// Rows [begin, begin + rows) of a row-major matrix with `cols` columns.
std::vector<double> Rows(const std::vector<double>& m, int cols, int begin, int rows) {
  return std::vector<double>(m.begin() + begin * cols, m.begin() + (begin + rows) * cols);
}

StatusOr<DeviceProgram> Compile4(const std::string& text) {
  CompileFacts facts;
  facts.num_partitions = 4;
  return CompileText(text, facts);
}

// A row-sharded matrix: elementwise ops on the pieces, the sum over the cut rows as partial sums
// and one all-reduce; no gathers.
TEST(PartitionerTest, ElementwiseThenSumOverTheCutDimension) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<8x3xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> tensor<3xf32> {
      %two = stablehlo.constant dense<2.0> : tensor<f32>
      %b = stablehlo.broadcast_in_dim %two, dims = [] {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<f32>) -> tensor<8x3xf32>
      %m = stablehlo.multiply %x, %b {mhlo.sharding = "{devices=[4,1]<=[4]}"} : tensor<8x3xf32>
      %t = stablehlo.tanh %m {mhlo.sharding = "{devices=[4,1]<=[4]}"} : tensor<8x3xf32>
      %zero = stablehlo.constant dense<0.0> : tensor<f32>
      %s = stablehlo.reduce(%t init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<8x3xf32>, tensor<f32>) -> tensor<3xf32>
      return %s : tensor<3xf32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(Collectives(*compiled), (std::map<std::string, int>{{"all_reduce", 1}}));
  const std::vector<double> x = Iota(24, 0.25);
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back({Tensor(ElementType::kF32, {2, 3}, Rows(x, 3, 2 * d, 2))});
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  // One device, the whole array: the reference.
  StatusOr<std::vector<HostTensor>> whole = RunOnSim(program, {Tensor(ElementType::kF32, {8, 3}, x)});
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  for (int d = 0; d < 4; ++d) {
    const std::vector<double> got = Values((*results)[d][0]);
    const std::vector<double> want = Values((*whole)[0]);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << d << " " << i;
  }
}

// The gradient of a data-parallel layer: x^T dy with both cut along the batch (contracting)
// dimension gives each device a partial product; one all-reduce sums them.
TEST(PartitionerTest, DotOverTheCutContractingDimension) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<8x3xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"},
                    %dy: tensor<8x2xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> tensor<3x2xf32> {
      %g = stablehlo.dot_general %x, %dy, contracting_dims = [0] x [0] : (tensor<8x3xf32>, tensor<8x2xf32>) -> tensor<3x2xf32>
      return %g : tensor<3x2xf32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(Collectives(*compiled), (std::map<std::string, int>{{"all_reduce", 1}}));
  const std::vector<double> x = Iota(24), dy = Iota(16, 0.5);
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) {
    inputs.push_back({Tensor(ElementType::kF32, {2, 3}, Rows(x, 3, 2 * d, 2)),
                      Tensor(ElementType::kF32, {2, 2}, Rows(dy, 2, 2 * d, 2))});
  }
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  std::vector<double> want(6, 0.0);
  for (int r = 0; r < 8; ++r) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 2; ++j) want[i * 2 + j] += x[r * 3 + i] * dy[r * 2 + j];
    }
  }
  for (int d = 0; d < 4; ++d) EXPECT_EQ(Values((*results)[d][0]), want) << d;
}

// Batch rows times replicated weights: each device multiplies its rows; nothing moves, and the
// result leaves in pieces, reported as such when the program names no result sharding.
TEST(PartitionerTest, RowsTimesReplicatedWeightsStayInPieces) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<8x3xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"},
                    %w: tensor<3x5xf32> {mhlo.sharding = "{replicated}"}) -> tensor<40xf32> {
      %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<8x3xf32>, tensor<3x5xf32>) -> tensor<8x5xf32>
      %r = stablehlo.reshape %h {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<8x5xf32>) -> tensor<40xf32>
      return %r : tensor<40xf32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_TRUE(Collectives(*compiled).empty());
  const std::string tiled("\x08\x03\x1a\x01\x04\x22\x04\x00\x01\x02\x03", 11);
  EXPECT_EQ(compiled->result_shardings, (std::vector<std::string>{tiled}));
  const std::vector<double> x = Iota(24), w = Iota(15, 0.5);
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) {
    inputs.push_back({Tensor(ElementType::kF32, {2, 3}, Rows(x, 3, 2 * d, 2)),
                      Tensor(ElementType::kF32, {3, 5}, w)});
  }
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  for (int d = 0; d < 4; ++d) {
    std::vector<double> want(10, 0.0);
    for (int r = 0; r < 2; ++r) {
      for (int j = 0; j < 5; ++j) {
        for (int k = 0; k < 3; ++k) want[r * 5 + j] += x[(2 * d + r) * 3 + k] * w[k * 5 + j];
      }
    }
    EXPECT_EQ(Values((*results)[d][0]), want) << d;
  }
}

// Moving between shardings: rows cut over 4 devices -> columns cut over a 2x2 tile assignment
// given in transposed order: an all-gather of the rows, then each device's piece.
TEST(PartitionerTest, ResultShardingOtherThanTheArgumentsIsMovedTo) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<4x4xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"})
        -> (tensor<4x4xf32> {mhlo.sharding = "{devices=[2,2]<=[2,2]T(1,0)}"}) {
      %n = stablehlo.negate %x {mhlo.sharding = "{devices=[4,1]<=[4]}"} : tensor<4x4xf32>
      return %n : tensor<4x4xf32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(Collectives(*compiled), (std::map<std::string, int>{{"all_gather", 1}}));
  const std::vector<double> x = Iota(16);
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back({Tensor(ElementType::kF32, {1, 4}, Rows(x, 4, d, 1))});
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  // <=[2,2]T(1,0): tile (i, j) is on device 2j + i.
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      std::vector<double> want;
      for (int r = 2 * i; r < 2 * i + 2; ++r) {
        for (int c = 2 * j; c < 2 * j + 2; ++c) want.push_back(-x[r * 4 + c]);
      }
      EXPECT_EQ(Values((*results)[2 * j + i][0]), want) << i << "," << j;
    }
  }
}

// An op without a rule (sort along the cut dimension) runs on the whole array on every device.
TEST(PartitionerTest, OpsWithoutARuleRunOnTheGatheredArray) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}) -> tensor<8xf32> {
      %s = "stablehlo.sort"(%x) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %lt = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
      }) {dimension = 0 : i64, is_stable = true} : (tensor<8xf32>) -> tensor<8xf32>
      return %s : tensor<8xf32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(Collectives(*compiled), (std::map<std::string, int>{{"all_gather", 1}}));
  const std::vector<double> x = {5, 1, 7, 3, 0, 6, 2, 4};
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back({Tensor(ElementType::kF32, {2}, Rows(x, 1, 2 * d, 2))});
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(Values((*results)[d][0]), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7})) << d;
  }
}

// One value read twice with different pieces wanted (x @ x, rows cut): it runs whole.
TEST(PartitionerTest, AValueReadTwiceAsDifferentPiecesRunsWhole) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> tensor<8x8xf32> {
      %y = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      return %y : tensor<8x8xf32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  const std::vector<double> x = Iota(64, 0.5);
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back({Tensor(ElementType::kF32, {2, 8}, Rows(x, 8, 2 * d, 2))});
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  std::vector<double> full(64, 0.0);
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 8; ++c) {
      for (int k = 0; k < 8; ++k) full[r * 8 + c] += x[r * 8 + k] * x[k * 8 + c];
    }
  }
  // No result sharding named: whatever it is held as is reported; every device's piece is right.
  for (int d = 0; d < 4; ++d) {
    const std::vector<double> got = Values((*results)[d][0]);
    if (got.size() == 64) {
      EXPECT_EQ(got, full) << d;
    } else {
      EXPECT_EQ(got, Rows(full, 8, 2 * d, 2)) << d;
    }
  }
}

// Branches read values of the entry directly: a cut one is gathered whole before the case.
TEST(PartitionerTest, BranchesReadingCutValuesGetThemWhole) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}, %i: tensor<i32>) -> tensor<8xf32> {
      %r = "stablehlo.case"(%i) ({
        %n = stablehlo.negate %x : tensor<8xf32>
        stablehlo.return %n : tensor<8xf32>
      }, {
        stablehlo.return %x : tensor<8xf32>
      }) : (tensor<i32>) -> tensor<8xf32>
      return %r : tensor<8xf32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(Collectives(*compiled), (std::map<std::string, int>{{"all_gather", 1}}));
  const std::vector<double> x = Iota(8);
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) {
    inputs.push_back({Tensor(ElementType::kF32, {2}, Rows(x, 1, 2 * d, 2)),
                      Tensor(ElementType::kS32, {}, {0})});
  }
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  std::vector<double> want;
  for (double v : x) want.push_back(-v);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(Values((*results)[d][0]), want) << d;
}

// A maximum whose init is not the identity (0 instead of -inf) cannot be taken over pieces: the
// reduced dimension is gathered first, and the values stay right.
TEST(PartitionerTest, ReductionsWhoseInitIsNotTheIdentityGatherFirst) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}) -> tensor<f32> {
      %init = stablehlo.constant dense<-5.0> : tensor<f32>
      %m = stablehlo.reduce(%x init: %init) applies stablehlo.maximum across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
      return %m : tensor<f32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(Collectives(*compiled), (std::map<std::string, int>{{"all_gather", 1}}));
  const std::vector<double> x = {-9, -8, -7, -9, -8, -9, -6, -7};
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back({Tensor(ElementType::kF32, {2}, Rows(x, 1, 2 * d, 2))});
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  for (int d = 0; d < 4; ++d) EXPECT_EQ(Values((*results)[d][0]), (std::vector<double>{-5})) << d;
}

// A 2x2 mesh: rows cut on one axis, the contracting dimension on the other (a model-parallel
// layer over a data-parallel batch): partial products all-reduced over pairs of devices only.
TEST(PartitionerTest, TwoDimensionalMeshContractingOnOneAxis) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<4x4xf32> {mhlo.sharding = "{devices=[2,2]<=[4]}"},
                    %w: tensor<4x3xf32> {mhlo.sharding = "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}"})
        -> (tensor<4x3xf32> {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"}) {
      %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
      return %h : tensor<4x3xf32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(Collectives(*compiled), (std::map<std::string, int>{{"all_reduce", 1}}));
  for (const Instruction& instruction : compiled->computations.front().instructions) {
    if (instruction.opcode != Opcode::kCollective) continue;
    EXPECT_EQ(std::get<CollectiveParams>(instruction.params).groups,
              (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  }
  const std::vector<double> x = Iota(16), w = Iota(12, 0.5);
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) {
    const int i = d / 2, j = d % 2;  // x tile (i, j) and w's rows j: devices 2i + j.
    std::vector<double> xt, wt;
    for (int r = 2 * i; r < 2 * i + 2; ++r) {
      for (int c = 2 * j; c < 2 * j + 2; ++c) xt.push_back(x[r * 4 + c]);
    }
    for (int r = 2 * j; r < 2 * j + 2; ++r) {
      for (int c = 0; c < 3; ++c) wt.push_back(w[r * 3 + c]);
    }
    inputs.push_back({Tensor(ElementType::kF32, {2, 2}, xt), Tensor(ElementType::kF32, {2, 3}, wt)});
  }
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  std::vector<double> full(12, 0.0);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 3; ++c) {
      for (int k = 0; k < 4; ++k) full[r * 3 + c] += x[r * 4 + k] * w[k * 3 + c];
    }
  }
  for (int d = 0; d < 4; ++d) EXPECT_EQ(Values((*results)[d][0]), Rows(full, 3, 2 * (d / 2), 2)) << d;
}

// A shard_map result whose sharding the module does not give (no Shardy meshes to read its
// out_shardings against): an op reading it is refused by name; returning it is fine.
TEST(PartitionerTest, ShardMapResultsOfUnknownShardingReadOutsideAreRefusedByName) {
  const std::string program = R"(
    module attributes {mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}) -> tensor<f32> {
      %l = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%x) : (tensor<8xf32>) -> tensor<2xf32>
      %g = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%l) : (tensor<2xf32>) -> tensor<8xf32>
      %zero = stablehlo.constant dense<0.0> : tensor<f32>
      %s = stablehlo.reduce(%g init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
      return %s : tensor<f32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(compiled.status().message().find("automatic SPMD partitioning of a shard_map result"),
            std::string::npos)
      << compiled.status().message();
}

// shard_map's boundaries with Shardy shardings: the argument (rows cut) enters a body that wants
// columns cut (moved there), and the body's result (columns cut) is summed outside it.
TEST(PartitionerTest, ShardMapBoundariesMovePiecesAndTheirResultsAreKnown) {
  const std::string program = R"(
    module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22d\22=4]>}"}, mhlo.num_partitions = 4 : i32} {
    func.func @main(%x: tensor<4x4xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> tensor<4xf32> {
      %l = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%x) {mhlo.frontend_attributes = {xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{}, {\22d\22}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{\22d\22}>"}} : (tensor<4x4xf32>) -> tensor<4x1xf32>
      %b = call @xla.sdy.manual_computation_body(%l) : (tensor<4x1xf32>) -> tensor<4x1xf32>
      %g = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%b) {mhlo.frontend_attributes = {xla.sdy.manual_axes = "#sdy<manual_axes{\22d\22}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{}, {\22d\22}]>]>"}} : (tensor<4x1xf32>) -> tensor<4x4xf32>
      %zero = stablehlo.constant dense<0.0> : tensor<f32>
      %s = stablehlo.reduce(%g init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>
      return %s : tensor<4xf32>
    }
    func.func @xla.sdy.manual_computation_body(%v: tensor<4x1xf32>) -> tensor<4x1xf32> {
      %t = stablehlo.multiply %v, %v : tensor<4x1xf32>
      return %t : tensor<4x1xf32>
    }})";
  StatusOr<DeviceProgram> compiled = Compile4(program);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_EQ(Collectives(*compiled),
            (std::map<std::string, int>{{"all_gather", 1}, {"all_reduce", 1}}));
  const std::vector<double> x = Iota(16);
  std::vector<std::vector<HostTensor>> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back({Tensor(ElementType::kF32, {1, 4}, Rows(x, 4, d, 1))});
  auto results = RunCompiled(*compiled, inputs);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  std::vector<double> want(4, 0.0);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) want[r] += x[r * 4 + c] * x[r * 4 + c];
  }
  for (int d = 0; d < 4; ++d) EXPECT_EQ(Values((*results)[d][0]), want) << d;
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
