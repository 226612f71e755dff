// A kernel input read through an expand_shape from rank 0 (an empty
// reassociation: every result dim a static 1) made fuse fail with "zip()
// argument 2 is shorter than argument 1": the view's strides had one entry per
// dim of the source, none, not one per dim of the result. Fixed in
// passes/domain.py (apply_layout): each dim expanded from rank 0 is one
// element, at stride 0.
// shapes: scalar 2x3
// shapes: scalar 0x3
// shapes: scalar 1x3
// seed: 1
// device: host
func.func @main(%s: tensor<f32>, %b: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<1x1xf32>) {
  %x = tensor.expand_shape %s [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
  %y = tensor.add %x, %b : (tensor<1x1xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %n = tensor.neg %x : tensor<1x1xf32>
  func.return %y, %n : tensor<?x3xf32>, tensor<1x1xf32>
}
