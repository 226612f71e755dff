// Found by tests/test_random_programs.py (programs of up to 14 steps):
// BytecodeError: stored tile shape mismatch (r1 (1,) vs (2,)). A reduction over
// no axes of a splat constant: the constant is a one-element tile, but the
// reduction's result was typed by the domain axes its input spans. Fixed in
// lowering/tensor_to_tile.py (reduction): a reduction over no axes (or only
// unit dims) is its input's tile itself.
// shapes: 1x8 3x1x4
// shapes: 1x0 0x1x2
// seed: 15
// device: ascend910b
func.func @main(%x: tensor<1x?xf32>, %y: tensor<?x1x?xf32>) -> (tensor<2x1x1xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<?x1x?xf32>) {
  %k = arith.constant dense<2.0> : tensor<2x1x1xf32>
  %a = tensor.reduce_max %k {axes = []} : tensor<2x1x1xf32> -> tensor<2x1x1xf32>
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<1x?xf32> into tensor<?xf32>
  %m = tensor.reduce_mean %y {axes = [1]} : tensor<?x1x?xf32> -> tensor<?x?xf32>
  %p = tensor.reduce_prod %y {axes = []} : tensor<?x1x?xf32> -> tensor<?x1x?xf32>
  func.return %a, %c, %m, %p : tensor<2x1x1xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<?x1x?xf32>
}
