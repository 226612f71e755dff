// Found by tests/test_random_programs.py (seed 347): ProgramError: %v10 =
// tensor.broadcast_to: rank 9 exceeds the VM's maximum rank 8, for a program
// of rank 5 at most. The fuse pass merged the broadcast with the negations of
// its input (siblings reading %arg0); the broadcast's target dims are not
// provably the input's, so the merged domain had 5 + 4 axes. Fixed in
// passes/fuse.py (try_merge): a merge whose tiles would exceed the VM's rank
// is refused, and the groups stay apart.
// shapes: 2x2x2x2 2x2
// shapes: 3x1x3x3 1x4
// shapes: 1x1x1x1 0x3
// seed: 0
// device: host
func.func @main(%arg0: tensor<?x?x?x?xf32>, %arg1: tensor<?x?xf32>) -> tensor<?x?x?x?xf32> {
  %v1 = tensor.neg %arg1 : tensor<?x?xf32>
  %c2 = arith.constant 0 : index
  %i3 = tensor.dim %arg0, %c2 : tensor<?x?x?x?xf32>
  %v10 = tensor.broadcast_to %arg0 to [2, %i3, %i3, %i3, %i3] : tensor<?x?x?x?xf32> -> tensor<2x?x?x?x?xf32>
  %v11 = tensor.neg %v10 : tensor<2x?x?x?x?xf32>
  %v12 = tensor.neg %arg0 : tensor<?x?x?x?xf32>
  %v13 = tensor.neg %arg0 : tensor<?x?x?x?xf32>
  func.return %v13 : tensor<?x?x?x?xf32>
}
