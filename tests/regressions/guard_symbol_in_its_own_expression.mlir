// Found by tests/test_random_programs.py (programs of up to 14 steps):
// Illegal: sizes are not provably equal (at compile time). expand_shape of an
// axis of size x_0 into [x_0, x_1] (x_1 is 1 at run time) gives the guard
// x_0 == x_0*x_1, and symbolic-shapes unified x_0 := x_0*x_1, a substitution
// that contains the symbol it replaces. Fixed in passes/symbolic_shapes.py
// (pick_replacement): such a guard stays a guard, with no substitution.
// shapes: 2x1 scalar 1x1
// shapes: 0x3 scalar 1x1
// shapes: 5x1 scalar 1x1
// seed: 13
// device: host
func.func @main(%x: tensor<?x?xf32>, %s: tensor<i32>, %t: tensor<1x1xi32>) -> (tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.dim %x, %c0 : tensor<?x?xf32>
  %b = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [%a, %b, %b] : tensor<?x?xf32> into tensor<?x?x?xf32>
  %p = tensor.le %s, %t : (tensor<i32>, tensor<1x1xi32>) -> tensor<1x1xi1>
  %k = arith.constant dense<0.0> : tensor<1x1xf32>
  %v = tensor.select %p, %x, %k : (tensor<1x1xi1>, tensor<?x?xf32>, tensor<1x1xf32>) -> tensor<?x?xf32>
  func.return %e, %v : tensor<?x?x?xf32>, tensor<?x?xf32>
}
