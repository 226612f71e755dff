// Found by tests/test_random_programs.py: Illegal: %v5 = tensor.gt: size 4
// cannot span domain size 2. %arg1's axis 3 (a) is broadcast against the
// collapsed 2*a, so symbolic-shapes recorded the guard a == 2*a; the result
// type then states that dim is 2, unifying a := 2 and turning the guard into
// 2 == 4. The broadcast is defined only where a is 1, but the pass kept the
// impossible shapes and fuse failed on them. Fixed in
// passes/symbolic_shapes.py: a broadcast guard that later unifications break
// restarts the inference with its symbol side fixed to 1 (a guard the
// runtime checks: a = 2 is a call error naming the op).
// shapes: 2x2 1x2x2x1
// shapes: 0x3 1x2x2x1
// seed: 0
// device: host
func.func @main(%arg0: tensor<?x?xf32>, %arg1: tensor<?x2x2x?xi32>) -> (tensor<1x2x2x2xi1>, tensor<?x?xf32>) {
  %v1 = tensor.collapse_shape %arg1 [[0], [1], [2, 3]] : tensor<?x2x2x?xi32> into tensor<?x2x?xi32>
  %v4 = tensor.neg %arg0 : tensor<?x?xf32>
  %v5 = tensor.gt %arg1, %v1 : (tensor<?x2x2x?xi32>, tensor<?x2x?xi32>) -> tensor<1x2x2x2xi1>
  func.return %v5, %v4 : tensor<1x2x2x2xi1>, tensor<?x?xf32>
}
