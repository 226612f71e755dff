// Found by tests/test_random_programs.py: Illegal: sizes are not provably
// equal, raised by convert-tensor-to-tile. fuse laid two independent parts of
// one rank on one domain under a guarded choice (the constants' 2 x 4 beside
// %arg1's rows and columns: arg1_0 == 2, arg1_1 == 4); lowering analyzes the
// fused kernel again, with its constants inside it, and paired the axes the
// other way round (arg1_0 == 4). Both paired "in the order the axes were
// created" by the union-find roots, but which member stays a root depends on
// the order of the unifications, which the constants changed. Fixed in
// passes/domain.py: align_parts orders each part's axes by their first member.
// shapes: 2x4
// shapes: 64x64
// shapes: 2x5
// shapes: 0x4
// seed: 3
// device: ascend910b
func.func @main(%arg1: tensor<?x?xf32>) -> (tensor<2x1x1x1x4x1xf32>, tensor<?xf32>) {
  %k1 = arith.constant dense<1.0> : tensor<2x1x1x4xf32>
  %v3 = tensor.expand_shape %k1 [[0, 1], [2], [3], [4, 5]] output_shape [2, 1, 1, 1, 4, 1] : tensor<2x1x1x4xf32> into tensor<2x1x1x1x4x1xf32>
  %k4 = arith.constant dense<-1> : tensor<2x1x1x1x1x1xi32>
  %v5 = tensor.eq %k4, %k4 : (tensor<2x1x1x1x1x1xi32>, tensor<2x1x1x1x1x1xi32>) -> tensor<2x1x1x1x1x1xi1>
  %k6 = arith.constant dense<1.0> : tensor<2x1x1x1x4x1xf32>
  %v7 = tensor.select %v5, %v3, %k6 : (tensor<2x1x1x1x1x1xi1>, tensor<2x1x1x1x4x1xf32>, tensor<2x1x1x1x4x1xf32>) -> tensor<2x1x1x1x4x1xf32>
  %v9 = tensor.reduce_sum %arg1 {axes = [1]} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %v7, %v9 : tensor<2x1x1x1x4x1xf32>, tensor<?xf32>
}
