// BytecodeError: at byte 601: register exceeds local memory (r6: bytes
// 165760..248560 > 196608). A max over a broadcast_to of %x with a leading dim
// of a = 0 (or 1), stored too, fused with elementwise outputs of %x and %w:
// the rows are too long for one tile, so the chunked variant runs, and its
// chunk along the empty axis is 1, where the outputs' tiles, which skip that
// axis, are as large as the broadcast's. The live-bytes estimate counted them
// as negligible. Fixed as reduce_over_a_unit_dim_beside_values_that_skip_it.mlir.
// shapes: 300x300 0 300x300
// shapes: 300x300 1 300x300
// shapes: 1000x1000 0 1000x1000
// shapes: 300x300 2 300x300
// seed: 0
// device: ascend910b
func.func @main(%x: tensor<?x?xf32>, %e: tensor<?xf32>, %w: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.dim %e, %c0 : tensor<?xf32>
  %r = tensor.dim %x, %c0 : tensor<?x?xf32>
  %c = tensor.dim %x, %c1 : tensor<?x?xf32>
  %k = arith.constant dense<1.0> : tensor<f32>
  %v = tensor.abs %w : tensor<?x?xf32>
  %u = tensor.add %v, %k : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %q = tensor.div %x, %u : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %bx = tensor.broadcast_to %x to [%a, %r, %c] : tensor<?x?xf32> -> tensor<?x?x?xf32>
  %m = tensor.reduce_max %bx {axes = [0, 1, 2]} : tensor<?x?x?xf32> -> tensor<f32>
  func.return %u, %q, %bx, %m : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<f32>
}
