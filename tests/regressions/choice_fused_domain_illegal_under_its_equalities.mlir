// Found by the torch backend on a BERT masked-LM loss (labels beside the head's
// activations): fuse proposed a guarded choice fusing the bias add of a flat
// activation (rows = a2_0 * a2_1) with the labels' chain, if a2_0 == a2_0 * a2_1
// and a2_1 == 32; under those equalities the labels' `?x1` result spans only
// the first domain axis, so the fused kernel was illegal and dvm.compile
// raised "output v32 does not span domain axes [1]" (the lazy layer then ran
// the segment in numpy). Fixed in passes/fuse.py (fusible_if): a choice is
// proposed only where its fused domain is legal under its equalities.
// shapes: 6x32 32 2x3 scalar
// shapes: 5x32 32 5x1 scalar
// shapes: 32x32 32 1x32 scalar
// seed: 0
func.func @segment(%a0: tensor<?x32xf32>, %a1: tensor<32xf32>, %a2: tensor<?x?xi32>, %a3: tensor<i32>) -> (tensor<?x?x32xf32>, tensor<?x1xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d1 = tensor.dim %a2, %c0 : tensor<?x?xi32>
  %d3 = tensor.dim %a2, %c1 : tensor<?x?xi32>
  %v0 = tensor.add %a0, %a1 : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %v1 = tensor.expand_shape %v0 [[0, 1], [2]] output_shape [%d1, %d3, 32] : tensor<?x32xf32> into tensor<?x?x32xf32>
  %v2 = tensor.exp %v1 : tensor<?x?x32xf32>
  %v30 = tensor.ne %a2, %a3 : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi1>
  %v31 = tensor.select %v30, %a2, %a3 : (tensor<?x?xi1>, tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi32>
  %v23 = tensor.collapse_shape %v31 [[0, 1]] : tensor<?x?xi32> into tensor<?xi32>
  %d36 = tensor.dim %v23, %c0 : tensor<?xi32>
  %v32 = tensor.expand_shape %v23 [[0, 1]] output_shape [%d36, 1] : tensor<?xi32> into tensor<?x1xi32>
  func.return %v2, %v32 : tensor<?x?x32xf32>, tensor<?x1xi32>
}
