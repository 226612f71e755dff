// Found by the random-program campaign: Illegal: %g = tensor.take_along_axis:
// its source must come from outside the kernel (at compile time). fuse copies
// splat constants into the kernels that use them, also as the source or the
// indices of a take, which the kernel must load from memory. Fixed in
// passes/fuse.py (inputs): a splat constant a take uses is a kernel input.
// shapes: 5x1 4x3
// shapes: 0x1 0x3
// seed: 3
// device: host
func.func @main(%i: tensor<?x1xi32>, %x: tensor<?x3xf32>) -> (tensor<?x1xf32>, tensor<?x2xf32>) {
  %one = arith.constant dense<1> : tensor<i32>
  %a = tensor.abs %i : tensor<?x1xi32>
  %r = tensor.remainder %a, %one : (tensor<?x1xi32>, tensor<i32>) -> tensor<?x1xi32>
  %k = arith.constant dense<-1.0> : tensor<1x1xf32>
  %g = tensor.take_along_axis %k, %r dim(0) : (tensor<1x1xf32>, tensor<?x1xi32>) -> tensor<?x1xf32>
  %idx = arith.constant dense<2> : tensor<2xi32>
  %y = tensor.take %x, %idx dim(1) : (tensor<?x3xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  %z = tensor.add %y, %y : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  func.return %g, %z : tensor<?x1xf32>, tensor<?x2xf32>
}
