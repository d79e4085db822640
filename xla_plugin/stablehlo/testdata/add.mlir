// A tiny StableHLO program in MLIR's pretty text form, as the conformance suite sends programs.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}
