// Found by tests/test_random_programs.py (DVM_RANDOM_SEED=263, 2000
// programs): "BytecodeError: stored tile shape mismatch (r1 (1, 1) vs (1, 2))"
// at the first call. %v8 sums a splat over axes 0 and 1; in the kernel variant
// that holds whole rows in a tile (`_rows`) the reduction's result was given
// the tile type of its input's whole placement, though the splat's tile is
// one element, so nothing broadcast it before the store. Fixed in
// lowering/tensor_to_tile.py (reduction): the result spans what its input's
// tile spans. The found program returned only %v10; this one also returns
// %v8, of a splat of -1.5 instead of 0, so the stored value is checked too.
// shapes: 2x1x2
// seed: 0
// device: host
func.func @main(%arg0: tensor<2x1x2xf32>) -> (tensor<2x1x2xf32>, tensor<1x1x1x2xf32>) {
  %v1 = tensor.neg %arg0 : tensor<2x1x2xf32>
  %v2 = tensor.reduce_sum %arg0 {axes = [], keepdims = true} : tensor<2x1x2xf32> -> tensor<2x1x2xf32>
  %k3 = arith.constant dense<-1.5> : tensor<2x1x1x2xf32>
  %v4 = tensor.abs %k3 : tensor<2x1x1x2xf32>
  %k5 = arith.constant dense<1.0> : tensor<f32>
  %v6 = tensor.add %v4, %k5 : (tensor<2x1x1x2xf32>, tensor<f32>) -> tensor<2x1x1x2xf32>
  %v7 = tensor.div %arg0, %v6 : (tensor<2x1x2xf32>, tensor<2x1x1x2xf32>) -> tensor<2x2x1x2xf32>
  %v8 = tensor.reduce_sum %v4 {axes = [0, 1], keepdims = true} : tensor<2x1x1x2xf32> -> tensor<1x1x1x2xf32>
  %v9 = tensor.matmul %arg0, %v8 {transpose_b = true} : (tensor<2x1x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x1x1xf32>
  %v10 = tensor.neg %arg0 : tensor<2x1x2xf32>
  func.return %v10, %v8 : tensor<2x1x2xf32>, tensor<1x1x1x2xf32>
}
