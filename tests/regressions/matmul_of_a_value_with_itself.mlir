// Found by tests/test_random_programs.py: BytecodeError: mma accumulator shape
// mismatch ((8, 17) vs (17, 17)). For x @ x^T both operand loads have the same
// tensor, and the lowering looked them up in a dict by that value, so both
// operands were read the rhs's way. Fixed in lowering/tensor_to_tile.py
// (matmul): the operand loads are taken in order, lhs then rhs.
// shapes: 17x17
// shapes: 17x8
// shapes: 100x3
// shapes: 0x5
// seed: 6
// device: ascend910b
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %g = tensor.matmul %x, %x {transpose_b = true} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %h = tensor.matmul %x, %x {transpose_a = true} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %g, %h : tensor<?x?xf32>, tensor<?x?xf32>
}
