// Found by tests/test_random_programs.py: BytecodeError: mma accumulator
// shape mismatch ((4, 4, 1) vs (1, 4, 4)). The same cause as
// matmul_epilogue_reads_an_operand_along_other_axes.mlir: the tile dims of
// this mix kernel followed the domain's numbering of its axes instead of the
// matmul result's (batch, rows, cols); the ascend910b preset and a batch of 4.
// symbols: a=1 b=31
// shapes: 1 1x1x31 1x1x31 1x1x1 1
// symbols: a=4 b=97
// shapes: 1 4x4x97 1x4x97 4x1x1 1
// symbols: a=1 b=5
// shapes: 1 1x1x5 1x1x5 1x1x1 1
// seed: 1385
// device: ascend910b
func.func @main(%arg0: tensor<1xf32>, %arg1: tensor<?x?x?xf32>, %arg2: tensor<1x?x?xf32>, %arg3: tensor<?x?x1xi32>, %arg4: tensor<1xi32>) -> (tensor<1xi1>, tensor<?x?x?xf32>) {
  %v1 = tensor.matmul %arg1, %arg2 {transpose_b = true} : (tensor<?x?x?xf32>, tensor<1x?x?xf32>) -> tensor<?x?x?xf32>
  %v2 = tensor.reduce_mean %arg0 {axes = []} : tensor<1xf32> -> tensor<?xf32>
  %v3 = tensor.gt %arg3, %arg3 : (tensor<?x?x1xi32>, tensor<?x?x1xi32>) -> tensor<?x1x1xi1>
  %v4 = tensor.select %v3, %v1, %v2 : (tensor<?x1x1xi1>, tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v5 = tensor.abs %arg4 : tensor<1xi32>
  %v6 = tensor.convert %arg4 : tensor<1xi32> -> tensor<1xi1>
  func.return %v6, %v4 : tensor<1xi1>, tensor<?x?x?xf32>
}
