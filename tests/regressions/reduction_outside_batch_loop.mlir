// Found by tests/test_random_programs.py: NotImplementedError: %t =
// tensor.reduce_sum cannot be emitted inside a tile. A kernel whose domain has
// more parallel axes than grid axes walks the rest with batch loops; its
// reduction (here of a 0-d value, over no axes) was bound inside that loop,
// while its use, varying along no loop, was placed before the loop and did not
// find it. Fixed in lowering/tensor_to_tile.py (reduction): a reduction is
// computed where its result varies (hoisted out of loops it does not vary in).
// shapes: 4x13x13x13 scalar 13 13x1
// shapes: 4x3x2x5 scalar 5 2x1
// shapes: 4x0x2x5 scalar 5 2x1
// seed: 10
// device: ascend910b
func.func @main(%x: tensor<4x?x?x?xf32>, %s: tensor<i32>, %v: tensor<?xf32>, %w: tensor<?x1xf32>) -> (tensor<4x?x?x?xf32>, tensor<4x?x?x?xf32>) {
  %t = tensor.reduce_sum %s {axes = [], keepdims = true} : tensor<i32> -> tensor<i32>
  %p = tensor.ne %t, %s : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %r = tensor.select %p, %x, %v : (tensor<i1>, tensor<4x?x?x?xf32>, tensor<?xf32>) -> tensor<4x?x?x?xf32>
  %m = tensor.reduce_max %w {axes = [1], keepdims = true} : tensor<?x1xf32> -> tensor<?x1xf32>
  %q = tensor.add %x, %m : (tensor<4x?x?x?xf32>, tensor<?x1xf32>) -> tensor<4x?x?x?xf32>
  func.return %r, %q : tensor<4x?x?x?xf32>, tensor<4x?x?x?xf32>
}
