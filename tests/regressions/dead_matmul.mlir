// Found by tests/test_random_programs.py: BytecodeError: mma accumulator shape
// mismatch ((1, 96) vs (1, 1)). A matmul whose result nothing uses became a
// kernel with no outputs; without an output view the accumulator was filled at
// the full tile size, also in the tail tile. Fixed in
// lowering/tensor_to_tile.py: a fusion with no results (dead code) is dropped.
// shapes: 17x1 97x17
// shapes: 7x1 7x7
// seed: 5
// device: ascend910b
func.func @main(%a: tensor<?x1xf32>, %b: tensor<?x?xf32>) -> tensor<?xf32> {
  %dead = tensor.matmul %a, %b {transpose_a = true, transpose_b = true} : (tensor<?x1xf32>, tensor<?x?xf32>) -> tensor<1x?xf32>
  %k = arith.constant dense<2.0> : tensor<f32>
  %c1 = arith.constant 1 : index
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %r = tensor.broadcast_to %k to [%n] : tensor<f32> -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}
