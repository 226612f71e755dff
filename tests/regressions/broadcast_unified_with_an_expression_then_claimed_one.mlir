// Found by tests/test_random_programs.py (DVM_RANDOM_SEED=263, 2000
// programs): symbolic-shapes rejected this valid program with "%v3 =
// tensor.logical_and: dims 2 and 1 can never be equal (equal rule)". The
// select broadcasts %arg1's last dim d1 against the collapsed %arg0's 2*d0
// and unifies d1 with 2*d0; the result type then makes d0 = 1, so d1 = 2,
// and the logical_and (d1 against a static 1) looked contradictory. Only
// broadcasts that unified a dim with a number allowed the dim to be 1
// instead; any broadcast unification now does.
// shapes: 1x2x1x1 1x2x1x1 1x2x1x1
// seed: 0
// device: host
func.func @main(%arg0: tensor<1x2x?x1xf32>, %arg1: tensor<1x2x1x?xi1>, %arg2: tensor<1x2x1x1xi1>) -> tensor<1x2x?x1xf32> {
  %v1 = tensor.collapse_shape %arg0 [[0], [1, 2, 3]] : tensor<1x2x?x1xf32> into tensor<1x?xf32>
  %v2 = tensor.select %arg1, %arg0, %v1 : (tensor<1x2x1x?xi1>, tensor<1x2x?x1xf32>, tensor<1x?xf32>) -> tensor<1x2x1x2xf32>
  %v3 = tensor.logical_and %arg1, %arg2 : (tensor<1x2x1x?xi1>, tensor<1x2x1x1xi1>) -> tensor<1x2x1x1xi1>
  %v4 = tensor.neg %arg0 : tensor<1x2x?x1xf32>
  %v5 = tensor.neg %arg0 : tensor<1x2x?x1xf32>
  %v6 = tensor.neg %arg0 : tensor<1x2x?x1xf32>
  %v7 = tensor.neg %arg0 : tensor<1x2x?x1xf32>
  func.return %v7 : tensor<1x2x?x1xf32>
}
