// Found by tests/test_random_programs.py: wrong values (1432 of 2160 elements
// differ, the VM gave uninitialized memory). A matmul whose rows are 1 (a_2 is
// unified with 1) was broadcast to 3 rows by its epilogue in the same kernel:
// the domain gives a matmul's rows an axis even when it is of size 1, and the
// broadcast took that axis for its result's 3 rows, so the kernel stored one
// row of three. Fixed in passes/domain.py (elementwise): a dim of 1 that
// broadcasts does not fix the result's axis (the epilogue then needs an axis
// the matmul does not span, so the two are separate kernels).
// shapes: 2x5x1x3 5x3x3 3x3
// shapes: 12x5x1x12 5x12x12 3x12
// shapes: 1x5x1x1 5x1x1 3x1
// seed: 9
// device: host
func.func @main(%a: tensor<?x5x?x?xf32>, %b: tensor<5x?x?xf32>, %y: tensor<3x?xf32>) -> (tensor<?x5x3x?xf32>, tensor<?x5x3x?xf32>) {
  %m = tensor.matmul %a, %b : (tensor<?x5x?x?xf32>, tensor<5x?x?xf32>) -> tensor<?x5x1x?xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x5x?x?xf32>
  %c3 = arith.constant 3 : index
  %k = tensor.dim %a, %c3 : tensor<?x5x?x?xf32>
  %v = tensor.broadcast_to %m to [%n, 5, 3, %k] : tensor<?x5x1x?xf32> -> tensor<?x5x3x?xf32>
  %m2 = tensor.matmul %a, %b : (tensor<?x5x?x?xf32>, tensor<5x?x?xf32>) -> tensor<?x5x1x?xf32>
  %w = tensor.add %m2, %y : (tensor<?x5x1x?xf32>, tensor<3x?xf32>) -> tensor<?x5x3x?xf32>
  func.return %v, %w : tensor<?x5x3x?xf32>, tensor<?x5x3x?xf32>
}
