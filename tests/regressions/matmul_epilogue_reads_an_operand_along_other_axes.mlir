// Found by tests/test_random_programs.py: BytecodeError: stored tile shape
// mismatch (r2 (1, 2, 2) vs (2, 1, 2)). In this mix kernel %arg1 is read two
// ways: transposed as the matmul's lhs (its last dim along the rows) and by
// the epilogue's `tensor.gt` (its last dim along the cols). The domain then
// numbered the rows before the batch axis, and the tile dims followed the
// domain's order, (rows, batch, cols), while `tile.mma` makes (batch, rows,
// cols). Fixed in lowering/tensor_to_tile.py (kernel_plan): a cube or mix
// kernel's tile dims follow the matmul result's axes, batch first.
// symbols: a=2
// shapes: 1 2x1x2 1x2 2x1x2 scalar
// seed: 0
// device: host
func.func @main(%arg0: tensor<1xf32>, %arg1: tensor<?x1x?xf32>, %arg2: tensor<1x?xf32>, %arg3: tensor<?x1x?xf32>, %arg4: tensor<f32>) -> tensor<?x?x?xf32> {
  %v1 = tensor.matmul %arg1, %arg2 {transpose_a = true} : (tensor<?x1x?xf32>, tensor<1x?xf32>) -> tensor<?x?x?xf32>
  %v2 = tensor.neg %arg0 : tensor<1xf32>
  %v3 = tensor.gt %arg1, %arg3 : (tensor<?x1x?xf32>, tensor<?x1x?xf32>) -> tensor<?x1x?xi1>
  %v4 = tensor.reduce_sum %arg4 {axes = []} : tensor<f32> -> tensor<f32>
  %v5 = tensor.select %v3, %arg0, %v1 : (tensor<?x1x?xi1>, tensor<1xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %v5 : tensor<?x?x?xf32>
}
