// A companion of matmul_unit_batch_dim.mlir: batch dims of size 1 between and
// beside real ones, on either operand, so that an operand's batch dims must be
// placed on the accumulator's (not right-aligned after dropping the units).
// shapes: 1x3x4x5 2x1x5x6 2x1x3x4x5 3x5x6
// shapes: 1x7x2x3 5x1x3x1 5x1x7x2x3 7x3x1
// seed: 4
// device: ascend910b
func.func @main(%a: tensor<1x?x?x?xf32>, %b: tensor<?x1x?x?xf32>, %c: tensor<?x1x?x?x?xf32>, %d: tensor<?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x1x?x?x?xf32>) {
  %r = tensor.matmul %a, %b : (tensor<1x?x?x?xf32>, tensor<?x1x?x?xf32>) -> tensor<?x?x?x?xf32>
  %s = tensor.matmul %c, %d : (tensor<?x1x?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x1x?x?x?xf32>
  func.return %r, %s : tensor<?x?x?x?xf32>, tensor<?x1x?x?x?xf32>
}
