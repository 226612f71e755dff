// Found beside reduce_of_a_splat_constant_along_its_axes.mlir: a wrong answer.
// %a is uniform along axis 0 (the splat %k's, 4 long). At x_0 = 60000 the
// host runs the kernel that walks the reduced axes in chunks, 2 rows of
// axis 0 at a time; the one-element tile of the uniform value added itself
// once per chunk, so the sum was 480000 where the reference gives 960000.
// Fixed in lowering/tensor_to_tile.py (reduction): a loop over an axis the
// reduced value is uniform along runs once, and the closed form (the sum
// times the axis's size) accounts for the whole axis.
// shapes: 60000
// shapes: 5
// shapes: 0
// seed: 0
// device: host
func.func @main(%x: tensor<?xi32>) -> tensor<i32> {
  %k = arith.constant dense<3> : tensor<4x1xi32>
  %a = tensor.add %x, %k : (tensor<?xi32>, tensor<4x1xi32>) -> tensor<4x?xi32>
  %r = tensor.reduce_sum %a {axes = [0, 1]} : tensor<4x?xi32> -> tensor<i32>
  func.return %r : tensor<i32>
}
