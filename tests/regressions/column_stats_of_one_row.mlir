// BytecodeError: at byte 519: register exceeds local memory (r5: bytes
// 180992..236672 > 196608). shared/examples/column_stats.mlir on one row (or
// none): its per-column sum and max skip the reduced axis x_0, so with x_0 <= 1
// their tiles are as large as those of %x, %p and the boolean %pos. The
// live-bytes estimate counted 12 bytes per element, the registers held 17 (the
// bytecode reuses a register only for a tile of its shape and type, so the
// registers of every kind add up). Fixed as
// reduce_over_a_unit_dim_beside_values_that_skip_it.mlir.
// shapes: 1x60000
// shapes: 0x60000
// shapes: 1x300000
// shapes: 2x60000
// seed: 0
// device: ascend910b
func.func @column_stats(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %pos = tensor.gt %x, %zero : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi1>
  %p = tensor.select %pos, %x, %zero : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %sum = tensor.reduce_sum %p {axes = [0]} : tensor<?x?xf32> -> tensor<?xf32>
  %mx = tensor.reduce_max %x {axes = [0]} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %sum, %mx : tensor<?xf32>, tensor<?xf32>
}
