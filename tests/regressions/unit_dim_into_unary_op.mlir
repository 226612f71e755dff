// Found by tests/test_random_programs.py: VerifyException: result 'result' at
// position 0 does not verify: attribute tensor<?x1xf32> expected from variable
// 'T', but got tensor<?x?xf32>. Re-specializing for %y's dim of 1 retyped the
// argument in place, so `tensor.tanh %y` had an operand of type ?x1 and a
// result of type ?x?, which a unary op forbids (as do scf.yield and
// func.return). Fixed in dvm/runtime.py (with_unit_dims): the narrower argument
// reaches its uses through a tensor.convert to the declared type.
// shapes: 3x4 3x4
// shapes: 3x4 3x1
// shapes: 5x1 5x7
// shapes: 0x4 0x1
// seed: 1
// device: host
func.func @main(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %t = tensor.tanh %y : tensor<?x?xf32>
  %s = tensor.add %x, %t : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %s, %y : tensor<?x?xf32>, tensor<?x?xf32>
}
