// Found by tests/test_random_programs.py: ProgramError: %t = tensor.transpose:
// dims 5 and 1 can never be equal (equal rule). %x's axis 1 is `?` and is 1 at
// run time: broadcast_to stretches it to 5, and the transpose's result type
// states it is 1 (a static dim claimed for a dynamic one, legal). The
// symbolic-shapes pass unifies x_1 with 5 for the broadcast (a guard that would
// re-specialize when x_1 is 1), then finds the claim `1` contradicting that and
// rejects the whole program at compile time, though dvm.interpret runs it.
// Fixed in passes/symbolic_shapes.py: such a contradiction requires the dim
// to be 1 (a guard); the broadcast guard then re-specializes for it.
// shapes: 3x1
// seed: 7
// device: host
func.func @main(%x: tensor<?x?xf32>) -> (tensor<1x?xf32>, tensor<?x5xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %b = tensor.broadcast_to %x to [%n, 5] : tensor<?x?xf32> -> tensor<?x5xf32>
  %t = tensor.transpose %x {perm = [1, 0]} : tensor<?x?xf32> -> tensor<1x?xf32>
  func.return %t, %b : tensor<1x?xf32>, tensor<?x5xf32>
}
