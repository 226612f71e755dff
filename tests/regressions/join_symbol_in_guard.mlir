// Found by tests/test_random_programs.py: NameError: name 'r0_2' is not
// defined. The branches of the scf.if yield tensors of different arguments, so
// symbolic-shapes gives its result fresh symbols (r0_1, r0_2), and the static
// claims after it (tensor<1x?xf32>, ...) became guards over them. The runtime
// checked all guards on entry, from argument dims only. Fixed in
// dvm/host.py: a symbol made on the way is bound by the step that makes it,
// and the guards over it are checked then.
// shapes: 1 8x1 8x1 1x8x8 8x1 1x1 8x1 5x1
// shapes: 1 3x1 3x1 1x3x3 3x1 1x1 3x1 5x1
// seed: 0
// device: host
func.func @main(%arg0: tensor<1xf32>, %arg1: tensor<?x?xf32>, %arg2: tensor<?x?xf32>, %arg3: tensor<1x?x?xi32>, %arg4: tensor<?x1xf32>, %arg5: tensor<1x?xf32>, %arg6: tensor<?x1xf32>, %arg7: tensor<5x1xf32>) -> (tensor<?x1x5x1xf32>, tensor<?x?xf32>) {
  %v1 = tensor.reduce_sum %arg1 {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>
  %k2 = arith.constant dense<1.0> : tensor<f32>
  %v3 = tensor.le %v1, %k2 : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %p4 = tensor.extract %v3[] : tensor<i1>
  %v13 = scf.if %p4 -> (tensor<?x?xf32>) {
    scf.yield %arg2 : tensor<?x?xf32>
  } else {
    scf.yield %arg1 : tensor<?x?xf32>
  }
  %v14 = tensor.transpose %v13 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<1x?xf32>
  %c15 = arith.constant 1 : index
  %i16 = tensor.dim %v14, %c15 : tensor<1x?xf32>
  %c17 = arith.constant 1 : index
  %v18 = tensor.expand_shape %v13 [[0, 1], [2, 3]] output_shape [%i16, 1, %c17, 1] : tensor<?x?xf32> into tensor<?x1x?x1xf32>
  %v22 = tensor.gt %arg4, %arg5 : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x1xi1>
  %v23 = tensor.select %v22, %arg2, %arg6 : (tensor<?x1xi1>, tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %v24 = tensor.matmul %arg7, %v18 : (tensor<5x1xf32>, tensor<?x1x?x1xf32>) -> tensor<?x1x5x1xf32>
  func.return %v24, %v23 : tensor<?x1x5x1xf32>, tensor<?x?xf32>
}
