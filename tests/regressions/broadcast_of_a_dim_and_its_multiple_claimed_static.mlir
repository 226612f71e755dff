// Found by tests/test_random_programs.py (DVM_RANDOM_SEED=263, 2000
// programs): symbolic-shapes rejected this valid program with "%v3 =
// tensor.add: dims 2 and 1 can never be equal (equal rule)". The select
// broadcasts %arg0's last dim d against the collapsed %v1's 2*d to a static
// 2, which holds only for d = 1 (then 2*d = 2); symbolic-shapes took d = 2
// from the static result, and the add (d against a static 1) then raised
// before the broken broadcast guard could be retried with d = 1.
// shapes: 1x2x1x1 1x2x1x1 1x2x1x1
// seed: 0
// device: host
func.func @main(%arg0: tensor<1x2x1x?xf32>, %arg1: tensor<1x2x1x1xi1>, %arg2: tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %v1 = tensor.collapse_shape %arg0 [[0], [1, 2, 3]] : tensor<1x2x1x?xf32> into tensor<1x?xf32>
  %v2 = tensor.select %arg1, %arg0, %v1 : (tensor<1x2x1x1xi1>, tensor<1x2x1x?xf32>, tensor<1x?xf32>) -> tensor<1x2x1x2xf32>
  %v3 = tensor.add %arg0, %arg2 : (tensor<1x2x1x?xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  func.return %v3 : tensor<1x2x1x1xf32>
}
