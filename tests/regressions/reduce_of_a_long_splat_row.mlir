// Found beside reduce_of_a_splat_constant_along_its_axes.mlir: wrong answers.
// Each row of %y is uniform along its %n columns (the splat %k's). With
// %n = 300001, more than a tile holds, a loop walked the columns in chunks
// and the row's one-element tile counted once per chunk: the sum and mean
// were wrong. With %n = 0, the max must be -inf, the identity, not the row's
// value. Fixed in lowering/tensor_to_tile.py (reduction, over_uniform): a
// loop over a uniform axis runs once; a sum is scaled by the axis's size and
// a max selects its identity when the axis is empty.
// shapes: 2x1 index=300001
// shapes: 3x1 index=0
// shapes: 0x1 index=5
// seed: 2
// device: host
func.func @main(%x: tensor<?x1xf32>, %n: index) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %k = arith.constant dense<1.0009765625> : tensor<f32>
  %b = tensor.broadcast_to %k to [1, %n] : tensor<f32> -> tensor<1x?xf32>
  %y = tensor.add %x, %b : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %s = tensor.reduce_sum %y {axes = [1]} : tensor<?x?xf32> -> tensor<?xf32>
  %m = tensor.reduce_mean %y {axes = [1]} : tensor<?x?xf32> -> tensor<?xf32>
  %p = tensor.reduce_max %y {axes = [1]} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %s, %m, %p : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
