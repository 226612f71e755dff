// Found by tests/test_random_programs.py: Illegal: sizes are not provably equal
// (at compile time). Broadcasting a collapse of [x_0, x_1] against x_1 gives
// the guard x_0*x_1 == x_1, which stays a guard (no symbol can be substituted,
// see guard_symbol_in_its_own_expression.mlir). fuse grouped the ops assuming
// the function's guards, but convert-tensor-to-tile analyzed the kernel
// without them. Fixed in lowering/tensor_to_tile.py (analyze): the function's
// guards are facts there too.
// shapes: 2x1x3x1 2x5x1 3
// shapes: 1x3x3x1 2x5x1 3
// shapes: 0x1x3x1 0x5x0 0
// seed: 16
// device: host
func.func @main(%arg0: tensor<?x?x3x1xf32>, %arg1: tensor<?x5x?xf32>, %arg2: tensor<?xf32>) -> (tensor<?x?x3x1xf32>, tensor<?x?x3x1xf32>, tensor<?xf32>) {
  %v1 = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<?x?x3x1xf32> into tensor<?x3x1xf32>
  %v2 = tensor.abs %v1 : tensor<?x3x1xf32>
  %k3 = arith.constant dense<0.5> : tensor<f32>
  %v4 = tensor.add %v2, %k3 : (tensor<?x3x1xf32>, tensor<f32>) -> tensor<?x3x1xf32>
  %v5 = tensor.tanh %arg0 : tensor<?x?x3x1xf32>
  %v6 = tensor.pow %v4, %v5 : (tensor<?x3x1xf32>, tensor<?x?x3x1xf32>) -> tensor<?x?x3x1xf32>
  %v11 = tensor.tanh %arg0 : tensor<?x?x3x1xf32>
  func.return %v6, %v11, %arg2 : tensor<?x?x3x1xf32>, tensor<?x?x3x1xf32>, tensor<?xf32>
}
