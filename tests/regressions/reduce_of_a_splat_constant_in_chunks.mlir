// Found beside reduce_of_a_splat_constant_along_its_axes.mlir, still open:
// %a is uniform along axis 0 (the splat %k's, 4 long). At x_0 = 60000 the
// host runs the kernel that walks the reduced axes in chunks, 2 rows of
// axis 0 at a time; the one-element tile of the uniform value adds itself
// once per chunk, so the sum is 480000 where the reference gives 960000.
// The closed form that fixed the whole-axis case does not apply when a loop
// walks the uniform axis more than once, and the chunk's extent along an
// axis that no view spans is not available to the tile program.
// xfail: a reduction of a splat constant along an axis that a loop walks in chunks
// shapes: 60000
// seed: 0
// device: host
func.func @main(%x: tensor<?xi32>) -> tensor<i32> {
  %k = arith.constant dense<3> : tensor<4x1xi32>
  %a = tensor.add %x, %k : (tensor<?xi32>, tensor<4x1xi32>) -> tensor<4x?xi32>
  %r = tensor.reduce_sum %a {axes = [0, 1]} : tensor<4x?xi32> -> tensor<i32>
  func.return %r : tensor<i32>
}
