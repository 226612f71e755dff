// Found by tests/test_random_programs.py: IndexError: tuple index out of range,
// in the runtime's Kernel.plan. fuse made a guarded choice whose "apart"
// branch has two kernels, one using the other's result; it put the producer
// first by reversing their list, then annotated each kernel with the shapes
// of the other's outputs. The three-result kernel so got a stale
// `dvm.shape` (%v1's) beside its `dvm.shapes`, `shape_of` read the stale one,
// and the kernel using its 0-d result %v2 declared that argument 2-d. Fixed in
// passes/fuse.py: the kernels keep the annotation build_kernel gave them, and
// annotate_results never leaves both attributes on an op.
// shapes: 13x2 13x2 2x13 1x2 2 1x1 1x2 scalar
// seed: 25
// device: ascend910b
func.func @main(%arg0: tensor<?x2xf32>, %arg1: tensor<?x2xf32>, %arg2: tensor<2x?xf32>, %arg3: tensor<1x2xi1>, %arg4: tensor<?xf32>, %arg5: tensor<1x1xi32>, %arg6: tensor<?x2xf32>, %arg7: tensor<f32>) -> tensor<f32> {
  %v1 = tensor.add %arg0, %arg1 : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %v2 = tensor.reduce_sum %arg2 {axes = [0, 1]} : tensor<2x?xf32> -> tensor<f32>
  %k3 = arith.constant dense<0.0> : tensor<f32>
  %v4 = tensor.gt %v2, %k3 : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %p5 = tensor.extract %v4[] : tensor<i1>
  %v10, %v11 = scf.if %p5 -> (tensor<?x2xf32>, tensor<2x?xf32>) {
    %v6 = tensor.convert %v1 : tensor<?x2xf32> -> tensor<?x2xf16>
    %v7 = tensor.reduce_sum %arg0 {axes = [], keepdims = true} : tensor<?x2xf32> -> tensor<?x2xf32>
    scf.yield %arg0, %arg2 : tensor<?x2xf32>, tensor<2x?xf32>
  } else {
    %v8 = tensor.collapse_shape %arg2 [[0, 1]] : tensor<2x?xf32> into tensor<?xf32>
    %v9 = tensor.select %arg3, %arg0, %arg4 : (tensor<1x2xi1>, tensor<?x2xf32>, tensor<?xf32>) -> tensor<?x?xf32>
    scf.yield %arg1, %arg2 : tensor<?x2xf32>, tensor<2x?xf32>
  }
  %v12 = tensor.ge %arg5, %arg5 : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x?xi1>
  %v13 = tensor.select %v12, %arg0, %arg6 : (tensor<1x?xi1>, tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %v14 = tensor.lt %arg0, %v2 : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xi1>
  %k15 = arith.constant dense<false> : tensor<1xi1>
  %v16 = tensor.select %k15, %arg1, %arg7 : (tensor<1xi1>, tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %v17 = tensor.ceil %v2 : tensor<f32>
  func.return %v17 : tensor<f32>
}
