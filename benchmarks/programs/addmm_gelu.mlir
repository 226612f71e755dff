// addmm with a tanh-GELU epilogue: the matmul of addmm_relu.mlir followed by
// the elementwise chain of gelu.mlir (a cube kernel with a longer fused
// vector epilogue). Used by the benchmarks (benchmarks/run.py).
func.func @addmm_gelu(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  %one = arith.constant dense<1.000000e+00> : tensor<f32>
  %k = arith.constant dense<0.797884583> : tensor<f32>
  %a = arith.constant dense<4.471500e-02> : tensor<f32>
  %mm = tensor.matmul %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %z = tensor.add %mm, %bias : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %z2 = tensor.mul %z, %z : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %z3 = tensor.mul %z2, %z : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %t0 = tensor.mul %z3, %a : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %t1 = tensor.add %z, %t0 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %t2 = tensor.mul %t1, %k : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %t3 = tensor.tanh %t2 : tensor<?x?xf32>
  %t4 = tensor.add %t3, %one : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %t5 = tensor.mul %z, %t4 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %y = tensor.mul %t5, %half : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
