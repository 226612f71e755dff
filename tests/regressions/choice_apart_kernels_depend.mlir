// Found by tests/test_random_programs.py: AttributeError: 'NoneType' object has
// no attribute 'flags' (a kernel input that was never computed). fuse made a
// guarded choice (fused if 2 == arg0_0, else two kernels); in the "apart"
// branch the second kernel read %v3, the choice's own result, instead of the
// first kernel's (a use before definition), and stack then ran both kernels in
// parallel. Fixed in passes/fuse.py (build_choice): apart kernels take each
// other's results, producer first.
// shapes: 0 2
// shapes: 2 2
// shapes: 3 2
// shapes: 1 2
// seed: 0
// device: host
func.func @main(%arg0: tensor<?xf32>, %arg3: tensor<2xi1>) -> (tensor<2xi1>, tensor<?xf32>) {
  %v1 = tensor.reduce_sum %arg0 {axes = [0]} : tensor<?xf32> -> tensor<f32>
  %k2 = arith.constant dense<0.0> : tensor<f32>
  %v3 = tensor.gt %v1, %k2 : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %p4 = tensor.extract %v3[] : tensor<i1>
  %v7 = scf.if %p4 -> (tensor<?xf32>) {
    %e = tensor.exp %arg0 : tensor<?xf32>
    scf.yield %e : tensor<?xf32>
  } else {
    scf.yield %arg0 : tensor<?xf32>
  }
  %v9 = tensor.logical_and %v3, %arg3 : (tensor<i1>, tensor<2xi1>) -> tensor<2xi1>
  func.return %v9, %v7 : tensor<2xi1>, tensor<?xf32>
}
