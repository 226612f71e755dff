func.func @segment(%a0: tensor<?x?x?xf32>, %a1: tensor<f64>, %a2: tensor<?xf32>) -> (tensor<?x?x?xf32>) {
  %v0 = tensor.mul %a0, %a0 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v1 = tensor.reduce_mean %v0 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v2 = tensor.convert %a1 : tensor<f64> -> tensor<f64>
  %v3 = tensor.convert %v2 : tensor<f64> -> tensor<f32>
  %v4 = tensor.add %v1, %v3 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v5 = tensor.rsqrt %v4 : tensor<?x?x1xf32>
  %v6 = tensor.mul %a0, %v5 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v7 = tensor.mul %v6, %a2 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  func.return %v7 : tensor<?x?x?xf32>
}

