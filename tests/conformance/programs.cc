// MLIR text programs (StableHLO) compiled by the conformance cases.
#include <string>

#include "tests/conformance/test_data.h"

namespace pjrt_conformance {

const char kAddOneF32[] = R"mlir(
module @add_one attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
    %0 = stablehlo.add %arg0, %cst : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";

const char kTimesTwoF32[] = R"mlir(
module @times_two attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<4xf32>
    %0 = stablehlo.multiply %arg0, %cst : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";

const char kThreeOutputs[] = R"mlir(
module @three_outputs attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xi32>)
      -> (tensor<2x3xf32>, tensor<3xi32>, tensor<3x2xf32>) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<2x3xf32>
    %1 = stablehlo.add %arg1, %arg1 : tensor<3xi32>
    %2 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    return %0, %1, %2 : tensor<2x3xf32>, tensor<3xi32>, tensor<3x2xf32>
  }
}
)mlir";

const char kAddOneDonated[] = R"mlir(
module @add_one_donated attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {tf.aliasing_output = 0 : i32}) -> tensor<4xf32> {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
    %0 = stablehlo.add %arg0, %cst : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";

const char kAddReplicaId[] = R"mlir(
module @add_replica_id attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.replica_id : tensor<ui32>
    %1 = stablehlo.convert %0 : (tensor<ui32>) -> tensor<f32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %3 = stablehlo.add %arg0, %2 : tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}
)mlir";

const char kIllTyped[] = R"mlir(
module @ill_typed {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<3xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)mlir";

std::string CompileOptions1x1() {
  return std::string(reinterpret_cast<const char*>(kCompileOptions1x1), kCompileOptions1x1Size);
}

std::string CompileOptions2x1() {
  return std::string(reinterpret_cast<const char*>(kCompileOptions2x1), kCompileOptions2x1Size);
}

std::string CompileOptionsPortable() {
  return std::string(reinterpret_cast<const char*>(kCompileOptionsPortable),
                     kCompileOptionsPortableSize);
}

}  // namespace pjrt_conformance
