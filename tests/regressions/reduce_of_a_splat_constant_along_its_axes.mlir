// Found by tests/test_random_programs.py: a wrong answer. reduce_prod of
// tanh(dense<2.0> : tensor<1x1x2xf32>) over all axes gave tanh(2) where the
// reference gives tanh(2)^2; a reduce_sum of the same splat gave 2.0 for 4.0.
// convert-tensor-to-tile emits a splat constant as a one-element tile that
// spans no domain axis, and `reduce` dropped the reduced axis the tile did
// not span: a value uniform along a reduced axis of size n was summed once
// instead of n times (max, min and mean were right). Fixed in
// lowering/tensor_to_tile.py (reduction): the axes no load of the value
// spans are accounted for in closed form (a sum times their size, a product
// to that power), after reducing over the others.
// shapes: 0x2 scalar
// shapes: 8x2 scalar
// seed: 10
// device: host
func.func @main(%arg0: tensor<?x2xf32>, %arg3: tensor<i1>) -> (tensor<1x1x1xf32>, tensor<1x?x2xf32>) {
  %k8 = arith.constant dense<2.0> : tensor<1x1x2xf32>
  %v9 = tensor.select %arg3, %arg0, %k8 : (tensor<i1>, tensor<?x2xf32>, tensor<1x1x2xf32>) -> tensor<1x?x2xf32>
  %v10 = tensor.tanh %k8 : tensor<1x1x2xf32>
  %v11 = tensor.reduce_prod %v10 {axes = [0, 2, 1], keepdims = true} : tensor<1x1x2xf32> -> tensor<1x1x1xf32>
  func.return %v11, %v9 : tensor<1x1x1xf32>, tensor<1x?x2xf32>
}
