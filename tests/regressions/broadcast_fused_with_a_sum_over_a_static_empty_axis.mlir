// A scalar's broadcast to a dynamic size n, fused where n == 0 with the sum of
// a tensor<0xf32> (the choice's branch that shares their axis), beside a select
// of that sum: the VM refused the call at n = 0, "stored tile shape mismatch
// (r4 (1,) vs (0,))": the kernel stored one-element tiles into an output that
// spans the domain's axis of size 0. Fixed in lowering/kernel_body.py
// (emit_ops): an output spanning a domain axis of size 0 is not stored.
// shapes: 0 9x0 scalar
// shapes: 0 9x5 scalar
// shapes: 0 2x1 scalar
// seed: 6
// device: ascend910b
func.func @main(%arg0: tensor<0xf32>, %arg1: tensor<?x?xf64>, %arg2: tensor<i32>) -> (tensor<f32>, tensor<?xi1>) {
  %v1 = tensor.reduce_sum %arg0 {axes = [0]} : tensor<0xf32> -> tensor<f32>
  %k2 = arith.constant dense<0.0> : tensor<f32>
  %v3 = tensor.gt %v1, %k2 : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %v10 = tensor.gt %arg2, %arg2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %k11 = arith.constant dense<1.0> : tensor<f32>
  %v12 = tensor.select %v10, %v1, %k11 : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  %c1 = arith.constant 1 : index
  %n = tensor.dim %arg1, %c1 : tensor<?x?xf64>
  %v15 = tensor.broadcast_to %v3 to [%n] : tensor<i1> -> tensor<?xi1>
  func.return %v12, %v15 : tensor<f32>, tensor<?xi1>
}
