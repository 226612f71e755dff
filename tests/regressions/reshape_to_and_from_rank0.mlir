// Found by trying upstream's syntax: `tensor.collapse_shape %x []` from
// tensor<1x1xf32> into tensor<f32>, and the matching expand_shape, were
// rejected by the verifier although upstream accepts an empty reassociation
// when every dim is a static 1. The verifier now accepts it
// (dialects/tensor.py, check_reshape), and an expand_shape from rank 0
// inside a kernel places every result dim as a unit dim (passes/domain.py).
// shapes: 1x1 2x3
// shapes: 1x1 0x3
// seed: 4
// device: host
func.func @main(%a: tensor<1x1xf32>, %b: tensor<?x3xf32>) -> (tensor<f32>, tensor<1x1xf32>, tensor<?x3xf32>, tensor<1x1x1xf32>) {
  %c = tensor.collapse_shape %a [] : tensor<1x1xf32> into tensor<f32>
  %e = tensor.exp %c : tensor<f32>
  %x = tensor.expand_shape %e [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
  %n = tensor.neg %x : tensor<1x1xf32>
  %s = tensor.add %b, %c : (tensor<?x3xf32>, tensor<f32>) -> tensor<?x3xf32>
  %y = tensor.expand_shape %c [] output_shape [1, 1, 1] : tensor<f32> into tensor<1x1x1xf32>
  func.return %e, %n, %s, %y : tensor<f32>, tensor<1x1xf32>, tensor<?x3xf32>, tensor<1x1x1xf32>
}
