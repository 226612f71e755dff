// BytecodeError: at byte 885: register exceeds local memory (r3: bytes
// 165600..220800 > 196608). reduce_over_a_unit_dim_beside_values_that_skip_it.mlir
// beside an independent reduction, so both kernels are in a tensor.stack, which
// has no whole-rows variant: the chunked kernel ran with z_0 = 1, where its
// accumulator for the max over z_0 and each chunk's partial max are as large as
// the full tiles, and the budget counted only one of them. Fixed in
// lowering/tensor_to_tile.py (skipping_bytes): a stacked chunked kernel's count
// has each reduction's partial result beside its accumulator.
// shapes: 300x300 1x300x300 100 100
// shapes: 300x300 0x300x300 100 100
// shapes: 1000x1000 1x1000x1000 100 100
// shapes: 300x300 5x300x300 0 0
// seed: 0
// device: ascend910b
func.func @main(%x: tensor<?x?xf32>, %z: tensor<?x?x?xf32>, %w: tensor<?xf32>, %v: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<f32>) {
  %b = tensor.add %x, %z : (tensor<?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %y = tensor.abs %x : tensor<?x?xf32>
  %m = tensor.reduce_max %b {axes = [0]} : tensor<?x?x?xf32> -> tensor<?x?xf32>
  %q = tensor.mul %w, %v : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %s = tensor.reduce_sum %q {axes = [0]} : tensor<?xf32> -> tensor<f32>
  func.return %y, %m, %s : tensor<?x?xf32>, tensor<?x?xf32>, tensor<f32>
}
