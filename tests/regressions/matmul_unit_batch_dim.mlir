// Found by tests/test_random_programs.py: BytecodeError: rank mismatch (mma:
// operands of rank >= 2, batch dims broadcast). A batch dim of size 1 has no
// domain axis, so the accumulator tile left it out while the operand tile kept
// it. Fixed in lowering/tensor_to_tile.py (operand_tile): operand tiles have
// the accumulator's batch dims.
// shapes: 1x1x3 3x1 1x3
// shapes: 1x1x0 0x1 1x0
// shapes: 1x1x97 97x1 1x97
// seed: 2
// device: ascend910b
func.func @main(%a: tensor<1x1x?xf32>, %b: tensor<?x1xf32>, %c: tensor<1x?xf32>) -> (tensor<1x1x1xf32>, tensor<1x1x1xf32>) {
  %r = tensor.matmul %a, %b : (tensor<1x1x?xf32>, tensor<?x1xf32>) -> tensor<1x1x1xf32>
  %s = tensor.matmul %a, %c {transpose_b = true} : (tensor<1x1x?xf32>, tensor<1x?xf32>) -> tensor<1x1x1xf32>
  func.return %r, %s : tensor<1x1x1xf32>, tensor<1x1x1xf32>
}
